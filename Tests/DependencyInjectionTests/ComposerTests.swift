import DependencyInjection
import Testing

private struct ValueComposer: Composer {
    let key: String
    let value: String
    func compose(_ container: DependencyContainer) {
        container.setValue(value, forKey: key)
    }
}

private struct StubClientComposer: Composer {
    func compose(_ container: DependencyContainer) {
        container.override(\.httpClient) { StubHTTPClient("composed") }
    }
}

private struct RootComposer: Composer {
    func compose(_ container: DependencyContainer) {
        container.setValue("root", forKey: "environment")
        container.compose(StubClientComposer(), ValueComposer(key: "token", value: "from-feature"))
    }
}

@Suite struct ComposerTests {
    @Test func composersApplyInOrder() {
        let container = DependencyContainer()
        container.compose(
            ValueComposer(key: "token", value: "first"),
            ValueComposer(key: "token", value: "second"))
        #expect(container.token == "second")
    }

    @Test func aRootComposerComposesFeatureComposers() {
        let container = DependencyContainer()
        container.compose(RootComposer())
        #expect(container.getValue(forKey: "environment") == "root")
        #expect(container.token == "from-feature")
        #expect(container.feedLoader().client.name == "composed")
    }

    @Test func composeTakesAList() {
        let container = DependencyContainer()
        let composers: [any Composer] = [StubClientComposer(), ValueComposer(key: "token", value: "x")]
        container.compose(composers)
        #expect(container.httpClient().name == "composed")
        #expect(container.token == "x")
    }
}
