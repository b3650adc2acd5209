// expected-error: call to main actor-isolated initializer 'init(store:)' in a synchronous nonisolated context
// Must NOT compile: an override closure that builds main-actor objects without saying
// `@MainActor in` gets the override whose closure any thread may call. `.ci/run`
// type-checks this file and expects the isolation error.
import DependencyInjection

protocol FeedStore {
    func load() -> [String]
}

@MainActor final class StubFeedStore: FeedStore {
    nonisolated func load() -> [String] { ["stub"] }
}

@MainActor final class FeedService {
    let store: any FeedStore
    init(store: any FeedStore) { self.store = store }
}

extension DependencyContainer {
    @MainActor var feedService: Provider<FeedService> {
        singleton { @MainActor in FeedService(store: StubFeedStore()) }
    }
}

@MainActor func useStubs(in container: DependencyContainer) {
    container.override(\.feedService) { FeedService(store: StubFeedStore()) }
}
