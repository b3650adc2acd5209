extension DependencyContainer {
    /// Replaces a registration with a closure that runs on the main actor, so that it may
    /// build main-actor objects.
    ///
    /// In main-actor code (an app module with main-actor default isolation, a `@MainActor`
    /// test) a replacement usually calls main-actor initializers. Mark the closure
    /// `@MainActor` and it may:
    ///
    /// ```swift
    /// protocol FeedStore { func load() -> [String] }
    /// final class StubFeedStore: FeedStore { func load() -> [String] { ["stub"] } }
    /// final class FeedService {
    ///     let store: any FeedStore
    ///     init(store: any FeedStore) { self.store = store }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var feedService: Provider<FeedService> {
    ///         factory { FeedService(store: StubFeedStore()) }
    ///     }
    /// }
    ///
    /// @MainActor func useStubs(in container: DependencyContainer) {
    ///     container.override(\.feedService) { @MainActor in FeedService(store: StubFeedStore()) }
    /// }
    /// ```
    ///
    /// Otherwise it behaves as
    /// ``override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``: the replacement
    /// keeps the registration's scope, and what was built from the old one is dropped.
    ///
    /// Without `@MainActor in`, Swift picks the override whose closure any thread may call,
    /// and reports `call to main actor-isolated initializer … in a synchronous nonisolated
    /// context`: it chooses between the two before it looks at isolation, so the closure
    /// has to say it.
    ///
    /// > Important: Resolve the registration on the main actor. A main-actor registration
    /// > is resolved nowhere else: the compiler and the resolution check it. A nonisolated registration
    /// > (one that a library declares, say) replaced with a main-actor closure, and asked
    /// > off the main actor to build the replacement, stops with a message that names it,
    /// > instead of running main-actor code on another thread.
    ///
    /// - Parameters:
    ///   - keyPath: The provider to replace.
    ///   - fileID: Where the override is installed, named if it is resolved off the main
    ///     actor; leave the default.
    ///   - line: The line of the override, with `fileID`; leave the default.
    ///   - make: Builds the replacement, on the main actor.
    @MainActor
    public func override<Value>(
        _ keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        fileID: StaticString = #fileID, line: UInt = #line,
        _ make: @escaping @MainActor () -> Value
    ) {
        let provider = self[keyPath: keyPath]
        let build = Self.onMainActor(make, overriding: provider.name, fileID, line)
        replaceOverride(of: provider.key, named: provider.name, at: keyPath, with: Override(build))
    }

    /// Replaces a provider family for every argument with a closure that runs on the main
    /// actor, so that it may build main-actor objects.
    ///
    /// ```swift
    /// protocol Draft { var text: String { get set } }
    /// final class StubDraft: Draft {
    ///     var text: String
    ///     init(text: String) { self.text = text }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var draft: ProviderFamily<Int, any Draft> {
    ///         singleton { @MainActor (id: Int) in StubDraft(text: "") }
    ///     }
    /// }
    ///
    /// @MainActor func useStubs(in container: DependencyContainer) {
    ///     container.override(\.draft) { @MainActor id in StubDraft(text: "draft \(id)") }
    /// }
    /// ```
    ///
    /// Otherwise it behaves as
    /// ``override(_:_:)-(KeyPath<DependencyContainer,ProviderFamily<Argument,Value>>,_)``, and
    /// the aside of ``override(_:fileID:line:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_,_,_)``
    /// applies: resolve the family on the main actor.
    ///
    /// - Parameters:
    ///   - keyPath: The provider family to replace.
    ///   - fileID: Where the override is installed, named if it is resolved off the main
    ///     actor; leave the default.
    ///   - line: The line of the override, with `fileID`; leave the default.
    ///   - make: Builds the replacement for an argument, on the main actor.
    @MainActor
    public func override<Argument, Value>(
        _ keyPath: KeyPath<DependencyContainer, ProviderFamily<Argument, Value>>,
        fileID: StaticString = #fileID, line: UInt = #line,
        _ make: @escaping @MainActor (Argument) -> Value
    ) {
        let family = self[keyPath: keyPath]
        let name = family.name
        let onMainActor = FamilyOverride { (argument: Argument) in
            Self.onMainActor({ make(argument) }, overriding: name, fileID, line)()
        }
        replaceOverride(of: family.key, named: name, at: keyPath, with: onMainActor)
    }

    /// `make`, callable from any thread: it stops with a message naming the registration
    /// when it is called off the main actor.
    private static func onMainActor<Value>(
        _ make: @escaping @MainActor () -> Value, overriding name: StaticString, _ fileID: StaticString, _ line: UInt
    ) -> @Sendable () -> Value {
        {
            MainActorThread.check(
                "\(name) was overridden with a @MainActor closure (\(fileID):\(line)) and resolved off the main "
                    + "actor. Resolve it on the main actor, or override it with a closure that is not @MainActor.")
            return MainActor.assumeIsolated { Box(make()) }.value
        }
    }
}
