import DependencyInjection
import Foundation
import Testing

// A call of the provider a kept instance's `@Dependency` publishes (`importer.makeParser()`,
// fixtures in LinkedFactoryProviderTests) is app code's: a tracer hears of what it resolves
// as of a direct call, once the call's frame has ended.

extension DependencyContainer {
    /// What an object the tracer creates reads: the app's, unless a test world overrides it.
    var linkTraceDialect: Provider<String> { factory { "app" } }
}

/// An object that app code, here a tracer's callback, creates.
final class LinkTraceProbe: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.linkTraceDialect) var dialect
    init() {}
}

extension DependencyContainer {
    /// A getter that calls the importer's published provider before it makes its own, so
    /// that a first read of it runs the call inside the read.
    var linkTraceTitle: Provider<String> {
        let parser = importer().makeParser()
        return factory { "title in " + parser.dialect }
    }
}

/// A screen app code creates, whose first read runs a linked call.
final class LinkTraceScreen: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.linkTraceTitle) var title
    init() {}
}

@Suite struct LinkedCallTracingTests {
    /// The tracer runs once the call's frame has ended, so calling the same provider from
    /// it is a call like any other, not a cycle (and not traced: what a tracer resolves
    /// never is).
    @Test func aTracerThatCallsTheSameProviderFindsNoCycle() {
        let container = DependencyContainer()
        let importer = container.importer()
        let batches = Collected<[String]>()
        let fromTracer = Collected<String>()
        container.tracer = ResolutionTracer { events in
            batches.append(events.map { "\($0.name) \($0.depth)" })
            fromTracer.append(importer.makeParser().dialect)
        }
        _ = importer.makeParser()
        container.tracer = nil
        #expect(batches.values == [["makeParser 0"]])
        #expect(fromTracer.values == ["live"])
    }

    /// An object the tracer creates takes `main`, as anything app code creates outside a
    /// construction does: not the container the call resolved in, which an object created
    /// inside the call takes.
    @Test func anObjectTheTracerCreatesTakesMainNotTheCallsContainer() {
        let app = DependencyContainer()
        let world = DependencyContainer()
        world.override(\.linkTraceDialect) { "world" }
        let importer = app.importer()
        let read = Collected<String>()
        app.tracer = ResolutionTracer { _ in read.append(LinkTraceProbe().dialect) }
        DependencyContainer.withMain(world) { _ = importer.makeParser() }
        app.tracer = nil
        #expect(read.values == ["world"])
    }

    /// Calls in a row are a batch each, as direct calls are, each delivered before the
    /// call returns.
    @Test func eachCallIsABatchOfItsOwnDeliveredBeforeItReturns() {
        let container = DependencyContainer()
        let importer = container.importer()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        var heardBeforeReturning: [Int] = []
        for _ in 0..<3 {
            _ = importer.makeParser()
            heardBeforeReturning.append(batches.values.count)
        }
        container.tracer = nil
        #expect(heardBeforeReturning == [1, 2, 3])
        #expect(batches.values == Array(repeating: ["makeParser 0"], count: 3))
    }

    /// A linked call inside a first read goes out with the read's batch, once the read has
    /// published: a tracer that reads the same property then reads its value, where one run
    /// at the end of the call, inside the read, would find the read still running.
    @Test func aCallInsideAFirstReadIsDeliveredOnceTheReadHasPublished() {
        let app = DependencyContainer()
        _ = app.importer()
        let (first, screen) = DependencyContainer.withMain(app) { (LinkTraceScreen(), LinkTraceScreen()) }
        // The declaration's first read builds (a factory), so the next first read resolves
        // in the read's frame at once, without looking for a kept instance first.
        _ = first.title
        let batches = Collected<[String]>()
        let readByTracer = Collected<String>()
        app.tracer = ResolutionTracer { events in
            batches.append(events.map { "\($0.name) \($0.depth)" })
            readByTracer.append(screen.title)
        }
        let title = screen.title
        app.tracer = nil
        #expect(title == "title in live")
        #expect(readByTracer.values == ["title in live"])
        #expect(batches.values == [["importer 0", "makeParser 0", "linkTraceTitle 0"]])
    }

    /// Threads released together call a published provider while another sets and removes
    /// the tracer: no hang and no cycle, and every batch a tracer hears is one call's, at
    /// depth 0, with the singleton it needed one level below when the tracer was still set.
    @Test func threadsCallingThePublishedProviderWhileTheTracerChanges() async {
        let container = DependencyContainer()
        let importer = container.importer()
        let batches = Collected<[String]>()
        let tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<200 {
                if index == 0 { container.tracer = round.isMultiple(of: 2) ? tracer : nil }
                _ = importer.makeDerivedParser()
            }
        }
        container.tracer = nil
        #expect(finished)
        #expect(!batches.values.isEmpty)
        let calls: Set<[String]> = [["makeDerivedParser 0", "sharedParser 1"], ["makeDerivedParser 0"]]
        #expect(batches.values.allSatisfy(calls.contains), "\(Set(batches.values))")
    }
}
