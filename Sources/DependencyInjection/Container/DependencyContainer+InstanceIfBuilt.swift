extension DependencyContainer {
    /// The instance this container keeps for `keyPath`, if it built one; never builds.
    ///
    /// Resolving always returns an instance, building it if need be. Some code only wants
    /// one that exists: a flush at the end of a request, a status screen, a test that
    /// checks what was built. Named after `viewIfLoaded`, which asks a view controller
    /// the same way:
    ///
    /// ```swift
    /// final class AnalyticsQueue: Sendable {
    ///     func flush() {}
    /// }
    ///
    /// extension DependencyContainer {
    ///     var analyticsQueue: Provider<AnalyticsQueue> { singleton { AnalyticsQueue() } }
    /// }
    ///
    /// let container = DependencyContainer()
    /// container.instanceIfBuilt(\.analyticsQueue)?.flush()   // nil: nothing to flush
    /// ```
    ///
    /// It is the singleton this container built, from the registration or an override, or
    /// the live instance of a `shared` registration; `nil` for a factory or a graph
    /// registration, whose instances the container never keeps, for an instance still being
    /// built (it does not wait), and after ``reset()``; after
    /// ``shutdown(fileID:filePath:line:column:)`` too, but for a shared instance that
    /// something still holds and that was not built from what the shutdown tore down, which
    /// is its holders' and stays. A parent's instances are not this
    /// container's, as for resolution, except in a scope (``init(scopeOf:)``): it answers
    /// with its app container's instance of an app-wide registration it shares. It is not a
    /// resolution: it is not traced,
    /// and an instance being built that asks does not depend on the answer.
    ///
    /// - Parameter keyPath: The provider whose instance to look up.
    /// - Returns: The built instance, or `nil`.
    public func instanceIfBuilt<Value>(_ keyPath: KeyPath<DependencyContainer, Provider<Value>>) -> Value? {
        let provider = self[keyPath: keyPath]
        return keeper(of: provider.key, provider.scope).instance(for: provider.key)
    }

    /// The instance this container keeps for an async registration, if it built one;
    /// never builds, so it needs no `await`.
    ///
    /// ```swift
    /// final class Session: Sendable {
    ///     static func start() async throws -> Session { Session() }
    /// }
    ///
    /// extension DependencyContainer {
    ///     var session: AsyncProvider<Session> { singleton { try await Session.start() } }
    /// }
    ///
    /// let isSignedIn = DependencyContainer.main.instanceIfBuilt(\.session) != nil
    /// ```
    ///
    /// It answers as
    /// ``instanceIfBuilt(_:)-(KeyPath<DependencyContainer,Provider<Value>>)`` does: `nil`
    /// while the instance is still being built, too.
    ///
    /// - Parameter keyPath: The async provider whose instance to look up.
    /// - Returns: The built instance, or `nil`.
    public func instanceIfBuilt<Value>(_ keyPath: KeyPath<DependencyContainer, AsyncProvider<Value>>) -> Value? {
        let provider = self[keyPath: keyPath]
        return keeper(of: provider.key, provider.scope).instance(for: provider.key)
    }

    /// The kept singleton for `key`, or the live shared instance.
    private func instance<Value>(for key: RegistrationKey) -> Value? {
        let object: AnyObject? = withStateLock { state in
            if let box = state.singletons.box(for: key) { return box }
            return state.sharedInstances[key]?.object
        }
        return object.map(Self.unbox)
    }
}
