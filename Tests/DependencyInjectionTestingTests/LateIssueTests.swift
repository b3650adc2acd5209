import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Testing

#if canImport(XCTest)
import XCTest
#endif

/// Opens once; those who wait before it opens resume then.
final class LateGate: @unchecked Sendable {
    // @unchecked: `opened` and `waiters` only under `lock`.
    private let lock = NSLock()
    private var opened = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = lock.withLock {
                if opened { return true }
                waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiting = lock.withLock {
            opened = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.resume() }
    }
}

/// Holds the construction of `lateAnalyticsUser` until the test after the one that
/// started it lets it go on.
final class LateConstructionProbe: Sendable {
    let started = LateGate()
    let release = LateGate()
    let ended = LateGate()
}

final class LateAnalyticsUser: Sendable {
    init() {}
}

extension DependencyContainer {
    var lateConstructionProbe: LateConstructionProbe? { getValue(forKey: "late.probe") }

    /// An async singleton that uses the `analytics` placeholder once its probe lets it go
    /// on, after the test that started it has ended.
    var lateAnalyticsUser: AsyncProvider<LateAnalyticsUser> {
        singleton {
            guard let probe = self.lateConstructionProbe else { return LateAnalyticsUser() }
            probe.started.open()
            await probe.release.wait()
            _ = self.analytics()
            probe.ended.open()
            return LateAnalyticsUser()
        }
    }
}

/// An issue raised on a task that outlives its test belongs to no test: the docs send it
/// to standard error. Recorded in the test that started the task, after that test passed,
/// it failed a test that did nothing wrong. Each pair runs in order: the first test leaves
/// work running, the second lets it raise its issue, after the first has ended. Neither
/// may fail.
@Suite(.serialized, .dependencies) struct LateIssueTests {
    static let taskGate = LateGate()
    static let taskEnded = LateGate()
    static let taskStarted = Locked(false)
    static let probe = LateConstructionProbe()
    static let constructionStarted = Locked(false)

    @Test func t1StartsATaskThatOutlivesIt() {
        Self.taskStarted.withValue { $0 = true }
        Task {
            await Self.taskGate.wait()
            _ = DependencyContainer.main.analytics()
            Self.taskEnded.open()
        }
    }

    @Test func t2LetsThatTaskRaiseItsIssueAfterT1Ended() async {
        guard Self.taskStarted.value else { return }
        Self.taskGate.open()
        await Self.taskEnded.wait()
    }

    /// The construction of an async singleton runs on when its only waiter is cancelled,
    /// as documented, in a task the library starts, which inherits the test's context.
    @Test func t3LeavesAnAsyncConstructionRunning() async {
        DependencyContainer.main.setValue(Self.probe, forKey: "late.probe")
        Self.constructionStarted.withValue { $0 = true }
        let waiter = Task { try await DependencyContainer.main.lateAnalyticsUser() }
        await Self.probe.started.wait()
        waiter.cancel()
        #expect(await waiter.result.isFailure)
    }

    @Test func t4LetsTheConstructionRaiseItsIssueAfterT3Ended() async {
        guard Self.constructionStarted.value else { return }
        Self.probe.release.open()
        await Self.probe.ended.wait()
    }

    /// While its test runs, such a task's issue is the test's.
    @Test func anIssueOfATaskTheTestAwaitsIsTheTests() async {
        await withKnownIssue("the placeholder was used") {
            await Task { _ = DependencyContainer.main.analytics() }.value
        }
    }
}

extension DependencyContainer {
    /// Another module's logger: a placeholder in these tests.
    var lateIssueLogger: Provider<any Analytics> { unimplemented(placeholder: NoAnalytics()) }
}

/// Recording an issue runs code of the test's on the recording thread (a known issue's
/// matcher), which may raise an issue of its own: it is recorded too, and nothing waits
/// for itself.
@Suite struct NestedIssueTests {
    @Test(.dependencies) func aKnownIssueMatcherThatUsesAPlaceholder() {
        let matched = Locked(0)
        withKnownIssue {
            _ = DependencyContainer.main.analytics()
        } matching: { _ in
            if matched.withValue({ count -> Bool in count += 1; return count == 1 }) {
                _ = DependencyContainer.main.lateIssueLogger()
            }
            return true
        }
        #expect(matched.value == 2, "the matcher saw the placeholder's issue and the logger's")
    }
}

extension Result {
    fileprivate var isFailure: Bool {
        if case .failure = self { true } else { false }
    }
}

#if canImport(XCTest)
/// The same with XCTest, which records a failure from another thread in the test running
/// then: a later test of the class, which did nothing wrong.
final class LateIssueXCTests: DependencyTestCase {
    nonisolated(unsafe) static var started = false
    static let gate = LateGate()
    static let ended = LateGate()

    func testAStartsATaskThatOutlivesIt() {
        Self.started = true
        Task(operation: Self.raiseLate)
    }

    @Sendable static func raiseLate() async {
        await gate.wait()
        _ = DependencyContainer.main.analytics()
        ended.open()
    }

    func testBLetsThatTaskRaiseItsIssueAfterTestAEnded() async {
        guard Self.started else { return }
        Self.gate.open()
        await Self.ended.wait()
        XCTAssertTrue(DependencyContainer.main === dependencies)
    }
}
#endif
