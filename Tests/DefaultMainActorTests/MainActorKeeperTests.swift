// The keeper a main-actor value takes to the main queue (MainActorBox): the container the
// value's deinit reads from is alive there, and every container still goes once the main
// queue has run. A value that one container caches and another built (an override that
// hands out another container's instance) is a known limit.
import DependencyInjection
import Dispatch
import Foundation
import Testing

/// A main-actor store whose deinit counts where it ran, without reading any dependency.
final class CountedKeeperStore {
    nonisolated(unsafe) static var deinitsOnMain = 0
    nonisolated(unsafe) static var deinitsElsewhere = 0
    private nonisolated static let lock = NSLock()
    init() {}
    /// Marks the main queue (on Linux a worker thread drains it once the runner calls
    /// `dispatchMain()`).
    nonisolated static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
    deinit {
        let onMain = DispatchQueue.getSpecific(key: Self.mainQueueKey) ?? false
        Self.lock.withLock { if onMain { Self.deinitsOnMain += 1 } else { Self.deinitsElsewhere += 1 } }
    }
    nonisolated static var counts: (onMain: Int, elsewhere: Int) {
        _ = mainQueueKey
        return lock.withLock { (deinitsOnMain, deinitsElsewhere) }
    }
}

extension DependencyContainer {
    var countedKeeperStore: Provider<CountedKeeperStore> { singleton { CountedKeeperStore() } }
}

/// Weak references to many containers, read after they were handed over.
nonisolated final class WeakContainers: @unchecked Sendable {
    private let lock = NSLock()
    private var containers: [WeakBox] = []
    private struct WeakBox { weak var container: DependencyContainer? }
    init() {}
    func add(_ container: DependencyContainer) { lock.withLock { containers.append(WeakBox(container: container)) } }
    var alive: Int { lock.withLock { containers.count(where: { $0.container != nil }) } }
}

/// Many containers handed from the main actor to other threads.
nonisolated final class ContainerBag: @unchecked Sendable {
    private let lock = NSLock()
    private var containers: [DependencyContainer] = []
    init() {}
    func put(_ container: DependencyContainer) { lock.withLock { containers.append(container) } }
    func takeAll() -> [DependencyContainer] { lock.withLock { defer { containers = [] }; return containers } }
}

/// Runs `body` on a thread of its own (not the cooperative pool), and resumes when it ends.
nonisolated func onOwnThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            body()
            done.resume()
        }
        thread.start()
    }
}

/// Resumes once the main queue has run everything submitted to it so far, and then once
/// more (a release there may submit more).
nonisolated func mainQueueDrained() async {
    for _ in 0..<3 {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { done.resume() }
        }
    }
}

