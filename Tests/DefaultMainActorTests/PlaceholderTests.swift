import DependencyInjection
import DependencyInjectionTesting
import Testing

// A feature module of a main-actor app declares what another module supplies with plain
// protocols, as the rest of the app is written: `unimplemented()` and
// `unimplemented(placeholder:)` need no `Sendable` here.

protocol Tracker {
    func track(_ event: String)
    var events: [String] { get }
}

final class RecordingTracker: Tracker {
    private(set) var events: [String] = []
    func track(_ event: String) { events.append(event) }
}

final class NoTracker: Tracker {
    var events: [String] { [] }
    func track(_ event: String) {}
}

final class CheckoutModel {
    @Dependency(\.tracker) var tracker
    func pay() { tracker.track("paid") }
}

extension DependencyContainer {
    var tracker: Provider<any Tracker> { unimplemented() }
    var optionalTracker: Provider<any Tracker> { unimplemented(placeholder: NoTracker()) }
}

@Suite(.dependencies) struct PlaceholderTests {
    @Test func aPlaceholderOfAPlainProtocolIsSuppliedByTheAppsOverride() {
        let container = DependencyContainer.main
        container.override(\.tracker) { @MainActor in RecordingTracker() }
        let model = CheckoutModel()
        model.pay()
        #expect(container.tracker().events == ["paid"], "the model's tracker is not the container's one instance")
    }

    @Test func aPlaceholderWithAStandInIsReportedAndServesIt() {
        var served: (any Tracker)?
        withKnownIssue("the placeholder is reported") {
            served = DependencyContainer.main.optionalTracker()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("optionalTracker is not implemented in this module") }
        }
        #expect(served is NoTracker)
    }

    @Test func anOverrideReplacesTheStandIn() {
        DependencyContainer.main.override(\.optionalTracker) { @MainActor in RecordingTracker() }
        #expect(DependencyContainer.main.optionalTracker() is RecordingTracker)
    }
}
