import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// A singleton whose construction goes on only once the four threads resolving it
    /// have all arrived (stored `Arrivals`), so that the others find it in flight and wait.
    var heldSingleton: Provider<Node> {
        singleton {
            (self.getValue(forKey: "askers") as Arrivals?)?.wait(for: 4)
            return Node()
        }
    }
}

@Suite struct TraceTests {
    private func tracing(_ container: DependencyContainer) -> Collected<[ResolutionEvent]> {
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        return batches
    }

    @Test func offByDefault() {
        #expect(DependencyContainer().tracer == nil)
        #expect(DependencyContainer(parent: DependencyContainer()).tracer == nil)
    }

    @Test func reportsATreeInStartOrderWithDepths() throws {
        let container = DependencyContainer()
        let batches = tracing(container)
        _ = container.cachedFeedLoader()

        let tree = try #require(batches.values.first)
        #expect(batches.values.count == 1)
        #expect(tree.map(\.name) == ["cachedFeedLoader", "feedLoader", "httpClient"])
        #expect(tree.map(\.depth) == [0, 1, 2])
        #expect(tree.map(\.scope) == [.singleton, .factory, .singleton])
        #expect(tree.allSatisfy { $0.outcome == .built })
        #expect(tree.allSatisfy { $0.duration > 0 })
        #expect(tree[0].type == "FeedLoader")
        #expect(tree[0].duration >= tree[1].duration)
    }

    @Test func reportsCachedResolutions() {
        let container = DependencyContainer()
        _ = container.httpClient()
        _ = container.imageCacheHolder
        let batches = tracing(container)
        _ = container.httpClient()
        _ = container.feedLoader()
        let events = batches.values
        #expect(events.count == 2)
        #expect(events.first?.map(\.outcome) == [.cached])
        #expect(events.first?.first?.duration == 0)
        #expect(events.last?.map(\.outcome) == [.built, .cached])
        #expect(events.last?.map(\.depth) == [0, 1])
    }

    @Test func reportsOverrides() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        let batches = tracing(container)
        _ = container.feedLoader()
        #expect(batches.values.first?.map(\.outcome) == [.built, .builtFromOverride])
    }

    @Test func reportsSharedInstancesServedWhileHeld() {
        let container = DependencyContainer()
        let batches = tracing(container)
        let held = container.imageCache()
        _ = container.imageCache()
        #expect(batches.values.map { $0.map(\.outcome) } == [[.built], [.cached]])
        withExtendedLifetime(held) {}
    }

    @Test func childrenInheritAndFollowTheParentsTracer() {
        let parent = DependencyContainer()
        let early = DependencyContainer(parent: parent)
        let batches = tracing(parent)
        let late = DependencyContainer(parent: parent)
        _ = early.httpClient()
        _ = late.httpClient()
        #expect(batches.values.count == 2)

        parent.tracer = nil
        _ = early.feedLoader()
        #expect(batches.values.count == 2)
    }

    /// A thread arrives just before it asks, so one preempted between the two can still
    /// find the singleton cached: rounds repeat until one thread waited (the first round
    /// almost always has three).
    @Test func waitingThreadsReportAwaited() async {
        var outcomes: [ResolutionEvent.Outcome] = []
        for _ in 0..<100 {
            let container = DependencyContainer()
            let askers = Arrivals()
            container.setValue(askers, forKey: "askers")
            let batches = tracing(container)
            let threadsEnded = await concurrentlyOffThePool(threads: 4) { _ in
                askers.arrive()
                _ = container.heldSingleton()
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            outcomes = batches.values.flatMap { $0.map(\.outcome) }
            #expect(outcomes.count == 4)
            #expect(outcomes.filter { $0 == .built }.count == 1)
            #expect(outcomes.allSatisfy { [.built, .awaited, .cached].contains($0) })
            if outcomes.contains(.awaited) { break }
        }
        #expect(outcomes.contains(.awaited))
    }

    // MARK: - First reads of @Dependency properties

    /// An object that app code creates reads its property outside every construction:
    /// what the first read resolves is an outermost resolution, delivered when it ends,
    /// at depth 0, with what it needed nested under it.
    @Test func aPropertysFirstReadIsTracedAsAnOutermostResolution() throws {
        let container = DependencyContainer()
        let batches = tracing(container)
        let screen = DependencyContainer.withMain(container) { TracedScreen() }
        _ = screen.loader
        let tree = try #require(batches.values.first)
        #expect(batches.values.count == 1)
        #expect(tree.map(\.name) == ["cachedFeedLoader", "feedLoader", "httpClient"])
        #expect(tree.map(\.depth) == [0, 1, 2])
        #expect(tree.allSatisfy { $0.outcome == .built })
    }

    /// A first read served from the cache is reported as a cached resolution, as the
    /// container's own resolution of it is.
    @Test func aPropertysFirstReadOfACachedSingletonIsTracedAsCached() {
        let container = DependencyContainer()
        let loader = container.cachedFeedLoader()
        let batches = tracing(container)
        let screen = DependencyContainer.withMain(container) { TracedScreen() }
        #expect(screen.loader === loader)
        #expect(batches.values.map { $0.map(\.outcome) } == [[.cached]])
        #expect(batches.values.first?.first?.depth == 0)
    }

    /// A first read inside a construction is part of it: its events join the
    /// construction's batch, nested under the construction.
    @Test func aFirstReadInsideAConstructionJoinsItsBatch() throws {
        let container = DependencyContainer()
        let batches = tracing(container)
        _ = container.tracedScreenHolder()
        let tree = try #require(batches.values.first)
        #expect(batches.values.count == 1)
        #expect(tree.first?.name == "tracedScreenHolder")
        // The read is no level of its own: what it resolves is one level below the
        // construction, as what the construction resolves itself.
        #expect(tree.map(\.name) == ["tracedScreenHolder", "cachedFeedLoader", "feedLoader", "httpClient"])
        #expect(tree.map(\.depth) == [0, 1, 2, 3])
    }

    /// A tracer that reads a property of a new object itself, while a first read's batch is
    /// delivered, does not wait for that read, and what it resolves is not traced.
    @Test func aTracerMayReadPropertiesWhileAFirstReadsBatchIsDelivered() async {
        let container = DependencyContainer()
        let batches = Collected<[String]>()
        let ended = await finishesWithoutHangingOffThePool {
            container.tracer = ResolutionTracer { events in
                batches.append(events.map(\.name))
                let screen = DependencyContainer.withMain(container) { TracedScreen() }
                _ = screen.loader
            }
            let screen = DependencyContainer.withMain(container) { TracedScreen() }
            _ = screen.loader
        }
        #expect(ended)
        #expect(batches.values == [["cachedFeedLoader", "feedLoader", "httpClient"]])
    }

    /// The batch of a first read is delivered once the property is published: a tracer
    /// that reads that very property gets what the read published, with no cycle.
    @Test func aTracerMayReadThePropertyWhoseFirstReadItHearsOf() async {
        let container = DependencyContainer()
        let screen = DependencyContainer.withMain(container) { TracedScreen() }
        let readByTracer = Collected<ObjectIdentifier>()
        let ended = await finishesWithoutHangingOffThePool {
            container.tracer = ResolutionTracer { _ in readByTracer.append(ObjectIdentifier(screen.loader)) }
            _ = screen.loader
        }
        #expect(ended)
        #expect(readByTracer.values == [ObjectIdentifier(screen.loader)])
    }

    @Test func printerIndentsByDepth() {
        let container = DependencyContainer()
        let lines = Collected<String>()
        container.tracer = .printer { lines.append($0) }
        _ = container.feedLoader()
        _ = container.feedLoader()
        let printed = lines.values
        #expect(printed.count == 4)
        #expect(printed[0].hasPrefix("feedLoader: FeedLoader [factory] built in "))
        #expect(printed[0].hasSuffix(" ms"))
        #expect(printed[1].hasPrefix("  httpClient: HTTPClient [singleton] built in "))
        #expect(printed[3] == "  httpClient: HTTPClient [singleton] cached")
    }
}

