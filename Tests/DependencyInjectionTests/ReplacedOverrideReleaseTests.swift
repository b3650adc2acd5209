import DependencyInjection
import Foundation
import Testing

// A resolution holds the override (or decoration) it found while it builds. When a test
// replaces or resets that override on another thread meanwhile, the resolution holds the
// last reference to the old closure. It must not let go of it inside the construction that
// asked for the overridden dependency: the spy the closure captured would go there, and a
// `deinit` that uses the service being built (a mock that reports through the app's
// analytics, which the app builds from the client) would find a cycle no registration has.
// What such a resolution held goes when the outermost resolution of its thread has ended.
//
// The promises: "Nothing is released under a lock either, so a `deinit` may use any
// container" (Concurrency); "Never a false cycle" (DESIGN); "Overriding again replaces the
// previous override" (Overrides and mocks).
//
// Each test runs in a process of its own: the false cycle stops the process.

/// A test double whose `deinit` reports that it went, through the app's analytics.
final class ReleaseReportingMock: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

final class ReleaseTestClient: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

final class ReleaseTestAnalytics: Sendable {
    let client: ReleaseTestClient
    init(client: ReleaseTestClient) { self.client = client }
    func track(_ event: String) {}
}

final class ReleaseTestAccount: Sendable {
    let number: Int
    let isStub: Bool
    init(number: Int, isStub: Bool) { (self.number, self.isStub) = (number, isStub) }
}

final class ReleaseTestLedger: Sendable {
    let first: ReleaseTestAccount
    init(first: ReleaseTestAccount) { self.first = first }
}

/// A graph instance whose `deinit` reads the report its resolution built.
final class ReleaseTestRequestLog: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

final class ReleaseTestReport: Sendable {}

/// How many logs went, in this process.
let releaseTestLogsGone = Counter()

extension DependencyContainer {
    /// Logged while it is built; the log goes with the outermost resolution.
    var releaseTestReport: Provider<ReleaseTestReport> {
        singleton {
            _ = self.releaseTestLog()
            return ReleaseTestReport()
        }
    }
    var releaseTestLog: Provider<ReleaseTestRequestLog> {
        graph {
            ReleaseTestRequestLog { [unowned self] in
                precondition(self.releaseTestReport() === self.releaseTestReport())
                releaseTestLogsGone.increment()
            }
        }
    }

    var releaseTestClient: Provider<ReleaseTestClient> { singleton { ReleaseTestClient("live") } }
    /// The app's analytics, which sends its events through the client.
    var releaseTestAnalytics: Provider<ReleaseTestAnalytics> {
        singleton { ReleaseTestAnalytics(client: self.releaseTestClient()) }
    }
    var releaseTestAccount: ProviderFamily<Int, ReleaseTestAccount> {
        singleton { (number: Int) in ReleaseTestAccount(number: number, isStub: false) }
    }
    /// Built from account 1.
    var releaseTestLedger: Provider<ReleaseTestLedger> { singleton { ReleaseTestLedger(first: self.releaseTestAccount(1)) } }
}

@Suite struct ReplacedOverrideReleaseTests {
    enum Change: String {
        case overrideAgain, reset, resetDecoration
    }

