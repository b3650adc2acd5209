// expected-error: main actor-isolated instance method 'singleton
// Must NOT compile: a main-actor singleton declared by a nonisolated property, which any
// thread could resolve. `.ci/run` type-checks this file and expects the isolation error.
import DependencyInjection

protocol FeedStore {
    func load() -> [String]
}

final class LiveFeedStore: FeedStore {
    func load() -> [String] { [] }
}

extension DependencyContainer {
    var feedStore: Provider<any FeedStore> { singleton { @MainActor in LiveFeedStore() } }
}
