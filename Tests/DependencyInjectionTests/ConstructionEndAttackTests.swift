import Foundation
import Testing
@testable import DependencyInjection

// How a construction ends, under attack: what a construction that keeps nothing (dropped
// by an override or reset, or failed) leaves in the record of uses; what a sweep of dead
// shared instances leaves there, with thousands of arguments; what the end of a build
// releases, and when (after its waiters wake); and deinits, tracers, spawned tasks,
// parents and children changing at once, and helpers that wrap registrations around it.
// Registrations and fixtures use the prefix `ce`.

/// An object that runs `onDeinit` when it goes.
final class CEObject: @unchecked Sendable {
    // @unchecked: set once, in `init`.
    let tag: String
    let inner: CEObject?
    private let onDeinit: (@Sendable () -> Void)?
    init(_ tag: String, inner: CEObject? = nil, onDeinit: (@Sendable () -> Void)? = nil) {
        (self.tag, self.inner, self.onDeinit) = (tag, inner, onDeinit)
    }
    deinit { onDeinit?() }
}

/// An argument that runs `onDeinit` when it goes; compared by `id`.
final class CEArgument: Hashable, @unchecked Sendable {
    // @unchecked: set once, in `init`.
    let id: Int
    private let onDeinit: (@Sendable () -> Void)?
    init(_ id: Int, onDeinit: (@Sendable () -> Void)? = nil) { (self.id, self.onDeinit) = (id, onDeinit) }
    deinit { onDeinit?() }
    static func == (lhs: CEArgument, rhs: CEArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Weak references, counted alive later.
final class CEWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var refs: [() -> AnyObject?] = []
    func watch(_ object: AnyObject) { lock.withLock { refs.append({ [weak object] in object }) } }
    var alive: Int { lock.withLock { refs.filter { $0() != nil }.count } }
}

extension DependencyContainer {
    /// Passes the gate stored under `name`, if any (a `CRAGate`: once opened, open for good).
    func cePass(_ name: String) {
        if let gate: CRAGate = getValue(forKey: name) { gate.pass() }
    }

    var ceLeaf: Provider<CEObject> { singleton { CEObject("leaf") } }
    var ceOther: Provider<CEObject> { singleton { CEObject("other") } }
    /// Passes "ce.gate", then resolves `ceLeaf`.
    var ceGated: Provider<CEObject> {
        singleton {
            self.count("ceGated")
            self.cePass("ce.gate")
            return CEObject("gated", inner: self.ceLeaf())
        }
    }
    /// Passes "ce.gate.<id>", then resolves `ceLeaf`.
    subscript(ceGated argument: CEArgument) -> Provider<CEObject> {
        singleton(argument) {
            self.cePass("ce.gate.\(argument.id)")
            return CEObject("gated \(argument.id)", inner: self.ceLeaf())
        }
    }
    subscript(ceShared argument: CEArgument) -> Provider<CEObject> {
        shared(argument) { CEObject("shared \(argument.id)") }
    }
    /// Built from `ceLeaf`.
    var ceUser: Provider<CEObject> { singleton { CEObject("user", inner: self.ceLeaf()) } }
}

@Suite struct ConstructionEndAttackTests {
    /// Builds `ceGated` on a thread of its own, overrides it with a stub that uses nothing
    /// while the construction waits at its gate, then lets the construction go on (it
    /// resolves `ceLeaf` after the drop) and waits for it. False if it hung.
    private func overridesCeGatedWhileItIsBuilt(in container: DependencyContainer) async -> Bool {
        let gate = CRAGate()
        container.setValue(gate, forKey: "ce.gate")
        return await finishesWithoutHangingOffThePool {
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = container.ceGated()
                done.signal()
            }.start()
            gate.entered.wait()
            container.override(\.ceGated) { CEObject("stub") }
            gate.open()
            done.wait()
        }
    }

    // MARK: - What a dropped construction uses after it was dropped

    /// A construction dropped by an override goes on running and resolves `ceLeaf` after
    /// the drop. The override's instance, built next, uses nothing. Overriding `ceLeaf`
    /// must not drop it: it was never built from `ceLeaf`.
    @Test func aDroppedConstructionsLaterUsesDoNotTieTheNextInstanceToThem() async {
        let container = DependencyContainer()
        #expect(await overridesCeGatedWhileItIsBuilt(in: container))
        let first = container.ceGated()
        #expect(first.tag == "stub")
        container.override(\.ceLeaf) { CEObject("leaf 2") }
        #expect(container.ceGated() === first, "overriding a key the instance never used dropped it")
    }

