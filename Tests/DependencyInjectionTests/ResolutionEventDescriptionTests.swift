@testable import DependencyInjection
import Foundation
import Testing

/// Pins ResolutionTracer.swift:7-13, 46-49 and 77-78: a ``ResolutionEvent``'s
/// `description` "is the line ``ResolutionTracer/printer`` prints", shown as
/// `feedLoader: FeedLoader [factory] built in 0.041 ms` / `  httpClient: HTTPClient
/// [singleton] cached`; events may be created by hand "to test code that consumes them";
/// the line is "indented by two spaces per level of depth, such as
/// `  httpClient: HTTPClient [singleton] built in 0.012 ms`".
@Suite struct ResolutionEventDescriptionTests {
    private func event(
        _ name: String, _ type: String, _ scope: DependencyScope, _ outcome: ResolutionEvent.Outcome,
        depth: Int = 0, duration: UInt64 = 0
    ) -> ResolutionEvent {
        ResolutionEvent(name: name, type: type, scope: scope, outcome: outcome, depth: depth, duration: duration)
    }

    @Test func theDocumentedTraceLinesComeBackAsTheDocsShowThem() {
        #expect(event("feedLoader", "FeedLoader", .factory, .built, duration: 41_000).description
            == "feedLoader: FeedLoader [factory] built in 0.041 ms")
        #expect(event("httpClient", "HTTPClient", .singleton, .cached, depth: 1).description
            == "  httpClient: HTTPClient [singleton] cached")
        #expect(event("httpClient", "HTTPClient", .singleton, .built, depth: 1, duration: 12_000).description
            == "  httpClient: HTTPClient [singleton] built in 0.012 ms")
    }

    @Test func aBuildTimeIsShownInMillisecondsRoundedToThreeDecimals() {
        #expect(event("a", "A", .singleton, .built, duration: 41_499).description == "a: A [singleton] built in 0.041 ms")
        #expect(event("a", "A", .singleton, .built, duration: 41_501).description == "a: A [singleton] built in 0.042 ms")
    }

    @Test func anOverridesBuildShowsItsOutcomeAndTime() {
        #expect(event("httpClient", "HTTPClient", .singleton, .builtFromOverride, duration: 41_000).description
            == "httpClient: HTTPClient [singleton] built from override in 0.041 ms")
    }

    @Test func anAwaitedOrCachedInstanceShowsNoTime() {
        #expect(event("database", "Database", .singleton, .awaited).description == "database: Database [singleton] awaited")
        #expect(event("imageCache", "ImageCache", .shared, .cached, depth: 2).description
            == "    imageCache: ImageCache [shared] cached")
    }

    @Test func eachLevelOfDepthIndentsByTwoSpaces() {
        for depth in 0...4 {
            let line = event("node", "Node", .graph, .cached, depth: depth).description
            #expect(line == String(repeating: "  ", count: depth) + "node: Node [graph] cached", "\(line)")
        }
    }

    @Test func thePrinterPrintsEachEventsDescriptionOnItsOwnLine() {
        let events = [
            event("feedLoader", "FeedLoader", .factory, .built, duration: 41_000),
            event("httpClient", "HTTPClient", .singleton, .cached, depth: 1),
            event("requestHandler", "RequestHandler", .scoped, .builtFromOverride, depth: 1, duration: 12_000),
            event("database", "Database", .singleton, .awaited, depth: 2),
        ]
        let lines = Collected<String>()
        ResolutionTracer.printer { lines.append($0) }.deliver(events)
        #expect(lines.values == events.map(\.description))
        #expect(lines.values == [
            "feedLoader: FeedLoader [factory] built in 0.041 ms",
            "  httpClient: HTTPClient [singleton] cached",
            "  requestHandler: RequestHandler [scoped] built from override in 0.012 ms",
            "    database: Database [singleton] awaited",
        ])
    }
}
