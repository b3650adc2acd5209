import Dispatch

/// Where others wait for a construction: a singleton or shared instance being built, or
/// the first resolution of a `@Dependency` property.
///
/// It is the package's one waiting room, made by the first owner that waits (or, for an
/// asynchronous construction, by the task that resolves, which waits there itself): a
/// construction no one waits for, the usual first build, allocates none and takes no lock
/// to end. Threads wait on a semaphore of their own and tasks on a continuation, so the
/// container's lock stays free while user code runs. A cancelled task stops waiting with
/// `CancellationError` without cancelling the construction for the others.
///
/// ```swift
/// let room = InFlight(key: key, builtBy: frame)   // by the first waiter, under the lock
/// // builder:                  // any other owner:
/// room.finish(.success(box))   let box = room.wait(as: .current, innermost: Frame.current)
/// ```
@usableFromInline
final class InFlight: @unchecked Sendable {
    // @unchecked: the result and the waiters are guarded by the stripe lock of this
    // object; `builder` and `isDone` by the wait graph's lock (or by nothing before the
    // room is handed to a waiter, and once the construction ended unwaited, when no one
    // else can reach them); `key` is immutable.
    let key: RegistrationKey
    /// The frame of the owner building it, once known.
    @exclusivity(unchecked) var builder: Frame?
    /// Set before the waiters are woken: a finished construction is never part of a cycle.
    @exclusivity(unchecked) var isDone = false

    private enum Waiter {
        case thread(DispatchSemaphore)
        case task(CheckedContinuation<AnyBox, any Error>)
    }

    /// Under ``lock``: the outcome, once finished.
    @exclusivity(unchecked) private var result: Result<AnyBox, any Error>?
    /// Under ``lock``: who waits now. Made with `.init()`: a `[:]` literal costs every
    /// construction a call of `init(dictionaryLiteral:)`.
    @exclusivity(unchecked) private var waiters: [Int: Waiter] = .init()
    /// Under ``lock``: how many have waited, which also numbers the next waiter. Zero at
    /// the end means no one ever reached this construction through the wait graph.
    @exclusivity(unchecked) private var waitersSoFar = 0

    /// How many have waited here so far, read under ``lock``: what a test waits for before
    /// it lets the construction end, so that every waiter it started is in the room.
    var waitedSoFar: Int { lock.withLock { _ in waitersSoFar } }

    /// The lock of this construction's state: a stripe shared with other small objects,
    /// held only for a few loads and stores, so a construction costs one allocation.
    private var lock: _StripeLock { _LockStripes.lock(for: self) }

    /// A room for the construction of `key` that `builder` runs, or that a frame not yet
    /// known will run (``WaitGraph/start(_:builtBy:)``).
    init(key: RegistrationKey, builtBy builder: Frame? = nil) { (self.key, self.builder) = (key, builder) }

    /// Blocks this thread until the construction ends, and returns its box. `owner` is
    /// who waits, `innermost` its innermost construction, for the wait graph: a wait that
    /// would close a cycle stops with the chain instead of blocking forever.
    func wait(as owner: Owner, innermost: Frame?) -> AnyBox {
        let signal: DispatchSemaphore? = lock.withLock { _ in
            guard result == nil else { return nil }
            let signal = DispatchSemaphore(value: 0)
            waiters[waitersSoFar] = .thread(signal)
            waitersSoFar += 1
            return signal
        }
        if let signal {
            WaitGraph.beginWaiting(owner, innermost: innermost, on: self, blocksThread: true)
            signal.wait()
            WaitGraph.endWaiting(owner)
        }
        // Synchronous constructions cannot throw.
        return try! lock.withLock { _ in result! }.get()
    }

    /// Suspends this task until the construction ends, and returns its box or rethrows
    /// its error. Cancelling the task stops its wait with `CancellationError`.
    func value(as owner: Owner, innermost: Frame?) async throws -> AnyBox {
        // Counted before it enters the wait graph, so that the builder knows to leave it.
        let (id, ready): (Int, Result<AnyBox, any Error>?) = lock.withLock { _ in
            if let result { return (0, result) }
            defer { waitersSoFar += 1 }
            return (waitersSoFar, nil)
        }
        if let ready { return try ready.get() }
        WaitGraph.beginWaiting(owner, innermost: innermost, on: self)
        defer { WaitGraph.endWaiting(owner) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<AnyBox, any Error>? = lock.withLock { _ in
                    if let result { return result }
                    // Checked under the lock: a cancellation handler that ran before this
                    // found nothing to resume.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    waiters[id] = .task(continuation)
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = lock.withLock { _ in waiters.removeValue(forKey: id) }
            if case .task(let continuation)? = waiter { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Publishes the outcome and wakes every waiter. A construction no one waited for
    /// leaves the wait graph without taking its lock: no walk of the graph can reach it.
    func finish(_ outcome: Result<AnyBox, any Error>) {
        // Once the result is set, no one else enters the wait graph for this construction.
        let (woken, waitedFor): ([Int: Waiter]?, Bool) = lock.withLock { _ in
            result = outcome
            // Most constructions end with no one waiting: no table to hand over.
            guard !waiters.isEmpty else { return (nil, waitersSoFar > 0) }
            defer { waiters = [:] }
            return (waiters, true)
        }
        if waitedFor {
            WaitGraph.finish(self)
        } else {
            let builder = self.builder
            (self.builder, isDone) = (nil, true)
            withExtendedLifetime(builder) {}
        }
        guard let woken else { return }
        for waiter in woken.values {
            switch waiter {
            case .thread(let signal): signal.signal()
            case .task(let continuation): continuation.resume(with: outcome)
            }
        }
    }
}
