import DependencyInjection
import DependencyInjectionTesting
import Testing

/// What a test creates goes away with it. These tests run a `.dependencies` scope by
/// hand, exactly as Swift Testing runs it around a test case, so that they can look
/// after it has ended. (They carry no trait themselves: inside another test's scope, a
/// trait configures that scope's container instead of making one.)
@Suite struct ReleaseTests {
    // MARK: - What the test made

    @Test func overridesMadeInATestAreReleasedWhenItEnds() async throws {
        let stub = WeakReference<StubHTTPClient>()
        let container = WeakReference<DependencyContainer>()
        let model = WeakReference<FeedViewModel>()
        let trait: DependenciesTrait = .dependencies

        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            let client = StubHTTPClient("released")
            stub.object = client
            container.object = DependencyContainer.main
            DependencyContainer.main.override(\.httpClient) { client }
            let viewModel = FeedViewModel()
            model.object = viewModel
            #expect(viewModel.loader.client === client)
            #expect(DependencyContainer.main.httpClient() === client)
        }

        #expect(stub.object == nil, "the override's object outlived its test")
        #expect(model.object == nil)
        #expect(container.object == nil, "the test's container outlived its test")
    }

    @Test func whatTheConfigurationCreatesIsReleasedToo() async throws {
        let stub = WeakReference<StubHTTPClient>()
        let trait: DependenciesTrait = .dependencies { container in
            let client = StubHTTPClient("configured")
            stub.object = client
            container.override(\.httpClient) { client }
        }
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            #expect(DependencyContainer.main.httpClient().name == "configured")
        }
        #expect(stub.object == nil)
    }

    // MARK: - What holds the container itself

    @Test func aContainerCapturedByItsOwnOverrideIsReleased() async throws {
        let released = WeakReference<DependencyContainer>()
        let trait: DependenciesTrait = .dependencies { container in
            released.object = container
            container.override(\.feedLoader) { FeedLoader(client: container.httpClient()) }
        }
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            #expect(DependencyContainer.main.feedLoader().client.name == "live")
        }
        #expect(released.object == nil, "the override's closure kept the test's container alive")
    }

    @Test func aContainerCapturedByASingletonItCachedIsReleased() async throws {
        let released = WeakReference<DependencyContainer>()
        let trait: DependenciesTrait = .dependencies
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            let container = DependencyContainer.main
            released.object = container
            container.setValue("token", forKey: "token")
            #expect(container.tokenReader().read() == "token")
        }
        #expect(released.object == nil, "the cached singleton kept the test's container alive")
    }

    /// A test that installs a tracer capturing its world and ends before it removes it
    /// (a `#require` that throws first, or no removal at all).
    @Test func aContainerCapturedByItsTracerIsReleased() async throws {
        let released = WeakReference<DependencyContainer>()
        let trait: DependenciesTrait = .dependencies
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            let container = DependencyContainer.main
            released.object = container
            container.tracer = ResolutionTracer { _ in _ = container.isMocked }
            #expect(container.feedLoader().client.name == "live")
        }
        #expect(released.object == nil, "the tracer kept the test's container alive")
    }

    @Test func aContainerHeldByAnObjectItStoresIsReleased() async throws {
        let released = WeakReference<DependencyContainer>()
        let trait: DependenciesTrait = .dependencies
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            let container = DependencyContainer.main
            released.object = container
            let model = FeedViewModel()   // its properties resolve from the container
            container.setValue(model, forKey: "model")
            #expect(model.loader.client.name == "live")
        }
        #expect(released.object == nil, "the stored model kept the test's container alive")
    }

    // MARK: - Every run

    @Test func eachRunOfAScopeGetsANewContainer() async throws {
        let seen = Locked<[DependencyContainer]>([])
        let trait: DependenciesTrait = .dependencies
        let test = try #require(Test.current)
        for _ in 0..<2 {
            try await trait.provideScope(for: test, testCase: Test.Case.current) {
                let container = DependencyContainer.main
                #expect(container.token == nil)
                container.setValue("written", forKey: "token")
                seen.withValue { $0.append(container) }
            }
        }
        let containers = seen.value
        #expect(containers.count == 2 && containers[0] !== containers[1])
    }
}
