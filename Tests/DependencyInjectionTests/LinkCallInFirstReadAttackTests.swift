@testable import DependencyInjection
import Foundation
import Testing

// A `@Dependency` whose key path leads to a plain property of the container (not a
// provider): the property's getter is its construction, and runs inside the first read's
// frame. Here the getter calls the provider a kept instance published
// (`importer().makeParser()`, fixtures in LinkedFactoryProviderTests), so the link call's
// frame runs inside the first read's frame.

extension DependencyContainer {
    /// The parser the app's importer makes, through the provider its `@Dependency` published.
    var lcirImportedParser: ImportParser { importer().makeParser() }
    /// The same, resolved directly: the control.
    var lcirDirectParser: ImportParser { makeParser() }
}

/// A screen app code creates, which takes its parser from the importer.
final class LCIRScreen: @unchecked Sendable {
    @Dependency(\.lcirImportedParser) var parser: ImportParser
    @Dependency(\.lcirDirectParser) var directParser: ImportParser
    init() {}
}

@Suite struct LinkCallInFirstReadAttackTests {
    /// ResolutionTracer: "The first read of a `@Dependency` property of an object that app code
    /// created ... is no construction: what it resolves is an outermost resolution, at depth 0,
    /// delivered once the property holds its value". The control: with a direct call in the
    /// getter, the tracer hears of it once the property holds its value.
    @Test func controlDirectCallInTheGetterIsDeliveredOnceTheReadPublished() {
        let container = DependencyContainer()
        let screen = DependencyContainer.withMain(container) { LCIRScreen() }
        let insideAFrame = Collected<Bool>()
        container.tracer = ResolutionTracer { _ in insideAFrame.append(ThreadFrames.isBuilding) }
        _ = screen.directParser
        container.tracer = nil
        #expect(insideAFrame.values == [false])
    }

    /// The same with a linked call in the getter: the link call's batch is delivered when
    /// the call's frame ends, which is inside the first read, before the property holds its
    /// value.
    @Test func linkedCallInTheGetterIsDeliveredOnceTheReadPublished() {
        let container = DependencyContainer()
        let importer = container.importer()
        _ = importer
        let screen = DependencyContainer.withMain(container) { LCIRScreen() }
        let insideAFrame = Collected<Bool>()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in
            batches.append(events.map { "\($0.name) \($0.depth)" })
            insideAFrame.append(ThreadFrames.isBuilding)
        }
        _ = screen.parser
        container.tracer = nil
        #expect(batches.values.joined().contains("makeParser 0"), "\(batches.values)")
        #expect(insideAFrame.values.allSatisfy { !$0 }, "heard inside the first read's frame: \(insideAFrame.values), batches \(batches.values)")
    }

    /// An object the tracer creates takes `main`, as the commit's test says for a linked call
    /// (LinkedCallTracingTests.anObjectTheTracerCreatesTakesMainNotTheCallsContainer) and as
    /// it does for a direct call in a first read: not the container of the read it runs in.
    @Test(arguments: [false, true]) func anObjectTheTracerCreatesTakesMain(linked: Bool) {
        let app = DependencyContainer()
        let world = DependencyContainer()
        world.override(\.linkTraceDialect) { "world" }
        _ = app.importer()
        let screen = DependencyContainer.withMain(app) { LCIRScreen() }
        let read = Collected<String>()
        app.tracer = ResolutionTracer { _ in read.append(LinkTraceProbe().dialect) }
        DependencyContainer.withMain(world) {
            if linked { _ = screen.parser } else { _ = screen.directParser }
        }
        app.tracer = nil
        #expect(read.values == ["world"], "linked: \(linked)")
    }

    /// "so a tracer may read that property too": the control, a direct call in the getter.
    @Test func aTracerMayReadThatPropertyTooDirect() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = container.importer()
            let screen = DependencyContainer.withMain(container) { LCIRScreen() }
            container.tracer = ResolutionTracer { _ in _ = screen.directParser }
            _ = screen.directParser
            container.tracer = nil
        }
        let output = standardError(of: result)
        #expect(!output.contains("Circular dependency") && output.isEmpty, "\(output.suffix(1500))")
    }

    /// The same with a linked call in the getter: reading the property from the tracer is a
    /// cycle that stops the process, since the tracer runs inside the first read.
    @Test func aTracerMayReadThatPropertyTooLinked() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = container.importer()
            let screen = DependencyContainer.withMain(container) { LCIRScreen() }
            container.tracer = ResolutionTracer { _ in _ = screen.parser }
            _ = screen.parser
            container.tracer = nil
        }
        let output = standardError(of: result)
        #expect(!output.contains("Circular dependency") && output.isEmpty, "\(output.suffix(1500))")
    }
}


extension DependencyContainer {
    /// A provider whose getter calls the importer's published provider (the getter runs on
    /// the first read of a property that leads to it), and its direct control.
    var lcirLinkedGetter: Provider<ImportParser> {
        let parser = importer().makeParser()
        return factory { ImportParser(dialect: "via " + parser.dialect) }
    }
    var lcirDirectGetter: Provider<ImportParser> {
        let parser = makeParser()
        return factory { ImportParser(dialect: "via " + parser.dialect) }
    }
    var lcirKeptOwner: Provider<LCIRKeptOwner> { singleton { LCIRKeptOwner() } }
}

/// A singleton that keeps the providers as its values (published linked).
final class LCIRKeptOwner: @unchecked Sendable {
    @Dependency(\.lcirLinkedGetter) var makeLinked: Provider<ImportParser>
    @Dependency(\.lcirDirectGetter) var makeDirect: Provider<ImportParser>
    init() {}
}

@Suite struct LinkCallInProviderGetterAttackTests {
    /// The first read of a kept instance's property whose registration's getter calls a
    /// published provider: the tracer must run outside the read, as it does for the direct
    /// control.
    @Test(arguments: [false, true]) func theTracerRunsOutsideTheRead(linked: Bool) {
        let container = DependencyContainer()
        _ = container.importer()
        let owner = container.lcirKeptOwner()
        let heard = Collected<String>()
        container.tracer = ResolutionTracer { events in
            heard.append("\(events.map { "\($0.name) \($0.depth)" }) building: \(ThreadFrames.isBuilding)")
        }
        if linked { _ = owner.makeLinked } else { _ = owner.makeDirect }
        container.tracer = nil
        #expect(!heard.values.isEmpty)
        #expect(heard.values.allSatisfy { $0.hasSuffix("building: false") }, "linked: \(linked): \(heard.values)")
    }
}
