/// Stops the process with a message naming a construction cycle.
///
/// One format for every cycle the package finds, on one owner or across several, through
/// providers or `@Dependency` properties: each registration once, with the place in the
/// user's code that declares it, and the first again at the end:
///
/// ```text
/// Circular dependency: authService (App/Services.swift:12) -> sessionStore (App/Services.swift:15) -> authService
/// ```
///
/// A step that builds one argument of a provider family names the argument too: the
/// steps of a cycle through one family are one registration, told apart only by it.
///
/// ```text
/// Circular dependency: subscript(track: 3) (App/Tracks.swift:8) -> subscript(track: 4) (App/Tracks.swift:8) -> subscript(track: 3)
/// ```
///
/// A cycle may be no cycle in the app's graph but a helper that wraps `singleton` without
/// passing its caller's site on: every property written with it is the helper's one
/// registration, so one that resolves another resolves itself. The message then says how
/// to fix the helper (``CycleReport/unforwardedHelperHint(_:closing:)``), on a line of its
/// own after the chain's, which stays one line:
///
/// ```text
/// Circular dependency: cached(_:) (App/Helpers.swift:9) -> cached(_:)
/// If cached(_:) is a helper …
/// ```
///
/// It stops in release builds too: a cycle would otherwise overflow the stack or hang.
enum CycleReport {
    /// Why a cycle closed where it did, when that needs a line of its own.
    enum Cause {
        /// A cycle on one owner, or through the waits of several.
        case plain
        /// A task started with `Task.immediate` inside the chain's last construction asks
        /// for what is being built on its thread: it runs at once, there, and the
        /// construction goes on only once it returns or suspends.
        case immediateTask
        /// A task started with `Task.immediate` inside `started` waits for `asked`, which
        /// another thread builds, and whose construction waits, at some depth, for
        /// `started`.
        case immediateTaskThroughAnotherThread(started: CycleStep, asked: CycleStep)
    }

    /// Stops with the message of the cycle `chain` closes on `closing`.
    ///
    /// A cycle that a task started with `Task.immediate` closes (`cause`) says so, and
    /// how to fix it, on a line of its own, as does one that looks like a helper that
    /// does not pass its caller's site on:
    ///
    /// ```text
    /// Circular dependency: sessionCoordinator (App/Session.swift:8) -> sessionCoordinator
    /// A task started with Task.immediate inside sessionCoordinator asks for sessionCoordinator …
    ///
    /// Circular dependency: ledger (App/Ledger.swift:4) -> syncEngine (App/Sync.swift:9) -> ledger
    /// A task started with Task.immediate inside ledger waits for syncEngine, which another thread builds …
    /// ```
    static func stop(_ chain: [CycleStep], closing: CycleStep, cause: Cause = .plain) -> Never {
        let first = chain.first ?? closing
        fatalError(
            "Circular dependency: " + (chain.map(\.description) + [closing.nameText]).joined(separator: " -> ")
                + line(explaining: cause, innermost: chain.last ?? closing, closing: closing)
                + unforwardedHelperHint(chain, closing: closing),
            file: first.site.fileID, line: first.site.line)
    }

    /// The line that says how `cause` closed the cycle on `closing`, seen from the chain's
    /// `innermost` construction, and how to fix it; empty for a plain cycle.
    static func line(explaining cause: Cause, innermost: CycleStep, closing: CycleStep) -> String {
        let (started, asked, what): (CycleStep, CycleStep, String)
        switch cause {
        case .plain:
            return ""
        case .immediateTask:
            (started, asked, what) = (innermost, closing, "asks for \(closing.nameText): the task runs at once, on this thread, and the construction")
        case .immediateTaskThroughAnotherThread(let inside, let waitedFor):
            (started, asked) = (inside, waitedFor)
            what = "waits for \(waitedFor.nameText), which another thread builds, and whose construction waits for "
                + "\(inside.nameText): the task runs at once, on this thread, and \(inside.nameText)"
        }
        return "\nA task started with Task.immediate inside \(started.nameText) \(what) goes on only once the task "
            + "returns or suspends. Start the task with Task { … }, which runs after the construction, or resolve "
            + "\(asked.nameText) before starting it"
    }