    /// An argument whose construction was dropped by a reset, and which the construction
    /// used after the drop, must not stay in the container once nothing is kept for it.
    @Test func theArgumentOfADroppedConstructionIsNotKeptByItsLateUses() async {
        let container = DependencyContainer()
        let watch = CEWatch()
        #expect(await finishesWithoutHangingOffThePool {
            let gate = CRAGate()
            container.setValue(gate, forKey: "ce.gate.1")
            let done = DispatchSemaphore(value: 0)
            Thread {
                // Let go of before the signal: the test then counts what the container keeps.
                do {
                    let argument = CEArgument(1)
                    watch.watch(argument)
                    _ = container[ceGated: argument]()
                }
                done.signal()
            }.start()
            gate.entered.wait()
            container.reset()
            gate.open()
            done.wait()
        })
        #expect(container.instanceIfBuilt(\.[ceGated: CEArgument(1)]) == nil, "a dropped construction was kept")
        #expect(watch.alive == 0, "the container keeps the argument of a construction it dropped")
    }

    /// Many dropped constructions with distinct arguments: the record of uses must not grow
    /// with them.
    @Test func droppedConstructionsDoNotPileUpInTheRecordOfUses() async {
        let container = DependencyContainer()
        _ = container.ceLeaf()
        #expect(await finishesWithoutHangingOffThePool {
            for id in 0..<200 {
                let gate = CRAGate()
                container.setValue(gate, forKey: "ce.gate.\(id)")
                let done = DispatchSemaphore(value: 0)
                Thread {
                    _ = container[ceGated: CEArgument(id)]()
                    done.signal()
                }.start()
                gate.entered.wait()
                container.reset(\.[ceGated: CEArgument(id)])
                gate.open()
                done.wait()
                container.removeValue(forKey: "ce.gate.\(id)")
            }
        })
        let users = container.withStateLock { $0.dependents[container.ceLeaf.key]?.count ?? 0 }
        #expect(users == 0, "the record of uses keeps \(users) users that were dropped")
    }
}

extension DependencyContainer {
    /// Spawns a task that waits at the latch stored under "ce.latch", then resolves
    /// `ceLeaf` and hands it to "ce.spawned".
    func ceSpawn() {
        guard let latch: AsyncLatch = getValue(forKey: "ce.latch"),
            let spawned: Handoff<String> = getValue(forKey: "ce.spawned")
        else { return }
        Task {
            await latch.wait()
            spawned.put(self.ceLeaf().tag)
        }
    }
    var ceSpawning: Provider<CEObject> {
        singleton {
            self.ceSpawn()
            return CEObject("spawning")
        }
    }
}

extension ConstructionEndAttackTests {
    // MARK: - A task a construction spawns outlives it

    /// The task keeps the construction's frame (the resolution): the override's closure,
    /// and the tracer, must not live on with it once the container lets them go.
    @Test func aSpawnedTaskDoesNotKeepTheOverrideOrTracerOfTheConstructionAlive() async {
        let container = DependencyContainer()
        let latch = AsyncLatch()
        let spawned = Handoff<String>()
        container.setValue(latch, forKey: "ce.latch")
        container.setValue(spawned, forKey: "ce.spawned")
        let watch = CEWatch()
        do {
            let captured = CEObject("captured")
            let traced = CEObject("traced")
            watch.watch(captured)
            watch.watch(traced)
            container.tracer = ResolutionTracer { _ in withExtendedLifetime(traced) {} }
            container.override(\.ceSpawning) {
                withExtendedLifetime(captured) {}
                container.ceSpawn()
                return CEObject("stub")
            }
        }
        #expect(container.ceSpawning().tag == "stub")
        container.reset(\.ceSpawning)
        container.tracer = nil
        #expect(watch.alive == 0, "a spawned task keeps the override's closure or the tracer alive")
        latch.open()
        #expect(await spawned.value() == "leaf")
    }

    // MARK: - Parent and child changing at once