@Suite(.serialized) struct MainActorKeeperTests {
    /// A world overrides the store with the instance another container (a fixtures
    /// container) keeps: the store's properties hold the fixtures container weakly. Off
    /// the main actor the fixtures are reset, the world is reset, and both are released.
    /// On the main actor the world's reset releases the store at once, with the fixtures
    /// still alive, and its deinit reads its log; off it, the store goes to the main queue
    /// with the world, which it does not read from, and the fixtures are gone by then.
    /// A known limit (MainActorBox's documentation): the hand-off keeps the container that
    /// cached the value, and this value's properties read the one that built it.
    @Test func aStoreForwardedFromAnotherContainerReadsItsLogAfterBothAreEndedOffTheMainActor() async {
        await withKnownIssue("the hand-off keeps the caching container, not the one that built the value") {
            await #expect(processExitsWith: .success) {
                let fixturesHandOver = ContainerHandOver()
                let worldHandOver = ContainerHandOver()
                await MainActor.run {
                    let fixtures = DependencyContainer(parent: .mocks)
                    let world = DependencyContainer(parent: .mocks)
                    world.override(\.flushingDraftStore) { @MainActor [weak fixtures] in fixtures!.flushingDraftStore() }
                    _ = world.flushingDraftStore()
                    fixturesHandOver.put(fixtures)
                    worldHandOver.put(world)
                }
                await offTheMainActorWhileTheMainQueueIsBusy {
                    var fixtures = fixturesHandOver.take()
                    var world = worldHandOver.take()
                    fixtures!.reset()
                    world!.reset()
                    world!.removeAll()
                    fixtures = nil
                    world = nil
                    _ = (fixtures, world)
                }
            }
        }
    }

    /// The on-the-spot version of the test above: on the main actor the same steps work.
    @Test func aStoreForwardedFromAnotherContainerReadsItsLogWhenEndedOnTheMainActor() {
        let log = ReleaseLog()
        var fixtures: DependencyContainer? = DependencyContainer(parent: .mocks)
        var world: DependencyContainer? = DependencyContainer(parent: .mocks)
        fixtures!.override(\.releaseLog) { log }
        world!.override(\.flushingDraftStore) { @MainActor [weak fixtures] in fixtures!.flushingDraftStore() }
        _ = world!.flushingDraftStore()
        fixtures!.reset()
        fixtures!.override(\.releaseLog) { log }
        world!.reset()
        fixtures = nil
        world = nil
        #expect(log.lines == ["flushed"])
    }

    /// A scope hands an app-wide store to its app container; the app is reset off the
    /// main actor and both are released. The store's deinit, on the main queue, reads its
    /// log from the app container, which is then freed.
    @Test func anAppWideStoreResolvedThroughAScopeReadsItsLogAfterTheAppIsResetOffTheMainActor() async {
        await #expect(processExitsWith: .success) {
            let handOver = ContainerHandOver()
            let scopeHandOver = ContainerHandOver()
            let weakApp = await MainActor.run {
                let app = DependencyContainer(isMocked: true)
                let scope = DependencyContainer(scopeOf: app)
                _ = scope.flushingDraftStore()
                handOver.put(app)
                scopeHandOver.put(scope)
                return WeakContainer(app)
            }
            await offTheMainActorWhileTheMainQueueIsBusy {
                var app = handOver.take()
                var scope = scopeHandOver.take()
                app!.reset()
                scope = nil
                app = nil
                _ = (app, scope)
            }
            await mainQueueDrained()
            precondition(weakApp.isGone, "the app container stayed after the main queue released its store")
        }
    }

    /// Many worlds, children of one parent, each keep a main-actor store built from the
    /// parent's override; the parent is reset off the main actor (dropping every world's
    /// store), and all are released. Once the main queue has run, every store went there,
    /// and no container is left.
    @Test func aParentsResetOffTheMainActorLeavesNoWorldBehind() async {
        let count = 500
        let bag = ContainerBag()
        let weak = WeakContainers()
        let before = CountedKeeperStore.counts
        await MainActor.run {
            let parent = DependencyContainer(isMocked: true)
            parent.override(\.countedKeeperStore) { @MainActor in CountedKeeperStore() }
            bag.put(parent)
            weak.add(parent)
            for _ in 0..<count {
                let world = DependencyContainer(parent: parent)
                _ = world.countedKeeperStore()
                bag.put(world)
                weak.add(world)
            }
        }
        await onOwnThread {
            let containers = bag.takeAll()
            containers[0].reset()
            _ = consume containers
        }
        await mainQueueDrained()
        let after = CountedKeeperStore.counts
        #expect(after.elsewhere == before.elsewhere, "a store went off the main thread")
        #expect(after.onMain - before.onMain == count)
        #expect(weak.alive == 0, "\(weak.alive) containers stayed after the main queue ran")
    }

    /// Worlds are released on one thread while another resets their parent, which drops
    /// their stores: a world may be going while its store's box looks at it. Every store
    /// goes on the main thread, and no world stays once the main queue has run.
    @Test func worldsReleasedWhileTheirParentResetsThemAreAllFreed() async {
        let rounds = 200
        let before = CountedKeeperStore.counts
        let weak = WeakContainers()
        for _ in 0..<rounds {
            let worlds = ContainerBag()
            let parents = ContainerBag()
            await MainActor.run {
                let parent = DependencyContainer(isMocked: true)
                parent.override(\.countedKeeperStore) { @MainActor in CountedKeeperStore() }
                parents.put(parent)
                weak.add(parent)
                for _ in 0..<4 {
                    let world = DependencyContainer(parent: parent)
                    _ = world.countedKeeperStore()
                    worlds.put(world)
                    weak.add(world)
                }
            }
            let start = DispatchSemaphore(value: 0)
            async let released: Void = onOwnThread {
                start.wait()
                _ = worlds.takeAll()
            }
            async let reset: Void = onOwnThread {
                let parent = parents.takeAll()[0]
                start.signal()
                parent.reset()
            }
            _ = await (released, reset)
        }
        await mainQueueDrained()
        let after = CountedKeeperStore.counts
        #expect(after.elsewhere == before.elsewhere, "a store went off the main thread")
        #expect(after.onMain - before.onMain == rounds * 4)
        #expect(weak.alive == 0, "\(weak.alive) containers stayed after the main queue ran")
    }
}
