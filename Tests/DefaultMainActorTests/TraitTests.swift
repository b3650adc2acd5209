import DependencyInjection
import DependencyInjectionTesting
import Testing

/// The `.dependencies` trait in a main-actor module: its configuration runs on the main
/// actor, so it names main-actor registrations, builds main-actor objects and awaits.
@Suite struct TraitTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies { $0.override(\.feedStore) { @MainActor in StubFeedStore(items: ["a"]) } })
    func aConfigurationOverridesWithMainActorClosures() {
        let model = FeedViewModel()
        model.load()
        #expect(model.items == ["a"])
        #expect(model.service.headlines() == ["A"])
        #expect(model.$store.container === DependencyContainer.main)
        #expect(DependencyContainer.main.parent === DependencyContainer.mocks)
    }

    @Test(.dependencies { container in
        container.override(\.feedService) { @MainActor in FeedService(store: StubFeedStore(items: ["b"])) }
        try await container.database().insert("a")
    })
    func anAsyncConfigurationSeedsTheTestsDatabase() async throws {
        #expect(try await DependencyContainer.main.database().all() == ["a"])
        #expect(DependencyContainer.main.feedService().headlines() == ["B"])
    }

    @Test(.dependencies) func aTestWithoutSeedingStartsEmpty() async throws {
        #expect(try await DependencyContainer.main.database().all() == [])
        #expect(DependencyContainer.main.feedStore().load() == ["live"])
    }
}

/// A suite's configuration runs for each of its tests, under the test's own.
@Suite(.dependencies { container in
    container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["suite"]) }
    try await container.database().insert("suite")
})
struct SuiteTraitTests {
    @Test func everyTestSeesTheSuitesConfiguration() async throws {
        #expect(DependencyContainer.main.feedStore().load() == ["suite"])
        #expect(try await DependencyContainer.main.database().all() == ["suite"])
    }

    @Test(.dependencies { container in
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["test"]) }
        try await container.database().insert("test")
    })
    func aTestsConfigurationRunsAfterTheSuites() async throws {
        #expect(DependencyContainer.main.feedStore().load() == ["test"])
        #expect(try await DependencyContainer.main.database().all() == ["suite", "test"])
    }

    /// The cases run in parallel, interleaved on the main actor at every `await`, and
    /// write the same registrations; each must see only its own writes and the suite's.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<16) func parallelCasesSeeOnlyTheirOwnOverridesAndRows(id: Int) async throws {
        let container = DependencyContainer.main
        #expect(container.feedService().headlines() == ["SUITE"])
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["case \(id)"]) }
        let model = FeedViewModel()

        for round in 0..<4 {
            try await container.database().insert("\(id).\(round)")
            for _ in 0...((id &* 7 &+ round) % 5) { await Task.yield() }
            model.load()
            #expect(model.items == ["case \(id)"])
            #expect(DependencyContainer.main.feedService().headlines() == ["CASE \(id)"])
        }
        #expect(try await container.database().all() == ["suite"] + (0..<4).map { "\(id).\($0)" })
    }
}