    /// A parent overrides `ceLeaf` over and over while its child installs and removes its
    /// own override of it and other threads resolve `ceUser` in the child. Once all stop,
    /// and the parent installs a last override, the child sees it everywhere.
    @Test(arguments: ["child", "scope", "grandchild"])
    func parentAndChildOverridingTogetherLeaveTheChildOnTheParentsLastOverride(kind: String) async {
        for round in 0..<30 {
            let parent = DependencyContainer()
            let middle = kind == "grandchild" ? DependencyContainer(parent: parent) : parent
            let child = kind == "scope" ? DependencyContainer(scopeOf: middle) : DependencyContainer(parent: middle)
            #expect(await concurrentlyOffThePool(threads: 4) { index in
                for step in 0..<300 {
                    switch index {
                    case 0: parent.override(\.ceLeaf) { CEObject("p\(step)") }
                    case 1:
                        child.override(\.ceLeaf) { CEObject("c\(step)") }
                        _ = child.ceUser()
                        child.reset(\.ceLeaf)
                    default:
                        _ = child.ceUser()
                        _ = child.ceLeaf()
                    }
                }
            })
            parent.override(\.ceLeaf) { CEObject("final") }
            let user = child.ceUser()
            #expect(user.inner?.tag == "final", "round \(round): the child's user was built from \(user.inner?.tag ?? "nil")")
            #expect(child.ceLeaf().tag == "final", "round \(round)")
            if user.inner?.tag != "final" { break }
        }
    }

    // MARK: - Arguments of shared instances and singletons, released after unlocking

    /// Shared instances with thousands of distinct arguments die at once; the sweeps that
    /// forget them, a family reset and a full reset release each argument after unlocking.
    @Test func argumentsOfDeadSharedInstancesGoAfterUnlocking() {
        let container = DependencyContainer()
        let underLock = Collected<Bool>()
        let note: @Sendable () -> Void = { [weak container] in
            if let container { underLock.append(isLockedHere(container)) }
        }
        var held: [CEObject] = []
        for id in 0..<2_000 {
            let object = container[ceShared: CEArgument(id, onDeinit: note)]()
            if id % 7 == 0 { held.append(object) }  // some stay alive
        }
        #expect(underLock.values.count > 0, "sweeps forgot dead instances")
        held.removeAll()
        for id in 2_000..<2_100 { _ = container[ceShared: CEArgument(id, onDeinit: note)]() }
        container.reset()
        #expect(underLock.values.count == 2_100, "every argument went: \(underLock.values.count)")
        #expect(!underLock.values.contains(true), "an argument went under its container's lock")
    }

    /// Singletons with distinct arguments built from `ceLeaf`: an override of the leaf drops
    /// them all, and a reset of one argument's override; every argument goes after unlocking.
    @Test func argumentsOfSingletonsDroppedThroughTheirUsesGoAfterUnlocking() {
        let container = DependencyContainer()
        let underLock = Collected<Bool>()
        let note: @Sendable () -> Void = { [weak container] in
            if let container { underLock.append(isLockedHere(container)) }
        }
        for id in 0..<500 { _ = container[ceGated: CEArgument(id, onDeinit: note)]() }
        container.override(\.[ceGated: CEArgument(-1, onDeinit: note)]) { CEObject("stub") }
        _ = container[ceGated: CEArgument(-1, onDeinit: note)]()
        container.override(\.ceLeaf) { CEObject("leaf 2") }
        #expect(underLock.values.count >= 500, "the leaf's override dropped every argument's singleton")
        container.reset(\.[ceGated: CEArgument(-1, onDeinit: note)])
        _ = container[ceGated: CEArgument(-1, onDeinit: note)]()
        container.reset()
        #expect(!underLock.values.contains(true), "an argument went under its container's lock")
    }
}

extension ConstructionEndAttackTests {
    // MARK: - What a first build lets go of when it ends

