import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Testing

// Where a linked async provider reads its registration again, in an app module with
// main-actor default isolation: on the main actor, where the property was first read,
// whatever the getter delegates to; and what goes with it (cycles, teardown, overrides).

nonisolated final class HopMailbox: Sendable { init() {} }

/// Main-actor state a registration reads.
final class HopSettings {
    var useStub = false
    init() {}
}

/// Counts constructions, from any thread.
nonisolated final class HopCount: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func bump() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

/// How long a test here may run before it counts as hung. A limit on a failure, not an
/// order between threads: nothing waits for it when the test passes. As long as the
/// hang limit of the package's tests: work on the main actor or in the cooperative pool
/// waits behind every test that runs meanwhile, and two suites at once on a loaded
/// machine took more than two minutes.
nonisolated let hopHangLimit: DispatchTimeInterval = .seconds(300)

/// Hang guard for exit tests: ends the child process with a failure if it is still
/// running at the limit.
nonisolated func hopEndProcessIfHung(_ what: String) {
    Thread {
        if DispatchSemaphore(value: 0).wait(timeout: .now() + hopHangLimit) == .timedOut {
            FileHandle.standardError.write(Data("hang guard: \(what) still running after the limit\n".utf8))
            exit(124)
        }
    }.start()
}

nonisolated final class HopSignal: @unchecked Sendable {
    let semaphore = DispatchSemaphore(value: 0)
}

/// Hang guard: runs `work` in a task on the main actor, and says whether it ended before
/// the limit, waited for on a thread of its own. The limit counts from when the task
/// starts: a loaded suite keeps the main actor busy with other tests for a while.
nonisolated func hopEndsWithoutHanging(_ work: @escaping @MainActor @Sendable () async -> Void) async -> Bool {
    let started = HopSignal()
    let ended = HopSignal()
    Task { @MainActor in
        started.semaphore.signal()
        await work()
        ended.semaphore.signal()
    }
    return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
        Thread {
            let began = started.semaphore.wait(timeout: .now() + hopHangLimit) == .success
            done.resume(returning: began && ended.semaphore.wait(timeout: .now() + hopHangLimit) == .success)
        }.start()
    }
}

@MainActor func hopOnMain(_ provider: AsyncProvider<HopMailbox>) async throws -> HopMailbox { try await provider() }

final class HopMismatchInbox {
    @Dependency(\.hopChosenMailbox) var mailbox
    init() {}
}

final class HopSettingsInbox {
    @Dependency(\.hopChosenReadingSettings) var mailbox
    init() {}
}

final class HopMainInbox {
    @Dependency(\.hopMainMailbox) var mailbox
    init() {}
}

final class HopCycleOwner {
    @Dependency(\.hopCycleMailbox) var mailbox
    init() {}
}

final class HopTornInbox {
    @Dependency(\.hopTornMailbox) var mailbox
    init() {}
}

extension DependencyContainer {
    /// A registration made off the main actor (as a feature module without main-actor
    /// default isolation, or a `nonisolated` property, would make it).
    nonisolated var hopBaseMailbox: AsyncProvider<HopMailbox> {
        singleton {
            (self.getValue(forKey: "hop.builds") as HopCount?)?.bump()
            return HopMailbox()
        }
    }
    var hopRuns: UsagePropertyRuns? { getValue(forKey: "hop.runs") }
    var hopSettings: Provider<HopSettings> { singleton { @MainActor in HopSettings() } }
    /// Main-actor isolated getter that delegates to a nonisolated registration.
    var hopChosenMailbox: AsyncProvider<HopMailbox> {
        hopRuns?.note()
        return hopBaseMailbox
    }
    /// Main-actor getter that reads main-actor state, then delegates.
    var hopChosenReadingSettings: AsyncProvider<HopMailbox> {
        _ = hopSettings().useStub
        return hopBaseMailbox
    }
    var hopMismatchInbox: Provider<HopMismatchInbox> { singleton { @MainActor in HopMismatchInbox() } }
    var hopSettingsInbox: Provider<HopSettingsInbox> { singleton { @MainActor in HopSettingsInbox() } }

    /// A plain main-actor registration whose construction is nonisolated.
    var hopMainMailbox: AsyncProvider<HopMailbox> {
        hopRuns?.note()
        return singleton {
            (self.getValue(forKey: "hop.builds") as HopCount?)?.bump()
            return HopMailbox()
        }
    }
    var hopMainInbox: Provider<HopMainInbox> { singleton { @MainActor in HopMainInbox() } }

