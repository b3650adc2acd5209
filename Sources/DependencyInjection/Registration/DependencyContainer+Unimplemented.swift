extension DependencyContainer {
    /// A placeholder for a dependency that another module supplies: resolving it before
    /// that module overrides it stops the program with a message that says so.
    ///
    /// A feature module can declare and use a dependency whose implementation lives
    /// elsewhere (in the app, or a module the feature must not import). The module that
    /// has the implementation supplies it at start-up with
    /// ``override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``, and a test
    /// supplies a stub the same way:
    ///
    /// ```swift
    /// // In the feature module:
    /// extension DependencyContainer {
    ///     var analytics: Provider<any Analytics> { unimplemented() }
    /// }
    ///
    /// // In the app, at start-up:
    /// DependencyContainer.default.override(\.analytics) { FirebaseAnalytics() }
    /// ```
    ///
    /// Resolving it with no override in the container or its parents stops with
    /// `analytics is not implemented in this module: supply it with
    /// container.override(\.analytics) { … }`, in debug and release builds, pointing at the
    /// registration. An override keeps the placeholder's scope: like a
    /// ``singleton(name:fileID:line:column:isolation:_:)->Provider<Value>``, it is built once per
    /// container.
    ///
    /// The value must be `Sendable`: declared in nonisolated code, the placeholder may be
    /// resolved on any thread (declared in main-actor code, it is a main-actor
    /// registration, resolved on the main actor only, as a `singleton` declared there is).
    /// For a value that lives on the main actor and is not `Sendable`, such as a plain
    /// protocol in an app module with main-actor default isolation, declare
    /// ``unimplemented(_:property:on:fileID:line:column:)->Provider<Value>`` instead.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - fileID: Part of the registration's identity and where the message points;
    ///     leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    /// - Returns: A provider of the property's declared type that must be overridden.
    @inlinable  // specialized where it is declared, and its closure captures nothing: see below
    public func unimplemented<Value: Sendable>(
        _ name: StaticString = #function, property: StaticString = #function, fileID: StaticString = #fileID,
        line: UInt = #line, column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> Provider<Value> {
        // The closure finds the name, file and line in the frame of the construction it runs
        // in, which its provider's site names, rather than capture them: a request whose
        // handler resolves the request's user makes this provider on every request, and a
        // capturing closure cost it an allocation. Only a name of its own captures the
        // property, for the message's key path.
        guard UnimplementedMessage.isPropertyName(name, of: property) else {
            return Provider(self, .singleton, nil, name, fileID, line, column, isolation) {
                UnimplementedMessage.stopInConstruction(property: property)
            }
        }
        return Provider(self, .singleton, nil, name, fileID, line, column, isolation) {
            UnimplementedMessage.stopInConstruction()
        }
    }

    /// A placeholder for a dependency that another module supplies: resolving it before
    /// that module overrides it reports a ``DependencyIssue`` and returns `placeholder`.
    ///
    /// Use it instead of ``unimplemented(_:property:fileID:line:column:isolation:)->Provider<Value>`` when there is a
    /// harmless stand-in, so that a forgotten override is reported rather than fatal:
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     var analytics: Provider<any Analytics> { unimplemented(placeholder: NoAnalytics()) }
    /// }
    /// ```
    ///
    /// The issue goes to ``DependencyIssue/reporter``: standard error by default, and a
    /// failure of the running test under the `DependencyInjectionTesting` product, so a
    /// test that reaches the placeholder fails with a message naming the dependency.
    /// Like a ``singleton(name:fileID:line:column:isolation:_:)->Provider<Value>``, the placeholder
    /// (or the override that replaces it) is built once per container, so each container
    /// reports it once.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - placeholder: The value to use until the dependency is supplied.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - filePath: Where the issue points; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor, so that a placeholder made in main-actor code is made
    ///     there. Leave the default, or forward it from a helper.
    /// - Returns: A provider of the property's declared type that should be overridden.
    public func unimplemented<Value: Sendable>(
        _ name: StaticString = #function, property: StaticString = #function,
        placeholder: @autoclosure @escaping () -> Value, fileID: StaticString = #fileID,
        filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation
    ) -> Provider<Value> {
        Provider(self, .singleton, nil, name, fileID, line, column, isolation) {
            self.reportPlaceholder(
                name, property: property, fileID: fileID, filePath: filePath, line: line, column: column)
            return placeholder()
        }
    }
}

