import Foundation

// Hang guards. A test that guards against a deadlock would hang the whole suite if the
// deadlock came back; these turn such a hang into a failure. They order nothing: a correct
// run ends long before the limit, which is generous so that a loaded machine (two suites
// at once on two cores) never reaches it. This file holds the only timed wait of the tests.

/// How long guarded work may run before it counts as hung.
///
/// Async work waits in the cooperative pool's queue behind every test that runs
/// meanwhile: work that suspends a few hundred times, started early, ends only as the
/// whole suite does. Two suites at once on two cores, beside other work, took 124 s, and a
/// limit of 120 s failed such a test that had not hung. The limit is the suite's length
/// under that load, with room to spare.
let hangLimitSeconds = 300

/// Whether `finished` is signalled within the hang limit.
private func isSignalledBeforeTheHangLimit(_ finished: DispatchSemaphore) -> Bool {
    finished.wait(timeout: .now() + .seconds(hangLimitSeconds)) == .success
}

/// Work for a thread or task of the hang guards, which lets go of it once it has run.
///
/// A `Thread`'s closure, and a `Task`'s, is released some time after it returns, once the
/// thread has gone: work captured there would keep what it captured (a container, an
/// instance a test checks was released) alive past the signal that it finished.
private final class WorkToRun: @unchecked Sendable {
    // @unchecked: set once, taken by the one thread or task that runs it.
    private var work: (@Sendable () -> Void)?
    private var asyncWork: (@Sendable () async -> Void)?
    init(_ work: @escaping @Sendable () -> Void) { self.work = work }
    init(async work: @escaping @Sendable () async -> Void) { self.asyncWork = work }

    /// Runs the work and releases it before returning.
    func run() {
        let taken = work
        work = nil
        taken?()
    }

    /// Runs the async work and releases it before returning.
    func run() async {
        let taken = asyncWork
        asyncWork = nil
        await taken?()
    }
}

/// Hang guard for tests in this process: runs `work` on a thread of its own and says
/// whether it finished. A deadlocked thread stays blocked, but the test fails instead of
/// hanging. The work is released once it has run, before the guard returns.
func finishesWithoutHanging(_ work: @escaping @Sendable () -> Void) -> Bool {
    finishesWithoutHanging(WorkToRun(work))
}

private func finishesWithoutHanging(_ work: WorkToRun) -> Bool {
    recordIfBlockingThePool("finishesWithoutHanging(_:)")
    let finished = DispatchSemaphore(value: 0)
    Thread {
        work.run()
        finished.signal()
    }.start()
    return isSignalledBeforeTheHangLimit(finished)
}

/// Hang guard for exit tests: ends the child process with a failure if it is still
/// running at the hang limit.
func endProcessIfHung(_ what: String) {
    Thread {
        if !isSignalledBeforeTheHangLimit(DispatchSemaphore(value: 0)) {
            FileHandle.standardError.write(
                Data("hang guard: \(what) still running after \(hangLimitSeconds) s\n".utf8))
            exit(124)
        }
    }.start()
}

/// Hang guard for async work in this process: runs `work` in a task of its own and says
/// whether it finished. The limit is waited for on a thread of its own, never on a thread
/// of the cooperative pool, which the work may need. A hung task stays suspended, but the
/// test fails instead of hanging.
///
/// The limit counts from when the task starts: under a loaded suite, a new task can wait
/// in the pool's queue for minutes before it runs, which says nothing about the package.
/// Waiting that long to start counts as hung too.
func endsWithoutHanging(_ work: @escaping @Sendable () async -> Void) async -> Bool {
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let toRun = WorkToRun(async: work)
    Task {
        started.signal()
        await toRun.run()
        finished.signal()
    }
    let verdict = Handoff<Bool>()
    Thread {
        verdict.put(isSignalledBeforeTheHangLimit(started) && isSignalledBeforeTheHangLimit(finished))
    }.start()
    return await verdict.value()
}

/// ``finishesWithoutHanging(_:)`` from a thread of its own: the test's task never blocks a
/// thread of the cooperative pool, which the tasks that `work` starts, and the other tests
/// running meanwhile, need.
func finishesWithoutHangingOffThePool(_ work: @escaping @Sendable () -> Void) async -> Bool {
    let toRun = WorkToRun(work)
    return await withCheckedContinuation { finished in
        Thread { finished.resume(returning: finishesWithoutHanging(toRun)) }.start()
    }
}

/// Yields until `condition` holds, a bounded number of times: for what a task that nobody
/// awaits does last (a construction's task ends a handover after waking its waiters, and
/// lets go of what it built after its caller returned).
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<200_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
