import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Attacks on the constructions in flight as their own records: a first build of what the
// container keeps is listed as the resolution itself, and the first owner that waits for
// it makes the room where every waiter waits. The window between the listing and the
// closure is reached through the check a first build makes of a family argument (its `==`
// against itself), which runs user code after the resolution is listed and before it runs.
//
// Each threaded scenario runs on a thread of its own behind the hang guard and records what
// it saw in `Findings` (from the in-flight bookkeeping attacks), which the test checks.

/// What a construction built.
final class WRAPart: Sendable {
    let source: String
    let inner: WRAPart?
    init(_ source: String, inner: WRAPart? = nil) { (self.source, self.inner) = (source, inner) }
}

/// An action a family argument runs the first time it is compared with itself: what the
/// first build of its instance does once listed, before its closure runs.
final class WRAHook: @unchecked Sendable {
    // @unchecked: `action` is only touched while holding `lock`.
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }

    func fire() {
        let action = lock.withLock {
            defer { self.action = nil }
            return self.action
        }
        action?()
    }
}

/// A family argument identified by `id`. Compared with a copy of itself (the same hook), it
/// fires its hook; compared with another value, as the container does under its lock when
/// it looks an argument up, it does not.
struct WRAArgument: Hashable, Sendable {
    let id: Int
    let hook: WRAHook?
    init(_ id: Int, hook: WRAHook? = nil) { (self.id, self.hook) = (id, hook) }

