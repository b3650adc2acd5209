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
/// `XCTFail`; any other issue goes to the reporter that was installed before.
enum TestRunnerReporter {
    static func install() {
        _ = installation
    }

    private static let installation: Void = {
        let previous = DependencyIssue.reporter
        DependencyIssue.reporter = { issue in
            if Test.current != nil {
                let location = SourceLocation(
                    fileID: issue.fileID.description, filePath: issue.filePath.description,
                    line: Int(issue.line), column: Int(issue.column))
                Issue.record(Comment(rawValue: issue.message), sourceLocation: location)
                return
            }
            #if canImport(XCTest)
            if XCTestScope.isRunning {
                XCTFail(issue.message, file: issue.filePath, line: issue.line)
                return
            }
            #endif
            previous(issue)
        }
    }()
}
