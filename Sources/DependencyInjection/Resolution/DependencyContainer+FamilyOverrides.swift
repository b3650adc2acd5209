extension DependencyContainer {
    /// Replaces a provider family for every argument, in this container (and the children
    /// that do not override it themselves).
    ///
    /// The replacement receives the argument it builds for, and keeps the family's scope: a
    /// singleton family builds one instance per argument from `make`. Instances this
    /// container already built for some arguments are dropped, with everything built from
    /// them, so no argument is served from the old registration:
    ///
    /// ```swift
    /// container.override(\.session) { user in StubSession(user: user) }
    /// container.session(alice)   // a StubSession for alice
    /// container.session(bob)     // a StubSession for bob
    /// ```
    ///
    /// An override of one argument (`override(\.session[alice]) { … }`) wins over the
    /// family's override installed in the same container; a container's own overrides win
    /// over its parents'. ``reset(_:)-(KeyPath<DependencyContainer,ProviderFamily<Argument,Value>>)``
    /// removes both kinds.
    ///
    /// - Parameters:
    ///   - keyPath: The provider family to replace, such as `\.session`.
    ///   - make: Builds the replacement for an argument. It may be called from any thread.
    public func override<Argument, Value>(
        _ keyPath: KeyPath<DependencyContainer, ProviderFamily<Argument, Value>>,
        _ make: @escaping @Sendable (Argument) -> Value
    ) {
        let family = self[keyPath: keyPath]
        replaceOverride(of: family.key, named: family.name, at: keyPath, with: FamilyOverride(make))
    }

    /// Drops the override of a provider family and every override of one of its arguments,
    /// with what this container built from them: every argument is built from the
    /// registration again.
    ///
    /// ```swift
    /// container.override(\.session) { user in StubSession(user: user) }
    /// container.override(\.session[alice]) { StubSession(user: alice) }
    /// container.reset(\.session)
    /// container.session(alice)   // a LiveSession again
    /// ```
    ///
    /// To drop the override of one argument only, reset that argument's provider:
    /// `reset(\.session[alice])`.
    ///
    /// - Parameter keyPath: The provider family to reset.
    public func reset<Argument, Value>(_ keyPath: KeyPath<DependencyContainer, ProviderFamily<Argument, Value>>) {
        let family = self[keyPath: keyPath]
        replaceOverride(of: family.key, named: family.name, at: keyPath, with: nil, includingArguments: true)
    }
}

/// A replacement for every argument of a provider family, installed under the family's
/// key. Resolution applies it to one argument, which yields the `Override` that the
/// argument's provider runs, as if that argument had been overridden on its own.
final class FamilyOverride: Sendable {
    let apply: @Sendable (RegistrationKey.Argument) -> AnyObject

    init<Argument: Hashable & Sendable, Value>(_ make: @escaping @Sendable (Argument) -> Value) {
        apply = { argument in
            // The family's key includes `Argument`, so its arguments are `Argument`s.
            let argument = argument.value as! Argument
            return Override { make(argument) }
        }
    }
}

extension ContainerState {
    /// The override installed here for `key`: the key's own, or else, for an argument of a
    /// provider family, the family's applied to that argument.
    ///
    /// Inlined, so that the lookup is given the table alone: a call with the whole state
    /// copied it (264 bytes) to the stack on every factory resolution.
    @inline(__always)
    func override(for key: RegistrationKey) -> AnyObject? {
        overrides.override(for: key)
    }
}

extension OverrideTable {
    /// The override for `key`: see ``ContainerState/override(for:)``.
    ///
    /// A container that overrides nothing, as most do, answers without a call: the lookup
    /// of an empty table cost every first build there about 30 instructions.
    @inline(__always)
    func override(for key: RegistrationKey) -> AnyObject? {
        guard !isEmpty else { return nil }
        if let own = self[key] { return own }
        guard let argument = key.argument, let family = self[key.registration] as? FamilyOverride
        else { return nil }
        return family.apply(argument)
    }

    /// Whether ``override(for:)`` finds an override for `key`, without applying a family's
    /// to the argument: for messages, which need only to know.
    func hasOverride(for key: RegistrationKey) -> Bool {
        if self[key] != nil { return true }
        guard key.argument != nil, !isEmpty else { return false }
        return self[key.registration] is FamilyOverride
    }
}
