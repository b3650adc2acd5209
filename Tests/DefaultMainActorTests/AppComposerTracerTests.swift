// Composers, decorations, tracers and placeholders in a main-actor app module,
// written as an app team writes them (plain protocols, classes with initializers,
// @Observable view models, the testing product's trait).
import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Observation
import Testing

// MARK: - App code

final class RVSettings {
    var verbose = true
    init() {}
}

final class RVLoggingStore: FeedStore {
    let wrapped: any FeedStore
    let settings: RVSettings
    private(set) var loads = 0
    init(wrapping wrapped: any FeedStore, settings: RVSettings) {
        self.wrapped = wrapped
        self.settings = settings
    }
    func load() -> [String] {
        loads += 1
        return wrapped.load()
    }
}

extension DependencyContainer {
    var rvSettings: Provider<RVSettings> { singleton { RVSettings() } }
    var rvStore: Provider<any FeedStore> { singleton { @MainActor in LiveFeedStore() } }
    var rvService: Provider<FeedService> { factory { FeedService(store: self.rvStore()) } }
    var rvTracker: Provider<any Tracker> { unimplemented(on: MainActor.self) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class RVFeedModel {
    @ObservationIgnored @Dependency(\.rvService) var service
    @ObservationIgnored @Dependency(\.rvStore) var store
    @ObservationIgnored @Dependency(\.rvTracker) var tracker
    var items: [String] = []
    init() {}
    func load() {
        items = service.headlines()
        tracker.track("loaded")
    }
}

// The composition root, as CompositionRoot.md writes it, in a main-actor module.
struct RVNetworkComposer: Composer {
    let items: [String]
    func compose(_ container: DependencyContainer) {
        container.override(\.rvStore) { @MainActor in StubFeedStore(items: items) }
    }
}

struct RVAnalyticsComposer: Composer {
    let tracker: RecordingTracker
    func compose(_ container: DependencyContainer) {
        container.override(\.rvTracker) { @MainActor in tracker }
    }
}

struct RVLoggingComposer: Composer {
    func compose(_ container: DependencyContainer) {
        container.decorate(\.rvStore) { @MainActor [unowned container] in
            RVLoggingStore(wrapping: $0, settings: container.rvSettings())
        }
    }
}

struct RVAppComposer: Composer {
    let environment: String
    let items: [String]
    let tracker: RecordingTracker
    func compose(_ container: DependencyContainer) {
        container.setValue(environment, forKey: "rv.environment")
        container.compose(RVNetworkComposer(items: items), RVAnalyticsComposer(tracker: tracker), RVLoggingComposer())
    }
}

// MARK: - Composers

@Suite(.dependencies) struct AppComposerTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aRootComposerWiresAViewModelsDependencies() throws {
        let tracker = RecordingTracker()
        DependencyContainer.main.compose(RVAppComposer(environment: "staging", items: ["a"], tracker: tracker))
        let model = RVFeedModel()
        model.load()
        #expect(model.items == ["A"])
        #expect(tracker.events == ["loaded"])
        let store = try #require(model.store as? RVLoggingStore)
        #expect(store.wrapped is StubFeedStore)
        #expect(store.loads == 1)
        #expect(store.settings === DependencyContainer.main.rvSettings())
        #expect(DependencyContainer.main.getValue(forKey: "rv.environment") == "staging")
    }

    /// Composing after an instance was cached drops it (CompositionRoot.md).
    @Test func composingAfterAResolutionDropsTheStaleInstance() {
        let world = DependencyContainer.main
        let before = world.rvService()
        #expect(before.headlines() == ["LIVE"])
        world.compose(RVNetworkComposer(items: ["late"]), RVLoggingComposer())
        #expect(world.rvService().headlines() == ["LATE"])
        #expect(world.rvStore() is RVLoggingStore)
    }
}

// MARK: - Tracers

@Suite(.dependencies) struct AppTracerTests {
    /// CompositionRoot.md: a tracer may resolve dependencies itself, even the one just
    /// built; its own resolutions are not traced.
    @Test func aTracerMayResolveWhatWasJustBuilt() {
        let world = DependencyContainer.main
        let log = UsageTraceLog()
        let resolved = RVObjects()
        world.tracer = ResolutionTracer { [unowned world] events in
            log.append(events)
            MainActor.assumeIsolated {
                resolved.items.append(world.rvStore() as AnyObject)
                resolved.items.append(world.rvService())
            }
        }
        let store = world.rvStore()
        let service = world.rvService()
        world.tracer = nil
        #expect(log.batches == [["rvStore 0"], ["rvService 0", "rvStore 1"]])
        #expect(resolved.items.count == 4)
        #expect(resolved.items.first === (store as AnyObject))
        #expect(resolved.items.last !== service)
    }

