import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// A helper that does not forward its caller's site, used by no other suite, so that
    /// the process-wide table of key paths seen for its registration starts empty here.
    static let promiseHelperLine: UInt = #line + 2
    func promiseCachedWithoutSite<T: Sendable>(_ make: @escaping () -> T) -> Provider<T> {
        singleton(make)
    }

    var promiseLeftStore: Provider<ResponseStore> { promiseCachedWithoutSite { ResponseStore() } }
    var promiseRightStore: Provider<ResponseStore> { promiseCachedWithoutSite { ResponseStore() } }
}

/// Pins RegisteringDependencies.md:321-326 (and RegistrationIdentity.swift:6-8): "Without
/// the forwarding, both properties would be the helper's one registration: `cdnClient`
/// would return the instance built for `apiClient`, and an override of either would
/// replace both. Debug builds catch that: when two different key paths, such as
/// `\.apiClient` and `\.cdnClient`, reach one registration through `override`, `reset`
/// or `@Dependency`, a ``DependencyIssue`` reports that they share one registration."
@Suite struct UnforwardedHelperTests {
    @Test func twoPropertiesThroughAHelperThatDoesNotForwardItsSiteShareOneInstance() {
        let container = DependencyContainer()
        let draft = container.draftStore()
        #expect(container.outboxStore() === draft, "the two properties were two registrations")
        #expect(container.draftStore() === draft)
    }

    @Test func anOverrideThroughEitherPropertyReplacesBoth() {
        let container = DependencyContainer()
        let first = ResponseStore()
        let second = ResponseStore()
        // The merge's debug issue is expected here: it is swallowed.
        _ = reportedIssues(in: container) {
            container.override(\.draftStore) { first }
            #expect(container.draftStore() === first)
            #expect(container.outboxStore() === first, "an override of draftStore left outboxStore")
            container.override(\.outboxStore) { second }
            #expect(container.outboxStore() === second)
            #expect(container.draftStore() === second, "an override of outboxStore left draftStore")
        }
    }

    #if DEBUG
    @Test func resettingThroughTwoKeyPathsThatReachOneRegistrationReportsThatTheyShareIt() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.reset(\.promiseLeftStore)
            container.reset(\.promiseRightStore)
        }
        let merged = issues.filter { $0.message.contains("share one registration") }
        #expect(merged.count == 1, "\(issues.map(\.message))")
        // It names the one registration's site, the helper's `singleton` call (key paths
        // print without their property names on Linux, so the names are not asserted).
        let message = merged.first?.message ?? ""
        #expect(message.contains("UnforwardedHelperTests.swift:\(DependencyContainer.promiseHelperLine)"), "\(message)")
    }
    #endif
}
