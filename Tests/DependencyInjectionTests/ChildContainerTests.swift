import DependencyInjection
import Foundation
import Testing

/// A child's singleton that reads its parent when it goes away, as a session object
/// that logs its end through the app's container does.
final class SessionAuditor: Sendable {
    let parent: DependencyContainer?
    init(parent: DependencyContainer?) { self.parent = parent }
    deinit { _ = parent?.getValue(forKey: "audit.enabled") as Bool? }
}

final class ReportFormatter: Sendable {
    let locale: String
    init(locale: String) { self.locale = locale }
}

extension DependencyContainer {
    var sessionAuditor: Provider<SessionAuditor> { singleton { SessionAuditor(parent: self.parent) } }
    var reportFormatter: Provider<ReportFormatter> { singleton { ReportFormatter(locale: "en") } }
}

@Suite struct ChildContainerTests {
    // MARK: - Creating and releasing children

    /// Threads create children of one parent while they drop others, whose singletons use
    /// the parent in their `deinit`, as parallel tests do with children of `.mocks`. A
    /// child whose last reference goes while the parent registers another must not run
    /// its `deinit` under the parent's lock. The race window is narrow: each thread keeps
    /// 50 live children (longer registrations) and drops 150,000; before the fix this
    /// deadlocked in most runs on a loaded 2-core machine.
    @Test func childrenReleasedWhileTheParentRegistersOthersDoNotDeadlock() async {
        let parent = DependencyContainer()
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: 4) { _ in
                let kept = (0..<50).map { _ in DependencyContainer(parent: parent) }
                for _ in 0..<150_000 {
                    let child = DependencyContainer(parent: parent)
                    _ = child.sessionAuditor()
                }
                withExtendedLifetime(kept) {}
            }
        }
        #expect(finished, "creating and releasing children deadlocked")
    }

    /// Registering a child is O(1): 100,000 live children of one parent are created in
    /// seconds (the quadratic registration took minutes: 2 for 50,000), and an override
    /// still reaches each. The time limit is a hang guard, generous enough for
    /// ThreadSanitizer on a loaded machine; the quadratic registration (about 8 minutes)
    /// would still exceed it.
    @Test(.timeLimit(.minutes(5)))
    func manyLiveChildrenOfOneParentAllFollowItsOverride() {
        let parent = DependencyContainer()
        let children = (0..<100_000).map { _ in DependencyContainer(parent: parent) }
        #expect(children.allSatisfy { $0.reportFormatter().locale == "en" })

        parent.override(\.reportFormatter) { ReportFormatter(locale: "fr") }
        #expect(children.allSatisfy { $0.reportFormatter().locale == "fr" })
        #expect(children.allSatisfy { $0.reportFormatter() === $0.reportFormatter() })
    }

    // MARK: - A child's own override

    @Test func aParentsOverrideKeepsWhatAChildBuiltFromItsOwnOverride() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        child.override(\.httpClient) { StubHTTPClient("child") }
        let loader = child.cachedFeedLoader()
        let client = child.httpClient()
        #expect(loader.client.name == "child")

        parent.override(\.httpClient) { StubHTTPClient("parent") }
        #expect(child.cachedFeedLoader() === loader)
        #expect(child.httpClient() === client)
        #expect(parent.httpClient().name == "parent")
    }

    @Test func aParentsResetOfOneRegistrationKeepsWhatAChildBuiltFromItsOwnOverride() {
        let parent = DependencyContainer()
        parent.override(\.httpClient) { StubHTTPClient("parent") }
        let child = DependencyContainer(parent: parent)
        child.override(\.httpClient) { StubHTTPClient("child") }
        let loader = child.cachedFeedLoader()

        parent.reset(\.httpClient)
        #expect(child.cachedFeedLoader() === loader)
        #expect(child.cachedFeedLoader().client.name == "child")
    }

    @Test func aParentsFullResetKeepsWhatAChildBuiltFromItsOwnOverride() {
        let parent = DependencyContainer()
        parent.override(\.httpClient) { StubHTTPClient("parent") }
        let child = DependencyContainer(parent: parent)
        child.override(\.httpClient) { StubHTTPClient("child") }
        let loader = child.cachedFeedLoader()

        parent.reset()
        #expect(child.cachedFeedLoader() === loader)
        #expect(child.cachedFeedLoader().client.name == "child")
    }

    // MARK: - Tracer

    /// Eight threads set eight different tracers on a parent at once, released together
    /// by a barrier. Whichever wins, every descendant ends with the parent's tracer.
    @Test func concurrentTracerSettersLeaveEveryChildWithTheParentsTracer() async {
        let parent = DependencyContainer()
        let children = (0..<32).map { _ in DependencyContainer(parent: parent) }
        let grandchildren = children.prefix(8).map { DependencyContainer(parent: $0) }
        let descendants = children + grandchildren
        for round in 0..<200 {
            let tracers = (0..<8).map { _ in ResolutionTracer { _ in } }
            #expect(await concurrentlyOffThePool(threads: 8) { parent.tracer = tracers[$0] })
            let winner = parent.tracer
            #expect(winner != nil)
            let strays = descendants.filter { $0.tracer !== winner }
            #expect(strays.isEmpty, "round \(round): \(strays.count) children kept another tracer")
            if !strays.isEmpty { break }
        }
    }
}
