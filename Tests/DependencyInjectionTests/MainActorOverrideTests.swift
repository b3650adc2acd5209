import DependencyInjection
import Testing

/// A nonisolated registration (as a library declares) replaced with a `@MainActor`
/// closure, as main-actor app code and tests write it.
@Suite struct MainActorOverrideTests {
    @Test func resolvedOnTheMainActorItBuildsTheReplacement() async {
        let container = DependencyContainer()
        let name = await MainActor.run {
            container.override(\.httpClient) { @MainActor in StubHTTPClient("main actor") }
            return container.httpClient().name
        }
        #expect(name == "main actor")
        #expect(await MainActor.run { container.feedLoader().client.name } == "main actor")
    }

    @Test func resolvedOffTheMainActorItStopsAndNamesTheRegistrationAndTheOverride() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            await MainActor.run {
                container.override(\.httpClient) { @MainActor in StubHTTPClient("main actor") }
            }
            _ = await Task.detached { container.httpClient() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "httpClient was overridden with a @MainActor closure (DependencyInjectionTests/MainActorOverrideTests.swift:"),
            "\(output)")
        #expect(output.contains(
            "and resolved off the main actor. Resolve it on the main actor, or override it with a closure that is not @MainActor."),
            "\(output)")
    }
}
