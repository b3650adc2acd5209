/// The chain of asynchronous constructions the current task is inside, innermost first.
///
/// Async factories may suspend and resume on another thread, so the thread-local
/// ``ResolutionStack`` cannot follow them; a task-local, immutable chain of frames can,
/// and child tasks and the construction tasks of singletons inherit it. It detects cycles,
/// tells a container which construction used a dependency, and gives trace depths.
///
/// A task started inside a construction inherits the chain and may outlive it; frames are
/// marked finished when their construction ends, and finished frames are ignored.
final class AsyncFrame: @unchecked Sendable {
    // @unchecked: `isFinished` is guarded by `lock`; everything else is immutable.
    @TaskLocal static var current: AsyncFrame?

    let container: ObjectIdentifier
    let key: ProviderKey
    let name: StaticString
    /// The construction this frame builds, for singletons and shared instances.
    let construction: AsyncConstruction?
    let parent: AsyncFrame?
    let depth: Int
    private let lock = Lock()
    private var isFinished = false

    /// Whether this frame's construction has ended.
    var finished: Bool { lock.withLock { isFinished } }

    /// Marks the construction ended.
    func finish() { lock.withLock { isFinished = true } }

    init(
        container: DependencyContainer, key: ProviderKey, name: StaticString,
        construction: AsyncConstruction?, parent: AsyncFrame?
    ) {
        self.container = ObjectIdentifier(container)
        self.key = key
        self.name = name
        self.construction = construction
        self.parent = parent
        self.depth = (parent?.depth ?? -1) + 1
    }

    /// Stops the process if `key` is already being built in `container` by this chain.
    static func checkNoCycle(in container: DependencyContainer, key: ProviderKey, name: StaticString) {
        var names: [StaticString] = [name]
        var frame = current
        while let current = frame {
            if !current.finished {
                names.append(current.name)
                if current.container == ObjectIdentifier(container) && current.key == key {
                    CycleReport.stop(chain: names.reversed())
                }
            }
            frame = current.parent
        }
    }

    /// The innermost construction of a singleton or shared instance in this chain.
    static var innermostConstruction: AsyncConstruction? {
        var frame = current
        while let current = frame {
            if let construction = current.construction, !current.finished { return construction }
            frame = current.parent
        }
        return nil
    }
}

/// An async singleton or shared instance being built, awaited by every task that asks
/// for it meanwhile.
///
/// Waiters suspend on continuations rather than on the construction's task, and the
/// construction runs in a task of its own: a waiter being cancelled stops waiting (it
/// throws `CancellationError`) but neither cancels the construction nor changes what the
/// others receive.
final class AsyncConstruction: @unchecked Sendable {
    // @unchecked: `result` and `waiters` are guarded by `lock`; `waitingOn` by the
    // wait graph's lock.
    let name: StaticString
    private let lock = Lock()
    private var result: Result<AnyBox, any Error>?
    private var waiters: [Int: CheckedContinuation<AnyBox, any Error>] = [:]
    private var nextWaiter = 0
    /// The construction this one's task is waiting for, if any.
    var waitingOn: AsyncConstruction?

    init(name: StaticString) { self.name = name }

    /// The built box, once the construction finishes.
    ///
    /// - Throws: What the construction threw, or `CancellationError` when the waiting
    ///   task is cancelled first.
    func value() async throws -> AnyBox {
        let id = lock.withLock {
            defer { nextWaiter += 1 }
            return nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if let result {
                    lock.unlock()
                    continuation.resume(with: result)
                } else if Task.isCancelled {
                    // Checked under the lock: a cancellation handler that ran before this
                    // found nothing to resume.
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters[id] = continuation
                    lock.unlock()
                }
            }
        } onCancel: {
            let continuation = lock.withLock { waiters.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }

    func finish(_ outcome: Result<AnyBox, any Error>) {
        let waiting: [CheckedContinuation<AnyBox, any Error>] = lock.withLock {
            result = outcome
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiting { waiter.resume(with: outcome) }
    }

    // MARK: - Waiting without deadlock

    private static let graphLock = Lock()

    /// Awaits `self` on behalf of the current task, stopping with a message instead when
    /// that would close a cycle of constructions waiting for each other.
    func valueWithoutDeadlock() async throws -> AnyBox {
        let waiter = AsyncFrame.innermostConstruction
        if let waiter {
            Self.graphLock.lock()
            var chain: [AsyncConstruction] = []
            var next: AsyncConstruction? = self
            while let current = next {
                chain.append(current)
                if current === waiter {
                    Self.graphLock.unlock()
                    CycleReport.stop(chain: chain.map(\.name) + [self.name])
                }
                next = current.waitingOn
            }
            waiter.waitingOn = self
            Self.graphLock.unlock()
        }
        defer {
            if let waiter { Self.graphLock.withLock { waiter.waitingOn = nil } }
        }
        return try await value()
    }
}
