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
        // A finished frame cuts the chain: what lies above it is not waiting for this task.
        while let current = frame, !current.finished {
            names.append(current.name)
            if current.container == ObjectIdentifier(container) && current.key == key {
                CycleReport.stop(chain: names.reversed())
            }
            frame = current.parent
        }
    }

    /// The innermost construction of a singleton or shared instance in this chain.
    static var innermostConstruction: AsyncConstruction? {
        var frame = current
        while let current = frame, !current.finished {
            if let construction = current.construction { return construction }
            frame = current.parent
        }
        return nil
    }

    /// The names of this task's frames inside `construction`'s frame, outermost first:
    /// the factories between a waiting construction and the current resolution.
    static func names(inside construction: AsyncConstruction) -> [StaticString] {
        var names: [StaticString] = []
        var frame = current
        while let current = frame, !current.finished, current.construction !== construction {
            names.append(current.name)
            frame = current.parent
        }
        return names.reversed()
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
    // @unchecked: `result`, `waiters` and `nextWaiter` are guarded by `lock`;
    // `waitingOn` and `isDone` by the wait graph's lock, `graph`.
    let name: StaticString
    private let lock = Lock()
    private var result: Result<AnyBox, any Error>?
    private var waiters: [Int: CheckedContinuation<AnyBox, any Error>] = [:]
    private var nextWaiter = 0

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
        markDone()
        let waiting: [CheckedContinuation<AnyBox, any Error>] = lock.withLock {
            result = outcome
            defer { waiters = [:] }
            return Array(waiters.values)
        }
        for waiter in waiting { waiter.resume(with: outcome) }
    }

    // MARK: - Waiting without deadlock

    /// The constructions this one's task (or its child tasks) are waiting for, one entry
    /// per wait, guarded by `graph`. A factory may await several at once (`async let`).
    private var waitingOn: [Int: AsyncConstruction] = [:]
    /// Set under `graph` when the construction finishes: it is then no part of a deadlock.
    private var isDone = false

    private static let graph = Lock()
    nonisolated(unsafe) private static var nextEdge = 0  // guarded by `graph`

    /// Awaits `self` on behalf of the current task, stopping with a message instead when
    /// that would close a cycle of constructions waiting for each other.
    func valueWithoutDeadlock() async throws -> AnyBox {
        guard let waiter = AsyncFrame.innermostConstruction else { return try await value() }
        Self.graph.lock()
        if let path = Self.path(from: self, to: waiter) {
            Self.graph.unlock()
            CycleReport.stop(
                chain: path.map(\.name) + AsyncFrame.names(inside: waiter) + [self.name])
        }
        let edge = Self.nextEdge
        Self.nextEdge += 1
        waiter.waitingOn[edge] = self
        Self.graph.unlock()
        defer { Self.graph.withLock { _ = waiter.waitingOn.removeValue(forKey: edge) } }
        return try await value()
    }

    /// Marks the construction done for the wait graph; call before resuming waiters.
    func markDone() {
        Self.graph.withLock { isDone = true }
    }

    /// A chain of waits from `start` to `target` through unfinished constructions, if any.
    /// Call with `graph` held.
    private static func path(from start: AsyncConstruction, to target: AsyncConstruction) -> [AsyncConstruction]? {
        var visited = Set<ObjectIdentifier>()
        func search(_ node: AsyncConstruction) -> [AsyncConstruction]? {
            guard !node.isDone, visited.insert(ObjectIdentifier(node)).inserted else { return nil }
            if node === target { return [node] }
            for next in node.waitingOn.values {
                if let rest = search(next) { return [node] + rest }
            }
            return nil
        }
        return search(start)
    }
}
