@testable import DependencyInjection
import Foundation
import Testing

// MARK: - Fixtures

protocol PlaybackEngine: AnyObject, Sendable {
    var label: String { get }
}

final class LivePlaybackEngine: PlaybackEngine {
    let label: String
    init(label: String) { self.label = label }
}

/// Holds the readers of a property until all of them are about to read it.
final class ReaderArrivals: Sendable {
    let arrivals = Arrivals()
    let readers: Int
    init(readers: Int) { self.readers = readers }
}

extension DependencyContainer {
    /// A new engine each time, labelled with the stored `"playback.label"`. It counts its
    /// runs, waits for the readers in `"playback.arrivals"` and holds at `"playback.gate"`,
    /// when those are stored.
    var playbackEngine: Provider<any PlaybackEngine> {
        factory {
            self.count("playbackEngine")
            if let readers: ReaderArrivals = self.getValue(forKey: "playback.arrivals") {
                readers.arrivals.wait(for: readers.readers)
            }
            (self.getValue(forKey: "playback.gate") as ConstructionGate?)?.enterAndWait()
            return LivePlaybackEngine(label: self.getValue(forKey: "playback.label") ?? "live")
        }
    }
}

/// A view model created by app code: its property holds its container strongly.
final class PlayerViewModel: @unchecked Sendable {
    @Dependency(\.playbackEngine) var engine
    init() {}
}

/// A singleton that makes a tuner while it is built: the tuner's property holds the
/// container weakly, since the container keeps the station.
final class RadioStation: @unchecked Sendable {
    let tuner = Tuner()
    init() {}
}

final class Tuner: @unchecked Sendable {
    static let engineLine = #line + 1
    @Dependency(\.playbackEngine) var engine
    init() {}
}

extension DependencyContainer {
    var radioStation: Provider<RadioStation> { singleton { RadioStation() } }
}

// A property whose first resolution starts another owner that reads the same property.

/// How the prefetching engine's resolution starts its reader, and what the reader saw.
final class PrefetchProbe: Sendable {
    enum Reader { case thread, task }
    let reader: Reader
    /// Signalled by the reader just before it reads the property.
    let reading = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let seen = Collected<ObjectIdentifier>()
    init(reader: Reader) { self.reader = reader }

    func read(_ player: PrefetchingPlayer) {
        reading.signal()
        seen.append(ObjectIdentifier(player.engine))
        done.signal()
    }
}

/// Its engine's resolution starts a reader of this very property and returns without
/// waiting for it.
final class PrefetchingPlayer: @unchecked Sendable {
    @Dependency(\.prefetchingEngine) var engine
    init() {}
}

extension DependencyContainer {
    var prefetchingEngine: Provider<any PlaybackEngine> {
        factory {
            let player: PrefetchingPlayer = self.getValue(forKey: "prefetch.player")!
            let probe: PrefetchProbe = self.getValue(forKey: "prefetch.probe")!
            switch probe.reader {
            case .thread: Thread { probe.read(player) }.start()
            case .task: Task { probe.read(player) }
            }
            probe.reading.wait()
            return LivePlaybackEngine(label: "prefetch")
        }
    }
    /// Keeps its player, so the player's property holds this container weakly and its
    /// resolution is a frame that a task started in it inherits.
    var prefetchingPlayer: Provider<PrefetchingPlayer> { singleton { PrefetchingPlayer() } }
}

// Two panels whose properties each need the other's: a cycle between two properties.

final class PanelModel: Sendable {}

final class LeftPanel: @unchecked Sendable {
    @Dependency(\.leftPanelModel) var model
    init() {}
}

final class RightPanel: @unchecked Sendable {
    @Dependency(\.rightPanelModel) var model
    init() {}
}

extension DependencyContainer {
    var leftPanelModel: Provider<PanelModel> {
        factory {
            (self.getValue(forKey: "panels.rendezvous") as Rendezvous?)?.arrive()
            _ = (self.getValue(forKey: "panels.right") as RightPanel?)?.model
            return PanelModel()
        }
    }
    var rightPanelModel: Provider<PanelModel> {
        factory {
            (self.getValue(forKey: "panels.rendezvous") as Rendezvous?)?.arrive()
            _ = (self.getValue(forKey: "panels.left") as LeftPanel?)?.model
            return PanelModel()
        }
    }
}

