// A main-actor singleton that a container lets go of off the main actor is released on the
// main queue, later. Its deinit may read a @Dependency for the first time, which resolves
// from that container: the container goes to the main queue with the value and stays until
// the value is released there, whatever dropped it (a shutdown, a reset, an override, a
// parent's reset), so the read finds it.
import DependencyInjection
import Dispatch
import Foundation
import Testing

/// A log an app writes to when a store goes.
final class ReleaseLog {
    private(set) var lines: [String] = []
    init() {}
    func record(_ line: String) { lines.append(line) }
}

/// A store that flushes to the log when it goes: its deinit reads the log for the first time.
final class FlushingDraftStore {
    @Dependency(\.releaseLog) var log
    init() {}
    deinit {
        MainActor.assumeIsolated { log.record("flushed") }
    }
}

extension DependencyContainer {
    var releaseLog: Provider<ReleaseLog> { singleton { ReleaseLog() } }
    var flushingDraftStore: Provider<FlushingDraftStore> { singleton { FlushingDraftStore() } }
    /// The same store, which also declares a teardown: its instance goes with the teardown,
    /// after the teardowns ran.
    var closingDraftStore: Provider<FlushingDraftStore> {
        singleton { FlushingDraftStore() }.onShutdown { _ in }
    }
}

/// What a draft store is built from: a plain, Sendable registration, so that it can be
/// overridden off the main actor.
nonisolated final class ReviewTicket: Sendable {
    init() {}
}

/// A main-actor store built from a ticket, which flushes to the log when it goes: its
/// deinit reads the log for the first time.
final class TicketedDraftStore {
    @Dependency(\.releaseLog) var log
    let ticket: ReviewTicket
    init(ticket: ReviewTicket) { self.ticket = ticket }
    deinit {
        MainActor.assumeIsolated { log.record("flushed") }
    }
}

extension DependencyContainer {
    nonisolated var reviewTicket: Provider<ReviewTicket> { singleton { ReviewTicket() } }
    var ticketedDraftStore: Provider<TicketedDraftStore> {
        singleton { TicketedDraftStore(ticket: self.reviewTicket()) }
    }
}

/// A container handed from the main actor to a task that ends it, as a session is at
/// sign-out, or a test's world when the test ends.
nonisolated final class ContainerHandOver: @unchecked Sendable {
    private let lock = NSLock()
    private var container: DependencyContainer?
    init() {}
    func put(_ container: DependencyContainer) { lock.withLock { self.container = container } }
    func take() -> DependencyContainer? { lock.withLock { defer { container = nil }; return container } }
}

/// A weak reference to a container, read after the container was handed over.
nonisolated final class WeakContainer: @unchecked Sendable {
    private let lock = NSLock()
    private weak var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
    var isGone: Bool { lock.withLock { container == nil } }
}

/// Runs `body` in a detached task while the main queue is kept busy: what `body` sends to
/// the main queue runs after it ends. Returns once the main queue has run what was on it
/// before.
///
/// ```swift
/// await offTheMainActorWhileTheMainQueueIsBusy { world.reset() }
/// ```
nonisolated func offTheMainActorWhileTheMainQueueIsBusy(_ body: @escaping @Sendable () async -> Void) async {
    let ended = DispatchSemaphore(value: 0)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        DispatchQueue.main.async {
            ended.wait()
            // After whatever `body` put on the main queue.
            DispatchQueue.main.async { done.resume() }
        }
        Task.detached {
            await body()
            ended.signal()
        }
    }
}

/// Makes a child of `mocks` on the main actor and lets `use` build in it, then ends it
/// with `end` in a detached task and lets go of it, while the main queue is kept busy: the
/// main-actor values it dropped are released after that, when the main queue gets to them.
/// Returns once the main queue has run what was on it before, with a weak reference to
/// the container.
///
/// ```swift
/// await useThenEndOffTheMainActor({ _ = $0.flushingDraftStore() }) { await $0.shutdown() }
/// ```
@discardableResult
nonisolated func useThenEndOffTheMainActor(
    _ use: @escaping @MainActor @Sendable (DependencyContainer) -> Void,
    _ end: @escaping @Sendable (DependencyContainer) async -> Void
) async -> WeakContainer {
    let handOver = ContainerHandOver()
    let weakContainer = await MainActor.run {
        let container = DependencyContainer(parent: .mocks)
        use(container)
        handOver.put(container)
        return WeakContainer(container)
    }
    await offTheMainActorWhileTheMainQueueIsBusy {
        let container = handOver.take()!
        await end(container)
        _ = consume container
    }
    return weakContainer
}

@Suite struct MainActorReleaseAfterEndTests {
    // MARK: - Ended off the main actor, then released

