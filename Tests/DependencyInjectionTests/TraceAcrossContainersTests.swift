import DependencyInjection
import Foundation
import Testing

// One resolution that crosses containers with tracers of their own: a request's scoped
// handler built from an app-wide service, which the app container builds from its
// parts: each tracer hears of its own container's events, as a tree of its own whose
// outermost event is at depth 0.

final class CrossTracePart: Sendable {
    init() {}
}

final class CrossTraceService: Sendable {
    let part: CrossTracePart
    init(part: CrossTracePart) { self.part = part }
}

final class CrossTraceHandler: Sendable {
    let service: CrossTraceService
    init(service: CrossTraceService) { self.service = service }
}

final class CrossTraceOther: Sendable {
    init() {}
}

/// Why the throwing handler failed.
struct CrossTraceFailure: Error {}

/// The order the tasks of `crossTraceTasksHandler` take: the scoped part starts, then
/// the app's first singleton, then the part resolves the app's second singleton, and only
/// then does the first singleton end.
final class CrossTraceTaskOrder: Sendable {
    let partStarted = AsyncLatch()
    let firstStarted = AsyncLatch()
    let secondBuilt = AsyncLatch()
    init() {}
}

extension DependencyContainer {
    /// A scoped handler that resolves an app singleton, then a scoped part that resolves
    /// another: the two app singletons are siblings, under different request events.
    var crossTraceSiblingsHandler: Provider<CrossTraceOther> {
        scoped {
            _ = self.crossTraceFirstSibling()
            _ = self.crossTraceSiblingPart()
            return CrossTraceOther()
        }
    }
    var crossTraceSiblingPart: Provider<CrossTraceOther> {
        scoped {
            _ = self.crossTraceSecondSibling()
            return CrossTraceOther()
        }
    }
    var crossTraceFirstSibling: Provider<CrossTraceOther> { singleton { CrossTraceOther() } }
    /// A scoped handler whose two tasks resolve at once: one a scoped part, which resolves
    /// the app's second singleton, the other the app's first, which is still being built
    /// when the second begins, at a greater depth of the batch, and does not enclose it.
    var crossTraceTasksHandler: AsyncProvider<CrossTraceOther> {
        scoped { () async throws -> CrossTraceOther in
            let order: CrossTraceTaskOrder = self.getValue(forKey: "crossTraceOrder")!
            let part = Task { try await self.crossTraceTaskPart() }
            let first = Task { () async throws -> CrossTraceOther in
                await order.partStarted.wait()
                return try await self.crossTraceTaskFirst()
            }
            _ = (try await first.value, try await part.value)
            return CrossTraceOther()
        }
    }
    var crossTraceTaskPart: AsyncProvider<CrossTraceOther> {
        scoped { () async throws -> CrossTraceOther in
            let order: CrossTraceTaskOrder = self.getValue(forKey: "crossTraceOrder")!
            order.partStarted.open()
            await order.firstStarted.wait()
            _ = try await self.crossTraceTaskSecond()
            order.secondBuilt.open()
            return CrossTraceOther()
        }
    }
    var crossTraceTaskFirst: AsyncProvider<CrossTraceOther> {
        singleton { () async throws -> CrossTraceOther in
            let order: CrossTraceTaskOrder = self.getValue(forKey: "crossTraceOrder")!
            order.firstStarted.open()
            await order.secondBuilt.wait()
            return CrossTraceOther()
        }
    }
    var crossTraceTaskSecond: AsyncProvider<CrossTraceOther> { singleton { CrossTraceOther() } }
    var crossTraceSecondSibling: Provider<CrossTraceOther> { singleton { CrossTraceOther() } }
    var crossTraceOther: Provider<CrossTraceOther> { singleton { CrossTraceOther() } }
    /// A scoped part built from the app's service, then the app's other singleton: the
    /// app container's tracer hears of two trees, the first deeper than the second.
    var crossTraceWideHandler: Provider<CrossTraceHandler> {
        scoped {
            let handler = CrossTraceHandler(service: self.crossTraceScopedService())
            _ = self.crossTraceOther()
            return handler
        }
    }
    var crossTraceScopedService: Provider<CrossTraceService> {
        scoped { self.crossTraceService() }
    }
    /// Builds the scoped handler, then throws: what it built is delivered below it.
    var crossTraceThrowingHandler: AsyncProvider<CrossTraceHandler> {
        factory { () async throws -> CrossTraceHandler in
            _ = self.crossTraceHandler()
            throw CrossTraceFailure()
        }
    }
    var crossTracePart: Provider<CrossTracePart> { factory { CrossTracePart() } }
    var crossTraceService: Provider<CrossTraceService> {
        singleton { CrossTraceService(part: self.crossTracePart()) }
    }
    var crossTraceHandler: Provider<CrossTraceHandler> {
        scoped { CrossTraceHandler(service: self.crossTraceService()) }
    }
}

@Suite struct TraceAcrossContainersTests {
    /// An app container and a request's scope of it, each with a tracer of its own, and
    /// the batches each hears of.
    static func requestWithTracers() -> (
        app: DependencyContainer, request: DependencyContainer, appEvents: Collected<[ResolutionEvent]>,
        requestEvents: Collected<[ResolutionEvent]>
    ) {
        let app = DependencyContainer()
        let appEvents = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { appEvents.append($0) }
        let request = DependencyContainer(scopeOf: app)
        let requestEvents = Collected<[ResolutionEvent]>()
        request.tracer = ResolutionTracer { requestEvents.append($0) }
        return (app, request, appEvents, requestEvents)
    }

