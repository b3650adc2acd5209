import Foundation
import Testing
@testable import DependencyInjection

// What a construction that fails, with or without an argument, leaves in the record of
// uses of its container and of a scope, and how often a scope asks an app container that
// drops what it hands over. Prefix `frr`.

final class FRRCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
    var count: Int { lock.withLock { value } }
}


/// A gate that async constructions pass once it opens; counts who reached it.
final class FRRAsyncGate: @unchecked Sendable {
    // @unchecked: `passes` is guarded by `lock`; the latch is thread-safe.
    private let lock = NSLock()
    private var passes = 0
    private let opened = AsyncLatch()
    var passed: Int { lock.withLock { passes } }
    func pass() async {
        lock.withLock { passes += 1 }
        await opened.wait()
    }
    func open() { opened.open() }
}

extension DependencyContainer {
    var frrX: Provider<CEObject> { singleton { CEObject("x") } }
    /// Family: argument 0 uses frrX then fails; other arguments use nothing.
    subscript(frrF argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            if argument.id == 0 {
                _ = self.frrX()
                throw CEFailure()
            }
            return CEObject("f \(argument.id)")
        }
    }
    /// Built from frrF(1) only.
    var frrU: AsyncProvider<CEObject> {
        singleton { CEObject("u", inner: try await self[frrF: CEArgument(1)]()) }
    }
    /// No argument: uses frrX then fails while "frr.fail" is set; otherwise uses nothing.
    var frrK: AsyncProvider<CEObject> {
        singleton {
            if (self.getValue(forKey: "frr.fail") as Bool?) == true {
                _ = self.frrX()
                throw CEFailure()
            }
            return CEObject("k")
        }
    }
    /// Scoped family that uses frrX then fails.
    subscript(frrScopedFailing argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            _ = self.frrX()
            await Task.yield()
            if argument.id >= 0 { throw CEFailure() }
            return CEObject("never")
        }
    }
    /// App-wide family that uses frrX, and fails when frrX is a scope's.
    subscript(frrFailsWithScopeX argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            let x = self.frrX()
            await Task.yield()
            if x.tag == "scope x" { throw CEFailure() }
            return CEObject("f \(argument.id)", inner: x)
        }
    }
    /// App-wide shared family built from frrX: a handler per request id.
    subscript(frrSharedUser argument: CEArgument) -> Provider<CEObject> {
        shared(argument) { CEObject("user \(argument.id)", inner: self.frrX()) }
    }
    /// App-wide: fails when built from the app's X, succeeds from a scope's.
    var frrFailsWithAppX: AsyncProvider<CEObject> {
        singleton {
            let x = self.frrX()
            await Task.yield()
            if x.tag == "x" { throw CEFailure() }
            return CEObject("k", inner: x)
        }
    }
    /// App-wide: built from frrFailsWithAppX, or from nothing when it fails.
    var frrOuter: AsyncProvider<CEObject> {
        singleton { CEObject("outer", inner: try? await self.frrFailsWithAppX()) }
    }
    /// App-wide family that uses frrX, passes the gate under "frr.familyGate", if any, and
    /// fails when frrX is the app's.
    subscript(frrGatedFailsWithAppX argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            let x = self.frrX()
            if let gate: FRRAsyncGate = self.getValue(forKey: "frr.familyGate") { await gate.pass() }
            if x.tag == "x" { throw CEFailure() }
            return CEObject("f \(argument.id)", inner: x)
        }
    }
    /// App-wide: passes the gate under "frr.gate", if any, then fails when built from the
    /// app's X.
    var frrGatedFailsWithAppX: AsyncProvider<CEObject> {
        singleton {
            if let gate: FRRAsyncGate = self.getValue(forKey: "frr.gate") { await gate.pass() }
            let x = self.frrX()
            if x.tag == "x" { throw CEFailure() }
            return CEObject("k", inner: x)
        }
    }
    /// App-wide family that uses frrX then fails.
    subscript(frrAppFailing argument: CEArgument) -> AsyncProvider<CEObject> {
        singleton(argument) {
            _ = self.frrX()
            await Task.yield()
            if argument.id >= 0 { throw CEFailure() }
            return CEObject("never")
        }
    }
    var frrLeaf: Provider<CEObject> { singleton { CEObject("leaf") } }
    var frrApp: Provider<CEObject> { singleton { CEObject("app", inner: self.frrLeaf()) } }
}