// A singleton whose deinit uses a property it never read before.

final class SessionAudit: Sendable {
    let entries = Collected<String>()
    init() {}
}

final class ListeningSession: @unchecked Sendable {
    @Dependency(\.sessionAudit) var audit
    init() {}
    deinit { audit.entries.append("session closed") }
}

extension DependencyContainer {
    var sessionAudit: Provider<SessionAudit> { factory { self.getValue(forKey: "session.audit")! } }
    var listeningSession: Provider<ListeningSession> { singleton { ListeningSession() } }
}

// A screen with many properties.

final class LibraryViewModel: @unchecked Sendable {
    @Dependency(\.playbackEngine) var engine
    @Dependency(\.httpClient) var client
    @Dependency(\.feedLoader) var loader
    @Dependency(\.imageCache) var images
    @Dependency(\.baseURL) var baseURL
    @Dependency(\.counterValue) var pageSize
    @Dependency(\.playbackEngine) var previewEngine
    @Dependency(\.feedLoader) var searchLoader
    init() {}

    /// Every property, as identities and values that stay the same once read.
    var snapshot: [String] {
        [
            "\(ObjectIdentifier(engine))", "\(ObjectIdentifier(client))", "\(ObjectIdentifier(loader))",
            "\(ObjectIdentifier(images))", baseURL, "\(pageSize)", "\(ObjectIdentifier(previewEngine))",
            "\(ObjectIdentifier(searchLoader))",
        ]
    }
}

// A chain of objects, each property resolved from the next object's property: more
// properties than lock stripes, resolved one inside the other.

final class TrackNode: @unchecked Sendable {
    @Dependency var remaining: Int
    init(index: Int, in container: DependencyContainer) {
        _remaining = Dependency(\.[remainingTracks: index], container: container)
    }
}

/// The nodes of the chain, kept by the container only while the test runs.
final class TrackList: @unchecked Sendable {
    var nodes: [TrackNode] = []
    init() {}
}

extension DependencyContainer {
    /// How many nodes follow `index`, read from the next node's property.
    subscript(remainingTracks index: Int) -> Provider<Int> {
        factory(index) {
            let list: TrackList = self.getValue(forKey: "tracks")!
            return index == list.nodes.count - 1 ? 0 : list.nodes[index + 1].remaining + 1
        }
    }
}

/// View models that threads share until the test empties it.
final class Shelf: @unchecked Sendable {
    // @unchecked: `stored` is only touched while holding `lock`.
    private let lock = NSLock()
    private var stored: [PlayerViewModel]
    init(_ models: [PlayerViewModel]) { stored = models }
    var models: [PlayerViewModel] { lock.withLock { stored } }
    func empty() {
        let emptied = lock.withLock {
            defer { stored = [] }
            return stored
        }
        withExtendedLifetime(emptied) {}
    }
}

/// A weak reference to any object, to see it freed.
final class Released: @unchecked Sendable {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// A state of a given size and alignment, for the lock that keeps it.
struct Aligned<Storage>: Equatable {
    var storage: Storage
    var tag: UInt8
    static func == (lhs: Self, rhs: Self) -> Bool {
        withUnsafeBytes(of: lhs.storage) { left in withUnsafeBytes(of: rhs.storage) { left.elementsEqual($0) } }
            && lhs.tag == rhs.tag
    }
}

// MARK: - Tests

/// A `@Dependency` property is one object whose first resolution is serialised by a
/// shared lock stripe: what users rely on when reading it from many threads, resetting,
/// setting or switching it meanwhile, reading it back from what its resolution starts,
/// and dropping its owner or container.
@Suite struct PropertyStorageAttackTests {
    // MARK: - First read from many threads