    /// What the message adds when the cycle looks like a helper that registers for several
    /// properties without passing its caller's site on; empty otherwise. A cycle closes on
    /// the registration of its first step, so two signs tell such a helper:
    ///
    /// - The first step has another name than the closing one: one registration reached
    ///   under two names, from a helper that passes `name` on but not the site
    ///   (`apiClient -> cdnClient`). An alias returns the provider it stands for, with
    ///   that provider's name, and is never named twice.
    /// - The closing step is a registration named after a function with parameters
    ///   (`cached(_:)`, not a property's `apiClient`, a function's `client()`, a subscript
    ///   or a name given by hand, `"session (eu)"`), built with no argument, and no step of
    ///   the chain has that name at another place: a helper that passes its site on gives
    ///   each property a registration of its own, and a cycle between two of them is real.
    ///
    /// A registration function whose parameters are not its argument is one registration
    /// for every call either way; its self-cycle gets the hint, which says "if".
    static func unforwardedHelperHint(_ chain: [CycleStep], closing: CycleStep) -> String {
        guard closing.argument == nil, case .registration = closing.site.name else { return "" }
        let name = closing.site.nameText
        if let first = chain.first, case .registration = first.site.name, first.site.nameText != name {
            return "\n\(first.site.nameText) and \(name) are one registration: both are declared at "
                + "\(first.site.fileID):\(first.site.line), as every property written with a helper that passes "
                + "`name` on but not `fileID`, `line` and `column` is. " + helperFix
        }
        guard !name.hasPrefix("subscript("), let open = name.firstIndex(of: "("), open > name.startIndex,
            !name[..<open].contains(" "), name[open...].contains(":"),
            !chain.contains(where: { $0.site.nameText == name && $0.site.description != closing.site.description })
        else { return "" }
        return "\nIf \(name) is a helper that calls `singleton`, `factory` or `shared` for several properties, "
            + "they are all this one registration, and one that resolves another resolves itself. " + helperFix
            + "; instances that differ by a value take it as the registration's argument, `singleton(value) { … }`"
    }

    /// Stops a wait that blocks its thread for `construction`, which another owner builds
    /// on this very thread: a task started with `Task.immediate` inside it (or inside what
    /// it resolves) runs here first, and the construction goes on only once the task
    /// returns or suspends. Waiting would never end, with no message.
    ///
    /// ```text
    /// store (App/Store.swift:12) is being built on this thread, and a task started with Task.immediate inside it waits for it …
    /// ```
    static func stopWaitingOnItsOwnThread(for construction: CycleStep) -> Never {
        fatalError(
            "\(construction.description) is being built on this thread, and a task started with Task.immediate "
                + "inside it (or inside what it resolves) waits for it: the construction goes on only once that task "
                + "returns or suspends, so the wait would never end. Start the task with Task { … }, which runs "
                + "after the construction, or resolve \(construction.nameText) before starting it",
            file: construction.site.fileID, line: construction.site.line)
    }

    /// How to fix a helper that does not pass its caller's site on.
    private static let helperFix = "Give the helper the `name`, `fileID`, `line`, `column` and `isolation` "
        + "parameters of the registration it calls, with the same defaults (`#function`, `#fileID`, `#line`, "
        + "`#column`, `#isolation`; a main-actor registration has no `isolation`), and pass them all on "
        + "(\"Helpers that return providers\" in Registering dependencies)"
}

/// One construction of a cycle's chain, as its message names it: where it is declared,
/// and for one argument of a provider family, which argument.
///
/// Made only when a cycle stops the process, from a frame's site and key: a frame keeps
/// no copy of its argument beside its key's, which every construction would pay for.
///
/// ```swift
/// CycleStep(site: frame.site, argument: frame.key.argument).description
/// // "loop(3) (App/Loops.swift:4)"
/// ```
struct CycleStep: CustomStringConvertible {
    let site: Site
    let argument: RegistrationKey.Argument?

