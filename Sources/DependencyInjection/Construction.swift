import Dispatch

/// A singleton or shared instance being built on one thread while others wait for it.
///
/// Waiting threads block on the construction, not on the container's lock, so the
/// container stays available to every other resolution while user code runs.
final class Construction: @unchecked Sendable {
    // @unchecked: `result` is written once under `lock` before `done` is signalled.
    let owner: ResolutionStack
    let container: ObjectIdentifier
    let key: ProviderKey
    private let lock = Lock()
    private let done = DispatchGroup()
    private var result: AnyObject?

    init(owner: ResolutionStack, container: ObjectIdentifier, key: ProviderKey) {
        self.owner = owner
        self.container = container
        self.key = key
        done.enter()
    }

    /// Publishes the built box and wakes every waiter.
    func finish(_ box: AnyObject) {
        lock.withLock { result = box }
        done.leave()
    }

    /// Blocks until the construction finishes, stopping with a message instead when
    /// waiting would close a cycle between threads.
    func wait(as waiter: ResolutionStack, name: StaticString) -> AnyObject {
        WaitGraph.shared.beginWaiting(waiter, on: self, name: name)
        done.wait()
        WaitGraph.shared.endWaiting(waiter)
        return lock.withLock { result! }
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
        while let current = next {
            chain.append(current)
            if current.owner === waiter {
                // Every owner along the chain waits (that is how the walk reached the
                // next one), so its stack last changed before it took this lock to start
                // waiting and is safe to read now.
                let names = chain.flatMap { $0.owner.names(from: $0.container, $0.key) }
                lock.unlock()
                CycleReport.stop(chain: names + [name])
            }
            next = waiting[ObjectIdentifier(current.owner)]
        }
        waiting[ObjectIdentifier(waiter)] = construction
        lock.unlock()
    }

    func endWaiting(_ waiter: ResolutionStack) {
        lock.withLock { _ = waiting.removeValue(forKey: ObjectIdentifier(waiter)) }
    }
}
