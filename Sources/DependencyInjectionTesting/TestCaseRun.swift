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
    /// Whether the test case still runs, and the recordings under way in it.
    private let state = RunState()

    init(framework: Framework) {
        self.framework = framework
    }

    /// Runs `record` if the test case still runs, and says whether it did. ``end()`` waits
    /// for it, so the issue reaches the test before the test ends. No lock is held while
    /// `record` runs: the test framework runs code of the test's there (a known issue's
    /// matcher, an issue handler), which may raise an issue of its own. Only for a
    /// recording that never waits for the task that ends the run.
    func whileRunning(_ record: () -> Void) -> Bool {
        guard state.beginRecording() else { return false }
        defer { state.endRecording() }
        record()
        return true
    }

    /// Whether the test case still runs, for a recording that may wait for the thread
    /// that ends the run, which ``end()`` must then not wait for (`XCTFail` from another
    /// thread, on systems whose XCTest hands it to the thread that runs the test).
    var isLive: Bool {
        state.isRunning
    }

    /// Ends the run, once its body has returned, after the recordings under way.
    func end() {
        state.end()
    }
}

/// Whether a run is live, and how many recordings run in it, under one condition.
private final class RunState: @unchecked Sendable {
    // @unchecked: `running` and `recordings` are only touched while holding `condition`.
    private let condition = NSCondition()
    private var running = true
    private var recordings = 0

    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return running
    }

    /// Counts a recording that starts, if the run is live.
    func beginRecording() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard running else { return false }
        recordings += 1
        return true
    }

    func endRecording() {
        condition.lock()
        recordings -= 1
        if recordings == 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Ends the run: no recording starts from now on, and the ones under way finish first.
    func end() {
        condition.lock()
        running = false
        while recordings > 0 { condition.wait() }
        condition.unlock()
    }
}