    /// The override a construction runs is replaced while it runs: the resolution holds the
    /// last reference to it, and lets go of it as it ends. The closure's captured object's
    /// `deinit` overrides the same key again and resolves it.
    @Test func anOverrideReplacedDuringItsConstructionGoesWithTheResolution() async {
        let container = DependencyContainer()
        let gate = CRAGate()
        let deinitRan = DispatchSemaphore(value: 0)
        // Collected, under a lock: a semaphore signalled before its wait orders nothing
        // that ThreadSanitizer sees, and it reported the threads' writes as races.
        let built = Collected<String>()
        let afterDeinit = Collected<String>()
        #expect(await finishesWithoutHangingOffThePool {
            do {
                let captured = CEObject("captured") {
                    container.override(\.ceGated) { CEObject("third") }
                    afterDeinit.append(container.ceGated().tag)
                    deinitRan.signal()
                }
                container.override(\.ceGated) {
                    withExtendedLifetime(captured) {}
                    gate.pass()
                    return CEObject("first")
                }
            }
            let done = DispatchSemaphore(value: 0)
            Thread {
                built.append(container.ceGated().tag)
                done.signal()
            }.start()
            gate.entered.wait()
            container.override(\.ceGated) { CEObject("second") }
            gate.open()
            done.wait()
            deinitRan.wait()
        }, "the replaced override's deinit hung")
        #expect(built.values == ["first"])
        #expect(afterDeinit.values == ["third"])
        #expect(container.ceGated().tag == "third")
    }

    /// The tracer is replaced while a traced construction runs; the resolution's trace holds
    /// the last reference to it. Its captured object's `deinit` sets a tracer and resolves.
    @Test func aTracerReplacedDuringATracedConstructionGoesWithTheResolution() async {
        let container = DependencyContainer()
        let gate = CRAGate()
        container.setValue(gate, forKey: "ce.gate")
        let events = Collected<String>()
        let deinitRan = DispatchSemaphore(value: 0)
        #expect(await finishesWithoutHangingOffThePool {
            do {
                let captured = CEObject("captured") {
                    container.tracer = ResolutionTracer { batch in for event in batch { events.append("late " + event.name) } }
                    _ = container.ceOther()
                    container.tracer = nil
                    deinitRan.signal()
                }
                container.tracer = ResolutionTracer { batch in
                    withExtendedLifetime(captured) {}
                    for event in batch { events.append(event.name) }
                }
            }
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = container.ceGated()
                done.signal()
            }.start()
            gate.entered.wait()
            container.tracer = nil
            gate.open()
            done.wait()
            deinitRan.wait()
        }, "the replaced tracer's deinit hung")
        #expect(events.values.contains("ceGated"))
        #expect(events.values.contains("late ceOther"))
    }
}

extension DependencyContainer {
    subscript(ceDeep n: Int) -> Provider<Int> { singleton(n) { n == 0 ? 0 : self[ceDeep: n - 1]() + 1 } }
    subscript(ceDeepB n: Int) -> Provider<Int> { singleton(n) { n == 0 ? 0 : self[ceDeepB: n - 1]() + 1 } }
}

/// Runs `bodies` each on a thread of its own with a large stack, released together, and
/// waits for all.
func ceOnBigStacks(_ bodies: [@Sendable () -> Void]) {
    let start = NSCondition()
    nonisolated(unsafe) var waiting = bodies.count
    let done = DispatchGroup()
    for body in bodies {
        done.enter()
        let thread = Thread {
            start.lock()
            waiting -= 1
            if waiting == 0 { start.broadcast() } else { while waiting > 0 { start.wait() } }
            start.unlock()
            body()
            done.leave()
        }
        thread.stackSize = 256 << 20
        thread.start()
    }
    done.wait()
}

extension ConstructionEndAttackTests {
    // MARK: - Thousands of arguments in flight at once

    /// Two threads each build a chain of parameterized singletons 500 deep in one container
    /// at once, released together: every resolution on one thread records a use for each
    /// construction the other has in flight, under the lock. Neither sees a cycle that is
    /// not there, and both chains come out whole.
    @Test(arguments: [500])
    func twoDeepChainsOfArgumentsBuiltAtOnce(depth: Int) async {
        let container = DependencyContainer()
        nonisolated(unsafe) var results = (0, 0)
        #expect(await finishesWithoutHangingOffThePool {
            ceOnBigStacks([{ results.0 = container[ceDeep: depth]() }, { results.1 = container[ceDeepB: depth]() }])
        })
        #expect(results == (depth, depth))
    }
}

extension DependencyContainer {
    /// Waits at the latch stored under "ce.asyncGate" (after opening "ce.asyncEntered"),
    /// then resolves `ceLeaf`.
    var ceAsyncGated: AsyncProvider<CEObject> {
        singleton {
            if let entered: AsyncLatch = self.getValue(forKey: "ce.asyncEntered") { entered.open() }
            if let gate: AsyncLatch = self.getValue(forKey: "ce.asyncGate") { await gate.wait() }
            return CEObject("async gated", inner: self.ceLeaf())
        }
    }
}

