import Dispatch
import _DependencyInjectionShims

/// The main-actor values a container handed to the main queue while it let go of what it
/// kept, so that it stays alive until the main queue has released them.
///
/// A main-actor value that a container drops off the main thread is released on the main
/// queue, later (``MainActorBox``). Its `deinit` may read a `@Dependency` for the first
/// time, and that property resolves from the container, which it holds weakly when the
/// container kept its object. A `reset()` or `shutdown()` off the main actor, followed by
/// the release of the container (a test's world at the end of the test, a session at
/// sign-out), then left that first read without its container, and it stopped the process;
/// the same read of a value released on the spot worked. So the container counts the
/// hand-offs its thread makes while it lets go, and when there were any, hands the main
/// queue one more block, which holds the container: the queue runs blocks in order, so the
/// container outlives every value handed over before it.
///
/// Counted per thread, and only around the code that lets go: another thread's hand-offs
/// never keep this container. Where no hand-off happens, as on the main thread and for
/// values of no main-actor registration, nothing is scheduled. In a process whose main
/// queue never runs (a command-line tool that never starts it), the values handed there are
/// never released, and the container that handed them stays with them.
///
/// ```swift
/// var handOffs = MainActorHandOffs()
/// let teardowns = handOffs.counting { takeTeardowns() }
/// handOffs.keepAlive(self)
/// ```
struct MainActorHandOffs {
    /// How many hand-offs the counted code made.
    private(set) var count = 0

    /// Runs `body`, counting the main-actor values this thread hands to the main queue
    /// meanwhile. Synchronous: the thread that counts is the one that runs it.
    mutating func counting<Result>(_ body: () throws -> Result) rethrows -> Result {
        let before = _di_main_actor_handoffs_here()
        defer { count += Int(bitPattern: _di_main_actor_handoffs_here() &- before) }
        return try body()
    }

    /// Keeps `container` alive until the main queue has run what was handed to it so far,
    /// when the counted code handed it anything.
    func keepAlive(_ container: DependencyContainer) {
        guard count > 0 else { return }
        DispatchQueue.main.async { withExtendedLifetime(container) {} }
    }

    /// Counts one value this thread hands to the main queue (``MainActorBox``'s `deinit`).
    static func countOne() {
        _di_count_main_actor_handoff()
    }
}

extension DependencyContainer {
    /// Runs `body`, which lets go of what this container kept, and keeps the container
    /// alive until the main queue has released the main-actor values it handed there
    /// (``MainActorHandOffs``).
    ///
    /// ```swift
    /// keepingAliveForMainActorReleases { state.withLock(releasingAfter: { … }) }
    /// ```
    func keepingAliveForMainActorReleases<Result>(_ body: () throws -> Result) rethrows -> Result {
        var handOffs = MainActorHandOffs()
        defer { handOffs.keepAlive(self) }
        return try handOffs.counting(body)
    }
}
