import DependencyInjection
import DependencyInjectionTesting
import Testing

/// A resolved placeholder fails the running test with a message naming the dependency.
/// Each test wraps the resolution in `withKnownIssue`: the test then passes only if the
/// issue was recorded (no issue fails it) and every recorded issue matches (another
/// fails it), which proves the failure happens and names `analytics`.
@Suite(.dependencies) struct UnimplementedReportingTests {
    static func namesAnalytics(_ issue: Issue) -> Bool {
        issue.comments.contains { comment in
            comment.rawValue.contains("analytics is not implemented in this module")
                && comment.rawValue.contains("container.override(\\.analytics) { … }")
        }
    }

    @Test func aPlaceholderFailsTheTestAndNamesTheDependency() {
        var resolved: (any Analytics)?
        withKnownIssue("the placeholder is reported") {
            resolved = DependencyContainer.main.analytics()
        } matching: { issue in
            Self.namesAnalytics(issue) && issue.sourceLocation?.fileName == "Fixtures.swift"
        }
        #expect(resolved?.name == "placeholder")
    }

    @Test func itIsReportedOncePerContainer() {
        let reports = Locked(0)
        withKnownIssue {
            _ = DependencyContainer.main.analytics()
            _ = DependencyContainer.main.analytics()
            _ = FeedViewModel()   // unrelated resolutions report nothing
            _ = DependencyContainer(parent: .main).analytics()
        } matching: { issue in
            reports.withValue { $0 += 1 }
            return Self.namesAnalytics(issue)
        }
        #expect(reports.value == 2)
    }

    @Test func aChildTaskReportsToTheSameTest() async {
        await withKnownIssue {
            let resolved = await Task { DependencyContainer.main.analytics() }.value
            #expect(resolved.name == "placeholder")
        } matching: { issue in
            Self.namesAnalytics(issue)
        }
    }

    @Test(.dependencies { $0.override(\.analytics) { RecordingAnalytics() } })
    func anOverrideSuppliesItWithoutAnIssue() {
        // Any recorded issue would fail this test.
        #expect(DependencyContainer.main.analytics().name == "recording")
    }

    @Test(.dependencies { $0.override(\.payments) { StubPayments() } })
    func anOverrideSuppliesAFatalPlaceholder() {
        #expect(DependencyContainer.main.payments() is StubPayments)
    }

    @Test func aFatalPlaceholderStopsWithItsNameAndHowToSupplyIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer(parent: .mocks).payments()
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "payments is not implemented in this module: supply it with container.override(\\.payments) { … }"))
    }
}