extension ConstructionEndAttackTests {
    /// The stale record of a dropped construction, seen from a scope: the app's instance of
    /// `ceGated` comes from an override that uses nothing; a request that overrides
    /// `ceLeaf` must share it, not build its own copy of the app-wide singleton.
    @Test func aScopeSharesAnAppInstanceThatOnlyADroppedConstructionBuiltFromWhatItOverrides() async {
        let app = DependencyContainer()
        #expect(await overridesCeGatedWhileItIsBuilt(in: app))
        let appInstance = app.ceGated()
        #expect(appInstance.tag == "stub")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ceLeaf) { CEObject("request leaf") }
        let seen = request.ceGated()
        #expect(seen === appInstance, "the request built its own copy (\(seen.tag)) of an app-wide singleton it shares")
    }

    /// The async road: a construction dropped while it awaits resolves `ceLeaf` after the
    /// drop; the override's instance must not be tied to `ceLeaf`.
    @Test func aDroppedAsyncConstructionsLaterUsesDoNotTieTheNextInstanceToThem() async throws {
        let container = DependencyContainer()
        let entered = AsyncLatch()
        let gate = AsyncLatch()
        container.setValue(entered, forKey: "ce.asyncEntered")
        container.setValue(gate, forKey: "ce.asyncGate")
        let building = Task { try await container.ceAsyncGated() }
        await entered.wait()
        container.override(\.ceAsyncGated) { CEObject("stub") }
        gate.open()
        #expect(try await building.value.tag == "async gated")
        let first = try await container.ceAsyncGated()
        #expect(first.tag == "stub")
        container.override(\.ceLeaf) { CEObject("leaf 2") }
        #expect(try await container.ceAsyncGated() === first, "overriding a key the instance never used dropped it")
    }

    /// Shutdown empties the container: what it built with an argument goes, and so must
    /// the argument, once nothing else holds it.
    @Test func shutdownDoesNotKeepTheArgumentsOfWhatItEmptied() {
        let container = DependencyContainer()
        let watch = CEWatch()
        do {
            let argument = CEArgument(7)
            watch.watch(argument)
            _ = container[ceGated: argument]()
        }
        container.shutdown()
        #expect(container.instanceIfBuilt(\.[ceGated: CEArgument(7)]) == nil)
        // Shutdown keeps the record of uses (Scopes.md, "This holds after the app's
        // shutdown() too"), naming what it emptied by family, without the argument.
        #expect(watch.alive == 0, "the container keeps an argument after shutdown emptied it")
    }
}

extension DependencyContainer {
    /// A shared instance whose construction passes "ce.sharedGate".
    var ceGatedShared: Provider<CEObject> {
        shared {
            self.cePass("ce.sharedGate")
            return CEObject("gated shared")
        }
    }
    /// A singleton built from `ceGatedShared`.
    var ceNeedsShared: Provider<CEObject> { singleton { CEObject("needs shared", inner: self.ceGatedShared()) } }
}

extension ConstructionEndAttackTests {
    // MARK: - What a construction's end releases, before it wakes its waiters

    /// Thread B builds the shared `ceGatedShared`; thread W builds the singleton
    /// `ceNeedsShared` from it and waits for B. B's construction ends with a sweep of 16
    /// dead shared instances, whose arguments the sweep hands to the bag of releases: their
    /// last references. The bag goes after unlocking, but before B opens the room where W
    /// waits; an argument's `deinit` there resolves `ceNeedsShared`, which W is building
    /// and which waits for B. Released after the room is open, it would simply wait for W.
    @Test func anArgumentReleasedByASweepDoesNotRunBeforeTheConstructionWakesItsWaiters() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("an argument's deinit released before the construction woke its waiters")
            let container = DependencyContainer()
            let hook = DeinitHook()
            for id in 0..<16 {
                _ = container[ceShared: CEArgument(id, onDeinit: { hook.fire() })]()  // dies at once
            }
            let gate = CRAGate()
            container.setValue(gate, forKey: "ce.sharedGate")
            hook.set { _ = container.ceNeedsShared() }
            let done = DispatchGroup()
            done.enter()
            Thread {
                withExtendedLifetime(container.ceGatedShared()) {}
                done.leave()
            }.start()
            gate.entered.wait()
            done.enter()
            Thread {
                _ = container.ceNeedsShared()
                done.leave()
            }.start()
            let shared = container.ceGatedShared.key
            while container.withStateLock({ $0.building.construction(of: shared)?.waitRoom().waitedSoFar ?? 0 }) == 0 {
                sched_yield()
            }
            gate.open()
            done.wait()
            precondition(hook.fired >= 1, "the sweep released no argument")
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(600))")
        }
    }
}

