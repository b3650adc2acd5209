// An app team's tests, in a main-actor-default module: plain protocols, classes with
// initializers, @Observable view models with @Dependency properties, Swift Testing with
// the .dependencies trait or worlds of their own.
import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Observation
import Testing

// MARK: - App code

protocol ATKAnalytics {
    func track(_ event: String)
}

final class ATKRecordingAnalytics: ATKAnalytics {
    private(set) var events: [String] = []
    func track(_ event: String) { events.append(event) }
}

/// Forwards to a sink the test owns, so what a deinit tracks is seen after the world is gone.
final class ATKSinkAnalytics: ATKAnalytics {
    let sink: ATKSink
    init(sink: ATKSink) { self.sink = sink }
    func track(_ event: String) { sink.events.append(event) }
}

final class ATKSink {
    var events: [String] = []
    init() {}
}

struct ATKHost {
    let name: String
}

final class ATKImageLoader {
    let host: String
    init(host: String) { self.host = host }
}

extension DependencyContainer {
    var atkAnalytics: Provider<any ATKAnalytics> { singleton { @MainActor in ATKRecordingAnalytics() } }

    // The article's helper (RegisteringDependencies, "Helpers that return providers").
    func cached<T: Sendable>(name: StaticString = #function, fileID: StaticString = #fileID,
                             line: UInt = #line, column: UInt = #column,
                             isolation: (any Actor)? = #isolation,
                             _ make: @escaping () -> T) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, isolation: isolation, make)
    }
    // The same helper for the app's own (main-actor, non-Sendable) classes.
    func cachedOnMain<T>(name: StaticString = #function, fileID: StaticString = #fileID,
                         line: UInt = #line, column: UInt = #column,
                         _ make: @escaping @MainActor () -> T) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, make)
    }

    var atkAPIHost: Provider<ATKHost> { cached { ATKHost(name: "api") } }
    var atkCDNHost: Provider<ATKHost> { cached { ATKHost(name: "cdn") } }
    var atkAPIImages: Provider<ATKImageLoader> { cachedOnMain { ATKImageLoader(host: self.atkAPIHost().name) } }
    var atkCDNImages: Provider<ATKImageLoader> { cachedOnMain { ATKImageLoader(host: self.atkCDNHost().name) } }
}

/// A detail screen's model that reports its closing, in its deinit.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class ATKDetailModel {
    @ObservationIgnored @Dependency(\.atkAnalytics) var analytics
    var title: String
    init(title: String) { self.title = title }
    isolated deinit { analytics.track("closed \(title)") }
}

/// A model whose deinit says whether `main` there is the world it was created in.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class ATKMainReportingModel {
    @ObservationIgnored @Dependency(\.atkAnalytics) var analytics
    @ObservationIgnored let createdIn = DependencyContainer.main
    let sink: ATKSink
    init(sink: ATKSink) { self.sink = sink }
    isolated deinit {
        sink.events.append("main is the test's world: \(DependencyContainer.main === createdIn)")
        analytics.track("closed")
    }
}

/// A model a suite stores, which Swift Testing creates for each of its test cases.
final class ATKSuiteStoredModel {
    @Dependency(\.atkAnalytics) var analytics
    init() {}
}

/// A coordinator the app keeps: it makes its first screen's model as it is built.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ATKCoordinator {
    let first: ATKDetailModel
    var pushed: [ATKDetailModel] = []
    init() { first = ATKDetailModel(title: "first") }
    func push(_ title: String) { pushed.append(ATKDetailModel(title: title)) }
    func popAll() { pushed.removeAll() }
}

extension DependencyContainer {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var atkCoordinator: Provider<ATKCoordinator> { singleton { ATKCoordinator() } }
}

// MARK: - Tests

@Suite struct AppTeamAttackTests {
    // Helpers

