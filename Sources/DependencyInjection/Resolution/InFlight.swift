import Dispatch

/// A construction whose result others wait for: a singleton or shared instance being
/// built, or the first resolution of a `@Dependency` property.
///
/// It is the package's one in-flight type. Threads wait on a semaphore of their own and
/// tasks on a continuation, so the container's lock stays free while user code runs, and
/// nothing is allocated for waiting unless someone waits. A cancelled task stops waiting
/// with `CancellationError` without cancelling the construction for the others.
///
/// ```swift
/// let inFlight = InFlight(key: key)
/// // builder:                      // any other owner:
/// inFlight.finish(.success(box))   let box = inFlight.wait(as: .current, innermost: Frame.current)
/// ```
@usableFromInline
final class InFlight: @unchecked Sendable {
    // @unchecked: `state` is guarded by its own lock; `builder` and `isDone` by the
    // wait graph's lock; `key` is immutable.
    let key: RegistrationKey
    /// The frame of the owner building it, once known.
    var builder: Frame?
    /// Set before the waiters are woken: a finished construction is never part of a cycle.
    var isDone = false

    private enum Waiter {
        case thread(DispatchSemaphore)
        case task(CheckedContinuation<AnyBox, any Error>)
    }

    private struct State {
        var result: Result<AnyBox, any Error>?
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
    }

    private let state = _Locked(State())

    init(key: RegistrationKey) { self.key = key }

    /// Blocks the current thread until the construction finishes, unless waiting would
    /// close a cycle of constructions waiting for each other: then it stops with the chain.
    func wait(as owner: Owner, innermost: Frame?) -> AnyBox {
        let signal: DispatchSemaphore? = state.withLock { state in
            guard state.result == nil else { return nil }
            let signal = DispatchSemaphore(value: 0)
            state.waiters[state.nextWaiter] = .thread(signal)
            state.nextWaiter += 1
            return signal
        }
        if let signal {
            WaitGraph.beginWaiting(owner, innermost: innermost, on: self)
            signal.wait()
            WaitGraph.endWaiting(owner)
        }
        // Synchronous constructions cannot throw.
        return try! state.withLock { $0.result! }.get()
    }

    /// Suspends the current task until the construction finishes; the async twin of
    /// ``wait(as:innermost:)``.
    ///
    /// - Throws: What the construction threw, or `CancellationError` when this task is
    ///   cancelled first.
    func value(as owner: Owner, innermost: Frame?) async throws -> AnyBox {
        WaitGraph.beginWaiting(owner, innermost: innermost, on: self)
        defer { WaitGraph.endWaiting(owner) }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<AnyBox, any Error>? = state.withLock { state in
                    if let result = state.result { return result }
                    // Checked under the lock: a cancellation handler that ran before this
                    // found nothing to resume.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = .task(continuation)
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            if case .task(let continuation)? = waiter { continuation.resume(throwing: CancellationError()) }
        }
    }

    /// Hands the result to every waiter, now and later.
    func finish(_ outcome: Result<AnyBox, any Error>) {
        WaitGraph.finish(self)
        let waiters = state.withLock { state in
            state.result = outcome
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values {
            switch waiter {
            case .thread(let signal): signal.signal()
            case .task(let continuation): continuation.resume(with: outcome)
            }
        }
    }
}