@Suite struct FailedConstructionRecordTests {
    /// F(0) fails after using X; F(1) (no X) feeds U. Override X: U and F(1) must stay.
    @Test func markerDoesNotDropWhatALiveArgumentFed() async throws {
        let c = DependencyContainer()
        let f1 = try await c[frrF: CEArgument(1)]()
        let u = try await c.frrU()
        await #expect(throws: CEFailure.self) { _ = try await c[frrF: CEArgument(0)]() }
        c.override(\.frrX) { CEObject("x2") }
        #expect(try await c[frrF: CEArgument(1)]() === f1, "F(1) dropped")
        #expect(try await c.frrU() === u, "U, built from live F(1) only, dropped by override of X")
    }

    /// Argument-less K fails after using X, then is built without X. Override X must keep K.
    @Test func failedNoArgumentRecordIsNotInherited() async throws {
        let c = DependencyContainer()
        c.setValue(true, forKey: "frr.fail")
        await #expect(throws: CEFailure.self) { _ = try await c.frrK() }
        c.setValue(false, forKey: "frr.fail")
        let k = try await c.frrK()
        c.override(\.frrX) { CEObject("x2") }
        #expect(try await c.frrK() === k, "K, built without X, dropped by an override of X")
    }

    /// Same, through a scope overriding X: it must share the app's K.
    @Test func scopeSharesSingletonWhoseFailedPredecessorUsedX() async throws {
        let app = DependencyContainer()
        app.setValue(true, forKey: "frr.fail")
        await #expect(throws: CEFailure.self) { _ = try await app.frrK() }
        app.setValue(false, forKey: "frr.fail")
        let k = try await app.frrK()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        #expect(try await scope.frrK() === k, "scope built its own copy of app-wide K")
    }

