import Foundation

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

/// Hang guard for exit tests: ends the child process with a failure if it is still running
/// after `seconds`, so that a deadlock fails the test instead of hanging the suite. It
/// orders nothing: a correct run ends long before.
func endProcessIfHung(after seconds: Int = 60, _ what: String) {
    let watchdog = Thread {
        if DispatchSemaphore(value: 0).wait(timeout: .now() + .seconds(seconds)) == .timedOut {
            FileHandle.standardError.write(Data("hang guard: \(what) still running after \(seconds) s\n".utf8))
            exit(124)
        }
    }
    watchdog.start()
}
