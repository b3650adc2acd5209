import Dispatch

/// A singleton or shared instance being built on one thread while others wait for it.
///
/// Waiting threads block on a semaphore of their own, not on the container's lock, so the
/// container stays available to every other resolution while user code runs. Nothing is
/// allocated for waiting unless someone waits.
final class Construction: @unchecked Sendable {
    // @unchecked: `result` and `waiters` are guarded by the lock of the container that
    // holds this construction; the other properties are immutable.
    let owner: ResolutionStack
    let container: ObjectIdentifier
    let key: ProviderKey
    /// The built box, set once when the construction finishes.
    var result: AnyObject?
    /// Threads waiting for the result.
    var waiters: [DispatchSemaphore] = []
    /// Set, under the wait graph's lock, before the waiters are woken: a finished
    /// construction is never part of a deadlock, whatever stale waits still point at it.
    var finished = false

    /// For the first resolution of a `@Dependency` property, which has no frame of its
    /// own: its name and how many frames its owner had when it began.
    private let property: (name: StaticString, depth: Int)?

    init(
        owner: ResolutionStack, container: ObjectIdentifier, key: ProviderKey,
        property: (name: StaticString, depth: Int)? = nil
    ) {
        self.owner = owner
        self.container = container
        self.key = key
        self.property = property
    }

    /// This construction's part of a cycle message: its owner's frames from where it began.
    /// Only call while the owner is blocked.
    var chainNames: [StaticString] {
        if let property {
            return [property.name] + owner.frames.dropFirst(property.depth).map(\.name)
        }
        return owner.names(from: container, key)
    }

    /// Blocks on `signal` until the construction finishes, stopping with a message instead
    /// when waiting would close a cycle between threads. Register `signal` in `waiters`
    /// under the container's lock first.
    func wait(on signal: DispatchSemaphore, as waiter: ResolutionStack, name: StaticString) {
        WaitGraph.shared.beginWaiting(waiter, on: self, name: name)
        signal.wait()
        WaitGraph.shared.endWaiting(waiter)
    }
}

/// Which thread waits for which construction, to turn a cross-thread cycle (thread 1
/// builds `a` and needs `b`, thread 2 builds `b` and needs `a`) into a clear message
/// instead of a deadlock.
final class WaitGraph: @unchecked Sendable {
    // @unchecked: `waiting` is only accessed while holding `lock`.
    static let shared = WaitGraph()

    private let lock = Lock()
    private var waiting: [ObjectIdentifier: Construction] = [:]

    func beginWaiting(_ waiter: ResolutionStack, on construction: Construction, name: StaticString) {
        lock.lock()
        var chain: [Construction] = []
        var next: Construction? = construction
        while let current = next, !current.finished {
            chain.append(current)
            if current.owner === waiter {
                // Every owner along the chain waits for a construction that has not
                // finished (that is how the walk reached the next one), so it is blocked:
                // its stack last changed before it took this lock and is safe to read.
                let names = chain.flatMap(\.chainNames)
                lock.unlock()
                CycleReport.stop(chain: names + [name])
            }
            next = waiting[ObjectIdentifier(current.owner)]
        }
        if !construction.finished { waiting[ObjectIdentifier(waiter)] = construction }
        lock.unlock()
    }

    /// Marks `construction` finished; call before waking its waiters.
    func finish(_ construction: Construction) {
        lock.withLock { construction.finished = true }
    }

    func endWaiting(_ waiter: ResolutionStack) {
        lock.withLock { _ = waiting.removeValue(forKey: ObjectIdentifier(waiter)) }
    }
}