struct CEFailure: Error {}

extension DependencyContainer {
    /// Resolves `ceLeaf`, then throws.
    subscript(ceFailing argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            _ = self.ceLeaf()
            throw CEFailure()
        }
    }
    /// A shared instance per argument, built from `ceLeaf`: a handler per request id.
    subscript(ceSharedUser argument: CEArgument) -> Provider<CEObject> {
        shared(argument) { CEObject("handler \(argument.id)", inner: self.ceLeaf()) }
    }
}

extension ConstructionEndAttackTests {
    // MARK: - Records of what is no longer built, with thousands of arguments

    /// An async singleton per argument whose construction fails after using `ceLeaf`: a
    /// session that cannot open. Nothing is kept for it; the argument must not be either,
    /// and failures with distinct arguments must not pile up in the record of uses: they
    /// leave one key there, their family's, which a change of `ceLeaf` follows to what an
    /// earlier instance fed.
    @Test func failedConstructionsDoNotKeepTheirArgumentsOrPileUp() async {
        let container = DependencyContainer()
        _ = container.ceLeaf()
        let watch = CEWatch()
        for id in 0..<300 {
            let argument = CEArgument(id)
            watch.watch(argument)
            do {
                _ = try await container[ceFailing: argument]()
                Issue.record("did not throw")
            } catch {}
        }
        let users = container.withStateLock { $0.dependents[container.ceLeaf.key].map(Array.init) ?? [] }
        let family = container[ceFailing: CEArgument(0)].key.goneInstances
        #expect(users.count <= 1, "the record of uses keeps \(users.count) failed constructions")
        #expect(users.allSatisfy { $0 == family }, "the record names a failed construction other than by its family")
        // The task that ran the last construction lets go of its argument as it ends, after
        // the construction woke this one: a kept argument never goes.
        #expect(await finishesWithoutHangingOffThePool { while watch.alive > 0 { sched_yield() } },
                "the container keeps \(watch.alive) arguments of failed constructions")
    }

    /// A shared handler per request id, built from `ceLeaf`, released when the request
    /// ends. The sweeps forget the dead handlers; thousands of request ids must not leave
    /// thousands of records (and arguments) behind.
    @Test func sweptSharedInstancesWithDistinctArgumentsDoNotPileUpInTheRecordOfUses() {
        let container = DependencyContainer()
        _ = container.ceLeaf()
        let watch = CEWatch()
        for id in 0..<3_000 {
            let argument = CEArgument(id)
            watch.watch(argument)
            _ = container[ceSharedUser: argument]()  // the request ends at once
        }
        let users = container.withStateLock { $0.dependents[container.ceLeaf.key]?.count ?? 0 }
        let sharedKept = container.withStateLock { $0.sharedInstances.count }
        #expect(sharedKept <= 64, "the sweeps keep the table of shared instances small: \(sharedKept)")
        #expect(users <= 64, "the record of uses keeps \(users) users for 3,000 dead shared instances")
        #expect(watch.alive <= 64, "the container keeps \(watch.alive) arguments of dead shared instances")
    }
}

extension DependencyContainer {
    /// A helper that wraps `singleton` with a teardown, forwarding its caller's place.
    func ceService<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        singleton(name: name, fileID: fileID, line: line, column: column, make).onShutdown { [weak self] _ in
            // A teardown that uses the container: resolves, overrides and reads.
            guard let self else { return }
            (self.getValue(forKey: "ce.tornDown") as Collected<String>?)?.append("\(name)")
            _ = self.ceOther()
        }
    }
    var ceWrappedA: Provider<CEObject> { ceService { CEObject("a", inner: self.ceLeaf()) } }
    var ceWrappedB: Provider<CEObject> { ceService { CEObject("b", inner: self.ceWrappedA()) } }
}

extension ConstructionEndAttackTests {
    // MARK: - Helpers that wrap registrations