    static func == (lhs: WRAArgument, rhs: WRAArgument) -> Bool {
        if let hook = lhs.hook, hook === rhs.hook { hook.fire() }
        return lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DependencyContainer {
    var wraFamily: ProviderFamily<WRAArgument, WRAPart> {
        singleton { (argument: WRAArgument) in
            self.count("wraFamily")
            return WRAPart(self.ifbSource(), inner: WRAPart("\(argument.id)"))
        }
    }

    /// A family member with a teardown, through a subscript.
    subscript(wraTorn argument: WRAArgument) -> Provider<IFBPart> {
        singleton(argument, name: "wraTorn") {
            self.count("wraTorn")
            return IFBPart("live")
        }.onShutdown { $0.close() }
    }

    /// A singleton that starts a task outliving it (``startWaitingTask()``), held at the
    /// next gate.
    var wraSpawning: Provider<WRAPart> {
        singleton {
            self.ifbPassGate()
            self.startWaitingTask()
            return WRAPart("live")
        }
    }

    /// A singleton whose instance's deinit resolves from and writes to this container.
    var wraWatched: Provider<IFBReleaseWatcher> {
        singleton {
            self.ifbPassGate()
            return IFBReleaseWatcher(container: self, releases: self.getValue(forKey: "ifb.releases")!)
        }
    }

    /// An async singleton held at the async gate stored under "wra.asyncGate", if any.
    var wraAsyncGated: AsyncProvider<WRAPart> {
        singleton {
            self.count("wraAsyncGated")
            if let gate: IFBAsyncGate = self.getValue(forKey: "wra.asyncGate") { await gate.pass() }
            return WRAPart("live")
        }
    }

    // A cycle across owners: `a` needs `b`, `b` (held at the next gate) needs `a`.
    var wraCycleA: ProviderFamily<WRAArgument, WRAPart> {
        singleton { (_: WRAArgument) in WRAPart("a", inner: self.wraCycleB()) }
    }
    var wraCycleB: Provider<WRAPart> {
        singleton {
            self.ifbPassGate()
            return WRAPart("b", inner: self.wraCycleA(WRAArgument(1)))
        }
    }

    // The same across tasks: `b` is held at the async gate stored under "wra.asyncGate".
    subscript(wraAsyncCycleA argument: WRAArgument) -> AsyncProvider<WRAPart> {
        singleton(argument, name: "wraAsyncCycleA") { WRAPart("a", inner: try await self.wraAsyncCycleB()) }
    }
    var wraAsyncCycleB: AsyncProvider<WRAPart> {
        singleton {
            if let gate: IFBAsyncGate = self.getValue(forKey: "wra.asyncGate") { await gate.pass() }
            return WRAPart("b", inner: try await self[wraAsyncCycleA: WRAArgument(1)]())
        }
    }

    /// A singleton that resolves a family member whose argument resolves itself.
    var wraAroundSelfResolving: Provider<WRAPart> {
        singleton {
            let argument = WRAArgument(1, hook: WRAHook { _ = self.wraFamily(WRAArgument(1)) })
            return WRAPart("around", inner: self.wraFamily(argument))
        }
    }

    /// The construction of `key` listed here, with the room its waiters wait in once one
    /// does, read under the container's lock.
    func wraListed(_ key: RegistrationKey) -> (construction: Resolution, room: InFlight?)? {
        withStateLock { state in state.building.construction(of: key).map { ($0, $0.asyncWaitRoom) } }
    }

    /// Returns once an owner waiting for the construction of `key` running here has made
    /// its room, and `waiters` owners wait in it: conditions read under the container's
    /// lock and the room's, not a delay.
    func wraUntilWaitRoom(_ key: RegistrationKey, waiters: Int = 1) {
        while (wraListed(key)?.room?.waitedSoFar ?? 0) < waiters { sched_yield() }
    }

    var wraNothingRuns: Bool { withStateLock { $0.building.isEmpty } }
}

@Suite struct WRAWaitRoomAttackTests {
    /// Runs `scenario` on a thread of its own behind the hang guard and checks what it found.
    private func run(_ scenario: @escaping @Sendable (Findings) -> Void) async {
        let findings = Findings()
        #expect(await finishesWithoutHangingOffThePool { scenario(findings) }, "the scenario hung")
        #expect(findings.problems == [])
    }

    // MARK: - A room made before the construction runs

    /// The first build of a family member is listed and held in its argument check; six
    /// threads ask for it meanwhile. The first makes the room, naming the listed resolution
    /// as its builder before the closure has run; everyone gets the one instance, and the
    /// resolution and the room go when it ends (no cycle between them survives).
    @Test func aRoomMadeBeforeTheClosureRunsNamesItsBuilderAndServesEveryWaiterOneInstance() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("wraFamily")
            let gate = ConstructionGate()
            let key = container.wraFamily[WRAArgument(1)].key
            let built = onThread { ObjectIdentifier(container.wraFamily(WRAArgument(1, hook: WRAHook { gate.enterAndWait() }))) }
            gate.entered.wait()
            let waiters = (0..<6).map { _ in onThread { ObjectIdentifier(container.wraFamily(WRAArgument(1))) } }
            container.wraUntilWaitRoom(key, waiters: 6)
            let watched: (construction: Released, room: Released)? = {
                guard let (construction, room) = container.wraListed(key), let room else { return nil }
                findings.check(room.builder === construction, "the room does not name the listed resolution as builder")
                findings.check(construction.owner != .nobody, "the builder has no owner")
                return (Released(construction), Released(room))
            }()
            findings.check(watched != nil, "no room listed")
            findings.check(builds.count == 0, "the closure ran before the argument check ended")
            gate.open()
            let instances = [built()] + waiters.map { $0() }
            findings.check(Set(instances).count == 1, "\(Set(instances).count) instances")
            findings.check(builds.count == 1, "\(builds.count) constructions")
            findings.check(container.wraNothingRuns, "a construction is still listed")
            findings.check(watched?.construction.object == nil, "the resolution outlived its construction")
            findings.check(watched?.room.object == nil, "the room outlived its waiters")
        }
    }