extension DependencyContainer {
    /// A placeholder for a dependency that lives on the main actor and that another module
    /// supplies: resolving it before that module overrides it stops the program with a
    /// message that says so.
    ///
    /// In main-actor code (an app module with main-actor default isolation) a dependency
    /// may be a plain protocol, which is not `Sendable`, and
    /// ``unimplemented(_:property:fileID:line:column:isolation:)->Provider<Value>`` asks for a `Sendable` value
    /// (`type 'any Tracker' does not conform to the 'Sendable' protocol`). Say where the
    /// value lives with `on: MainActor.self`, and supply it with a main-actor override:
    ///
    /// ```swift
    /// protocol Tracker { func track(_ event: String) }
    /// final class ConsoleTracker: Tracker { func track(_ event: String) { print(event) } }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var tracker: Provider<any Tracker> { unimplemented(on: MainActor.self) }
    /// }
    ///
    /// @MainActor func startApp() {
    ///     DependencyContainer.default.override(\.tracker) { @MainActor in ConsoleTracker() }
    /// }
    /// ```
    ///
    /// It is a main-actor registration: like a
    /// ``singleton(name:fileID:line:column:_:)->Provider<Value>`` whose closure is marked
    /// `@MainActor`, it is resolved on the main actor only, and the override is built once
    /// per container. Resolving it with no override stops with
    /// `tracker is not implemented in this module: supply it with
    /// container.override(\.tracker) { … }`, pointing at the registration.
    ///
    /// The form without `on:` cannot serve here: with no closure to say which one is meant,
    /// Swift would choose between the two before it looks at isolation.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - actor: `MainActor.self`: the value lives on the main actor.
    ///   - fileID: Part of the registration's identity and where the message points;
    ///     leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    /// - Returns: A provider of the property's declared type that must be overridden.
    @MainActor @inlinable
    public func unimplemented<Value>(
        _ name: StaticString = #function, property: StaticString = #function, on actor: MainActor.Type,
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column
    ) -> Provider<Value> {
        guard UnimplementedMessage.isPropertyName(name, of: property) else {
            return Provider(self, .singleton, nil, name, fileID, line, column, MainActor.shared, {
                UnimplementedMessage.stopInConstruction(property: property)
            })
        }
        return Provider(self, .singleton, nil, name, fileID, line, column, MainActor.shared, {
            UnimplementedMessage.stopInConstruction()
        })
    }

    /// A placeholder for a dependency that lives on the main actor and that another module
    /// supplies: resolving it before that module overrides it reports a
    /// ``DependencyIssue`` and returns `placeholder`, built on the main actor.
    ///
    /// The main-actor counterpart of
    /// ``unimplemented(_:property:placeholder:fileID:filePath:line:column:isolation:)->Provider<Value>``, for a value that is not
    /// `Sendable`, such as a plain protocol in an app module with main-actor default
    /// isolation:
    ///
    /// ```swift
    /// protocol Haptics { func tap() }
    /// final class NoHaptics: Haptics { func tap() {} }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var haptics: Provider<any Haptics> {
    ///         unimplemented(on: MainActor.self, placeholder: NoHaptics())
    ///     }
    /// }
    /// ```
    ///
    /// It is resolved on the main actor only, reports once per container, and is
    /// supplied with a main-actor override, as
    /// ``unimplemented(_:property:on:fileID:line:column:)->Provider<Value>`` is.
    ///
    /// - Parameters:
    ///   - name: The dependency's name in the message; the property's name by default.
    ///   - property: The property that declares the placeholder, whose key path the
    ///     message writes; leave the default, or forward it from a helper.
    ///   - actor: `MainActor.self`: the value lives on the main actor.
    ///   - placeholder: The value to use until the dependency is supplied, built on the
    ///     main actor.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - filePath: Where the issue points; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    /// - Returns: A provider of the property's declared type that should be overridden.
    @MainActor
    public func unimplemented<Value>(
        _ name: StaticString = #function, property: StaticString = #function, on actor: MainActor.Type,
        placeholder: @autoclosure @escaping @MainActor () -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) -> Provider<Value> {
        Provider(self, .singleton, nil, name, fileID, line, column, MainActor.shared, {
            self.reportPlaceholder(
                name, property: property, fileID: fileID, filePath: filePath, line: line, column: column)
            return placeholder()
        })
    }
}

extension DependencyContainer {
    /// Reports that the placeholder of `name`, declared by `property` at the given place,
    /// stands in for a dependency no module supplied; `isFamily` when it is a provider
    /// family's, which is supplied with a closure that takes the argument.
    func reportPlaceholder(
        _ name: StaticString, property: StaticString, isFamily: Bool = false, fileID: StaticString,
        filePath: StaticString, line: UInt, column: UInt
    ) {
        DependencyIssue(
            dependency: name.description,
            message: UnimplementedMessage.placeholder(name, property: property, isFamily: isFamily),
            fileID: fileID, filePath: filePath, line: line, column: column, container: self
        ).report()
    }

    /// Whether a scope below this container overrides `key`, for a message only: it takes
    /// the lock of every container below, one at a time.
    fileprivate func hasScopeOverriding(_ key: RegistrationKey) -> Bool {
        var pending = withStateLock { $0.liveChildren }
        while let child = pending.popLast() {
            let (overrides, children) = child.container.withStateLock { ($0.overrides.hasOverride(for: key), $0.liveChildren) }
            if child.isScope && overrides { return true }
            pending += children
        }
        return false
    }
}