/// A screen that app code creates, which reads its loader on first access.
private final class TracedScreen: @unchecked Sendable {
    @Dependency(\.cachedFeedLoader) var loader
    init() {}
}

/// Keeps a screen it creates and reads while it is built.
private final class TracedScreenHolder: Sendable {
    let screen: TracedScreen
    init() {
        screen = TracedScreen()
        _ = screen.loader
    }
}

extension DependencyContainer {
    fileprivate var tracedScreenHolder: Provider<TracedScreenHolder> { factory { TracedScreenHolder() } }
    fileprivate var imageCacheHolder: Int { 0 }
}

/// The tracer that a test's construction puts in place of its container's tracer, read
/// from a stored value.
final class TracerReplacement: Sendable {
    let tracer: ResolutionTracer
    init(_ tracer: ResolutionTracer) { self.tracer = tracer }
}

extension DependencyContainer {
    /// A factory whose construction replaces its container's tracer, then resolves the
    /// feed loader.
    fileprivate var loaderAfterTracerChange: Provider<any FeedLoader> {
        factory {
            if let replacement: TracerReplacement = self.getValue(forKey: "tracer-replacement") {
                self.tracer = replacement.tracer
            }
            return self.feedLoader()
        }
    }
}

@Suite struct TracerReplacedDuringAConstructionTests {
    /// An app that swaps its tracer (a debug menu turning on a verbose one) while a
    /// construction runs: the tracer the construction began with hears of it, and the new
    /// one hears of what the construction still resolves, as a tree of its own from depth 0.
    @Test func eachTracerHearsOfWhatResolvedWhileItWasSet() {
        let container = DependencyContainer()
        let first = Collected<[ResolutionEvent]>()
        let second = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { first.append($0) }
        container.setValue(TracerReplacement(ResolutionTracer { second.append($0) }), forKey: "tracer-replacement")
        _ = container.loaderAfterTracerChange()
        container.tracer = nil

        #expect(first.values.map { $0.map(\.name) } == [["loaderAfterTracerChange"]])
        #expect(first.values.first?.first?.depth == 0)
        #expect(second.values.map { $0.map(\.name) } == [["feedLoader", "httpClient"]])
        #expect(second.values.first?.map(\.depth) == [0, 1])
    }

    /// A tracer set while a construction that began untraced runs hears nothing of it: its
    /// events could only be delivered inside that construction. The next resolution is
    /// traced.
    @Test func aTracerSetDuringAnUntracedConstructionHearsOfTheNextResolution() {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.setValue(TracerReplacement(ResolutionTracer { batches.append($0) }), forKey: "tracer-replacement")
        _ = container.loaderAfterTracerChange()
        #expect(batches.values.isEmpty)
        _ = container.feedLoader()
        container.tracer = nil
        #expect(batches.values.map { $0.map(\.name) } == [["feedLoader", "httpClient"]])
    }
}
