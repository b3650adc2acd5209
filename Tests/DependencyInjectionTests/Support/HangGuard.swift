import Foundation

// Hang guards. A test that guards against a deadlock would hang the whole suite if the
// deadlock came back; these turn such a hang into a failure. They order nothing: a correct
// run ends long before the limit, which is generous so that a loaded machine (two suites
// at once on two cores) never reaches it. This file holds the only timed wait of the tests.

/// How long guarded work may run before it counts as hung.
let hangLimitSeconds = 120

/// Whether `finished` is signalled within the hang limit.
private func isSignalledBeforeTheHangLimit(_ finished: DispatchSemaphore) -> Bool {
    finished.wait(timeout: .now() + .seconds(hangLimitSeconds)) == .success
}

/// Hang guard for tests in this process: runs `work` on a thread of its own and says
/// whether it finished. A deadlocked thread stays blocked, but the test fails instead of
/// hanging.
func finishesWithoutHanging(_ work: @escaping @Sendable () -> Void) -> Bool {
    recordIfBlockingThePool("finishesWithoutHanging(_:)")
    let finished = DispatchSemaphore(value: 0)
    Thread {
        work()
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
func endsWithoutHanging(_ work: @escaping @Sendable () async -> Void) async -> Bool {
    let finished = DispatchSemaphore(value: 0)
    Task {
        await work()
        finished.signal()
    }
    let verdict = Handoff<Bool>()
    Thread { verdict.put(isSignalledBeforeTheHangLimit(finished)) }.start()
    return await verdict.value()
}

/// ``finishesWithoutHanging(_:)`` from a thread of its own: the test's task never blocks a
/// thread of the cooperative pool, which the tasks that `work` starts, and the other tests
/// running meanwhile, need.
func finishesWithoutHangingOffThePool(_ work: @escaping @Sendable () -> Void) async -> Bool {
    await withCheckedContinuation { finished in
        Thread { finished.resume(returning: finishesWithoutHanging(work)) }.start()
    }
}
