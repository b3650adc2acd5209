@testable import DependencyInjection
@testable import DependencyInjectionTesting
import Foundation
import Testing

/// An issue at a place of a helper's own (a generator's file ID, no path, line and
/// column 0) handed to the testing product's Swift Testing recorder. Each runs in an exit
/// test, whose process has no running test: the recorder is called directly, and the
/// test library then encodes and describes the issue's location as it does for any test.
/// A location the library stops on ends that process, not the suite; an issue the child
/// records is forwarded to this process, where each test expects it.
@Suite struct PSAReporterAttackTests {
    /// The place the brief names: a file ID without a module, an empty path, line and
    /// column 0. Without the fallback, `SourceLocation` stops on each.
    @Test func anIssueAtAFileIDWithoutASlashNoPathAndLineZeroIsRecorded() async {
        await psaRecordedInTheParent(fileName: "NoSlash.swift") {
            await #expect(processExitsWith: .success) {
                TestRunnerReporter.record(psaIssue(fileID: "NoSlash.swift"))
            }
        }
    }

    /// An empty file ID becomes `_/`: a module and an empty file name.
    @Test func anIssueAtAnEmptyFileIDIsRecorded() async {
        await psaRecordedInTheParent(fileName: "") {
            await #expect(processExitsWith: .success) {
                TestRunnerReporter.record(psaIssue(fileID: ""))
            }
        }
    }

    /// A file ID whose slash a combining mark follows: `String.contains("/")` compares
    /// characters, finds none, and the fallback prefixes `_/`, which keeps it well formed.
    @Test func anIssueAtAFileIDWhoseSlashACombiningMarkFollowsIsRecorded() async {
        await psaRecordedInTheParent(fileName: "PSA/\u{301}Generated.swift") {
            await #expect(processExitsWith: .success) {
                TestRunnerReporter.record(psaIssue(fileID: "PSA/\u{301}Generated.swift"))
            }
        }
    }

    /// A file ID without a slash that starts with a combining mark: the fallback's `_/`
    /// prefix and the mark make one character, `/́`, so the location passes the library's
    /// byte check (`utf8.contains("/")`) but has no `/` character, and the library's
    /// `SourceLocation.fileName` (`fileID.lastIndex(of: "/")!`), which it calls to
    /// describe every recorded issue, stopped the process (807b68a). The fallback now
    /// checks its result, and puts a file name between the slash and the mark.
    @Test func anIssueAtAFileIDThatStartsWithACombiningMarkIsRecorded() async {
        await psaRecordedInTheParent(fileName: "\u{301}Generated.swift") {
            await #expect(processExitsWith: .success) {
                TestRunnerReporter.record(psaIssue(fileID: "\u{301}Generated.swift"))
            }
        }
    }
}

/// Runs `body`, whose exit test records one issue: the test library forwards it to this
/// process, where it is expected, at line and column 1 of a file named `fileName`.
private func psaRecordedInTheParent(fileName: String, _ body: () async -> Void) async {
    await withKnownIssue("the exit test's issue, forwarded") {
        await body()
    } matching: { issue in
        issue.sourceLocation.map { location in
            // By bytes: a mark at the start of `fileName` joins what goes before it.
            location.line == 1 && location.column == 1 && location.fileID.utf8.suffix(fileName.utf8.count).elementsEqual(fileName.utf8)
        } ?? false
    }
}

private func psaIssue(fileID: StaticString) -> DependencyIssue {
    DependencyIssue(
        dependency: "psaPlaced", message: "psaPlaced: a placeholder at a place of its helper's own",
        fileID: fileID, filePath: "", line: 0, column: 0, container: nil)
}
