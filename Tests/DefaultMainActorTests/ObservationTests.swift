import DependencyInjection
import Observation
import Testing

/// An `@Observable` view model holds its dependencies in
/// `@ObservationIgnored @Dependency` properties: observers (SwiftUI, or
/// `withObservationTracking`) hear about its observed state, not about its dependencies.
@Suite struct ObservationTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func loadingThroughTheDependencyNotifiesObserversOfItems() async {
        let container = DependencyContainer()
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["a", "b"]) }
        let model = DependencyContainer.withMain(container) { FeedViewModel() }

        let events = await observationEvents(tracking: { _ = model.items }) { log in
            log("before load")
            model.load()
            log("after load")
        }
        #expect(events == ["before load", "onChange", "after load"])
        #expect(model.items == ["a", "b"])
    }

    /// The tracking reads the dependency and `items`: replacing the dependency in every
    /// way must not report a change, and the later change of `items` must.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func readingOrReplacingTheDependencyNotifiesNoOne() async {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }

        let events = await observationEvents(tracking: {
            _ = model.store.load()
            _ = model.items
        }) { log in
            container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["overridden"]) }
            model.$store.reset()
            #expect(model.store.load() == ["overridden"])
            model.store = StubFeedStore(items: ["set"])
            #expect(model.store.load() == ["set"])
            log("dependency replaced")
            model.load()
            log("items loaded")
        }
        #expect(events == ["dependency replaced", "onChange", "items loaded"])
        #expect(model.items == ["set"])
    }
}

/// Runs `change` after tracking what `observed` reads, and returns in order the lines
/// `change` logged and `"onChange"` where the tracking reported a change.
///
/// `onChange` runs synchronously, inside the mutation that triggers it, so the order of
/// the lines says which step changed what was tracked; no waiting is involved.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
func observationEvents(
    tracking observed: () -> Void, during change: (_ log: (String) -> Void) -> Void
) async -> [String] {
    let (stream, continuation) = AsyncStream.makeStream(of: String.self)
    withObservationTracking(observed) { continuation.yield("onChange") }
    change { continuation.yield($0) }
    continuation.finish()
    var events: [String] = []
    for await event in stream { events.append(event) }
    return events
}