    /// Threads and a task wait for one held singleton: the task's wait is in the same room.
    @Test func threadsAndATaskWaitingForOneSingletonShareItsOneInstance() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("ifbGated")
            let gates = container.ifbInstallGates(1)
            let key = container.ifbGated.key
            let built = onThread { ObjectIdentifier(container.ifbGated()) }
            gates[0].entered.wait()
            let waiters = (0..<4).map { _ in onThread { ObjectIdentifier(container.ifbGated()) } }
            let fromTask = Collected<ObjectIdentifier>()
            let taskEnded = DispatchSemaphore(value: 0)
            Task {
                fromTask.append(ObjectIdentifier(container.ifbGated()))
                taskEnded.signal()
            }
            container.wraUntilWaitRoom(key, waiters: 5)
            gates[0].open()
            taskEnded.wait()
            let instances = [built()] + waiters.map { $0() } + fromTask.values
            findings.check(Set(instances).count == 1, "\(Set(instances).count) instances")
            findings.check(builds.count == 1, "\(builds.count) constructions")
            findings.check(container.wraNothingRuns, "a construction is still listed")
        }
    }

    // MARK: - Cycles across owners

    /// Thread 2 builds `b`, held; thread 1's first build of `a` is listed and held before
    /// its closure runs; `b` then asks for `a` and waits in the room it makes, whose builder
    /// has not started. When `a` runs and asks for `b`, the wait graph closes the cycle
    /// and stops with the chain instead of deadlocking.
    @Test func aCycleAcrossThreadsWhoseFirstWaiterComesBeforeTheBuilderRunsStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle across threads, first waiter before the builder runs")
            let container = DependencyContainer()
            let gates = container.ifbInstallGates(1)
            let gateA = ConstructionGate()
            Thread { _ = container.wraCycleB() }.start()
            gates[0].entered.wait()
            Thread { _ = container.wraCycleA(WRAArgument(1, hook: WRAHook { gateA.enterAndWait() })) }.start()
            gateA.entered.wait()
            gates[0].open()
            container.wraUntilWaitRoom(container.wraCycleA[WRAArgument(1)].key)
            gateA.open()
            DispatchSemaphore(value: 0).wait()  // one of the two builders stops the process
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["wraCycleA", "wraCycleB", "wraCycleA"]) == true, "\(standardError(of: result))")
    }

    /// The same across tasks: the task resolving `a` is held in its argument check, after
    /// `a` is listed with its room and before the task that builds it exists; the task
    /// building `b` then asks for `a`, which has no builder yet. When `a`'s task runs and
    /// asks for `b`, the cycle stops with the chain.
    @Test func aCycleAcrossTasksWhoseFirstWaiterComesBeforeTheBuildingTaskStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle across tasks, first waiter before the building task")
            let container = DependencyContainer()
            let gateB = IFBAsyncGate()
            container.setValue(gateB, forKey: "wra.asyncGate")
            let gateA = ConstructionGate()
            Task { _ = try? await container.wraAsyncCycleB() }
            await gateB.entered.wait()
            // Held on a thread of the pool, in the argument check: the orchestration runs
            // on a thread of its own.
            Task {
                _ = try? await container[wraAsyncCycleA: WRAArgument(1, hook: WRAHook { gateA.enterAndWait() })]()
            }
            Thread {
                gateA.entered.wait()
                gateB.opened.open()
                gateA.open()
            }.start()
            await AsyncLatch().wait()  // one of the two building tasks stops the process
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["wraAsyncCycleA", "wraAsyncCycleB", "wraAsyncCycleA"]) == true, "\(standardError(of: result))")
    }

    /// A family argument whose `==` resolves its own instance, asked for at the top: the
    /// first build checks the argument once listed, the check asks for the instance being
    /// built, and that is a cycle of one registration. It stops with the registration named
    /// and located, `wraFamily (file:line) -> wraFamily`, rather than hanging.
    @Test func anArgumentWhoseEqualityResolvesItsOwnInstanceStopsWithTheRegistrationNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an argument resolving its own instance")
            let container = DependencyContainer()
            _ = container.wraFamily(WRAArgument(1, hook: WRAHook { _ = container.wraFamily(WRAArgument(1)) }))
            exit(0)
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: wraFamily"), "\(output)")
        #expect(CycleChain(result)?.isCycle(["wraFamily", "wraFamily"]) == true, "\(output)")
    }

    /// The same inside the construction of another singleton: the chain names the family
    /// only, not the singleton around it, which is not part of the cycle.
    @Test func anArgumentWhoseEqualityResolvesItsOwnInstanceInsideAnotherConstructionNamesOnlyTheCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an argument resolving its own instance inside a construction")
            _ = DependencyContainer().wraAroundSelfResolving()
            exit(0)
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(CycleChain(result)?.isCycle(["wraFamily", "wraFamily"]) == true, "\(output)")
    }

    /// Across threads: thread 2 builds `b`, which needs `a`; thread 1's first build of `a`
    /// is listed, and its argument check asks for `b`. A real cycle (neither can end), which
    /// stops rather than deadlocking; the chain should name both with their locations, as
    /// any cycle across owners does.
    @Test func anArgumentCheckWaitingForAConstructionThatWaitsForItStopsWithBothNamed() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an argument check in a cycle across threads")
            let container = DependencyContainer()
            let gates = container.ifbInstallGates(1)
            let checking = ConstructionGate()
            Thread { _ = container.wraCycleB() }.start()
            gates[0].entered.wait()
            let hook = WRAHook {
                checking.enterAndWait()
                _ = container.wraCycleB()
            }
            Thread { _ = container.wraCycleA(WRAArgument(1, hook: hook)) }.start()
            checking.entered.wait()
            gates[0].open()
            container.wraUntilWaitRoom(container.wraCycleA[WRAArgument(1)].key)
            checking.open()
            DispatchSemaphore(value: 0).wait()  // one of the two threads stops the process
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(CycleChain(result)?.isCycle(["wraCycleA", "wraCycleB", "wraCycleA"]) == true, "\(output)")
    }

    /// An argument check that resolves other registrations (another member of the same
    /// family, a singleton) from the container while the construction is listed: no cycle,
    /// no wait.
    @Test func anArgumentCheckThatResolvesOtherRegistrationsBuildsNormally() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("wraFamily")
            let other = Collected<ObjectIdentifier>()
            let hook = WRAHook {
                other.append(ObjectIdentifier(container.wraFamily(WRAArgument(2))))
                _ = container.ifbSource()
            }
            let first = container.wraFamily(WRAArgument(1, hook: hook))
            findings.check(first.inner?.source == "1", "built for \(first.inner?.source ?? "nothing")")
            findings.check(container.wraFamily(WRAArgument(1)) === first, "not kept")
            findings.check(other.values == [ObjectIdentifier(container.wraFamily(WRAArgument(2)))], "the other member")
            findings.check(builds.count == 2, "\(builds.count) constructions")
            findings.check(container.wraNothingRuns, "a construction is still listed")
        }
    }

    // MARK: - Changes between the listing and the closure

    /// The first build of a family member is listed and held before its closure runs; a
    /// thread waits in its room; the family is overridden. A later resolution builds from the
    /// override at once; the held construction and its waiter share what it builds, which
    /// the container does not keep.
    @Test func aFamilyOverriddenBeforeAListedConstructionRunsDropsItAndItsWaiterGetsItsInstance() async {
        await run { findings in
            let container = DependencyContainer()
            let gate = ConstructionGate()
            let key = container.wraFamily[WRAArgument(1)].key
            let held = onThread { container.wraFamily(WRAArgument(1, hook: WRAHook { gate.enterAndWait() })) }
            gate.entered.wait()
            let waiter = onThread { container.wraFamily(WRAArgument(1)) }
            container.wraUntilWaitRoom(key)
            container.override(\.wraFamily) { argument in WRAPart("stub", inner: WRAPart("\(argument.id)")) }
            let stub = container.wraFamily(WRAArgument(1))  // hangs if it waits for the dropped construction
            gate.open()
            let (handedOut, waited) = (held(), waiter())
            findings.check(stub.source == "stub", "built from \(stub.source)")
            findings.check(handedOut.source == "live", "the dropped construction built from \(handedOut.source)")
            findings.check(waited === handedOut, "the waiter did not get the construction it waited for")
            findings.check(container.wraFamily(WRAArgument(1)) === stub, "the dropped construction's instance was kept")
            findings.check(container.wraNothingRuns, "a construction is still listed")
        }
    }

    /// The argument check itself resets the container: the construction it belongs to is
    /// listed and not started. It is handed out but not kept; the next resolution builds
    /// anew.
    @Test func aResetFromTheArgumentCheckDropsTheConstructionBeforeItRuns() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("wraFamily")
            let handedOut = container.wraFamily(WRAArgument(1, hook: WRAHook { container.reset() }))
            let next = container.wraFamily(WRAArgument(1))
            findings.check(next !== handedOut, "the construction dropped by the reset was kept")
            findings.check(container.wraFamily(WRAArgument(1)) === next, "the rebuilt instance was not kept")
            findings.check(builds.count == 2, "\(builds.count) constructions")
            findings.check(container.wraNothingRuns, "a construction is still listed")
        }
    }

    /// Shutdown from the argument check: a construction in flight runs on and is kept with
    /// its teardown, which a later shutdown runs once.
    @Test func aShutdownFromTheArgumentCheckKeepsTheConstructionAndALaterShutdownTearsItDown() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("wraTorn")
            let part = container[wraTorn: WRAArgument(1, hook: WRAHook { container.shutdown() })]()
            findings.check(container[wraTorn: WRAArgument(1)]() === part, "not kept after a shutdown that it outlived")
            findings.check(part.closes.count == 0, "torn down by the shutdown it outlived")
            container.shutdown()
            findings.check(part.closes.count == 1, "\(part.closes.count) teardowns")
            findings.check(builds.count == 1, "\(builds.count) constructions")
        }
    }

    // MARK: - Lifetimes

    /// A singleton's construction, which another thread waited for, starts a task that
    /// outlives it and keeps its frame (the resolution). Once the container is reset and the
    /// threads let the instance go, it is gone: neither the resolution nor the room the
    /// waiter made keeps it.
    @Test func aTaskStartedInAConstructionOthersWaitedForKeepsNeitherItsRoomNorItsInstance() async {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        let instance = Collected<Released>()
        let room = Collected<Released>()
        #expect(await finishesWithoutHangingOffThePool {
            let gates = container.ifbInstallGates(1)
            let key = container.wraSpawning.key
            let built = onThread { Released(container.wraSpawning()) }
            gates[0].entered.wait()
            let waiter = onThread { Released(container.wraSpawning()) }
            container.wraUntilWaitRoom(key)
            if let made = container.wraListed(key)?.room { room.append(Released(made)) }
            gates[0].open()
            let (first, second) = (built(), waiter())
            instance.append(first)
            instance.append(second)
        })
        let task = await probe.started.value()
        #expect(instance.values.count == 2 && instance.values[0].object === instance.values[1].object)
        #expect(instance.values.first?.object != nil, "the container does not keep the instance")
        container.reset()
        #expect(instance.values.first?.object == nil, "the instance outlives the reset, kept by the task its construction started")
        #expect(room.values.first?.object == nil, "the room outlives its construction, kept by the task its construction started")
        probe.latch.open()
        await task.value
    }

    /// A construction two threads wait for is dropped by an override; its instance's deinit
    /// resolves from and writes to the container. Wherever the last reference goes (the
    /// room, a waiter, the builder), it goes with no lock held, once.
    @Test func aDroppedConstructionsInstanceWaitedForIsReleasedOnceWithNoLockHeld() async {
        for _ in 0..<20 {
            let container = DependencyContainer()
            let releases = Counter()
            container.setValue(releases, forKey: "ifb.releases")
            let finished = await finishesWithoutHangingOffThePool {
                let gates = container.ifbInstallGates(1)
                let key = container.wraWatched.key
                let built = onThread { ObjectIdentifier(container.wraWatched()) }
                gates[0].entered.wait()
                let waiters = (0..<2).map { _ in onThread { ObjectIdentifier(container.wraWatched()) } }
                container.wraUntilWaitRoom(key, waiters: 2)
                container.override(\.wraWatched) { IFBReleaseWatcher(container: container, releases: releases) }
                gates[0].open()
                _ = [built()] + waiters.map { $0() }
            }
            #expect(finished, "a waiter of the dropped construction hangs")
            guard finished else { return }
            #expect(releases.count == 1, "the dropped instance was released \(releases.count) times")
            #expect(container.getValue(forKey: "ifb.touchedByDeinit") == true)
            #expect(container.wraNothingRuns)
        }
    }

    /// A shared instance others waited for goes with its last holder: the room does not
    /// keep it, and the next resolution builds anew.
    @Test func aSharedInstanceOthersWaitedForGoesWithItsLastHolder() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("ifbShared")
            let gates = container.ifbInstallGates(1)
            let key = container.ifbShared.key
            let built = onThread { Released(container.ifbShared()) }
            gates[0].entered.wait()
            let waiters = (0..<3).map { _ in onThread { Released(container.ifbShared()) } }
            // All three in the room: one that came after the end would find the instance
            // gone with the builder's thread, and build a second.
            container.wraUntilWaitRoom(key, waiters: 3)
            gates[0].open()
            let seen = [built()] + waiters.map { $0() }
            findings.check(seen.allSatisfy { $0.object == nil }, "a shared instance outlived every holder")
            _ = container.ifbShared()
            findings.check(builds.count == 2, "\(builds.count) constructions")
        }
    }

    // MARK: - Async

    /// Cancels `tasks` and opens `gate` at once, from two tasks released together.
    private static func cancel(_ tasks: [Task<ObjectIdentifier?, any Error>], asOpening gate: IFBAsyncGate) async {
        let barrier = AsyncBarrier(parties: 2)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await barrier.arrive()
                for task in tasks { task.cancel() }
            }
            group.addTask {
                await barrier.arrive()
                gate.opened.open()
            }
        }
    }

    /// Two thousand tasks await an async singleton held in its construction; half of them
    /// are cancelled as it ends. Every task not cancelled gets the one instance; a cancelled
    /// one gets it or `CancellationError`; one construction; nothing keeps the instance or
    /// the room once the container is reset.
    @Test func thousandsOfTasksAwaitingAnAsyncSingletonHalfCancelledAsItEndsGetOneInstance() async throws {
        let container = DependencyContainer()
        let builds = container.counter("wraAsyncGated")
        let gate = IFBAsyncGate()
        container.setValue(gate, forKey: "wra.asyncGate")
        let count = 2_000
        let started = Arrivals()
        var tasks: [Task<ObjectIdentifier?, any Error>] = []
        for _ in 0..<count {
            tasks.append(Task {
                started.arrive()
                return ObjectIdentifier(try await container.wraAsyncGated())
            })
        }
        await gate.entered.wait()
        let room = container.wraListed(container.wraAsyncGated.key)?.room.map(Released.init)
        #expect(room?.object != nil, "an async construction has no room")
        await Self.cancel(tasks.enumerated().filter { $0.offset.isMultiple(of: 2) }.map(\.element), asOpening: gate)
        var (instances, cancelled) = (Set<ObjectIdentifier>(), 0)
        for (index, task) in tasks.enumerated() {
            do {
                if let id = try await task.value { instances.insert(id) }
            } catch is CancellationError {
                #expect(index.isMultiple(of: 2), "a task not cancelled was cancelled")
                cancelled += 1
            }
        }
        tasks = []
        #expect(instances.count == 1, "\(instances.count) instances, \(cancelled) cancelled")
        #expect(builds.count == 1, "\(builds.count) constructions")
        weak var kept: WRAPart?
        kept = try await container.wraAsyncGated()
        #expect(kept.map(ObjectIdentifier.init) == instances.first)
        container.reset()
        #expect(kept == nil, "the instance outlives the reset")
        #expect(room?.object == nil, "the room outlives its construction")
        #expect(container.wraNothingRuns)
    }

    /// A task started inside an async singleton's construction outlives it; the container
    /// is reset. The instance is gone: the task keeps the construction's frame, not its
    /// room nor its result.
    @Test func aTaskStartedInAnAsyncConstructionKeepsNeitherItsRoomNorItsInstance() async throws {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        let gate = IFBAsyncGate()
        container.setValue(gate, forKey: "wra.asyncGate")
        let (instance, room) = try await Self.resolveTwice(container, opening: gate)
        let task = await probe.started.value()
        #expect(instance.object != nil, "the container does not keep the instance")
        container.reset()
        #expect(instance.object == nil, "the instance outlives the reset")
        #expect(room?.object == nil, "the room outlives its construction")
        probe.latch.open()
        await task.value
    }

    /// An async construction that fails while tasks wait in its room: every waiter gets the
    /// error, nothing is kept or left listed, and the next resolution builds anew.
    @Test func anAsyncConstructionThatFailsWithWaitersHandsEachTheErrorAndKeepsNothing() async throws {
        let container = DependencyContainer()
        let builds = container.counter("wraAsyncFailing")
        let gate = IFBAsyncGate()
        container.setValue(gate, forKey: "wra.asyncGate")
        let failures = Counter()
        #expect(await endsWithoutHanging {
            let tasks = (0..<8).map { _ in Task { try await container.wraAsyncFailing() } }
            await gate.entered.wait()
            container.removeValue(forKey: "wra.asyncGate")
            gate.opened.open()
            for task in tasks {
                do { _ = try await task.value } catch is WRAFailure { failures.increment() } catch {}
            }
            if !container.wraNothingRuns { failures.increment() }
            _ = try? await container.wraAsyncFailing()
        }, "a waiter of a failed construction hangs")
        #expect(failures.count == 8, "\(failures.count) waiters got the error")
        #expect(builds.count == 2, "\(builds.count) constructions")
    }

    /// The task that listed an async construction is cancelled while it is held; another
    /// task waits in its room. The construction runs on: the other gets its instance, the
    /// container keeps it, and it was built once.
    @Test func theCancelledResolverOfAnAsyncConstructionLeavesItToItsOtherWaiters() async throws {
        let container = DependencyContainer()
        let builds = container.counter("wraAsyncGated")
        let gate = IFBAsyncGate()
        container.setValue(gate, forKey: "wra.asyncGate")
        let resolver = Task { try await container.wraAsyncGated() }
        await gate.entered.wait()
        let other = Task { try await container.wraAsyncGated() }
        resolver.cancel()
        let cancelled: Bool
        do {
            _ = try await resolver.value
            cancelled = false
        } catch {
            cancelled = error is CancellationError
        }
        #expect(cancelled, "the cancelled resolver waited for the construction")
        gate.opened.open()
        let instance = try await other.value
        #expect(try await container.wraAsyncGated() === instance)
        #expect(builds.count == 1, "\(builds.count) constructions")
        #expect(container.wraNothingRuns)
    }

    /// Two tasks resolve `wraAsyncSpawning`, the second while the first's construction is
    /// held at `gate`: what they got, and the construction's room, seen weakly.
    private static func resolveTwice(
        _ container: DependencyContainer, opening gate: IFBAsyncGate
    ) async throws -> (instance: Released, room: Released?) {
        let first = Task { try await container.wraAsyncSpawning() }
        await gate.entered.wait()
        let room = container.wraListed(container.wraAsyncSpawning.key)?.room.map(Released.init)
        let second = Task { try await container.wraAsyncSpawning() }
        gate.opened.open()
        let (one, other) = (try await first.value, try await second.value)
        #expect(one === other)
        return (Released(one), room)
    }

    // MARK: - Tracing

    /// A traced construction two threads ask for while it runs, with a tracer that resolves
    /// from the container: the builder's batch holds its construction and what it resolved
    /// (joined after the listing), the waiter that made the room reports an awaited event
    /// (the other one awaited or cached), and nothing hangs.
    @Test func aTracedConstructionWithWaitersReportsOneBuildItsInnerResolutionAndEachWait() async {
        await run { findings in
            let container = DependencyContainer()
            let batches = Collected<[ResolutionEvent]>()
            container.tracer = ResolutionTracer { [unowned container] events in
                batches.append(events)
                _ = container.ifbSource()
            }
            let gates = container.ifbInstallGates(1)
            let key = container.ifbGated.key
            let built = onThread { ObjectIdentifier(container.ifbGated()) }
            gates[0].entered.wait()
            let waiters = (0..<2).map { _ in onThread { ObjectIdentifier(container.ifbGated()) } }
            container.wraUntilWaitRoom(key, waiters: 2)
            gates[0].open()
            let instances = [built()] + waiters.map { $0() }
            container.tracer = nil
            findings.check(Set(instances).count == 1, "\(Set(instances).count) instances")
            let gated = batches.values.filter { $0.contains { $0.name == "ifbGated" } }
            let builtBatches = gated.filter { $0.contains { $0.name == "ifbGated" && $0.outcome == .built } }
            findings.check(builtBatches.count == 1, "\(builtBatches.count) batches with a build: \(gated)")
            findings.check(
                builtBatches.first?.contains { $0.name == "ifbSource" && $0.depth == 1 } == true,
                "the inner resolution is not in the builder's batch: \(gated)")
            // The waiter that made the room waited; the other may come after the end.
            let events = gated.flatMap { $0 }.filter { $0.name == "ifbGated" }
            let awaited = events.filter { $0.outcome == .awaited }.count
            let cached = events.filter { $0.outcome == .cached }.count
            findings.check(awaited >= 1 && awaited + cached == 2, "\(awaited) awaited, \(cached) cached: \(gated)")
        }
    }

    // MARK: - Scopes

    /// Two scopes and the app container ask at once for an app-wide singleton the app
    /// container builds for the first scope: the others wait in its room; one instance.
    @Test func scopesAskingForAnAppSingletonInFlightWaitInItsRoomAndShareIt() async {
        await run { findings in
            let app = DependencyContainer()
            let builds = app.counter("ifbAppGated")
            let (first, second) = (DependencyContainer(scopeOf: app), DependencyContainer(scopeOf: app))
            let gates = app.ifbInstallGates(1)
            let key = app.ifbAppGated.key
            let built = onThread { ObjectIdentifier(first.ifbAppGated()) }
            gates[0].entered.wait()
            let waiters = [onThread { ObjectIdentifier(second.ifbAppGated()) }, onThread { ObjectIdentifier(app.ifbAppGated()) }]
            app.wraUntilWaitRoom(key)
            gates[0].open()
            let instances = [built()] + waiters.map { $0() }
            findings.check(Set(instances).count == 1, "\(Set(instances).count) instances")
            findings.check(builds.count == 1, "\(builds.count) constructions")
            findings.check(app.wraNothingRuns && first.wraNothingRuns && second.wraNothingRuns, "a construction is still listed")
            withExtendedLifetime((first, second)) {}
        }
    }

    // MARK: - Under load

    /// Threads race first builds of a family's members (so that most builds have waiters)
    /// with a tracer on, while one thread overrides the family and resets it: every member
    /// kept at the end comes from the last override, and nothing is left listed.
    @Test func firstBuildsRacedByWaitersWhileTheFamilyChangesEndWithTheLastOverride() async {
        let container = DependencyContainer()
        let traced = Counter()
        container.tracer = ResolutionTracer { _ in traced.increment() }
        let (members, changes) = (64, 400)
        let finished = await concurrentlyOffThePool(threads: 6) { thread in
            if thread == 0 {
                for version in 0..<changes {
                    if version % 5 == 0 { container.reset() }
                    container.override(\.wraFamily) { argument in WRAPart("v\(version)", inner: WRAPart("\(argument.id)")) }
                    _ = container.wraFamily(WRAArgument(version % members))
                }
            } else {
                for round in 0..<60 {
                    for index in 0..<members { _ = container.wraFamily(WRAArgument((index + round) % members)) }
                    if thread == 1 && round % 4 == 0 { container.reset(\.wraFamily) }
                }
            }
        }
        #expect(finished)
        guard finished else { return }
        container.override(\.wraFamily) { argument in WRAPart("last", inner: WRAPart("\(argument.id)")) }
        let kept = (0..<members).map { container.wraFamily(WRAArgument($0)) }
        #expect(kept.allSatisfy { $0.source == "last" })
        #expect(zip(kept, 0..<members).allSatisfy { $0.inner?.source == "\($1)" })
        #expect((0..<members).allSatisfy { container.wraFamily(WRAArgument($0)) === kept[$0] })
        #expect(container.wraNothingRuns)
        #expect(traced.count > 0)
    }

    /// A parent's override and a child's reset at once, while threads build a chain of two
    /// singletons in the child: at the end the child's outer singleton holds the child's
    /// inner one, built from the parent's last override.
    @Test func aChildsChainBuiltWhileItsParentOverridesAndItResetsEndsConsistent() async {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let changes = 200
        let finished = await concurrentlyOffThePool(threads: 5) { thread in
            switch thread {
            case 0:
                for version in 0..<changes { parent.override(\.ifbInner) { IFBPart("v\(version)") } }
            case 1:
                for _ in 0..<changes {
                    child.reset()
                    _ = child.ifbOuter()
                }
            default:
                for _ in 0..<1_000 { _ = child.ifbOuter() }
            }
        }
        #expect(finished)
        guard finished else { return }
        let outer = child.ifbOuter()
        #expect(outer.inner === child.ifbInner(), "the child's outer singleton holds a dropped inner one")
        #expect(outer.inner?.source == "v\(changes - 1)")
        #expect(child.ifbOuter() === outer)
        #expect(child.wraNothingRuns && parent.wraNothingRuns)
    }
}

struct WRAFailure: Error {}

extension DependencyContainer {
    /// An async singleton whose construction fails, held at the async gate first.
    var wraAsyncFailing: AsyncProvider<WRAPart> {
        singleton {
            self.count("wraAsyncFailing")
            if let gate: IFBAsyncGate = self.getValue(forKey: "wra.asyncGate") { await gate.pass() }
            throw WRAFailure()
        }
    }

    /// An async singleton that starts a task outliving it, held at the async gate.
    var wraAsyncSpawning: AsyncProvider<WRAPart> {
        singleton {
            if let gate: IFBAsyncGate = self.getValue(forKey: "wra.asyncGate") { await gate.pass() }
            self.startWaitingTask()
            return WRAPart("live")
        }
    }
}