    /// Needs itself through the linked provider of an instance it reads, off the main actor.
    var hopCycleOwner: Provider<HopCycleOwner> { singleton { @MainActor in HopCycleOwner() } }
    var hopCycleMailbox: AsyncProvider<HopMailbox> {
        singleton {
            let mailbox = await MainActor.run { self.hopCycleOwner().mailbox }
            precondition(!usageIsOnTheMainActorsThread())
            _ = try await mailbox()
            return HopMailbox()
        }
    }

    /// onShutdown on a main-actor async registration.
    var hopTornMailbox: AsyncProvider<HopMailbox> {
        hopRuns?.note()
        return singleton { HopMailbox() }.onShutdown { _ in
            (self.getValue(forKey: "hop.torn") as HopCount?)?.bump()
        }
    }
    var hopTornInbox: Provider<HopTornInbox> { singleton { @MainActor in HopTornInbox() } }
}

// MARK: - Compile checks: call shapes of the async registration functions

extension DependencyContainer {
    /// A helper that forwards the registration site.
    func hopCached<T: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> T
    ) -> AsyncProvider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, make)
    }
    var hopViaHelper: AsyncProvider<HopMailbox> { hopCached { HopMailbox() } }
    subscript(hopArg id: Int) -> AsyncProvider<HopMailbox> { singleton(id) { HopMailbox() } }
    subscript(hopGraphArg id: Int) -> AsyncProvider<HopMailbox> { graph(id) { HopMailbox() } }
    subscript(hopFactoryArg id: Int) -> AsyncProvider<HopMailbox> { factory(id) { HopMailbox() } }
    // Same labels, sync and async, chosen by the declared type.
    var hopSyncForm: Provider<HopMailbox> { singleton { HopMailbox() } }
    var hopAsyncForm: AsyncProvider<HopMailbox> { singleton { HopMailbox() } }
    var hopAsyncFromSyncClosure: AsyncProvider<HopMailbox> { shared { HopMailbox() } }
    var hopScopedAsync: AsyncProvider<HopMailbox> { scoped { HopMailbox() } }
    var hopGraphAsync: AsyncProvider<HopMailbox> { graph { HopMailbox() } }
    nonisolated var hopNonisolatedAsync: AsyncProvider<HopMailbox> { singleton { HopMailbox() } }
    nonisolated var hopNonisolatedSync: Provider<HopMailbox> { singleton { HopMailbox() } }
    var hopExplicit: AsyncProvider<HopMailbox> {
        singleton(name: "explicit") { HopMailbox() }
    }
}

@globalActor actor HopOtherActor {
    static let shared = HopOtherActor()
}

extension DependencyContainer {
    @HopOtherActor var hopOtherActorAsync: AsyncProvider<HopMailbox> { singleton { HopMailbox() } }
}

actor HopRegistrar {
    func provider(in container: DependencyContainer) -> AsyncProvider<HopMailbox> {
        container.singleton { HopMailbox() }
    }
}

// MARK: - Tests

@Suite struct LinkedHopAttackTests {
    /// A main-actor getter that delegates to a provider made off the main actor: the
    /// linked provider reads the getter on the main actor, where the property was first
    /// read, whatever provider it hands back.
    @Test func aMainActorGetterDelegatingToANonisolatedRegistrationIsReadOnTheMainActor() async throws {
        let runs = UsagePropertyRuns()
        let container = DependencyContainer()
        container.setValue(runs, forKey: "hop.runs")
        let inbox = container.hopMismatchInbox()
        let mailbox = inbox.mailbox
        let offMainBefore = runs.counts.offMain
        let fromATask = try await Task.detached { try await mailbox() }.value
        #expect(fromATask === (try await container.hopBaseMailbox()))
        #expect(runs.counts.offMain == offMainBefore, "a main-actor registration's property ran off the main actor")
    }