    /// Eight threads released together read a property none has read; its factory waits
    /// until all eight are about to read, so the others arrive while it builds.
    @Test func threadsReadingAnUnreadPropertyTogetherShareOneInstanceFromOneBuild() async {
        for _ in 0..<150 {
            let container = DependencyContainer()
            let builds = container.counter("playbackEngine")
            let readers = ReaderArrivals(readers: 8)
            container.setValue(readers, forKey: "playback.arrivals")
            let model = DependencyContainer.withMain(container) { PlayerViewModel() }
            let seen = Collected<ObjectIdentifier>()
            let threadsEnded = await concurrentlyOffThePool(threads: 8) { _ in
                readers.arrivals.arrive()
                seen.append(ObjectIdentifier(model.engine))
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            #expect(builds.count == 1)
            #expect(seen.values.count == 8)
            #expect(Set(seen.values).count == 1)
        }
    }

    // MARK: - Writes while the first resolution runs

    /// Starts reading `model.engine` on a thread and returns once its factory is held at
    /// `gate`, with what the read returns once the gate opens.
    private func readInFlight(_ model: PlayerViewModel, gate: ConstructionGate) -> () -> ObjectIdentifier {
        let read = Collected<ObjectIdentifier>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            read.append(ObjectIdentifier(model.engine))
            done.signal()
        }.start()
        gate.entered.wait()
        return {
            done.wait()
            return read.values[0]
        }
    }