    @Test(.dependencies) func theArticlesCachedHelperKeepsEachPropertyItsOwnRegistration() {
        let world = DependencyContainer.main
        #expect(world.atkAPIHost().name == "api")
        #expect(world.atkCDNHost().name == "cdn")
        #expect(world.atkAPIImages().host == "api")
        #expect(world.atkCDNImages().host == "cdn")
        #expect(world.atkAPIImages() !== world.atkCDNImages())
        world.override(\.atkAPIImages) { @MainActor in ATKImageLoader(host: "stub") }
        #expect(world.atkAPIImages().host == "stub")
        #expect(world.atkCDNImages().host == "cdn")
        world.override(\.atkCDNHost) { ATKHost(name: "cdn-stub") }
        #expect(world.atkCDNImages().host == "cdn-stub")
        #expect(world.atkAPIHost().name == "api")
    }

    // What WritingTests says of an isolated deinit: it runs without the test's task-local
    // values, so `main` there is the process-wide one; a `@Dependency` property read there
    // for the first time still resolves from the world its object was created in.

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func anIsolatedDeinitSeesTheProcessWideMainButItsPropertiesTheTestsWorld() {
        let sink = ATKSink()
        let world = DependencyContainer.main
        world.override(\.atkAnalytics) { @MainActor in ATKSinkAnalytics(sink: sink) }
        var model: ATKMainReportingModel? = ATKMainReportingModel(sink: sink)
        _ = model
        model = nil
        #expect(sink.events == ["main is the test's world: false", "closed"])
    }

    // Models made in a singleton's construction, whose deinits first read a dependency

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func modelsACoordinatorMadeInItsConstructionTrackThroughItsWorld() throws {
        let sink = ATKSink()
        let world = DependencyContainer.main
        world.override(\.atkAnalytics) { @MainActor in ATKSinkAnalytics(sink: sink) }
        do {
            let coordinator = world.atkCoordinator()
            coordinator.push("b")
            coordinator.push("c")
            coordinator.popAll()
            #expect(sink.events == ["closed b", "closed c"])
            #expect(coordinator.first.$analytics.container === world)
        }
        world.reset(\.atkCoordinator)
        #expect(sink.events == ["closed b", "closed c", "closed first"])
    }
}

// MARK: - The app's own container for previews, as OverridesAndMocks writes it

extension DependencyContainer {
    static let atkPreview: DependencyContainer = {
        let container = DependencyContainer(isMocked: true)
        container.setValue("Preview User", forKey: "userName")
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["preview"]) }
        return container
    }()
}

// MARK: - Many parallel tests whose models track in their deinits

/// What one test's world held, looked at after the test ended.
final class ATKProbe {
    weak var world: DependencyContainer?
    weak var coordinator: ATKCoordinator?
    weak var first: AnyObject?
    weak var pushed: AnyObject?
    weak var loose: AnyObject?
    var seen: [String] = []
    init() {}
}

