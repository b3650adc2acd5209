import DependencyInjection
import Testing

/// Thread-safe: its only state is `@Dependency` properties.
final class FeedViewModel: @unchecked Sendable {
    @Dependency(\.feedLoader) var loader
    @Dependency(\.httpClient) var client
    @Dependency(\.baseURL) var baseURL
    @Dependency(\.token) var token
}

final class ExplicitContainerModel {
    @Dependency(\.baseURL, container: .mocks) var baseURL
}

@Suite struct DependencyTests {
    // MARK: - Resolution

    @Test func providerKeyPathYieldsTheService() {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        #expect(model.client === container.httpClient())
        #expect(model.loader.client === container.httpClient())
        #expect(model.baseURL == "https://api.example.com")
    }

    @Test func resolvesLazilyOnFirstAccessThenKeepsTheValue() {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        #expect(builds.count == 0)

        let first = model.loader
        let second = model.loader
        #expect(first === second)
        #expect(builds.count == 1)
    }

    @Test func optionalRegistrationKeepsAResolvedNil() {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        #expect(model.token == nil)
        container.setValue("late", forKey: "token")
        #expect(model.token == nil)
        model.$token.reset()
        #expect(model.token == "late")
    }

    // MARK: - Which container

    @Test func takesMainAsItIsWhenTheOwnerIsCreated() {
        let first = DependencyContainer()
        let second = DependencyContainer(isMocked: true)
        let model = DependencyContainer.withMain(first) { FeedViewModel() }
        DependencyContainer.withMain(second) {
            #expect(model.$baseURL.container === first)
            #expect(model.baseURL == "https://api.example.com")
        }
    }

    @Test func explicitContainerArgument() {
        let model = ExplicitContainerModel()
        #expect(model.$baseURL.container === DependencyContainer.mocks)
        #expect(model.baseURL == "http://localhost:8080")
    }

    @Test func switchingContainerResolvesAgainFromIt() {
        let model = DependencyContainer.withMain(DependencyContainer()) { FeedViewModel() }
        #expect(model.baseURL == "https://api.example.com")
        model.$baseURL.container = DependencyContainer(isMocked: true)
        #expect(model.baseURL == "http://localhost:8080")
    }

    // MARK: - Reset and set

    @Test func resetResolvesAgainOnNextAccess() {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        let first = model.loader
        model.$loader.reset()
        let second = model.loader
        #expect(first !== second)  // a factory: a new loader
        #expect(first.client === second.client)  // over the same singleton client
    }

    @Test func settingTheWrappedValueReplacesItUntilReset() {
        let model = DependencyContainer.withMain(DependencyContainer()) { FeedViewModel() }
        let stub = StubHTTPClient("set")
        model.client = stub
        #expect(model.client === stub)
        model.$client.reset()
        #expect(model.client.name == "live")
    }

    @Test func eachOwnerHasItsOwnStorage() {
        let container = DependencyContainer()
        let (a, b) = DependencyContainer.withMain(container) { (FeedViewModel(), FeedViewModel()) }
        #expect(a.loader !== b.loader)
        a.client = StubHTTPClient()
        #expect(b.client.name == "live")
    }
}
