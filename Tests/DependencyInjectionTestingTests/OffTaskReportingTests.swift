import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Testing

/// A placeholder reached off the test's task, by work the test handed its container to,
/// fails that test. Each test runs a `.dependencies` scope by hand, exactly as Swift
/// Testing runs it around a test case, inside `withKnownIssue`: the test passes only if
/// the scope recorded the issue (no issue fails it) and every recorded issue names
/// `analytics` (another fails it). These tests carry no trait themselves: inside another
/// test's scope, a trait configures that scope's container instead of making one.
@Suite struct OffTaskReportingTests {
    /// Runs `body` with a test case's container, as the `.dependencies` trait does.
    private func runTestCase(
        _ body: @escaping @Sendable (DependencyContainer) async -> Void
    ) async throws {
        let trait: DependenciesTrait = .dependencies
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            await body(DependencyContainer.main)
        }
    }

    // MARK: - Work the test handed its container to

    @Test func aPlaceholderInADetachedTaskFailsTheTest() async throws {
        try await withKnownIssue("the placeholder is reported") {
            try await runTestCase { container in
                let resolved = await Task.detached { container.analytics() }.value
                #expect(resolved.name == "placeholder")
            }
        } matching: { issue in
            UnimplementedReportingTests.namesAnalytics(issue)
                && issue.sourceLocation?.fileName == "Fixtures.swift"
        }
    }

    @Test func aPlaceholderOnADispatchQueueFailsTheTest() async throws {
        try await withKnownIssue("the placeholder is reported") {
            try await runTestCase { container in
                let resolved = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { continuation.resume(returning: container.analytics()) }
                }
                #expect(resolved.name == "placeholder")
            }
        } matching: { issue in
            UnimplementedReportingTests.namesAnalytics(issue)
        }
    }

    @Test func aChildOfTheTestsContainerReportsToTheTestOncePerContainer() async throws {
        let reports = Locked(0)
        try await withKnownIssue {
            try await runTestCase { container in
                await Task.detached {
                    _ = container.analytics()
                    _ = container.analytics()
                    _ = DependencyContainer(parent: container).analytics()
                }.value
            }
        } matching: { issue in
            reports.withValue { $0 += 1 }
            return UnimplementedReportingTests.namesAnalytics(issue)
        }
        #expect(reports.value == 2)
    }

    @Test func anIssueOnTheTestsOwnTaskIsRecordedAtOnceAndOnlyOnce() async throws {
        try await runTestCase { container in
            // Not recorded inside `withKnownIssue`, it would fail it; recorded again when
            // the test returns, it would fail this test.
            withKnownIssue { _ = container.analytics() } matching: { issue in
                UnimplementedReportingTests.namesAnalytics(issue)
            }
        }
    }

    // MARK: - A request served in a scope of the test's container

    /// A test that serves a request as a server does, in a scope of the test's container
    /// (here a request scope inside a session scope) handed to a thread: a placeholder the
    /// request reaches fails the test.
    @Test func aPlaceholderReachedInARequestScopeOnAThreadFailsTheTest() async throws {
        try await withKnownIssue("the placeholder is reported") {
            try await runTestCase { container in
                let resolved = await withCheckedContinuation { continuation in
                    Thread {
                        let session = DependencyContainer(scopeOf: container)
                        let request = DependencyContainer(scopeOf: session)
                        continuation.resume(returning: request.analytics())
                    }.start()
                }
                #expect(resolved.name == "placeholder")
            }
        } matching: { issue in
            UnimplementedReportingTests.namesAnalytics(issue)
        }
    }

    @Test func aPlaceholderReachedInARequestScopeOnTheTestsTaskFailsTheTest() async throws {
        try await withKnownIssue("the placeholder is reported") {
            try await runTestCase { container in
                let request = DependencyContainer(scopeOf: container)
                #expect(request.analytics().name == "placeholder")
            }
        } matching: { issue in
            UnimplementedReportingTests.namesAnalytics(issue)
        }
    }

    // MARK: - The issue's container

    @Test func anIssueCarriesTheContainerThatResolvedIt() async {
        await #expect(processExitsWith: .success) {
            let seen = Locked<[DependencyIssue]>([])
            DependencyIssue.reporter = { issue in seen.withValue { $0.append(issue) } }
            let parent = DependencyContainer(parent: .mocks)
            let child = DependencyContainer(parent: parent)
            _ = parent.analytics()
            _ = child.analytics()
            let issues = seen.value
            precondition(issues.count == 2, "\(issues.count) issues")
            precondition(issues[0].container === parent, "not the parent")
            precondition(issues[1].container === child, "not the child")
        }
    }
}
