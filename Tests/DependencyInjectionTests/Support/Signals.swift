import Foundation

// Signals that order threads and tasks in tests, instead of sleeps.

// MARK: - Threads

/// A two-party rendezvous: both threads arrive before either goes on.
final class Rendezvous: @unchecked Sendable {
    // @unchecked: `arrived` is only touched while holding `condition`.
    private let condition = NSCondition()
    private var arrived = 0
    func arrive() {
        condition.lock()
        arrived += 1
        condition.broadcast()
        while arrived < 2 { condition.wait() }
        condition.unlock()
    }
}

/// Holds a construction until the test lets it go on: the construction calls
/// `enterAndWait()`, the test waits for `entered`, does what must happen while the
/// construction is in flight, then calls `open()`.
final class ConstructionGate: Sendable {
    /// Signalled once the construction is inside the gate.
    let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    init() {}

    func enterAndWait() {
        entered.signal()
        released.wait()
    }

    func open() { released.signal() }
}

/// Counts threads that have arrived, and lets a thread wait until enough have.
final class Arrivals: @unchecked Sendable {
    // @unchecked: `count` is only touched while holding `condition`.
    private let condition = NSCondition()
    private var count = 0
    init() {}

    func arrive() {
        condition.lock()
        count += 1
        condition.broadcast()
        condition.unlock()
    }

    func wait(for expected: Int) {
        condition.lock()
        while count < expected { condition.wait() }
        condition.unlock()
    }
}

// MARK: - Tasks

/// A one-shot signal for tasks: once opened, every waiter goes on, now and later.
final class AsyncLatch: @unchecked Sendable {
    // @unchecked: `isOpen` and `waiters` are only touched while holding `lock`.
    private let lock = NSLock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init() {}

    func open() {
        lock.lock()
        isOpen = true
        let released = waiters
        waiters = []
        lock.unlock()
        for waiter in released { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            lock.lock()
            if isOpen {
                lock.unlock()
                waiter.resume()
            } else {
                waiters.append(waiter)
                lock.unlock()
            }
        }
    }
}

/// A value handed over once, from any thread or task, to a task that awaits it.
final class Handoff<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `stored` is written once before `delivered` opens, and read after.
    private let delivered = AsyncLatch()
    private let lock = NSLock()
    private var stored: Value?

    init() {}

    func put(_ value: Value) {
        lock.lock()
        stored = value
        lock.unlock()
        delivered.open()
    }

    func value() async -> Value {
        await delivered.wait()
        return lock.withLock { stored! }
    }
}

/// A two-party rendezvous for tasks: both arrive before either goes on.
final class AsyncRendezvous: @unchecked Sendable {
    // @unchecked: `first` is only touched while holding `lock`.
    private let lock = NSLock()
    private var first: CheckedContinuation<Void, Never>?
    private var arrived = 0

    init() {}

    func arrive() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            lock.lock()
            arrived += 1
            if arrived == 1 {
                first = waiter
                lock.unlock()
            } else {
                let other = first
                first = nil
                lock.unlock()
                other?.resume()
                waiter.resume()
            }
        }
    }
}

/// What a construction hands to the test about a task it spawned: when the construction
/// has ended, when the task has started asking, and what the task finally resolved.
final class SpawnedTaskProbe<Resolved: Sendable>: Sendable {
    let constructionEnded = AsyncLatch()
    let asking = AsyncLatch()
    let resolved = Handoff<Resolved>()
    init() {}
}

/// A barrier for tasks: every party waits until all `parties` have arrived, then all go on
/// together.
final class AsyncBarrier: @unchecked Sendable {
    // @unchecked: `arrived` is only touched while holding `lock`.
    private let lock = NSLock()
    private var arrived = 0
    private let parties: Int
    private let allArrived = AsyncLatch()

    init(parties: Int) { self.parties = parties }

    func arrive() async {
        let last = lock.withLock {
            arrived += 1
            return arrived == parties
        }
        if last { allArrived.open() }
        await allArrived.wait()
    }
}

/// An action run by the `deinit` of a test's instance, while a change that dropped it is
/// under way (after the container's lock): the first time only, or every time.
final class DeinitHook: @unchecked Sendable {
    // @unchecked: `action`, `repeats` and `count` are only touched while holding `lock`.
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?
    private var repeats = false
    private var count = 0
    init() {}

    func set(repeating: Bool = false, _ action: @escaping @Sendable () -> Void) {
        lock.withLock { (self.action, repeats) = (action, repeating) }
    }

    func fire() {
        let action = lock.withLock {
            defer { if !repeats { self.action = nil } }
            count += 1
            return self.action
        }
        action?()
    }

    var fired: Int { lock.withLock { count } }
}

/// A gate a construction passes the first time only: the first caller of ``pass()`` waits
/// at ``gate`` until the test opens it, later callers go straight on.
///
/// ```swift
/// let once = OnceGate()
/// // in a registration: once.pass()
/// once.gate.entered.wait(); /* change something */ once.gate.open()
/// ```
final class OnceGate: @unchecked Sendable {
    // @unchecked: `passed` is only touched while holding `lock`.
    private let lock = NSLock()
    private var passed = false
    let gate = ConstructionGate()
    init() {}

    func pass() {
        let first = lock.withLock {
            defer { passed = true }
            return !passed
        }
        if first { gate.enterAndWait() }
    }
}

/// Starts a task that runs `body`, and waits on this thread until it has: for a construction
/// whose task must run while the construction is still in progress. The task needs a thread
/// of the cooperative pool, so call this off the pool, or in a process of its own.
func runningATaskAndWaiting(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        body()
        done.signal()
    }
    done.wait()
}
