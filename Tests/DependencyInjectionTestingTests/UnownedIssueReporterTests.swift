import DependencyInjection
@testable import DependencyInjectionTesting
import Foundation
import Testing

/// Pins WritingTests.md, DependencyIssue.swift and DependenciesTrait.swift: "The testing
/// product installs its reporter through ``DependencyIssue/reporter``. Outside a test,
/// issues go to whatever reporter was installed before: standard error by default." Each
/// runs in an exit test, whose process has no running test, and raises the issue on a
/// plain thread, for a container no test owns.
@Suite struct UnownedIssueReporterTests {
    @Test func anIssueOfNoTestGoesToTheReporterInstalledBefore() async {
        await #expect(processExitsWith: .success) {
            let received = Locked<[DependencyIssue]>([])
            DependencyIssue.reporter = { issue in received.withValue { $0.append(issue) } }
            raiseAnIssueOfNoTest()
            let issues = received.value
            precondition(issues.count == 1, "the previous reporter received \(issues.count) issues")
            precondition(issues[0].dependency == "analytics", "\(issues[0].message)")
        }
    }

    @Test func anIssueOfNoTestGoesToStandardErrorByDefault() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            raiseAnIssueOfNoTest()
        }
        let output = standardError(of: result)
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("DependencyInjection: ") }
        #expect(lines.count == 1, "\(output)")
        #expect(lines.first?.contains("analytics") == true, "\(output)")
        #expect(lines.first?.hasSuffix(")") == true && lines.first?.contains("DependencyInjectionTestingTests/Fixtures.swift:") == true,
                "\(output)")
    }
}

/// Installs the testing product's reporter, then resolves the `analytics` placeholder on
/// a plain thread, outside any test and any task, for a container no test owns: one issue.
private func raiseAnIssueOfNoTest() {
    TestRunnerReporter.install()
    let done = DispatchSemaphore(value: 0)
    Thread {
        _ = DependencyContainer().analytics()
        done.signal()
    }.start()
    done.wait()
}