    @Test func aValueSetWhileTheFirstResolutionRunsIsWhatLaterReadsSee() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "playback.gate")
        let model = DependencyContainer.withMain(container) { PlayerViewModel() }
        let inFlight = readInFlight(model, gate: gate)
        let chosen = LivePlaybackEngine(label: "chosen")
        model.engine = chosen
        gate.open()
        #expect(inFlight() != ObjectIdentifier(chosen))
        #expect(model.engine === chosen, "the resolution begun before the set replaced the set value")
    }

    @Test func aContainerSwitchedWhileTheFirstResolutionRunsIsWhereLaterReadsResolve() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "playback.gate")
        let other = DependencyContainer()
        other.setValue("other", forKey: "playback.label")
        let model = DependencyContainer.withMain(container) { PlayerViewModel() }
        let inFlight = readInFlight(model, gate: gate)
        model.$engine.container = other
        gate.open()
        _ = inFlight()
        #expect(model.engine.label == "other", "the resolution begun before the switch was kept")
        #expect(model.$engine.container === other)
    }

    @Test func aResetWhileTheFirstResolutionRunsMakesTheNextReadResolveAgain() {
        let container = DependencyContainer()
        let builds = container.counter("playbackEngine")
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "playback.gate")
        let model = DependencyContainer.withMain(container) { PlayerViewModel() }
        let inFlight = readInFlight(model, gate: gate)
        model.$engine.reset()
        gate.open()
        let first = inFlight()
        container.removeValue(forKey: "playback.gate")
        let next = model.engine
        #expect(builds.count == 2)
        #expect(ObjectIdentifier(next) != first)
        #expect(model.engine === next)
    }

    // MARK: - Other owners started by the resolution

    // The resolution starts a reader of the same property and returns without waiting
    // for it: the reader is another owner, so it waits for the value (no cycle) and gets
    // the instance the resolution returns.

    @Test func aThreadStartedByAPropertysResolutionThatReadsItGetsItsValue() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("a thread reading the property that started it")
            for _ in 0..<200 {
                let container = DependencyContainer()
                let probe = PrefetchProbe(reader: .thread)
                container.setValue(probe, forKey: "prefetch.probe")
                let player = DependencyContainer.withMain(container) { PrefetchingPlayer() }
                container.setValue(player, forKey: "prefetch.player")
                let engine = player.engine
                probe.done.wait()
                precondition(probe.seen.values == [ObjectIdentifier(engine)], "the thread saw another engine")
                container.removeValue(forKey: "prefetch.player")
            }
        }
    }

    /// The player is a singleton, so its property's resolution is a frame the task
    /// inherits: the task is still another owner, not a cycle.
    @Test func aTaskStartedByAPropertysResolutionThatReadsItGetsItsValue() async {
        await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("a task reading the property that started it")
            for _ in 0..<200 {
                let container = DependencyContainer()
                let probe = PrefetchProbe(reader: .task)
                container.setValue(probe, forKey: "prefetch.probe")
                let player = container.prefetchingPlayer()
                container.setValue(player, forKey: "prefetch.player")
                let engine = player.engine
                probe.done.wait()
                precondition(probe.seen.values == [ObjectIdentifier(engine)], "the task saw another engine")
                container.removeValue(forKey: "prefetch.player")
            }
        }
    }

    /// Each panel's property needs the other's, and two threads each start one: both
    /// resolutions are in flight before either reads the other's, so each would wait for
    /// the other forever. One of them stops with the chain instead.
    @Test func twoPropertiesWaitingForEachOtherAcrossThreadsStopWithTheChain() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("two properties waiting for each other")
            let container = DependencyContainer()
            container.setValue(Rendezvous(), forKey: "panels.rendezvous")
            let (left, right) = DependencyContainer.withMain(container) { (LeftPanel(), RightPanel()) }
            container.setValue(left, forKey: "panels.left")
            container.setValue(right, forKey: "panels.right")
            Thread { _ = left.model }.start()
            _ = right.model  // one of the two threads stops the process
        }
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        #expect(chain.namesEachRegistrationOnce, "\(chain)")
        #expect(Set(chain.names) == [
            "@Dependency in LeftPanel", "leftPanelModel", "@Dependency in RightPanel", "rightPanelModel",
        ], "\(chain)")
        #expect(chain.locatesEveryLink(in: "DependencyInjectionTests/PropertyStorageAttackTests.swift"), "\(chain)")
    }

    // MARK: - Owners and containers going away

    /// `reset()` releases the singleton outside the container's lock, and its deinit
    /// resolves a property it never read from that same container.
    @Test func aSingletonsDeinitMayResolveAnUnreadPropertyFromTheContainerResettingIt() {
        let container = DependencyContainer()
        let audit = SessionAudit()
        container.setValue(audit, forKey: "session.audit")
        weak var released: ListeningSession?
        do { released = container.listeningSession() }
        #expect(released != nil)
        container.reset()
        #expect(released == nil)
        #expect(audit.entries.values == ["session closed"])
    }

    /// Thousands of view models, read from several threads at once (so that some readers
    /// wait for another's resolution), then dropped: their container and every engine
    /// they resolved are freed.
    @Test func droppedViewModelsFreeTheirContainerAndWhatTheyResolved() async {
        let engines = Collected<Released>()
        let container: Released
        do {
            let shared = DependencyContainer()
            container = Released(shared)
            // The threads reach the models through the shelf: a thread may release its
            // closure after `concurrently` returns, and must not keep them meanwhile.
            let shelf = Shelf(DependencyContainer.withMain(shared) { (0..<2_000).map { _ in PlayerViewModel() } })
            let threadsEnded = await concurrentlyOffThePool(threads: 4) { thread in
                for (index, model) in shelf.models.enumerated() where index % 4 == thread || index % 3 == 0 {
                    engines.append(Released(model.engine))
                }
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            #expect(Set(shelf.models.map { ObjectIdentifier($0.engine) }).count == 2_000)
            shelf.empty()
        }
        #expect(container.object == nil, "the container outlived every view model holding it")
        #expect(engines.values.count > 2_000)
        #expect(engines.values.allSatisfy { $0.object == nil }, "an engine outlived its view model")
    }

    /// The tuner's property holds the container weakly. A resolution in flight when the
    /// last other reference to the container goes keeps the container until it ends;
    /// then the container is freed and the resolved engine stays readable.
    @Test func aWeakContainerDroppedWhileItsPropertyResolvesLastsUntilTheResolutionEnds() {
        let gate = ConstructionGate()
        let done = DispatchSemaphore(value: 0)
        let resolved = Collected<ObjectIdentifier>()
        let station: RadioStation
        let container: Released
        do {
            let owner = DependencyContainer()
            container = Released(owner)
            owner.setValue(gate, forKey: "playback.gate")
            owner.setValue("station", forKey: "playback.label")
            station = owner.radioStation()
            Thread {
                resolved.append(ObjectIdentifier(station.tuner.engine))
                done.signal()
            }.start()
            gate.entered.wait()
        }
        #expect(container.object != nil, "the container went while a property resolved from it")
        gate.open()
        done.wait()
        #expect(container.object == nil, "a property of an object the container keeps kept the container")
        #expect(ObjectIdentifier(station.tuner.engine) == resolved.values.first)
        #expect(station.tuner.engine.label == "station")
    }

    @Test func readingAKeptObjectsPropertyFirstAfterItsContainerIsGoneStopsWithTheMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let station: RadioStation = {
                let container = DependencyContainer()
                return container.radioStation()
            }()
            _ = station.tuner.engine
        }
        let output = standardError(of: result)
        #expect(output.contains("was released before the property was first read"), "\(output)")
        #expect(output.contains("PropertyStorageAttackTests.swift:\(Tuner.engineLine)"), "\(output)")
    }

    // MARK: - Properties sharing lock stripes

    /// Many objects with many properties make far more properties than there are lock
    /// stripes; threads read all of them at once in different orders.
    @Test func manyPropertiesOfManyObjectsReadTogetherEachResolveOnce() async {
        let container = DependencyContainer()
        let engines = container.counter("playbackEngine")
        let models = DependencyContainer.withMain(container) { (0..<300).map { _ in LibraryViewModel() } }
        let snapshots = Collected<(Int, [String])>()
        let threadsEnded = await concurrentlyOffThePool(threads: 6) { thread in
            let order = thread.isMultiple(of: 2) ? Array(models.indices) : Array(models.indices.reversed())
            for index in order { snapshots.append((index, models[index].snapshot)) }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(engines.count == 2 * models.count)
        for (index, snapshot) in snapshots.values {
            #expect(snapshot == models[index].snapshot)
        }
        #expect(Set(models.map { ObjectIdentifier($0.engine) }).count == models.count)
        #expect(Set(models.map { ObjectIdentifier($0.client) }).count == 1)
    }

    /// A property resolved from the next node's property, 100 deep: more properties than
    /// stripes, so some resolution runs inside another of the same stripe, and threads
    /// entering the chain at different nodes wait for each other's resolutions.
    @Test func aChainOfPropertiesLongerThanTheStripesResolvesFromEveryThread() async {
        let resolved = await finishesWithoutHangingOffThePool {
            for _ in 0..<10 {
                let container = DependencyContainer()
                let list = TrackList()
                list.nodes = (0..<100).map { TrackNode(index: $0, in: container) }
                container.setValue(list, forKey: "tracks")
                concurrently(threads: 6) { thread in
                    let start = thread * 15
                    precondition(list.nodes[start].remaining == 99 - start)
                }
                precondition(list.nodes.enumerated().allSatisfy { $1.remaining == 99 - $0 })
                container.removeValue(forKey: "tracks")
            }
        }
        #expect(resolved)
    }

    // MARK: - The lock and its state in one object

    private func expectStateInPlace<State: Equatable>(_ initial: State, then updated: State) {
        let locked = _Locked(initial)
        locked.withLock { $0 = updated }
        let stored = Mirror(reflecting: locked).children.first { $0.label == "storedState" }?.value as? State
        #expect(stored == updated, "\(State.self): the state is not where the object stores it")
        #expect(locked.withLock { $0 } == updated)
    }

    /// The state is reached by address past the lock: for every size and alignment, that
    /// address is the object's own stored state.
    @Test func aLockedStateOfAnySizeAndAlignmentIsTheObjectsStoredState() {
        expectStateInPlace(Aligned(storage: UInt8(1), tag: 2), then: Aligned(storage: 3, tag: 4))
        expectStateInPlace(Aligned(storage: UInt16(1), tag: 2), then: Aligned(storage: 0xBEEF, tag: 4))
        expectStateInPlace(Aligned(storage: UInt32(1), tag: 2), then: Aligned(storage: 0xDEAD_BEEF, tag: 4))
        expectStateInPlace(Aligned(storage: UInt64(1), tag: 2), then: Aligned(storage: .max, tag: 4))
        expectStateInPlace(
            Aligned(storage: SIMD16<UInt8>(repeating: 1), tag: 2),
            then: Aligned(storage: SIMD16<UInt8>(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), tag: 4))
        expectStateInPlace(
            Aligned(storage: SIMD4<Double>(repeating: 1), tag: 2), then: Aligned(storage: SIMD4(1, 2, 3, 4), tag: 4))
        expectStateInPlace(["a"], then: ["b", "c"])
    }

    @Test func aLockedStateIsReleasedWithItsLock() {
        weak var released: LivePlaybackEngine?
        do {
            let engine = LivePlaybackEngine(label: "locked")
            released = engine
            let locked = _Locked([engine])
            locked.withLock { $0.append(LivePlaybackEngine(label: "more")) }
            #expect(locked.withLock { $0.count } == 2)
        }
        #expect(released == nil)
    }
}
