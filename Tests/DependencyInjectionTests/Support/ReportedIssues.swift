@testable import DependencyInjection
import Foundation

/// The issues reported for `container` while `body` runs.
///
/// The reporter is process-wide and tests run in parallel, so each call does not install
/// a reporter of its own and restore the previous one at its end: two calls that
/// overlapped restored out of order, and one test's issues then reached the reporter of
/// no one (the Testing product's, which failed the test). One reporter, installed on the
/// first call, hands each issue to the calls watching its container, and the others on
/// to the reporter it replaced.
///
/// ```swift
/// let issues = reportedIssues(in: container) { container.override(\.a) { A() } }
/// ```
func reportedIssues(in container: DependencyContainer, while body: () -> Void) -> [DependencyIssue] {
    let issues = Collected<DependencyIssue>()
    let id = ObjectIdentifier(container)
    IssueWatchers.shared.watch(id, into: issues)
    defer { IssueWatchers.shared.stopWatching(id) }
    body()
    return issues.values
}

/// The containers whose issues a call of ``reportedIssues(in:while:)`` collects, and the
/// one reporter that hands them out.
private final class IssueWatchers: @unchecked Sendable {
    // @unchecked: every field is read and written under `lock`.
    static let shared = IssueWatchers()
    private let lock = NSLock()
    private var collectors: [ObjectIdentifier: Collected<DependencyIssue>] = [:]
    private var isInstalled = false

    func watch(_ container: ObjectIdentifier, into issues: Collected<DependencyIssue>) {
        lock.withLock {
            collectors[container] = issues
            guard !isInstalled else { return }
            isInstalled = true
            let previous = DependencyIssue.reporter
            DependencyIssue.reporter = { [self] issue in
                if let collector = collector(for: issue) { collector.append(issue) } else { previous(issue) }
            }
        }
    }

    func stopWatching(_ container: ObjectIdentifier) {
        lock.withLock { collectors[container] = nil }
    }

    private func collector(for issue: DependencyIssue) -> Collected<DependencyIssue>? {
        guard let container = issue.container else { return nil }
        return lock.withLock { collectors[ObjectIdentifier(container)] }
    }
}