    /// The same, where the getter reads main-actor state: a linked call from a task does
    /// not stop with "resolved off it".
    @Test func aMainActorGetterReadingMainActorStateThenDelegatingDoesNotStop() async {
        await #expect(processExitsWith: .success) {
            hopEndProcessIfHung("delegating getter")
            let container = await MainActor.run { DependencyContainer() }
            let mailbox = await MainActor.run { container.hopSettingsInbox().mailbox }
            _ = try await Task.detached { try await mailbox() }.value
            withExtendedLifetime(container) {}
        }
    }

    /// Plain main-actor registration: linked calls from everywhere agree, one build.
    @Test func linkedCallsFromEverywhereShareOneConstruction() async throws {
        let runs = UsagePropertyRuns()
        let builds = HopCount()
        let container = DependencyContainer()
        container.setValue(runs, forKey: "hop.runs")
        container.setValue(builds, forKey: "hop.builds")
        let mailbox = container.hopMainInbox().mailbox
        let results = try await withThrowingTaskGroup(of: HopMailbox.self) { group in
            for index in 0..<64 {
                if index.isMultiple(of: 2) {
                    group.addTask { try await Task.detached { try await mailbox() }.value }
                } else {
                    group.addTask { try await hopOnMain(mailbox) }
                }
            }
            var all: [HopMailbox] = []
            for try await one in group { all.append(one) }
            return all
        }
        let direct = try await container.hopMainMailbox()
        #expect(results.allSatisfy { $0 === direct })
        #expect(builds.count == 1)
        #expect(runs.counts.offMain == 0)
    }

    /// From inside MainActor.run, withMain, a Task a construction starts.
    @Test func linkedCallsFromMainActorContextsDoNotHang() async {
        let container = DependencyContainer()
        let mailbox = container.hopMainInbox().mailbox
        let finished = await hopEndsWithoutHanging {
            _ = try? await MainActor.run { mailbox }()
            _ = try? await DependencyContainer.withMain(container) { try await mailbox() }
            _ = try? await Task { @MainActor in try await mailbox() }.value
            _ = try? await Task.detached { try await MainActor.run { mailbox } () }.value
        }
        #expect(finished)
    }

    /// A cycle through a linked provider that hops still stops with the cycle.
    @Test func aCycleThroughAHoppingLinkedProviderStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            hopEndProcessIfHung("cycle through a hop")
            let container = await MainActor.run { DependencyContainer() }
            _ = try await container.hopCycleMailbox()
        }
        let text = standardError(of: result)
        #expect(text.contains("Circular dependency") && text.contains("hopCycleMailbox"), "\(text)")
    }

    /// onShutdown keeps the hop, and the teardown runs once.
    @Test func onShutdownKeepsTheHopAndTearsDownOnce() async throws {
        let runs = UsagePropertyRuns()
        let torn = HopCount()
        let container = DependencyContainer()
        container.setValue(runs, forKey: "hop.runs")
        container.setValue(torn, forKey: "hop.torn")
        let mailbox = container.hopTornInbox().mailbox
        let fromATask = try await Task.detached { try await mailbox() }.value
        #expect(fromATask === (try await container.hopTornMailbox()))
        #expect(runs.counts.offMain == 0)
        await container.shutdown()
        #expect(torn.count == 1)
    }

    /// Overrides and decorations installed after the first read apply through the hop.
    @Test func overrideAndDecorateApplyThroughTheHop() async throws {
        let container = DependencyContainer()
        let mailbox = container.hopMainInbox().mailbox
        let stub = HopMailbox()
        container.override(\.hopMainMailbox) { stub }
        #expect(try await Task.detached { try await mailbox() }.value === stub)
        let decorated = HopMailbox()
        container.decorate(\.hopMainMailbox) { _ in decorated }
        container.override(\.hopMainMailbox) { HopMailbox() }
        #expect(try await Task.detached { try await mailbox() }.value === decorated)
    }

    @Test func compileShapesResolve() async throws {
        let container = DependencyContainer()
        _ = try await container.hopViaHelper()
        #expect(try await container[hopArg: 1]() === (try await container[hopArg: 1]()))
        _ = try await container[hopGraphArg: 1]()
        _ = try await container[hopFactoryArg: 1]()
        _ = container.hopSyncForm()
        _ = try await container.hopAsyncForm()
        _ = try await container.hopScopedAsync()
        _ = try await container.hopGraphAsync()
        _ = try await container.hopNonisolatedAsync()
        _ = container.hopNonisolatedSync()
        _ = try await container.hopExplicit()
        _ = try await HopRegistrar().provider(in: container)()
        _ = try await container.hopOtherActorAsync()
    }
}