/// The sentences that name an unimplemented dependency and say how to supply it.
@usableFromInline
enum UnimplementedMessage {
    /// Stops the program for a placeholder resolved with no override, with
    /// ``stop(_:property:isFamily:)``'s message, pointing at the registration. Called by the
    /// placeholder's closure, inside its construction, whose frame names the registration:
    /// the closure captures nothing, but the property of a placeholder with a name of its
    /// own, which the message's key path is written from.
    @usableFromInline
    static func stopInConstruction(property: StaticString? = nil) -> Never {
        guard let frame = Frame.current, case .registration(let name) = frame.site.name else {
            fatalError("A placeholder made with unimplemented() was resolved with no override: supply it with "
                + "container.override(\\.name) { … }, where name is the placeholder's property")
        }
        // Only a family's placeholder has an argument: a placeholder provider has none.
        fatalError(
            stop(name, property: property, isFamily: frame.key.argument != nil), file: frame.site.fileID,
            line: frame.site.line)
    }

    /// Whether a placeholder's name is its property's: the same literal, as the two
    /// `#function` defaults of one call are. A name of its own (or the same text at
    /// another address, which costs only an allocation per resolution) makes the
    /// placeholder's closure capture the property, for the message's key path. Only the
    /// addresses are compared: comparing the text cost every resolution about 170
    /// instructions, as the provider's getter was no longer inlined.
    @inlinable
    static func isPropertyName(_ name: StaticString, of property: StaticString) -> Bool {
        name.hasPointerRepresentation && property.hasPointerRepresentation && name.utf8Start == property.utf8Start
    }

    /// The message of a placeholder resolved with no override: how to supply it, and why
    /// an override a scope installed did not reach it, when that is so. Called inside the
    /// placeholder's construction, whose frame names its key and the container resolving
    /// it: the placeholder's closure captures nothing more for a message.
    static func stop(_ name: StaticString, property: StaticString? = nil, isFamily: Bool = false) -> String {
        let howTo = howToSupply(keyPathSource(name: name, property: property), isFamily: isFamily)
        let message = "\(name) is not implemented in this module: supply it with \(howTo)"
        let hint = appWideHint
        if !hint.isEmpty { return message + hint }
        let (owner, innermost) = Frame.ownerAndInnermost
        guard let frame = innermost, let container = Frame.building(from: frame, owner: owner),
            container.hasScopeOverriding(frame.key)
        else { return message }
        return message + ". A scope of this container overrides it, but it was resolved here, where a scope's "
            + "values are not seen: a `@Dependency` property of an app-wide instance, for one, resolves from the app "
            + "container, never from a scope. If the instance needs a scope's value, register it with scoped { … }, "
            + "or resolve the value while the scope builds it"
    }

    /// When the app container is building an app-wide instance that a scope asked for,
    /// the scope's overrides are out of its reach: says so, and what to register instead.
    static var appWideHint: String {
        guard let appWide = Frame.outermostServingScope(from: Frame.current) else { return "" }
        let user = appWide.site.nameText
        return ". It was asked for while building \(user), which is app-wide: the app container builds it once "
            + "for every scope, and it never reads a scope's overrides. If \(user) needs a scope's value, register "
            + "it with scoped { … }"
    }

    static func placeholder(_ name: StaticString, property: StaticString? = nil, isFamily: Bool = false) -> String {
        "\(name) is not implemented in this module, so its placeholder was used: "
            + "supply it with \(howToSupply(keyPathSource(name: name, property: property), isFamily: isFamily))"
    }

    /// What the message writes the key path from: the property that declares a placeholder
    /// with a name of its own, unless `property` names a function (not a subscript), a
    /// helper that wraps `unimplemented` and forwards only the name, which is then its
    /// caller's property.
    static func keyPathSource(name: StaticString, property: StaticString?) -> StaticString {
        guard let property else { return name }
        let text = property.description
        return text.contains("(") && !text.hasPrefix("subscript(") ? name : property
    }

    /// `container.override(\.analytics) { … }`, or `\.[session: …]` for a subscript, or
    /// `container.override(\.ledger) { argument in … }` for a provider family.
    static func howToSupply(_ name: StaticString, isFamily: Bool = false) -> String {
        "container.override(\(keyPath(name))) { \(isFamily ? "argument in " : "")… }"
    }

    static func keyPath(_ name: StaticString) -> String {
        let text = name.description
        let prefix = "subscript("
        guard text.hasPrefix(prefix), text.hasSuffix(")") else { return "\\." + text }
        let labels = text.dropFirst(prefix.count).dropLast().split(separator: ":")
        let arguments = labels.map { $0 == "_" ? "…" : "\($0): …" }
        return "\\.[" + arguments.joined(separator: ", ") + "]"
    }
}