    /// `loop(3)`, `subscript(track: 3)` or `feedLoader`: the site's name, with the
    /// argument where the call that resolves it writes it.
    var nameText: String {
        let name = site.nameText
        guard let argument else { return name }
        let written = Self.text(of: argument.value.base)
        // A subscript of one label, `subscript(track:)`: the argument takes the label's place.
        if name.hasPrefix("subscript("), name.hasSuffix(":)"), name.filter({ $0 == ":" }).count == 1 {
            return name.dropLast() + " " + written + ")"
        }
        // A provider family's property, `loop`, is called as `loop(3)`.
        if !name.contains("(") { return name + "(" + written + ")" }
        return name + " with " + written
    }

    /// `loop(3) (App/Loops.swift:4)`.
    var description: String { "\(nameText) (\(site.fileID):\(site.line))" }

    /// How the argument reads in a message: a number, a string (quoted), a Boolean, a
    /// `UUID` or a `URL` as the code writes it, shortened past 60 characters so that one
    /// long argument does not bury the chain; a value of any other type by its type's name.
    /// A number, string or character of another type than its literal's (`1 as UInt8`,
    /// `"a" as Character`) says its type: arguments of two types are two arguments, and a
    /// cycle through `1 as Int` and `1 as UInt8` must tell its steps apart.
    ///
    /// Naming runs no user code, as a ``Site``'s does: an app type's `description`, or
    /// that of a collection of its values, may resolve from a container (maybe what
    /// closes this very cycle) or wait for a lock.
    private static func text(of value: Any) -> String {
        let type = type(of: value)
        guard plainTypes.contains(ObjectIdentifier(type)) || isFoundationValue(String(reflecting: type)) else {
            return String(describing: type)
        }
        let written = String(reflecting: value)
        let literal = escapingSeparators(written.count > 60 ? written.prefix(59) + "…" : written)
        return typesNoLiteralImplies.contains(ObjectIdentifier(type)) ? literal + " as " + String(describing: type) : literal
    }

    /// The standard library's types whose values print as a literal of another type does:
    /// `1 as UInt8` prints as `1`, an `Int`; `"a" as Character` as `"a"`, a `String`.
    private static let typesNoLiteralImplies: Set<ObjectIdentifier> = [
        Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self, UInt64.self,
        Float.self, Substring.self, Character.self,
    ].reduce(into: []) { $0.insert(ObjectIdentifier($1)) }

    /// The standard library's types whose descriptions a message prints.
    private static let plainTypes: Set<ObjectIdentifier> = [
        Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self, UInt32.self,
        UInt64.self, Double.self, Float.self, Bool.self, String.self, Substring.self, Character.self,
    ].reduce(into: []) { $0.insert(ObjectIdentifier($1)) }

    /// Whether `typeName` is Foundation's `UUID` or `URL`, named: the package does not
    /// import Foundation, which on Linux declares both in `FoundationEssentials`.
    private static func isFoundationValue(_ typeName: String) -> Bool {
        ["Foundation.UUID", "Foundation.URL", "FoundationEssentials.UUID", "FoundationEssentials.URL"]
            .contains(typeName)
    }

    /// `literal`, a string as Swift writes it, with what would end a step of the message
    /// inside it written as escapes of the same characters: the arrow between steps, the
    /// ` (` before a location, and the line breaks that `String(reflecting:)` leaves as
    /// they are (U+2028, U+0085). A message stays one line of steps, and each argument a
    /// literal equal to the value.
    private static func escapingSeparators(_ literal: String) -> String {
        var escaped = ""
        var previous: Character?
        for character in literal {
            if character.isNewline || (character == ">" && previous == "-") || (character == "(" && previous == " ") {
                escaped += character.unicodeScalars.map { "\\u{\(String($0.value, radix: 16, uppercase: true))}" }.joined()
            } else {
                escaped.append(character)
            }
            previous = character
        }
        return escaped
    }
}
