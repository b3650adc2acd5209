/// Catches two registrations that share one identity, in debug builds.
///
/// A registration's identity is the call site of `factory`, `singleton` or `shared`. A
/// helper that calls one of them for several properties, without forwarding its caller's
/// `fileID`, `line` and `column`, gives them all the same identity: the second property
/// then serves the first one's instance, and one override replaces both. The key paths
/// that `override`, `reset` and `@Dependency` receive tell such properties apart, so the
/// first time two different key paths lead to one identity, a ``DependencyIssue`` says so.
///
/// A property that returns another one's provider is an alias, not a merge: both key paths
/// lead to the one registration on purpose, and one override replaces both, as its author
/// means. The registration's name tells the two apart. An alias hands out the provider its
/// original property made, named after that property; a helper that does not forward its
/// caller's site names every property's provider after itself (`cached(_:)`), or, if it
/// forwards only the name, after each property in turn. A helper that is no function but a
/// closure kept in a constant is named after the constant, as a property is, so the merges
/// it makes go unreported: write helpers as functions.
///
/// ```swift
/// func cached<T: Sendable>(_ make: @escaping () -> T) -> Provider<T> { singleton(make) }  // merges
/// var settingsClock: Provider<Clock> { clock }                                              // an alias
/// ```
@usableFromInline
enum RegistrationIdentity {
    #if DEBUG
    /// The first key path noted for each registration, with the name its provider carried.
    private static let keyPaths = _Locked([RegistrationKey: (keyPath: AnyKeyPath, name: StaticString)]())
    #endif

    /// `keyPath` in a debug build, where ``note(_:leadsTo:name:in:)`` checks it, and nil in
    /// a release build: for inlinable callers, compiled where they are called, so that a
    /// release build makes no object of a key path literal only to hand it to a check that
    /// does nothing there (about 100 instructions on every `override`).
    ///
    /// ```swift
    /// replaceOverride(of: key, named: name, at: RegistrationIdentity.keyPathToNote(keyPath), with: box)
    /// ```
    @inlinable @inline(__always)
    static func keyPathToNote(_ keyPath: AnyKeyPath) -> AnyKeyPath? {
        #if DEBUG
        return keyPath
        #else
        return nil
        #endif
    }

    /// Notes that `keyPath` leads to `key`; reports an issue when another key path did. A
    /// nil key path, which only a release build passes (``keyPathToNote(_:)``), notes
    /// nothing.
    @usableFromInline
    static func note(
        _ keyPath: AnyKeyPath?, leadsTo key: RegistrationKey, name: StaticString, in container: DependencyContainer
    ) {
        #if DEBUG
        // Arguments tell parameterized registrations apart, and would make the table grow.
        guard let keyPath, key.argument == nil else { return }
        let seen = keyPaths.withLock { keyPaths -> (keyPath: AnyKeyPath, name: StaticString)? in
            guard let seen = keyPaths[key] else {
                keyPaths[key] = (keyPath, name)
                return nil
            }
            return seen
        }
        // Compared after unlocking: comparing two key paths compares their subscripts'
        // indices with the indices' own `==`, which is the app's code, and may override,
        // reset or read a `@Dependency`, each of which notes a key path here.
        guard let (other, otherName) = seen, other != keyPath else { return }
        guard !isAlias(named: name, and: otherName) else { return }
        DependencyIssue(
            dependency: name.description,
            message: "\(other) and \(keyPath) share one registration (\(key.file):\(key.line)): "
                + remedy(forRegistrationNamed: name, isFamily: type(of: keyPath).valueType is any ProviderFamilyType.Type),
            fileID: key.file, filePath: key.file, line: key.line, column: key.column, container: container
        ).report()
        #endif
    }

    /// Whether two key paths that lead to one registration whose providers they read were
    /// named `name` and `other` are a property and its alias: the same name, and a
    /// property's, where a function's or a subscript's has its parameters in parentheses
    /// (`cached(_:)`, `subscript(session:)`).
    ///
    /// ```swift
    /// RegistrationIdentity.isAlias(named: "clock", and: "clock")               // true
    /// RegistrationIdentity.isAlias(named: "cached(_:)", and: "cached(_:)")     // false: a helper
    /// RegistrationIdentity.isAlias(named: "draftStore", and: "outboxStore")    // false
    /// ```
    static func isAlias(named name: StaticString, and other: StaticString) -> Bool {
        let text = name.description
        return text == other.description && !text.contains("(")
    }

    /// What makes two key paths lead to one registration, by its name and whether it is a
    /// provider family: a subscript's registration that does not take its arguments (every
    /// argument then shares it), or else a helper that does not forward its caller's place.
    static func remedy(forRegistrationNamed name: StaticString, isFamily: Bool) -> String {
        guard name.description.hasPrefix("subscript(") else {
            return "a helper that returns providers must forward its caller's name, fileID, line, column and isolation"
        }
        if isFamily {
            return "a provider family in a subscript is one family for every argument of the subscript: make the "
                + "subscript's arguments part of the family's own argument (a Hashable struct of both)"
        }
        return "a registration in a subscript is one for every argument unless it takes them: write "
            + "factory(id) { … }, singleton(id) { … } or shared(id) { … }, or declare a provider family, "
            + "var name: ProviderFamily<Argument, Value> { singleton { argument in … } }, and for a placeholder "
            + "with an argument, var name: ProviderFamily<Argument, Value> { unimplemented() }"
    }
}