    /// Scope: scoped family failing with distinct arguments; nothing per argument stays.
    @Test func scopedFailuresDoNotPileUp() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        _ = scope.frrX()
        let watch = CEWatch()
        for id in 0..<200 {
            let a = CEArgument(id)
            watch.watch(a)
            _ = try? await scope[frrScopedFailing: a]()
        }
        let users = scope.withStateLock { $0.dependents[scope.frrX.key]?.count ?? 0 }
        let aUsers = app.withStateLock { $0.dependents[app.frrX.key]?.count ?? 0 }
        #expect(users <= 1 && aUsers <= 1, "scope/app record keeps \(users)/\(aUsers)")
        // The task that ran the last construction lets go of its argument as it ends.
        #expect(await finishesWithoutHangingOffThePool { while watch.alive > 0 { sched_yield() } },
                "scope keeps \(watch.alive) arguments")
    }

    /// App-wide family failing, resolved through a scope that overrides X: the scope
    /// builds its own; nothing per argument may stay (learnedOwn, record, arguments).
    @Test func appWideFailuresThroughOverridingScopeDoNotPileUp() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let watch = CEWatch()
        for id in 0..<200 {
            let a = CEArgument(id)
            watch.watch(a)
            _ = try? await scope[frrAppFailing: a]()
        }
        let learned = scope.withStateLock { $0.learnedOwn.count }
        let sUsers = scope.withStateLock { $0.dependents[scope.frrX.key]?.count ?? 0 }
        let aUsers = app.withStateLock { $0.dependents[app.frrX.key]?.count ?? 0 }
        #expect(sUsers <= 1 && aUsers <= 1, "records keep \(sUsers)/\(aUsers)")
        // What a scope learned to build itself from a construction that failed goes with it.
        #expect(learned == 0, "scope learnedOwn keeps \(learned) keys")
        // The task that ran the last construction lets go of its argument as it ends.
        #expect(await finishesWithoutHangingOffThePool { while watch.alive > 0 { sched_yield() } },
                "\(watch.alive) arguments kept")
    }

    /// App-wide family built by the app container from its own X, and failing when the
    /// scope builds its own from the scope's X: the scope forgets what it learned from its
    /// failures, and still never serves the app's instance, built from the app's X.
    @Test func ownFailuresOfAScopeLeaveNothingLearnedAndServeNothingOfTheApps() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let arguments = (0..<200).map { CEArgument($0) }
        for argument in arguments {
            await #expect(throws: CEFailure.self) { _ = try await scope[frrFailsWithScopeX: argument]() }
        }
        let learned = scope.withStateLock { $0.learnedOwn.count }
        #expect(learned == 0, "scope learnedOwn keeps \(learned) keys")
        // The app container kept its own instances, built from its own X: the scope, having
        // forgotten, learns again from the app's record, and builds (and fails) again.
        for argument in arguments.prefix(20) {
            #expect(app.instanceIfBuilt(\.[frrFailsWithScopeX: argument]) != nil)
            await #expect(throws: CEFailure.self) { _ = try await scope[frrFailsWithScopeX: argument]() }
        }
    }

    /// A shared family built from what a scope overrides: the scope builds its own
    /// instance of each argument, and learns so; the instances die at once, and the sweep
    /// of dead shared instances takes what the scope learned of them, with the arguments.
    @Test func aScopeForgetsWhatItLearnedOfDeadSharedInstances() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let watch = CEWatch()
        for id in 0..<200 {
            let argument = CEArgument(id)
            watch.watch(argument)
            #expect(scope[frrSharedUser: argument]().inner?.tag == "scope x")
        }
        let learned = scope.withStateLock { $0.learnedOwn.count }
        // The sweep runs once the dead instances outnumber the live ones twice, and at
        // least sixteen: what is left of 200 is what came after the last sweep.
        #expect(learned <= 17, "scope learnedOwn keeps \(learned) keys")
        #expect(watch.alive <= 17, "\(watch.alive) arguments kept")
    }

    /// The app container's construction, handed over by a scope that overrides X, fails
    /// from the app's X; the scope's own, from its X, succeeds. The scope learned, as the
    /// app's construction ran, that it is built from what it overrides: it builds its own,
    /// at once and every time, and never throws the app's failure.
    @Test(arguments: ["scope", "scope of a scope"])
    func aScopeBuildsItsOwnWhenTheAppsConstructionFailsFromTheAppsValues(kind: String) async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let resolving = kind == "scope" ? scope : DependencyContainer(scopeOf: scope)
        for _ in 0..<3 {
            #expect(try await resolving.frrFailsWithAppX().inner?.tag == "scope x")
        }
        await #expect(throws: CEFailure.self) { _ = try await app.frrFailsWithAppX() }
    }

    /// The same, one level down: the app-wide `frrOuter` catches the failure of what it
    /// uses. The scope's own `frrOuter` is built from the scope's own instance of it, not
    /// from the app's failure; the app's, from its failure.
    @Test func aScopesOwnInstanceIsNotBuiltFromTheAppsFailureOfWhatItUses() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let outer = try await scope.frrOuter()
        #expect(outer.inner?.inner?.tag == "scope x")
        let appOuter = try await app.frrOuter()
        #expect(appOuter !== outer)
        #expect(appOuter.inner == nil)
    }

    /// Tasks of a scope that overrides X resolve 300 arguments of an app-wide family; the
    /// app's constructions, which taught the scope that they use X, wait at a gate, and
    /// the tasks are cancelled. The constructions then fail: the scope, which built nothing
    /// of its own, keeps no learned key and no argument.
    @Test func cancelledWaitersOfFailingAppConstructionsLeaveNothingLearned() async {
        let count = 300
        let app = DependencyContainer()
        let gate = FRRAsyncGate()
        app.setValue(gate, forKey: "frr.familyGate")
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let watch = CEWatch()
        var tasks: [Task<CEObject, any Error>] = []
        for id in 0..<count {
            let argument = CEArgument(id)
            watch.watch(argument)
            tasks.append(Task { try await scope[frrGatedFailsWithAppX: argument]() })
        }
        while gate.passed < count { await Task.yield() }
        for task in tasks { task.cancel() }
        var cancelled = 0
        for task in tasks {
            if case .failure(let error) = await task.result, error is CancellationError { cancelled += 1 }
        }
        tasks = []
        gate.open()
        while app.withStateLock({ !$0.building.isEmpty }) { await Task.yield() }
        #expect(cancelled == count)
        #expect(scope.withStateLock { $0.learnedOwn.count } == 0)
        // The tasks that ran the constructions let go of their arguments as they end, after
        // the constructions leave the container's list: a kept argument never goes.
        #expect(await finishesWithoutHangingOffThePool { while watch.alive > 0 { sched_yield() } })
    }

    /// A scope that overrides X waits for the app container's construction that a sibling
    /// scope (or the app itself) started, and which fails from the app's X. The scope
    /// learned nothing from a construction it did not hand over: it throws the app's
    /// failure (a known issue); on its own, next, it builds its own.
    @Test(arguments: ["sibling scope", "app"])
    func aScopeJoiningAnAppConstructionThatFailsThrowsTheAppsFailure(starter: String) async throws {
        let app = DependencyContainer()
        let gate = FRRAsyncGate()
        app.setValue(gate, forKey: "frr.gate")
        let sibling = DependencyContainer(scopeOf: app)
        sibling.override(\.frrX) { CEObject("scope x") }
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let first = starter == "app" ? app : sibling
        let started = Task { try? await first.frrGatedFailsWithAppX() }
        while gate.passed < 1 { await Task.yield() }
        let joining = Task { try await scope.frrGatedFailsWithAppX() }
        let key = app.frrGatedFailsWithAppX.key
        while app.withStateLock({ $0.building.construction(of: key)?.waitRoom().waitedSoFar ?? 0 }) < 2 {
            await Task.yield()
        }
        app.removeValue(forKey: "frr.gate")
        gate.open()
        _ = await started.value
        let joined = await joining.result
        withKnownIssue("a scope that joined a construction it did not hand over throws the app's failure") {
            let value = try joined.get()
            #expect(value.inner?.tag == "scope x")
        }
        #expect(try await scope.frrGatedFailsWithAppX().inner?.tag == "scope x")
    }

    /// reset of the failing family, then override X: nothing else dropped, no crash.
    @Test func familyOverrideAfterMarkerThenOverrideX() async throws {
        let c = DependencyContainer()
        await #expect(throws: CEFailure.self) { _ = try await c[frrF: CEArgument(0)]() }
        c.override(\.frrX) { CEObject("x2") }
        let u = try await c.frrU()
        c.override(\.frrX) { CEObject("x3") }
        #expect(try await c.frrU() === u, "U dropped by a second override of X")
    }

    /// A tracer that resets the app after every build: a scope's resolution of an
    /// app-wide singleton it does not override must still terminate.
    @Test func scopeResolutionTerminatesUnderResettingTracer() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.frrX) { CEObject("scope x") }
        let resets = FRRCounter()
        app.tracer = ResolutionTracer { _ in
            if resets.next() < 10_000 { app.reset() }
        }
        let ok = await finishesWithoutHangingOffThePool {
            let got = scope.frrApp()
            _ = got
        }
        app.tracer = nil
        #expect(ok, "hung")
        #expect(resets.count == DependencyContainer.handoversPerResolution, "the scope asked \(resets.count) times")
    }
}
