import Foundation

/// One run of a test case with its own container, bound as a task-local value while it
/// runs, and ended when its body returns: the test an issue raised on a task that
/// inherited it belongs to, while that test runs.
///
/// A task that a test starts, or that the library starts for it (the construction of an
/// async singleton that a cancelled waiter left running), inherits the test framework's
/// task-local values, and keeps them after the test has ended. The framework would record
/// an issue raised there in whatever test runs then (XCTest), or in the ended test after
/// it passed (Swift Testing). So an issue goes to the test only while its run is live;
/// after the run has ended it goes where any other issue from outside a test goes, to
/// standard error.
///
/// ```swift
/// let run = TestCaseRun(framework: .swiftTesting)
/// try await TestCaseRun.$current.withValue(run) { try await body() }
/// run.end()   // from now on, issues on tasks it started go to standard error
/// ```
final class TestCaseRun: Sendable {
    /// The test framework that runs the test case, which records its issues.
    enum Framework {
        case swiftTesting
        case xcTest
    }

    /// The run of the test case running on this task, if any.
    @TaskLocal static var current: TestCaseRun?

    let framework: Framework
    /// Whether the test case is still running; guarded by its own lock, which recording an
    /// issue holds, so that none is recorded after ``end()`` returns.
    private let isRunning = _LockedFlag()

    init(framework: Framework) {
        self.framework = framework
    }

    /// Runs `record` if the test case still runs, and says whether it did. Holding the
    /// run's lock: ``end()`` waits for it, so the issue reaches the test before it ends.
    /// Only for a recording that never waits for the thread that ends the run.
    func whileRunning(_ record: () -> Void) -> Bool {
        isRunning.ifSet(record)
    }

    /// Whether the test case still runs, for a recording that may wait for the thread
    /// that ends the run, which must not hold the lock (`XCTFail` from another thread).
    var isLive: Bool {
        isRunning.ifSet {}
    }

    /// Ends the run, once its body has returned.
    func end() {
        isRunning.clear()
    }
}

/// A flag that starts set, under a lock of its own.
private final class _LockedFlag: @unchecked Sendable {
    // @unchecked: `isSet` is only touched while holding `lock`.
    private let lock = NSLock()
    private var isSet = true

    func ifSet(_ body: () -> Void) -> Bool {
        lock.withLock {
            guard isSet else { return false }
            body()
            return true
        }
    }

    func clear() {
        lock.withLock { isSet = false }
    }
}