    @Test func aStoresDeinitReadsItsLogAfterAnAwaitedShutdownOffTheMainActor() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ _ = $0.flushingDraftStore() }) { await $0.shutdown() }
        }
    }

    @Test func aStoresDeinitReadsItsLogAfterAShutdownOffTheMainActor() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ _ = $0.flushingDraftStore() }) { $0.shutdown() }
        }
    }

    @Test func aStoreWithATeardownReadsItsLogInItsDeinitAfterAnAwaitedShutdownOffTheMainActor() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ _ = $0.closingDraftStore() }) { await $0.shutdown() }
        }
    }

    /// What the testing product does when a test ends: `reset()` and `removeAll()` off the
    /// main actor, then the release.
    @Test func aStoresDeinitReadsItsLogAfterAResetOffTheMainActor() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ world in
                DependencyContainer.withMain(world) { _ = world.flushingDraftStore() }
            }) { world in
                world.reset()
                world.removeAll()
            }
        }
    }

    // MARK: - Dropped by another change off the main actor, then ended and released

    /// A session's ticket is replaced off the main actor, which drops the store built from
    /// it; then the session is ended with an awaited shutdown and released. The store's
    /// deinit runs later on the main queue and reads its log.
    @Test func aStoreDroppedByAnOverrideOffTheMainActorReadsItsLogAfterAShutdown() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ _ = $0.ticketedDraftStore() }) { session in
                session.override(\.reviewTicket) { ReviewTicket() }
                await session.shutdown()
            }
        }
    }

    /// The same, ended as the testing product ends a test's world: reset() and removeAll().
    @Test func aStoreDroppedByAnOverrideOffTheMainActorReadsItsLogAfterAReset() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ _ = $0.ticketedDraftStore() }) { world in
                world.override(\.reviewTicket) { ReviewTicket() }
                world.reset()
                world.removeAll()
            }
        }
    }

    /// `mocks` is reset off the main actor while a test's world (its child) holds a store
    /// built from a `mocks` override: the world drops the store. Then the world is ended
    /// with reset() and removeAll() and released, as the testing product does.
    @Test func aWorldsStoreDroppedByItsParentsResetReadsItsLogAfterTheWorldIsReset() async {
        await #expect(processExitsWith: .success) {
            await useThenEndOffTheMainActor({ world in
                DependencyContainer.mocks.override(\.reviewTicket) { ReviewTicket() }
                _ = world.ticketedDraftStore()
            }) { world in
                DependencyContainer.mocks.reset()
                world.reset()
                world.removeAll()
            }
        }
    }

    /// A world reset off the main actor stays only until the main queue has released the
    /// store it dropped (whose deinit reads the log), and then it is freed.
    @Test func aWorldResetOffTheMainActorGoesOnceTheMainQueueReleasedItsStore() async {
        await #expect(processExitsWith: .success) {
            let world = await useThenEndOffTheMainActor({ _ = $0.ticketedDraftStore() }) { world in
                world.reset()
                world.removeAll()
            }
            precondition(world.isGone, "the world stayed after the main queue released its store")
        }
    }

    /// Sanity check of the fixture: on the main actor, a parent's reset drops the store its
    /// child built from the parent's override, and an override of the ticket drops it too.
    @Test func theStoreGoesWithItsTicket() {
        let log = ReleaseLog()
        let parent = DependencyContainer(isMocked: true)
        let world = DependencyContainer(parent: parent)
        world.override(\.releaseLog) { log }
        parent.override(\.reviewTicket) { ReviewTicket() }
        _ = world.ticketedDraftStore()
        parent.reset()
        #expect(log.lines == ["flushed"])
        _ = world.ticketedDraftStore()
        world.override(\.reviewTicket) { ReviewTicket() }
        #expect(log.lines == ["flushed", "flushed"])
    }

    // MARK: - What the deinit reads, and that the container still goes

    /// The flush reaches the session's log (an override, which a shutdown keeps), and the
    /// session is freed once the main queue has released the store. In a process of its
    /// own, as the others: without the session, the read would stop the process.
    @Test func theFlushReachesTheSessionsLogAndTheSessionGoesAfterwards() async {
        await #expect(processExitsWith: .success) {
            let log = await MainActor.run { ReleaseLog() }
            let session = await useThenEndOffTheMainActor({ session in
                session.override(\.releaseLog) { log }
                _ = session.flushingDraftStore()
            }) { await $0.shutdown() }
            await MainActor.run {
                precondition(log.lines == ["flushed"], "the flush went to \(log.lines)")
            }
            precondition(session.isGone, "the session stayed after the main queue released its store")
        }
    }

    /// A container released off the main actor while it keeps a main-actor value is not
    /// kept for it: the value goes to the main queue alone, and the container is gone at
    /// once.
    @Test func aContainerReleasedWhileItKeepsAMainActorValueGoesAtOnce() async {
        let handOver = ContainerHandOver()
        let weakWorld: WeakContainer
        do {
            let world = DependencyContainer(parent: .mocks)
            _ = world.releaseLog()
            weakWorld = WeakContainer(world)
            handOver.put(world)
        }
        let goneAtOnce = await Task.detached {
            _ = handOver.take()   // the last reference, let go here, off the main actor
            return weakWorld.isGone
        }.value
        #expect(goneAtOnce, "the container stayed for the value it kept")
    }

    /// Ended on the main actor, the store goes at once, and so does the session.
    @Test func aShutdownOnTheMainActorReleasesTheStoreAtOnce() {
        let log = ReleaseLog()
        weak var weakSession: DependencyContainer?
        do {
            let session = DependencyContainer(parent: .mocks)
            session.override(\.releaseLog) { log }
            _ = session.flushingDraftStore()
            weakSession = session
            session.shutdown()
            #expect(log.lines == ["flushed"])
        }
        #expect(weakSession == nil)
    }
}