    @Test func registrationsMadeThroughAHelperStayDistinctOverridableAndTornDownInOrder() async {
        let container = DependencyContainer()
        let tornDown = Collected<String>()
        container.setValue(tornDown, forKey: "ce.tornDown")
        let b = container.ceWrappedB()
        #expect(b.inner === container.ceWrappedA())
        #expect(container.ceWrappedA.key != container.ceWrappedB.key)
        container.override(\.ceLeaf) { CEObject("leaf 2") }
        #expect(container.ceWrappedB() !== b, "an override of the leaf reaches through the helper")
        #expect(container.ceWrappedB().inner?.inner?.tag == "leaf 2")
        container.override(\.ceWrappedA) { CEObject("stub a") }
        #expect(container.ceWrappedB().inner?.tag == "stub a")
        #expect(await finishesWithoutHangingOffThePool { container.shutdown() })
        #expect(tornDown.values == ["ceWrappedB", "ceWrappedA"], "\(tornDown.values)")
    }
}

extension DependencyContainer {
    /// Reads the leaf's tag through the shared handler of argument 0, holding neither: what
    /// it keeps is derived from an instance that dies at once.
    var ceDerivedFromHandler: Provider<CEObject> {
        singleton { CEObject("derived from \(self[ceSharedUser: CEArgument(0)]().inner?.tag ?? "nothing")") }
    }
    /// A shared instance per argument that uses nothing: enough of them that die make a
    /// container sweep its dead shared instances.
    subscript(ceFiller argument: CEArgument) -> Provider<CEObject> {
        shared(argument) { CEObject("filler \(argument.id)") }
    }
    /// The same, in a request scope, from the app's shared handler.
    var ceScopedDerivedFromHandler: Provider<CEObject> {
        scoped { CEObject("derived from \(self[ceSharedUser: CEArgument(0)]().inner?.tag ?? "nothing")") }
    }
}

extension ConstructionEndAttackTests {
    // MARK: - What a sweep leaves in the record still reaches what was built from the dead

    /// Makes `container` sweep its dead shared instances: 40 fillers that die at once.
    private func sweepDeadHandlers(of container: DependencyContainer) {
        for id in 1...40 { _ = container[ceFiller: CEArgument(id)]() }
    }

    /// A singleton derived a value from a shared handler that died and was swept: the
    /// record names the dead handlers by their family, so a change of what the handler was
    /// built from still drops the singleton, and the dead handler's argument goes.
    @Test func aChangeReachesWhatWasBuiltFromASweptSharedInstanceOfAFamily() {
        let container = DependencyContainer()
        let first = container.ceDerivedFromHandler()
        #expect(first.tag == "derived from leaf")
        sweepDeadHandlers(of: container)
        let handlerKey = container[ceSharedUser: CEArgument(0)].key
        #expect(container.withStateLock { $0.sharedInstances[handlerKey] == nil }, "the dead handler was not swept")
        #expect(container.withStateLock { $0.dependents[container.ceLeaf.key]?.contains(handlerKey) } == false)
        container.override(\.ceLeaf) { CEObject("leaf 2") }
        #expect(container.ceDerivedFromHandler().tag == "derived from leaf 2")
        // An unrelated change still leaves it.
        let second = container.ceDerivedFromHandler()
        container.override(\.ceOther) { CEObject("other 2") }
        #expect(container.ceDerivedFromHandler() === second)
    }

    /// The same through a scope: the request derived a value from the app's shared handler,
    /// built before the request asked for it, which then died and which the app swept. The
    /// request's record names only the handler's family; the app's names what the handler
    /// was built from. The app's change of the leaf, and its reset, reach the request's copy.
    @Test(arguments: [false, true])
    func anAppChangeReachesWhatARequestBuiltFromASweptSharedInstanceOfAFamily(resets: Bool) {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        app.override(\.ceLeaf) { CEObject("app leaf") }
        do {
            let handler = app[ceSharedUser: CEArgument(0)]()
            #expect(request.ceScopedDerivedFromHandler().tag == "derived from app leaf")
            withExtendedLifetime(handler) {}
        }
        sweepDeadHandlers(of: app)
        if resets {
            app.reset()
            #expect(request.ceScopedDerivedFromHandler().tag == "derived from leaf")
        } else {
            app.override(\.ceLeaf) { CEObject("new leaf") }
            #expect(request.ceScopedDerivedFromHandler().tag == "derived from new leaf")
        }
    }
}
