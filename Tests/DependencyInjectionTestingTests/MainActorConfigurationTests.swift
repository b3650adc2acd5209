import DependencyInjection
import DependencyInjectionTesting
import Testing

// The trait's configuration runs on the main actor and may await: it can name main-actor
// registrations, build main-actor objects and seed async stores before the test starts.

/// A store that is filled asynchronously, as a database would be.
actor EventStore {
    private(set) var events: [String] = []
    func record(_ event: String) { events.append(event) }
}

/// A main-actor object that is not `Sendable`.
@MainActor final class ScreenModel {
    var title: String
    init(title: String) { self.title = title }
}

extension DependencyContainer {
    var eventStore: AsyncProvider<EventStore> { singleton { EventStore() } }
    @MainActor var screenModel: Provider<ScreenModel> { singleton { @MainActor in ScreenModel(title: "live") } }
}

@Suite struct MainActorConfigurationTests {
    @Test(.dependencies { container in
        try await container.eventStore().record("seeded")
    })
    func anAsyncConfigurationSeedsTheTestsStore() async throws {
        #expect(try await DependencyContainer.main.eventStore().events == ["seeded"])
        // The store was seeded in this test's container only.
        #expect(try await DependencyContainer.mocks.eventStore().events.contains("seeded") == false)
    }

    @Test(.dependencies { container in
        await Task.yield()
        #expect(DependencyContainer.main === container)
        try await container.eventStore().record("after a suspension")
    })
    func theContainerStaysMainAcrossTheConfigurationsSuspensions() async throws {
        #expect(try await DependencyContainer.main.eventStore().events == ["after a suspension"])
    }

    @Test(.dependencies { $0.override(\.screenModel) { @MainActor in ScreenModel(title: "configured") } })
    @MainActor func aConfigurationOverridesAMainActorRegistration() {
        #expect(DependencyContainer.main.screenModel().title == "configured")
        #expect(DependencyContainer.mocks.screenModel().title == "live")
    }

    @Test(.dependencies { container in
        // Builds a main-actor object in the configuration, which runs on the main actor.
        container.screenModel().title = "edited before the test"
    })
    @MainActor func aConfigurationBuildsMainActorObjects() {
        #expect(DependencyContainer.main.screenModel().title == "edited before the test")
    }

    @Test(.dependencies { container in
        try await container.eventStore().record("first")
    }, arguments: ["a", "b", "c"])
    func parallelTestsSeedTheirOwnStores(event: String) async throws {
        let store = try await DependencyContainer.main.eventStore()
        await store.record(event)
        #expect(await store.events == ["first", event])
    }

    @Test func aConfigurationThatThrowsAfterAwaitingFailsTheTestWithoutRunningIt() async throws {
        struct SeedingFailed: Error {}
        let trait: DependenciesTrait = .dependencies { container in
            try await container.eventStore().record("partial")
            throw SeedingFailed()
        }
        let test = try #require(Test.current)
        await #expect(throws: SeedingFailed.self) {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                Issue.record("the test ran although its configuration failed")
            }
        }
    }
}
