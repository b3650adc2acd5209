extension DependencyContainer {
    /// Wraps every instance this container (and its children) builds for a registration,
    /// keeping the instance it wraps.
    ///
    /// A decorator adds behaviour around a service without replacing it: logging, caching,
    /// retries, metrics. Overriding the registration with a wrapper that resolves it again,
    /// `override(\.httpClient) { LoggingHTTPClient(wrapping: self.httpClient()) }`, would
    /// resolve the override itself, forever. A decoration receives the instance the
    /// registration builds (or its override) instead, and returns what resolutions get:
    ///
    /// ```swift
    /// container.decorate(\.httpClient) { client in LoggingHTTPClient(wrapping: client) }
    /// let client = container.httpClient()   // a LoggingHTTPClient around the registration's
    /// ```
    ///
    /// The instance is built the normal way, in the registration's scope, and the decorated
    /// one is what the scope keeps: a decorated singleton is built and decorated once. It
    /// works in the container that declares and resolves the registration, and in any
    /// other:
    ///
    /// - **Stacking.** Decorations stack in the order they were installed: the first one
    ///   receives the undecorated instance, the next one receives what the first returned.
    /// - **Overrides.** The wrapped instance comes from the override that resolution would
    ///   use without decorations (in this container or a parent), or from the registration.
    ///   A later override in this container replaces what is wrapped, and the decorations
    ///   wrap the new instance.
    /// - **Children.** A child container applies this container's decorations, then its
    ///   own. A child that overrides the registration itself is not decorated by this
    ///   container: its override replaces this container's decorations along with any
    ///   override here, as the child sees it.
    /// - **Reset.** ``reset(_:)-(KeyPath<DependencyContainer,Provider<Value>>)`` and
    ///   ``reset()`` remove the decorations, with the overrides.
    ///   ``shutdown(fileID:filePath:line:column:)`` keeps both.
    ///
    /// Installing a decoration drops what this container and its children cached from the
    /// registration, and what was built from it, as an override does, so no undecorated
    /// instance is served afterwards. A teardown declared with `onShutdown` receives the
    /// decorated instance.
    ///
    /// > Important: The decoration runs inside the construction of the instance it wraps.
    /// > One that resolves the decorated registration itself asks for what it is building:
    /// > it stops with a `Circular dependency` message naming the registration.
    ///
    /// - Parameters:
    ///   - keyPath: The provider whose instances to wrap.
    ///   - decorate: Receives each instance the registration (or its override) builds and
    ///     returns the instance to hand out. It may be called from any thread, without any
    ///     container lock held, and may resolve other dependencies.
    public func decorate<Value>(
        _ keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        _ decorate: @escaping @Sendable (Value) -> Value
    ) {
        let provider = self[keyPath: keyPath]
        addDecoration(Decoration(decorate), of: provider.key, named: provider.name, at: keyPath)
    }

    /// Wraps every instance this container (and its children) builds for an async
    /// registration, keeping the instance it wraps.
    ///
    /// It behaves as
    /// ``decorate(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)`` does for
    /// synchronous registrations; the decoration may suspend and throw, and a throw fails
    /// the resolution, which keeps nothing:
    ///
    /// ```swift
    /// container.decorate(\.database) { database in try await MeteredDatabase(wrapping: database) }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The async provider whose instances to wrap.
    ///   - decorate: Receives each instance the registration (or its override) builds and
    ///     returns the instance to hand out.
    public func decorate<Value>(
        _ keyPath: KeyPath<DependencyContainer, AsyncProvider<Value>>,
        _ decorate: @escaping @Sendable (Value) async throws -> Value
    ) {
        let provider = self[keyPath: keyPath]
        addDecoration(AsyncDecoration(decorate), of: provider.key, named: provider.name, at: keyPath)
    }

    /// Wraps every instance of a registration with a closure that runs on the main actor,
    /// so that it may build main-actor objects.
    ///
    /// In main-actor code (an app module with main-actor default isolation, a `@MainActor`
    /// test) a wrapper usually has a main-actor initializer. Mark the closure `@MainActor`
    /// and it may call it:
    ///
    /// ```swift
    /// protocol FeedStore { func load() -> [String] }
    /// final class LiveFeedStore: FeedStore { func load() -> [String] { ["a"] } }
    /// final class LoggingFeedStore: FeedStore {
    ///     let wrapped: any FeedStore
    ///     init(wrapping wrapped: any FeedStore) { self.wrapped = wrapped }
    ///     func load() -> [String] { print("load"); return wrapped.load() }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var feedStore: Provider<any FeedStore> { factory { LiveFeedStore() } }
    /// }
    ///
    /// @MainActor func logLoads(in container: DependencyContainer) {
    ///     container.decorate(\.feedStore) { @MainActor in LoggingFeedStore(wrapping: $0) }
    /// }
    /// ```
    ///
    /// Otherwise it behaves as
    /// ``decorate(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``. Without
    /// `@MainActor in`, Swift picks the decoration that any thread may call: it chooses
    /// between the two before it looks at isolation, so the closure has to say it.
    ///
    /// > Important: Resolve the registration on the main actor. A nonisolated registration
    /// > decorated with a main-actor closure, and built off the main actor, stops with a
    /// > message that names it, instead of running main-actor code on another thread.
    ///
    /// - Parameters:
    ///   - keyPath: The provider whose instances to wrap.
    ///   - fileID: Where the decoration is installed, named if it runs off the main actor;
    ///     leave the default.
    ///   - line: The line of the decoration, with `fileID`; leave the default.
    ///   - decorate: Receives each instance and returns the one to hand out, on the main
    ///     actor.
    @MainActor
    public func decorate<Value>(
        _ keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line,
        _ decorate: @escaping @MainActor (Value) -> Value
    ) {
        let provider = self[keyPath: keyPath]
        let name = provider.name
        let onMainActor = Decoration<Value> { value in
            MainActorThread.check(
                "\(name) was decorated with a @MainActor closure (\(fileID):\(line)) and built off the main "
                    + "actor. Resolve it on the main actor, or decorate it with a closure that is not @MainActor.")
            let instance = Box(value)
            return MainActor.assumeIsolated { Box(decorate(instance.value)) }.value
        }
        addDecoration(onMainActor, of: provider.key, named: name, at: keyPath)
    }

    /// Adds `decoration` after this container's other decorations of `key`, then drops what
    /// was built from `key` here and in the descendants.
    private func addDecoration(
        _ decoration: AnyObject, of key: RegistrationKey, named name: StaticString, at keyPath: AnyKeyPath
    ) {
        change(key, named: name, at: keyPath) { state, _ in state.decorations[key, default: []].append(decoration) }
    }
}
