import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// What the decoration of `httpClient` resolves: a singleton of its own.
    var droClock: Provider<ScopeClock> {
        singleton {
            self.count("droClock")
            return ScopeClock(name: "decoration's clock")
        }
    }
}

/// Pins OverridesAndMocks.md (decorations): "It must not resolve what it decorates. … It
/// may resolve anything else; capture the container `[unowned app]` to do so".
@Suite struct DecorationResolvesOthersTests {
    @Test func aDecorationThatResolvesAnotherRegistrationThroughAnUnownedCaptureRunsOnce() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a decoration that resolves another registration")
            let container = DependencyContainer()
            let builds = container.counter("httpClient")
            let clocks = container.counter("droClock")
            let decorations = Counter()
            let seen = Collected<ScopeClock>()
            container.decorate(\.httpClient) { [unowned container] client in
                decorations.increment()
                seen.append(container.droClock())
                return WrappingHTTPClient(wrapping: client)
            }
            let client = container.httpClient()
            precondition(client.name == "logging(live)", "not decorated: \(client.name)")
            precondition(container.httpClient() === client, "the singleton was not kept")
            precondition(container.feedLoader().client === client, "a dependent got another instance")
            precondition(container.cachedFeedLoader().client === client, "a dependent got another instance")
            precondition(builds.count == 1, "built \(builds.count) times")
            precondition(decorations.count == 1, "decorated \(decorations.count) times")
            precondition(clocks.count == 1 && seen.values.count == 1 && seen.values[0] === container.droClock(),
                         "the decoration's dependency is not the container's singleton")
        }
    }
}