@Suite struct AppTeamParallelAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func manyParallelTestsWhoseModelsTrackInTheirDeinitsAreAllFreed() async throws {
        let probes = (0..<200).map { _ in ATKProbe() }
        let sinks = (0..<200).map { _ in ATKSink() }
        try await inParallelTestScopes(probes.count, of: { id in
            .dependencies { container in
                let sink = sinks[id]
                container.override(\.atkAnalytics) { @MainActor in ATKSinkAnalytics(sink: sink) }
            }
        }) { id in
            await Self.runTestBody(id: id, probe: probes[id])
        }
        for _ in 0..<1000 where probes.contains(where: { $0.world != nil || $0.coordinator != nil }) {
            await Task.yield()
        }
        for (id, probe) in probes.enumerated() {
            #expect(probe.seen == ["closed loose \(id)", "closed popped \(id)"], "case \(id)")
            #expect(probe.world == nil, "world \(id)")
            #expect(probe.coordinator == nil, "coordinator \(id)")
            #expect(probe.first == nil, "first \(id)")
            #expect(probe.pushed == nil, "pushed \(id)")
            #expect(probe.loose == nil, "loose \(id)")
            #expect(sinks[id].events.prefix(2) == ["closed loose \(id)", "closed popped \(id)"], "sink \(id)")
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    static func runTestBody(id: Int, probe: ATKProbe) async {
        let world = DependencyContainer.main
        let coordinator = world.atkCoordinator()
        var loose: ATKDetailModel? = await Task { ATKDetailModel(title: "loose \(id)") }.value
        probe.loose = loose
        loose = nil
        coordinator.push("popped \(id)")
        await Task.yield()
        coordinator.popAll()
        coordinator.push("kept \(id)")
        probe.world = world
        probe.coordinator = coordinator
        probe.first = coordinator.first
        probe.pushed = coordinator.pushed.first
        let analytics = world.atkAnalytics() as? ATKSinkAnalytics
        probe.seen = analytics?.sink.events ?? []
    }
}

// MARK: - Changes that land while a main-actor construction is under way

final class ATKAsyncFeed {
    let store: any FeedStore
    init(store: any FeedStore) { self.store = store }
}

extension DependencyContainer {
    var atkGate: UsageGate? { getValue(forKey: "atk.gate") }
    var atkAsyncFeed: AsyncProvider<ATKAsyncFeed> {
        singleton { @MainActor in
            let store = self.feedStore()
            await self.atkGate?.pass()
            return ATKAsyncFeed(store: store)
        }
    }
}

@Suite struct AppTeamMidConstructionAttackTests {
    @Test(.dependencies) func anOverrideOfWhatAnAsyncSingletonReadLandsWhileItAwaits() async throws {
        let world = DependencyContainer.main
        let gate = UsageGate()
        world.setValue(gate, forKey: "atk.gate")
        let building = Task { try await world.atkAsyncFeed() }
        await gate.waitForArrival()
        world.override(\.feedStore) { @MainActor in StubFeedStore(items: ["new"]) }
        gate.open()
        _ = try await building.value
        let after = try await world.atkAsyncFeed()
        #expect(after.store.load() == ["new"], "an async singleton built from the replaced store was kept")
        #expect(try await world.atkAsyncFeed() === after)
    }

    @Test(.dependencies) func aResetOfTheWorldLandsWhileAnAsyncSingletonAwaits() async throws {
        let world = DependencyContainer.main
        world.override(\.feedStore) { @MainActor in StubFeedStore(items: ["old"]) }
        let gate = UsageGate()
        world.setValue(gate, forKey: "atk.gate")
        let building = Task { try await world.atkAsyncFeed() }
        await gate.waitForArrival()
        world.reset()
        gate.open()
        let first = try await building.value
        #expect(first.store.load() == ["old"])
        let after = try await world.atkAsyncFeed()
        #expect(after.store.load() == ["live"], "an async singleton built before the reset was kept")
    }
}

// MARK: - Property forms an app writes

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class ATKGalleryModel {
    @ObservationIgnored @Dependency(\.[thumbnails: 64]) var thumbnails
    @ObservationIgnored @Dependency(\.feedStore) var store: any FeedStore
    @ObservationIgnored @Dependency(\.feedStore) var makeStore: Provider<any FeedStore>
    @ObservationIgnored @Dependency(\.[draft: 7]) var draft
    @ObservationIgnored @Dependency(\.feedStore, container: .atkPreview) var previewStore
    var count = 0
}

@Suite struct AppTeamPropertyFormAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies { $0.override(\.feedStore) { @MainActor in StubFeedStore(items: ["t"]) } })
    func everyFormResolvesFromTheTestsWorld() {
        let model = ATKGalleryModel()
        #expect(model.thumbnails.size == 64)
        #expect(model.store.load() == ["t"])
        #expect(isSameInstance(model.makeStore(), model.store))
        #expect(model.draft.documentID == 7)
        #expect(model.draft === DependencyContainer.main[draft: 7]())
        #expect(model.previewStore.load() == ["preview"])
        DependencyContainer.main.override(\.feedStore) { @MainActor in StubFeedStore(items: ["u"]) }
        #expect(model.makeStore().load() == ["u"])
        #expect(model.store.load() == ["t"])
    }
}

// MARK: - Main-actor values a world drops off the main actor

protocol ATKResource: AnyObject {}

final class ATKLiveResource: ATKResource {
    let onDeinit: (@Sendable (String) -> Void)?
    let label: String
    init(label: String, onDeinit: (@Sendable (String) -> Void)?) { (self.label, self.onDeinit) = (label, onDeinit) }
    deinit { onDeinit?(label + (usageIsOnTheMainActorsThread() ? " main" : " off")) }
}