    @Test func theAppContainersTracerHearsOfATreeOfItsOwnAtDepthZero() throws {
        // The request holds its app container.
        let (_, request, appEvents, requestEvents) = Self.requestWithTracers()

        _ = request.crossTraceHandler()

        #expect(requestEvents.values.map { $0.map(\.name) } == [["crossTraceHandler"]])
        #expect(requestEvents.values.first?.first?.depth == 0)
        let appTree = try #require(appEvents.values.first)
        #expect(appEvents.values.count == 1)
        #expect(appTree.map(\.name) == ["crossTraceService", "crossTracePart"])
        #expect(appTree.map(\.depth) == [0, 1])
    }

    /// One tracer on both: one tree, the depths as they are.
    @Test func oneTracerOnBothContainersHearsOfTheWholeTree() throws {
        let app = DependencyContainer()
        let events = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { events.append($0) }
        let request = DependencyContainer(scopeOf: app)

        _ = request.crossTraceHandler()

        let tree = try #require(events.values.first)
        #expect(events.values.count == 1)
        #expect(tree.map(\.name) == ["crossTraceHandler", "crossTraceService", "crossTracePart"])
        #expect(tree.map(\.depth) == [0, 1, 2])
    }

    /// The app container's tracer hears of the service (and its part) and of the other
    /// singleton, at depths 2, 3 and 1 of the request's tree: two trees of its own, each
    /// from depth 0, never an event deeper than the one before it with nothing above it.
    @Test func aTracerHearingTwoTreesHearsOfEachFromDepthZero() throws {
        // The request holds its app container.
        let (_, request, appEvents, requestEvents) = Self.requestWithTracers()

        _ = request.crossTraceWideHandler()

        let requestTree = try #require(requestEvents.values.first)
        #expect(requestTree.map(\.name) == ["crossTraceWideHandler", "crossTraceScopedService"])
        #expect(requestTree.map(\.depth) == [0, 1])
        let appTree = try #require(appEvents.values.first)
        #expect(appEvents.values.count == 1)
        #expect(appTree.map(\.name) == ["crossTraceService", "crossTracePart", "crossTraceOther"])
        #expect(appTree.map(\.depth) == [0, 1, 0])
    }

    /// An async resolution that throws has no event of its own: what it built is
    /// delivered one level below it, to each tracer.
    @Test func whatAThrowingResolutionBuiltIsBelowItForEveryTracer() async throws {
        // The request holds its app container.
        let (_, request, appEvents, requestEvents) = Self.requestWithTracers()

        await #expect(throws: CrossTraceFailure.self) { try await request.crossTraceThrowingHandler() }

        #expect(requestEvents.values.map { $0.map(\.name) } == [["crossTraceHandler"]])
        #expect(requestEvents.values.first?.map(\.depth) == [1])
        #expect(appEvents.values.map { $0.map(\.name) } == [["crossTraceService", "crossTracePart"]])
        #expect(appEvents.values.first?.map(\.depth) == [1, 2])
    }

    /// Two app singletons, the second below a request event that is no part of the
    /// first: the app container's tracer hears of two trees, not of the second below
    /// the first.
    @Test func siblingsUnderAnotherTracersEventsAreNotNested() throws {
        // The request holds its app container.
        let (_, request, appEvents, requestEvents) = Self.requestWithTracers()

        _ = request.crossTraceSiblingsHandler()

        let requestTree = try #require(requestEvents.values.first)
        #expect(requestTree.map(\.name) == ["crossTraceSiblingsHandler", "crossTraceSiblingPart"])
        #expect(requestTree.map(\.depth) == [0, 1])
        let appTree = try #require(appEvents.values.first)
        #expect(appTree.map(\.name) == ["crossTraceFirstSibling", "crossTraceSecondSibling"])
        #expect(appTree.map(\.depth) == [0, 0])
    }

    /// The same across tasks a construction starts, which fill one batch at once: the
    /// app's second singleton begins while the first is still being built, deeper in the
    /// batch than the first, but inside another task's part. The app container's tracer
    /// hears of two trees.
    @Test func siblingsThatTasksResolveAtOnceAreNotNested() async throws {
        let (app, request, appEvents, requestEvents) = Self.requestWithTracers()
        let order = CrossTraceTaskOrder()
        // What the app-wide singletons read comes from the app container.
        app.setValue(order, forKey: "crossTraceOrder")
        request.setValue(order, forKey: "crossTraceOrder")

        _ = try await request.crossTraceTasksHandler()

        let requestTree = try #require(requestEvents.values.first)
        #expect(requestTree.map(\.name) == ["crossTraceTasksHandler", "crossTraceTaskPart"])
        #expect(requestTree.map(\.depth) == [0, 1])
        let appTree = try #require(appEvents.values.first)
        #expect(appTree.map(\.name) == ["crossTraceTaskFirst", "crossTraceTaskSecond"])
        #expect(appTree.map(\.depth) == [0, 0])
    }

    /// One tracer on both containers hears of the batch's own depths: the second app
    /// singleton below the part that resolved it.
    @Test func oneTracerHearsOfWhatTasksResolveAtOnceAtTheirDepths() async throws {
        let app = DependencyContainer()
        let events = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { events.append($0) }
        let request = DependencyContainer(scopeOf: app)
        let order = CrossTraceTaskOrder()
        app.setValue(order, forKey: "crossTraceOrder")
        request.setValue(order, forKey: "crossTraceOrder")

        _ = try await request.crossTraceTasksHandler()

        let tree = try #require(events.values.first)
        #expect(tree.map(\.name) == ["crossTraceTasksHandler", "crossTraceTaskPart", "crossTraceTaskFirst", "crossTraceTaskSecond"])
        #expect(tree.map(\.depth) == [0, 1, 1, 2])
    }
}
