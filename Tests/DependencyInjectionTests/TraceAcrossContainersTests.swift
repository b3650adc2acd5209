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

extension DependencyContainer {
    var crossTracePart: Provider<CrossTracePart> { factory { CrossTracePart() } }
    var crossTraceService: Provider<CrossTraceService> {
        singleton { CrossTraceService(part: self.crossTracePart()) }
    }
    var crossTraceHandler: Provider<CrossTraceHandler> {
        scoped { CrossTraceHandler(service: self.crossTraceService()) }
    }
}

@Suite struct TraceAcrossContainersTests {
    @Test func theAppContainersTracerHearsOfATreeOfItsOwnAtDepthZero() throws {
        let app = DependencyContainer()
        let appEvents = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { appEvents.append($0) }
        let request = DependencyContainer(scopeOf: app)
        let requestEvents = Collected<[ResolutionEvent]>()
        request.tracer = ResolutionTracer { requestEvents.append($0) }

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
}