    /// Thread A resolves the analytics for the first time, and its construction resolves
    /// the client through the first stub, whose mock reports through the analytics when it
    /// goes. While A is inside the stub's closure, this thread makes `change`. A gets its
    /// analytics, and the mock goes before A's resolution returns, outside its
    /// construction.
    static func changeWhileAnotherThreadBuilds(_ change: Change) {
        endProcessIfHung("changeWhileAnotherThreadBuilds")
        let container = DependencyContainer(parent: .mocks)
        let gate = OnceGate()
        let mockReported = Counter()
        do {
            let mock = ReleaseReportingMock { [unowned container] in
                container.releaseTestAnalytics().track("mock released")
                mockReported.increment()
            }
            if change == .resetDecoration {
                container.decorate(\.releaseTestClient) { client in
                    _ = mock
                    gate.pass()
                    return ReleaseTestClient("logged " + client.name)
                }
            } else {
                container.override(\.releaseTestClient) {
                    _ = mock
                    gate.pass()
                    return ReleaseTestClient("first stub")
                }
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        let reportedWhenResolved = Counter()
        Thread {
            let analytics = container.releaseTestAnalytics()
            precondition(analytics.client.name != "live", "built through the stub the thread entered")
            if mockReported.count == 1 { reportedWhenResolved.increment() }
            resolved.signal()
        }.start()
        gate.gate.entered.wait()
        switch change {
        case .overrideAgain: container.override(\.releaseTestClient) { ReleaseTestClient("second stub") }
        case .reset, .resetDecoration: container.reset(\.releaseTestClient)
        }
        precondition(mockReported.count == 0, "the resolution in the stub still holds the mock")
        gate.gate.open()
        resolved.wait()
        precondition(reportedWhenResolved.count == 1, "the mock went before the resolution returned")
        let expected = change == .overrideAgain ? "second stub" : "live"
        precondition(container.releaseTestAnalytics().client.name == expected)
    }

    @Test func overridingAgainWhileAnotherThreadBuildsThroughTheOverrideIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.changeWhileAnotherThreadBuilds(.overrideAgain) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.changeWhileAnotherThreadBuilds(.overrideAgain)
            })
        }
    }

    @Test func resettingWhileAnotherThreadBuildsThroughTheOverrideIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.changeWhileAnotherThreadBuilds(.reset) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.changeWhileAnotherThreadBuilds(.reset)
            })
        }
    }

    @Test func resettingADecorationWhileAnotherThreadBuildsThroughItIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.changeWhileAnotherThreadBuilds(.resetDecoration) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.changeWhileAnotherThreadBuilds(.resetDecoration)
            })
        }
    }

    /// The same with a provider family: the family's override is reset while another
    /// thread builds a member through it, for the ledger whose construction asked for it.
    static func resetFamilyWhileAnotherThreadBuilds() {
        endProcessIfHung("resetFamilyWhileAnotherThreadBuilds")
        let container = DependencyContainer(parent: .mocks)
        let gate = OnceGate()
        let mockReported = Counter()
        do {
            let mock = ReleaseReportingMock { [unowned container] in
                precondition(!container.releaseTestLedger().first.isStub)
                mockReported.increment()
            }
            container.override(\.releaseTestAccount) { number in
                _ = mock
                gate.pass()
                return ReleaseTestAccount(number: number, isStub: true)
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        Thread {
            _ = container.releaseTestLedger()
            resolved.signal()
        }.start()
        gate.gate.entered.wait()
        container.reset(\.releaseTestAccount)
        gate.gate.open()
        resolved.wait()
        precondition(mockReported.count == 1)
        precondition(!container.releaseTestLedger().first.isStub)
    }

    @Test func resettingAFamilyWhileAnotherThreadBuildsAMemberThroughItIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.resetFamilyWhileAnotherThreadBuilds() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.resetFamilyWhileAnotherThreadBuilds()
            })
        }
    }

    /// Without a gate: two threads released together, one resolving the analytics in a
    /// fresh world while the other replaces the stub whose mock reports when it goes.
    static func replaceWhileThreadsResolve() {
        endProcessIfHung("replaceWhileThreadsResolve")
        let mocksReported = Counter()
        let rounds = 3_000
        for _ in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            do {
                let mock = ReleaseReportingMock { [unowned container] in
                    container.releaseTestAnalytics().track("mock released")
                    mocksReported.increment()
                }
                container.override(\.releaseTestClient) {
                    _ = mock
                    return ReleaseTestClient("first stub")
                }
            }
            onThreadsReleasedTogether(2) { index in
                if index == 0 {
                    _ = container.releaseTestAnalytics()
                } else {
                    container.override(\.releaseTestClient) { ReleaseTestClient("second stub") }
                }
            }
            precondition(container.releaseTestAnalytics().client.name == "second stub")
        }
        precondition(mocksReported.count == rounds, "every replaced stub's mock went")
    }

    @Test func replacingAStubWhileThreadsResolveIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.replaceWhileThreadsResolve() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.replaceWhileThreadsResolve()
            })
        }
    }

    /// The outermost resolution's graph instances go once its construction has completed:
    /// a log's `deinit` that reads the report being built finds it built.
    static func resolveAReportThatLogs() {
        endProcessIfHung("resolveAReportThatLogs")
        let container = DependencyContainer()
        let report = container.releaseTestReport()
        precondition(releaseTestLogsGone.count == 1, "the log went before the resolution returned")
        precondition(container.releaseTestReport() === report)
    }

    @Test func aGraphInstanceGoesOnceTheOutermostConstructionCompleted() async {
        let passed = await #expect(processExitsWith: .success) { Self.resolveAReportThatLogs() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.resolveAReportThatLogs()
            })
        }
    }
}