    /// A tracer that reads the property whose first read it hears of.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aTracerMayReadThePropertyWhoseReadItHeardOf() {
        let world = DependencyContainer.main
        world.override(\.rvTracker) { @MainActor in RecordingTracker() }
        let model = RVFeedModel()
        let log = UsageTraceLog()
        let read = RVObjects()
        world.tracer = ResolutionTracer { events in
            log.append(events)
            MainActor.assumeIsolated { read.items.append(model.store as AnyObject) }
        }
        let store = model.store
        world.tracer = nil
        #expect(log.batches == [["rvStore 0"]])
        #expect(read.items.count == 1)
        #expect(read.items.first === (store as AnyObject))
    }

    /// A tracer installed by a decoration while the construction runs hears of what that
    /// construction still resolves, from depth 0; the first hears of the rest.
    @Test func aTracerReplacedWhileAConstructionRuns() {
        let world = DependencyContainer.main
        let first = UsageTraceLog()
        let second = UsageTraceLog()
        world.tracer = ResolutionTracer { first.append($0) }
        world.decorate(\.rvStore) { @MainActor [unowned world] store in
            world.tracer = ResolutionTracer { second.append($0) }
            return RVLoggingStore(wrapping: store, settings: world.rvSettings())
        }
        _ = world.rvService()
        world.tracer = nil
        #expect(first.batches == [["rvService 0", "rvStore 1"]])
        #expect(second.batches == [["rvSettings 0"]])
    }
}

/// Main-actor objects a tracer collects.
final class RVObjects {
    var items: [AnyObject] = []
    init() {}
}

// MARK: - Many parallel test worlds

/// What one test world held, looked at after its test ended.
final class RVProbe {
    weak var world: DependencyContainer?
    weak var model: AnyObject?
    weak var store: AnyObject?
    weak var settings: RVSettings?
    var headlines: [String] = []
    var traced: [[String]] = []
    var tracked: [String] = []
    init() {}
}

