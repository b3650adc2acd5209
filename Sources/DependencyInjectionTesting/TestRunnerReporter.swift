import DependencyInjection
import Testing

#if canImport(XCTest)
import XCTest
#endif

/// Turns each `DependencyIssue` into a failure of the test that caused it.
///
/// Installed once per process, by the first ``DependenciesTrait`` or
/// ``DependencyTestCase`` test to run. Issues raised inside a Swift Testing test are
/// recorded with `Issue.record`, issues raised inside a ``DependencyTestCase`` test with
/// `XCTFail`, while the test runs (``TestCaseRun``): a task it started that raises one
/// after it ended is no part of it. An issue raised elsewhere (a detached task, a
/// dispatch queue) for the container of a running test, or a child of it, is kept in
/// ``LiveTestContainers`` and recorded when that test's body returns. Any other issue
/// goes to the reporter that was installed before.
enum TestRunnerReporter {
    static func install() {
        _ = installation
    }

    private static let installation: Void = {
        let previous = DependencyIssue.reporter
        DependencyIssue.reporter = { issue in
            if let run = TestCaseRun.current {
                switch run.framework {
                case .swiftTesting:
                    if run.whileRunning({ record(issue) }) { return }
                case .xcTest:
                    #if canImport(XCTest)
                    // Not under the run's lock: XCTest may hand the failure to the thread
                    // that runs the test, which takes that lock to end the run.
                    if run.isLive {
                        fail(issue)
                        return
                    }
                    #endif
                }
            } else if Test.current != nil {
                // A Swift Testing test without the trait: the framework knows no more.
                record(issue)
                return
            }
            if LiveTestContainers.shared.keep(issue) { return }
            previous(issue)
        }
    }()

    /// Records `issue` in the running Swift Testing test, pointing at its registration.
    static func record(_ issue: DependencyIssue) {
        // The test library stops the process on a file ID without a module, an empty path,
        // or a line or column below 1, which a helper that passes its own may give. It
        // finds the module's slash as a character: a file ID that starts with a combining
        // mark would join a slash put before it, so a file name goes between them.
        let given = issue.fileID.description
        var fileID = given.contains("/") ? given : "_/" + given
        if !fileID.contains("/") { fileID = "_/_" + given }
        let filePath = issue.filePath.description
        let location = SourceLocation(
            fileID: fileID, filePath: filePath.isEmpty ? fileID : filePath,
            line: max(1, Int(clamping: issue.line)), column: max(1, Int(clamping: issue.column)))
        Issue.record(Comment(rawValue: issue.message), sourceLocation: location)
    }

    #if canImport(XCTest)
    /// Fails the running XCTest test with `issue`, pointing at its registration.
    static func fail(_ issue: DependencyIssue) {
        XCTFail(issue.message, file: issue.filePath, line: issue.line)
    }
    #endif
}
