import DependencyInjection
import Foundation
import Testing

/// Another module's service, missing in these tests.
protocol DRLTracker: Sendable {}
struct DRLNoTracker: DRLTracker {}

extension DependencyContainer {
    var drlTracker: Provider<any DRLTracker> { unimplemented(placeholder: DRLNoTracker()) }
}

/// Pins DependencyIssue.swift: the default reporter "writes the issue and where its
/// registration is declared to standard error, one line per issue. The line reads
/// `DependencyInjection: <message> (<fileID>:<line>)`", and an issue's `description` is
/// "The ``message``".
@Suite struct DefaultReporterLineTests {
    @Test func theDefaultReporterWritesOneLineWithTheMessageFileIDAndLine() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            // With the default reporter: the line under test.
            _ = DependencyContainer().drlTracker()
            // Then the same issue, caught, to tell the parent what it says.
            let caught = Collected<DependencyIssue>()
            DependencyIssue.reporter = { caught.append($0) }
            _ = DependencyContainer().drlTracker()
            precondition(caught.values.count == 1)
            let issue = caught.values[0]
            precondition(issue.description == issue.message, "description is not the message")
            precondition("\(issue)" == issue.message, "interpolation does not show the message")
            FileHandle.standardError.write(Data(
                "caught|\(issue.message)|\(issue.fileID)|\(issue.line)|\(issue.dependency)\n".utf8))
        }
        let output = standardError(of: result)
        let caughtParts = output.split(separator: "\n").first { $0.hasPrefix("caught|") }?
            .split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard let parts = caughtParts, parts.count == 5 else {
            Issue.record("the child did not say what the issue was: \(output)")
            return
        }
        let (message, fileID, line, dependency) = (parts[1], parts[2], parts[3], parts[4])
        #expect(dependency == "drlTracker")
        #expect(fileID == "DependencyInjectionTests/DefaultReporterLineTests.swift")
        #expect(!message.isEmpty && !message.contains("\n"))
        let reported = output.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { $0.hasPrefix("DependencyInjection:") }
        #expect(reported == ["DependencyInjection: \(message) (\(fileID):\(line))"], "\(output)")
    }
}