final class ATKWrappedResource: ATKResource {
    let wrapped: any ATKResource
    let onDeinit: (@Sendable (String) -> Void)?
    init(wrapping wrapped: any ATKResource, onDeinit: (@Sendable (String) -> Void)?) { (self.wrapped, self.onDeinit) = (wrapped, onDeinit) }
    deinit { onDeinit?("wrapper" + (usageIsOnTheMainActorsThread() ? " main" : " off")) }
}

extension DependencyContainer {
    var atkDeinitHook: (@Sendable (String) -> Void)? { getValue(forKey: "atk.deinit") }
    var atkResource: Provider<any ATKResource> {
        singleton { @MainActor in ATKLiveResource(label: "single", onDeinit: self.atkDeinitHook) }
    }
    var atkResourceFamily: ProviderFamily<Int, any ATKResource> {
        singleton { @MainActor (id: Int) in ATKLiveResource(label: "member \(id)", onDeinit: self.atkDeinitHook) }
    }
    var atkSharedResource: Provider<any ATKResource> {
        shared { @MainActor in ATKLiveResource(label: "shared", onDeinit: self.atkDeinitHook) }
    }
    var atkResourceHolder: Provider<ATKResourceHolder> {
        singleton { @MainActor in ATKResourceHolder(resource: self.atkSharedResource()) }
    }
}

final class ATKResourceHolder {
    let resource: any ATKResource
    init(resource: any ATKResource) { self.resource = resource }
}

nonisolated func atkDeinitLog() -> (@Sendable (String) -> Void, AsyncStream<String>) {
    let (stream, continuation) = AsyncStream.makeStream(of: String.self)
    return ({ continuation.yield($0) }, stream)
}

@Suite struct AppTeamReleaseAttackTests {
    @Test func aDecoratedSingletonAFamilyMemberAndASharedPartResetOffTheMainActorGoOnIt() async {
        let (hook, stream) = atkDeinitLog()
        let world = DependencyContainer(parent: .mocks)
        world.setValue(hook, forKey: "atk.deinit")
        world.decorate(\.atkResource) { @MainActor in ATKWrappedResource(wrapping: $0, onDeinit: hook) }
        _ = world.atkResource()
        _ = world.atkResourceFamily(1)
        _ = world.atkResourceHolder()
        await usageOnAThreadOfItsOwn { world.reset() }
        var seen: [String] = []
        var events = stream.makeAsyncIterator()
        while seen.count < 4, let event = await events.next() { seen.append(event) }
        #expect(seen.sorted() == ["member 1 main", "shared main", "single main", "wrapper main"])
    }
}

// MARK: - Hundreds of parallel cases whose models track in their deinits

@Suite(.dependencies { container in
    container.override(\.atkAnalytics) { @MainActor in ATKRecordingAnalytics() }
    try await container.appStyleDocDrafts().save("seeded")
})
struct AppTeamParallelCaseAttackTests {
    let made = ATKSuiteStoredModel()

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<100) func eachCaseHearsOnlyItsOwnModelsClose(id: Int) async throws {
        let world = DependencyContainer.main
        #expect(made.$analytics.container === world)
        var model: ATKDetailModel? = ATKDetailModel(title: "\(id)")
        for _ in 0...(id % 5) { await Task.yield() }
        _ = model
        model = nil
        var detail: ATKDetailModel? = await Task { ATKDetailModel(title: "task \(id)") }.value
        _ = detail
        detail = nil
        let other = DependencyContainer(parent: .mocks)
        let elsewhere = DependencyContainer.withMain(other) { ATKDetailModel(title: "other \(id)") }
        #expect(elsewhere.$analytics.container === other)
        let analytics = try #require(world.atkAnalytics() as? ATKRecordingAnalytics)
        #expect(analytics.events == ["closed \(id)", "closed task \(id)"])
        #expect(try await world.appStyleDocDrafts().saved == ["seeded"])
    }
}
