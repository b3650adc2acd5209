import DependencyInjection
import Testing

@Suite struct OverrideTests {
    // MARK: - Override

    @Test func overrideReplacesTheRegistration() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(container.httpClient().name == "stub")
    }

    @Test func overrideReachesEveryDependent() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(container.feedLoader().client.name == "stub")
        #expect(container.cachedFeedLoader().client.name == "stub")
    }

    @Test func overriddenSingletonKeepsItsScope() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(container.httpClient() === container.httpClient())
    }

    @Test func noCachedInstanceBuiltFromTheReplacedDependencyIsServed() {
        let container = DependencyContainer()
        let rebuilds = container.counter("cachedFeedLoader")
        let before = container.cachedFeedLoader()
        #expect(before.client.name == "live")

        container.override(\.httpClient) { StubHTTPClient() }
        let after = container.cachedFeedLoader()
        #expect(after !== before)
        #expect(after.client.name == "stub")
        #expect(rebuilds.count == 2)
    }

    @Test func unrelatedSingletonsSurviveAnOverride() {
        let container = DependencyContainer()
        let session = container[session: "1"]()
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(container[session: "1"]() === session)
    }

    @Test func overrideOneArgumentOfAParameterizedRegistration() {
        let container = DependencyContainer()
        let special = UserSession(id: "special")
        container.override(\.[session: "42"]) { special }
        #expect(container[session: "42"]() === special)
        #expect(container[session: "7"]().id == "7")
    }

    @Test func overridingAgainReplacesTheFirstOverride() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient("one") }
        #expect(container.httpClient().name == "one")
        container.override(\.httpClient) { StubHTTPClient("two") }
        #expect(container.httpClient().name == "two")
    }

    // MARK: - Reset

    @Test func resetDropsOverridesAndInstances() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        let loader = container.cachedFeedLoader()
        container.reset()
        #expect(container.httpClient().name == "live")
        #expect(container.cachedFeedLoader() !== loader)
    }

    @Test func resetKeepsStoredValues() {
        let container = DependencyContainer()
        container.setValue("kept", forKey: "token")
        container.reset()
        #expect(container.token == "kept")
    }

    @Test func resetOneDropsOnlyThatRegistrationAndItsDependents() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        let loader = container.cachedFeedLoader()
        let session = container[session: "1"]()

        container.reset(\.httpClient)
        #expect(container.httpClient().name == "live")
        #expect(container.cachedFeedLoader() !== loader)
        #expect(container.cachedFeedLoader().client.name == "live")
        #expect(container[session: "1"]() === session)
    }

    // MARK: - Child containers

    @Test func childSeesParentOverridesChildFirst() {
        let parent = DependencyContainer()
        parent.override(\.httpClient) { StubHTTPClient("parent") }
        let child = DependencyContainer(parent: parent)
        #expect(child.httpClient().name == "parent")

        child.override(\.httpClient) { StubHTTPClient("child") }
        #expect(child.httpClient().name == "child")
        #expect(parent.httpClient().name == "parent")
    }

    @Test func childOverridesAndCachesNeverReachTheParent() {
        let parent = DependencyContainer()
        let parentClient = parent.httpClient()
        let child = DependencyContainer(parent: parent)
        child.override(\.httpClient) { StubHTTPClient() }
        _ = child.cachedFeedLoader()

        #expect(parent.httpClient() === parentClient)
        #expect(parent.cachedFeedLoader().client.name == "live")
    }

    @Test func parentOverrideDropsWhatTheChildBuiltFromTheOldRegistration() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let grandchild = DependencyContainer(parent: child)
        #expect(child.cachedFeedLoader().client.name == "live")
        #expect(grandchild.cachedFeedLoader().client.name == "live")

        parent.override(\.httpClient) { StubHTTPClient() }
        #expect(child.cachedFeedLoader().client.name == "stub")
        #expect(grandchild.cachedFeedLoader().client.name == "stub")

        parent.reset()
        #expect(child.cachedFeedLoader().client.name == "live")
        #expect(grandchild.cachedFeedLoader().client.name == "live")
    }

    @Test func overrideReachesDependencyProperties() {
        let container = DependencyContainer(parent: .mocks)
        container.override(\.httpClient) { StubHTTPClient() }
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        #expect(model.client.name == "stub")
        #expect(model.loader.client.name == "stub")
    }
}
