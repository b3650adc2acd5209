import DependencyInjection
import Foundation
import Testing

// An importer that makes a parser for each file it imports, through the provider a
// `@Dependency` keeps as its value: `@Dependency(\.makeParser) var makeParser:
// Provider<ImportParser>`. The importer is a service the container keeps (a singleton, or
// a request's scoped instance), so the provider it keeps must not keep the container.

final class ImportParser: Sendable {
    let dialect: String
    init(dialect: String = "live") { self.dialect = dialect }
}

/// Calls its providers where it needs a parser: a new one from the factory, the
/// container's one from the singleton.
final class Importer: @unchecked Sendable {
    @Dependency(\.makeParser) var makeParser: Provider<ImportParser>
    @Dependency(\.sharedParser) var sharedParser: Provider<ImportParser>
    @Dependency(\.makeDerivedParser) var makeDerivedParser: Provider<ImportParser>
    init() {}
}

extension DependencyContainer {
    var makeParser: Provider<ImportParser> { factory { ImportParser() } }
    var sharedParser: Provider<ImportParser> { singleton { ImportParser(dialect: "shared") } }
    var makeDerivedParser: Provider<ImportParser> {
        factory { ImportParser(dialect: "derived from " + self.sharedParser().dialect) }
    }
    /// A factory whose construction calls the importer's provider.
    var parsedImport: Provider<ImportParser> { factory { self.importer().makeParser() } }
    var importer: Provider<Importer> { singleton { Importer() } }
    var requestImporter: Provider<Importer> { scoped { Importer() } }
}

/// A `Provider` that a `@Dependency` of a kept instance keeps as its value resolves in
/// that container, reading the registration anew on each call, and does not keep the
/// container alive.
@Suite struct LinkedFactoryProviderTests {
    // MARK: - What the published provider resolves

    @Test func aKeptInstancesProviderBuildsInItsContainer() {
        let container = DependencyContainer()
        let importer = container.importer()
        let first = importer.makeParser()
        let second = importer.makeParser()
        #expect(first !== second, "a factory builds anew on every call")
        #expect(first.dialect == "live")
        #expect(importer.sharedParser() === container.sharedParser())
        #expect(importer.sharedParser() === importer.sharedParser())
    }

    /// The provider reads the registration anew on each call: an override installed after
    /// the property was first read reaches it, and so does its reset.
    @Test func overridesInstalledAfterTheFirstReadReachThePublishedProvider() {
        let container = DependencyContainer()
        let makeParser = container.importer().makeParser
        #expect(makeParser().dialect == "live")

        container.override(\.makeParser) { ImportParser(dialect: "stub") }
        #expect(makeParser().dialect == "stub")

        container.reset(\.makeParser)
        #expect(makeParser().dialect == "live")
    }

    // MARK: - Lifetimes

    @Test func aSingletonsProviderPropertyDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        weak var releasedImporter: Importer?
        weak var releasedShared: ImportParser?
        do {
            let container = DependencyContainer()
            released = container
            let importer = container.importer()
            releasedImporter = importer
            _ = importer.makeParser()
            releasedShared = importer.sharedParser()
        }
        #expect(released == nil, "the container was kept alive by its own singleton's provider")
        #expect(releasedImporter == nil)
        #expect(releasedShared == nil)
    }

    /// A request scope's scoped instance calls the providers; the scope goes with the
    /// request, and the app's singleton it used stays the app's.
    @Test func aRequestScopeWhoseInstanceCallsThePublishedProviderIsFreed() {
        let app = DependencyContainer()
        weak var releasedScope: DependencyContainer?
        weak var releasedImporter: Importer?
        do {
            let request = DependencyContainer(scopeOf: app)
            releasedScope = request
            request.override(\.makeParser) { ImportParser(dialect: "request") }
            let importer = request.requestImporter()
            releasedImporter = importer
            #expect(importer.makeParser().dialect == "request")
            #expect(importer.sharedParser() === app.sharedParser())
        }
        #expect(releasedScope == nil, "the request scope was kept alive by its own scoped instance")
        #expect(releasedImporter == nil)
        #expect(app.instanceIfBuilt(\.sharedParser) != nil)
    }

    /// Only a property whose owner the container keeps publishes a linked provider: an
    /// object that app code creates holds its container, and so does the provider it keeps,
    /// which goes on working after every other holder of the container is gone.
    @Test func anObjectCreatedByAppCodeKeepsAProviderThatKeepsItsContainer() {
        weak var released: DependencyContainer?
        let importer: Importer
        do {
            let container = DependencyContainer()
            released = container
            container.override(\.makeParser) { ImportParser(dialect: "app code's") }
            importer = DependencyContainer.withMain(container) { Importer() }
            _ = importer.makeParser
        }
        #expect(released != nil)
        #expect(importer.makeParser().dialect == "app code's")
    }

    /// Two links to one registration, in two containers, may call each other: what the
    /// first builds asks the second. Neither call is the other's cycle.
    @Test func twoLinksToOneRegistrationCallingEachOtherAreNoCycle() {
        let outer = DependencyContainer()
        let inner = DependencyContainer()
        let innerImporter = inner.importer()
        outer.override(\.makeParser) {
            ImportParser(dialect: "outer around " + innerImporter.makeParser().dialect)
        }
        #expect(outer.importer().makeParser().dialect == "outer around live")
    }

    /// The provider resolving its own registration inside its own call is a cycle, named as
    /// any other, not an endless recursion.
    @Test func thePublishedProviderCalledInsideItsOwnCallStopsAsACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a published provider called inside its own call")
            let container = DependencyContainer()
            let importer = container.importer()
            container.override(\.makeParser) { importer.makeParser() }
            _ = importer.makeParser()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: makeParser"), "\(output)")
    }

    @Test func callingAPublishedProviderAfterItsContainerIsGoneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a published provider called after its container")
            let makeParser = { () -> Provider<ImportParser> in
                let container = DependencyContainer()
                return withExtendedLifetime(container) { container.importer().makeParser }
            }()
            _ = makeParser()
        }
        let output = standardError(of: result)
        #expect(output.contains("makeParser: the container this provider resolves in was released"), "\(output)")
    }

    // MARK: - Tracing

    /// A tracer sees a call of the published provider as a call of the registration's:
    /// from app code, an outermost resolution, with what it needed nested under it.
    @Test func aCallOfThePublishedProviderIsTracedAsTheRegistrations() {
        let container = DependencyContainer()
        let importer = container.importer()
        let (makeParser, makeDerived) = (importer.makeParser, importer.makeDerivedParser)
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        _ = makeParser()
        _ = makeDerived()
        container.tracer = nil
        #expect(batches.values == [["makeParser 0"], ["makeDerivedParser 0", "sharedParser 1"]])
    }

    /// Inside a traced construction, the call's resolutions join the construction's batch,
    /// one level below it, as a direct call's would.
    @Test func aCallOfThePublishedProviderInsideAConstructionJoinsItsBatch() {
        let container = DependencyContainer()
        _ = container.importer().makeParser
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        _ = container.parsedImport()
        container.tracer = nil
        #expect(batches.values == [["parsedImport 0", "importer 1", "makeParser 1"]])
    }

    // MARK: - Under load

    /// Threads released together call the published providers while another installs and
    /// removes an override: each call builds from the registration or from the override, the
    /// singleton is the container's on every thread, and the container is freed after.
    @Test func threadsCallingThePublishedProviderWhileOverridesChange() async {
        weak var released: DependencyContainer?
        let dialects = Collected<String>()
        let shared = Collected<ObjectIdentifier>()
        var finished = false
        do {
            let container = DependencyContainer()
            released = container
            let expectedShared = ObjectIdentifier(container.sharedParser())
            finished = await concurrentlyOffThePool(threads: 8) { index in
                let importer = container.importer()
                for round in 0..<100 {
                    if index == 0 {
                        if round.isMultiple(of: 2) {
                            container.override(\.makeParser) { ImportParser(dialect: "stub") }
                        } else {
                            container.reset(\.makeParser)
                        }
                    } else {
                        dialects.append(importer.makeParser().dialect)
                        shared.append(ObjectIdentifier(importer.sharedParser()))
                    }
                }
            }
            #expect(Set(shared.values) == [expectedShared])
        }
        #expect(finished)
        #expect(Set(dialects.values).isSubset(of: ["live", "stub"]))
        #expect(dialects.values.count == 7 * 100)
        #expect(released == nil)
    }
}
