import DependencyInjection
import DependencyInjectionTesting
import Testing

@Suite struct DependenciesTraitTests {
    // MARK: - The test's container

    @Test(.dependencies) func eachTestGetsAFreshChildOfMocks() {
        let container = DependencyContainer.main
        #expect(container !== DependencyContainer.mocks)
        #expect(container.parent === DependencyContainer.mocks)
        #expect(container.isMocked)
        #expect(container.baseURL == "http://localhost:8080")
    }

    @Test(.dependencies(parent: .default)) func anotherParentCanBeChosen() {
        let container = DependencyContainer.main
        #expect(container.parent === DependencyContainer.default)
        #expect(!container.isMocked)
        #expect(container.baseURL == "https://api.example.com")
    }

    @Test(.dependencies(parent: .default) { $0.setValue("live-token", forKey: "token") })
    func anotherParentWithAConfiguration() {
        #expect(DependencyContainer.main.parent === DependencyContainer.default)
        #expect(DependencyContainer.main.token == "live-token")
    }

    @Test(.dependencies { container in
        container.override(\.httpClient) { StubHTTPClient("configured") }
        container.setValue("secret", forKey: "token")
    })
    func configurationPreparesTheContainer() {
        #expect(DependencyContainer.main.httpClient().name == "configured")
        #expect(DependencyContainer.main.token == "secret")
        #expect(DependencyContainer.mocks.token == nil)
    }

    @Test(.dependencies { container in
        #expect(DependencyContainer.main === container)
        container.setValue(FeedViewModel(), forKey: "model")
    })
    func configurationRunsWithTheContainerAsMain() throws {
        let model: FeedViewModel = try #require(DependencyContainer.main.getValue(forKey: "model"))
        #expect(model.$loader.container === DependencyContainer.main)
    }

    // MARK: - What sees the container

    @Test(.dependencies { $0.override(\.httpClient) { StubHTTPClient("mine") } })
    func objectsCreatedInTheTestResolveFromIt() {
        let model = FeedViewModel()
        #expect(model.$loader.container === DependencyContainer.main)
        #expect(model.loader.client.name == "mine")
    }

    @Test(.dependencies) func childTasksInheritTheContainerDetachedTasksDoNot() async {
        let container = DependencyContainer.main
        #expect(await Task { DependencyContainer.main }.value === container)
        async let fromAsyncLet = DependencyContainer.main
        #expect(await fromAsyncLet === container)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<10 { group.addTask { DependencyContainer.main === container } }
            for await same in group { #expect(same) }
        }
        #expect(await Task.detached { DependencyContainer.main }.value !== container)
    }

    @Test(.dependencies, arguments: 0..<3) func eachArgumentGetsItsOwnContainer(argument: Int) {
        let container = DependencyContainer.main
        #expect(container.token == nil)
        container.setValue("\(argument)", forKey: "token")
        #expect(container.parent === DependencyContainer.mocks)
    }

    @Test func withoutTheTraitMainIsTheProcessWideContainer() {
        #expect(DependencyContainer.main.parent == nil)
    }

    @Test(.dependencies) func aTraitAppliedInsideAnotherConfiguresTheSameContainer() async throws {
        let outer = DependencyContainer.main
        let trait: DependenciesTrait = .dependencies { $0.setValue("inner", forKey: "token") }
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            #expect(DependencyContainer.main === outer)
            #expect(DependencyContainer.main.token == "inner")
        }
    }

    // MARK: - Failures

    @Test func aThrowingConfigurationFailsTheTestWithoutRunningIt() async throws {
        struct SetUpFailed: Error {}
        let trait: DependenciesTrait = .dependencies { _ in throw SetUpFailed() }
        let test = try #require(Test.current)
        await #expect(throws: SetUpFailed.self) {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                Issue.record("the test ran although its configuration failed")
            }
        }
    }
}

// MARK: - Suite and test configuration

/// Appends `entry` to the list stored under `"order"`, to see which configurations ran,
/// in which order.
private func log(_ entry: String, in container: DependencyContainer) {
    let order: [String] = container.getValue(forKey: "order") ?? []
    container.setValue(order + [entry], forKey: "order")
}

@Suite(.dependencies { container in
    log("suite", in: container)
    container.override(\.httpClient) { StubHTTPClient("suite") }
    container.setValue("suite", forKey: "token")
})
struct SuiteConfigurationTests {
    /// Swift Testing creates the suite for each test inside the test's scope, so this
    /// model resolves from the test's container.
    let model = FeedViewModel()

    @Test func appliesToEachTest() {
        #expect(DependencyContainer.main.parent === DependencyContainer.mocks)
        #expect(DependencyContainer.main.httpClient().name == "suite")
        #expect(DependencyContainer.main.getValue(forKey: "order") == ["suite"])
    }

    @Test func suitePropertiesResolveFromTheTestContainer() {
        #expect(model.$loader.container === DependencyContainer.main)
        #expect(model.loader.client.name == "suite")
        #expect(model.token == "suite")
    }

    @Test(.dependencies { container in
        log("test", in: container)
        container.setValue("test", forKey: "token")
    })
    func testConfigurationGoesOnTopInOneContainer() {
        let container = DependencyContainer.main
        #expect(container.getValue(forKey: "order") == ["suite", "test"])
        #expect(container.token == "test")
        #expect(container.httpClient().name == "suite")
        #expect(container.parent === DependencyContainer.mocks)   // not a child of a child
    }

    @Test(.dependencies(parent: .default)) func testLevelParentWins() {
        let container = DependencyContainer.main
        #expect(container.parent === DependencyContainer.default)
        #expect(container.httpClient().name == "suite")
        #expect(container.getValue(forKey: "order") == ["suite"])
    }

    @Suite(.dependencies { container in
        log("nested", in: container)
        container.override(\.httpClient) { StubHTTPClient("nested") }
    })
    struct Nested {
        @Test(.dependencies { log("test", in: $0) }) func outerSuiteFirstThenInnerThenTest() {
            let container = DependencyContainer.main
            #expect(container.getValue(forKey: "order") == ["suite", "nested", "test"])
            #expect(container.httpClient().name == "nested")
            #expect(container.token == "suite")
            #expect(container.parent === DependencyContainer.mocks)
        }
    }
}

// MARK: - One trait on a suite and on a test in it

/// One trait value, put on a suite and again on a test in it.
private let sharedConfiguration: DependenciesTrait = .dependencies { log("shared", in: $0) }

@Suite(sharedConfiguration) struct OneTraitOnASuiteAndATestTests {
    @Test(sharedConfiguration) func runsItsConfigurationOnce() {
        #expect(DependencyContainer.main.getValue(forKey: "order") == ["shared"])
    }

    @Test(sharedConfiguration, .dependencies { log("test", in: $0) })
    func runsOnceBeforeTheTestsOwn() {
        #expect(DependencyContainer.main.getValue(forKey: "order") == ["shared", "test"])
    }
}
