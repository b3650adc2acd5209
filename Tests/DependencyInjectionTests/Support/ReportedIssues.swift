@testable import DependencyInjection

/// The issues reported for `container` while `body` runs. The reporter is process-wide, so
/// issues of other containers go on to the reporter this one replaces, which is restored
/// at the end.
///
/// ```swift
/// let issues = reportedIssues(in: container) { container.override(\.a) { A() } }
/// ```
func reportedIssues(in container: DependencyContainer, while body: () -> Void) -> [DependencyIssue] {
    let issues = Collected<DependencyIssue>()
    let previous = DependencyIssue.reporter
    DependencyIssue.reporter = { issue in
        if issue.container === container { issues.append(issue) } else { previous(issue) }
    }
    defer { DependencyIssue.reporter = previous }
    body()
    return issues.values
}
