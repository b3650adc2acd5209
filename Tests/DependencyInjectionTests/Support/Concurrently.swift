import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A minimal lock for test fixtures.
final class NSLockLike: @unchecked Sendable {
    private let lock = NSLock()
    func run<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// Runs `body` on `threads` threads that all start at the same moment, and waits for
/// them. The barrier makes the threads overlap, which is what ThreadSanitizer needs to see
/// a race.
func concurrently(threads: Int = 8, _ body: @escaping @Sendable (Int) -> Void) {
    recordIfBlockingThePool("concurrently(threads:)")
    onThreadsReleasedTogether(threads, body)
}

/// ``concurrently(threads:_:)`` without its check of the calling thread, which records a
/// test issue: for an exit test's body, where recording one is not allowed.
func onThreadsReleasedTogether(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = NSCondition()
    nonisolated(unsafe) var waiting = threads
    let finished = DispatchGroup()
    let body = SharedBody(body)
    defer { body.letGo() }
    for index in 0..<threads {
        finished.enter()
        let thread = Thread {
            start.lock()
            waiting -= 1
            if waiting == 0 {
                start.broadcast()
            } else {
                while waiting > 0 { start.wait() }
            }
            start.unlock()
            body(index)
            finished.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    finished.wait()
}

/// The body of ``onThreadsReleasedTogether(_:_:)``, which every thread runs, let go of as
/// soon as every thread has: a `Thread` releases its closure only when the thread exits,
/// some time after, and what the body captured must be gone when the caller checks that
/// nothing leaked.
private final class SharedBody: @unchecked Sendable {
    // @unchecked: `body` is read and cleared under `lock`.
    private let lock = NSLock()
    private var body: (@Sendable (Int) -> Void)?

    init(_ body: @escaping @Sendable (Int) -> Void) { self.body = body }

    func callAsFunction(_ index: Int) {
        lock.lock()
        let body = self.body
        lock.unlock()
        body?(index)
    }

    /// Lets go of the body, after unlocking.
    func letGo() {
        lock.lock()
        let taken = body
        body = nil
        lock.unlock()
        withExtendedLifetime(taken) {}
    }
}

/// Records a test failure when `function`, which blocks its caller, is called from a task:
/// a synchronous test runs in a task on a thread of the cooperative pool, which has as many
/// threads as the machine has cores, and the tests that start tasks and wait for them hang
/// while the blocking calls hold every pool thread. A thread of its own has no task, and the
/// main actor is not on the pool. The call still goes ahead.
func recordIfBlockingThePool(_ function: String) {
    guard !Thread.isMainThread, withUnsafeCurrentTask(body: { $0 != nil }) else { return }
    Issue.record(
        "\(function) blocks a thread of the cooperative pool; call it through concurrentlyOffThePool / finishesWithoutHangingOffThePool from an async test")
}

/// Collects values from many threads.
final class Collected<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []
    func append(_ value: Value) {
        lock.lock()
        items.append(value)
        lock.unlock()
    }
    var values: [Value] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
    /// The values collected so far, which this no longer holds.
    func takeAll() -> [Value] {
        lock.lock()
        defer { lock.unlock() }
        let taken = items
        items = []
        return taken
    }
}

/// ``concurrently(threads:_:)`` behind the hang guard, from a thread of its own: the test's
/// task never blocks a thread of the cooperative pool while the threads run.
///
/// - Returns: Whether every thread finished before the hang limit.
func concurrentlyOffThePool(threads: Int = 8, _ body: @escaping @Sendable (Int) -> Void) async -> Bool {
    await finishesWithoutHangingOffThePool { concurrently(threads: threads, body) }
}

/// Runs `body` on `count` new threads, each given its index, and joins them: when this
/// returns, every thread has ended and run its thread-specific destructors, which
/// `Thread` does not wait for. Call it off the cooperative pool.
func joiningThreadsThatRun(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    recordIfBlockingThePool("joiningThreadsThatRun(_:_:)")
    #if canImport(Darwin)
    var threads: [pthread_t?] = []
    #else
    var threads: [pthread_t] = []
    #endif
    for index in 0..<count {
        let context = Unmanaged.passRetained(IndexedThreadWork(body, index: index)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let status = pthread_create(&thread, nil, { context in
            #if canImport(Darwin)
            let work = Unmanaged<IndexedThreadWork>.fromOpaque(context).takeRetainedValue()
            #else
            let work = Unmanaged<IndexedThreadWork>.fromOpaque(context!).takeRetainedValue()
            #endif
            work.body(work.index)
            return nil
        }, context)
        precondition(status == 0, "pthread_create failed with \(status)")
        threads.append(thread)
    }
    for thread in threads {
        #if canImport(Darwin)
        pthread_join(thread!, nil)
        #else
        pthread_join(thread, nil)
        #endif
    }
}

/// Runs `body` on `count` new threads released together, and joins them: every thread has
/// ended, run its exit destructors and let go of what `body` captured when this returns, so
/// a test can then check that nothing the threads used is still alive. Call it off the
/// cooperative pool.
func onThreadsReleasedTogetherAndJoined(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let start = NSCondition()
    nonisolated(unsafe) var waiting = count
    joiningThreadsThatRun(count) { index in
        start.lock()
        waiting -= 1
        if waiting == 0 { start.broadcast() } else { while waiting > 0 { start.wait() } }
        start.unlock()
        body(index)
    }
}

private final class IndexedThreadWork {
    let body: @Sendable (Int) -> Void
    let index: Int
    init(_ body: @escaping @Sendable (Int) -> Void, index: Int) { (self.body, self.index) = (body, index) }
}