@Suite struct AppParallelWorldTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func twoHundredWorldsWithComposersDecorationsAndTracersAreIsolatedAndFreed() async throws {
        let probes = (0..<200).map { _ in RVProbe() }
        let trait: DependenciesTrait = .dependencies { container in
            // Captures the world strongly: the end of the test must still free it.
            container.decorate(\.rvStore) { @MainActor in
                RVLoggingStore(wrapping: $0, settings: container.rvSettings())
            }
        }
        try await inParallelTestScopes(probes.count, of: { _ in trait }) { id in
            await Self.runTestBody(id: id, probe: probes[id])
        }
        for (id, probe) in probes.enumerated() {
            #expect(probe.headlines == ["CASE \(id)"])
            #expect(probe.tracked == ["loaded"])
            #expect(
                probe.traced == [["rvService 0", "rvStore 1", "rvSettings 2"], ["rvTracker 0"], ["rvStore 0"], ["rvSettings 0"]],
                "world \(id)")
            #expect(probe.world == nil, "world \(id)")
            #expect(probe.model == nil, "model \(id)")
            #expect(probe.store == nil, "store \(id)")
            #expect(probe.settings == nil, "settings \(id)")
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    static func runTestBody(id: Int, probe: RVProbe) async {
        let world = DependencyContainer.main
        let tracker = RecordingTracker()
        world.compose(RVNetworkComposer(items: ["case \(id)"]), RVAnalyticsComposer(tracker: tracker))
        let log = UsageTraceLog()
        world.tracer = ResolutionTracer { [unowned world] events in
            log.append(events)
            _ = MainActor.assumeIsolated { world.rvSettings() }
        }
        var model: RVFeedModel? = RVFeedModel()
        for _ in 0..<(id % 3) { await Task.yield() }
        model!.load()
        probe.headlines = model!.items
        probe.tracked = tracker.events
        probe.world = world
        probe.model = model
        probe.store = model!.store as AnyObject
        probe.settings = world.rvSettings()
        // The view model goes off the main actor.
        let box = UsageBox(model!)
        model = nil
        await usageOnAThreadOfItsOwn { box.take() }
        probe.traced = log.batches
    }
}

// MARK: - A scope that decorates

/// A session scope decorates the app's store: the app-wide service built from it is the
/// scope's own, traced or not; resetting the decoration shares the app's again.
@Suite(.dependencies) struct AppScopeDecorationTests {
    @Test(arguments: [false, true]) func aScopeThatDecoratesBuildsItsOwnSingletonFromIt(traced: Bool) throws {
        let app = DependencyContainer.main
        let appService = app.feedService()
        let scope = DependencyContainer(scopeOf: app)
        let log = UsageTraceLog()
        if traced { scope.tracer = ResolutionTracer { log.append($0) } }
        scope.decorate(\.feedStore) { @MainActor in CountingFeedStore(wrapping: $0) }
        let scoped = scope.feedService()
        #expect(scoped !== appService)
        #expect(scoped.store is CountingFeedStore)
        #expect(scope.feedService() === scoped)
        #expect(app.feedService() === appService)
        #expect(!(app.feedStore() is CountingFeedStore))
        let store = try #require(scope.feedStore() as? CountingFeedStore)
        #expect(isSameInstance(store, scoped.store))
        scope.reset(\.feedStore)
        #expect(scope.feedService() === appService)
        scope.tracer = nil
    }
}

// MARK: - 200 parallel test cases, each composed, decorated and traced in its own world

/// A screen without observation: its properties are taken when the suite value is made.
final class RVScreen {
    @Dependency(\.rvStore) var store
    init() {}
}

@Suite(.dependencies { container in
    container.compose(RVLoggingComposer())
    let log = UsageTraceLog()
    container.setValue(log, forKey: "rv.trace")
    container.tracer = ResolutionTracer { [unowned container] events in
        log.append(events)
        _ = MainActor.assumeIsolated { container.rvSettings() }
    }
})
struct AppParallelCaseTests {
    let screen = RVScreen()

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<200) func eachCaseSeesOnlyItsOwnComposition(id: Int) async throws {
        let world = DependencyContainer.main
        #expect(screen.$store.container === world)
        let model = RVFeedModel()
        let tracker = RecordingTracker()
        world.compose(RVNetworkComposer(items: ["case \(id)"]), RVAnalyticsComposer(tracker: tracker))
        for _ in 0..<(id % 4) { await Task.yield() }
        model.load()
        #expect(model.items == ["CASE \(id)"])
        #expect(tracker.events == ["loaded"])
        let store = try #require(model.store as? RVLoggingStore)
        #expect(store.settings === world.rvSettings())
        #expect(store.loads == 1)
        let log: UsageTraceLog = try #require(world.getValue(forKey: "rv.trace"))
        #expect(log.batches.prefix(2) == [["rvService 0", "rvStore 1", "rvSettings 2"], ["rvTracker 0"]])
    }
}
