import Foundation
import Testing
@testable import DependencyInjection

// Attacks on the bookkeeping of constructions in flight: a construction that an override,
// a reset or a family override drops while it runs is handed out but not kept, and later
// resolutions build anew instead of waiting for it; shutdown keeps what is being built;
// shared instances; scopes whose app container is reset mid-build; many values released
// at once whose deinits use the container.
//
// Each scenario runs on a thread of its own behind the hang guard (a resolution that waits
// for a construction held at a gate hangs), and records what it saw in `Findings`, which
// the test checks on its own task.

/// What a construction built: from what, with which inner part, and how often it was closed.
final class IFBPart: Sendable {
    let source: String
    let inner: IFBPart?
    let argument: Int
    let closes = Counter()
    init(_ source: String, inner: IFBPart? = nil, argument: Int = 0) {
        (self.source, self.inner, self.argument) = (source, inner, argument)
    }
    func close() { closes.increment() }
}

/// Gates handed to constructions in the order they reach them: the first construction waits
/// at the first gate, the second at the second; constructions after the last go through.
final class IFBGates: @unchecked Sendable {
    // @unchecked: `next` is only touched while holding `lock`.
    private let lock = NSLock()
    private var next = 0
    private let gates: [ConstructionGate]
    init(_ count: Int) { gates = (0..<count).map { _ in ConstructionGate() } }

    /// Waits at the next gate, if any is left.
    func pass() {
        let gate: ConstructionGate? = lock.withLock {
            defer { next += 1 }
            return next < gates.count ? gates[next] : nil
        }
        gate?.enterAndWait()
    }

    subscript(index: Int) -> ConstructionGate { gates[index] }
}

/// A one-shot gate for an async construction.
final class IFBAsyncGate: Sendable {
    let entered = AsyncLatch()
    let opened = AsyncLatch()
    init() {}
    func pass() async {
        entered.open()
        await opened.wait()
    }
}

/// An instance whose deinit resolves from and writes to the container that keeps it: it
/// deadlocks if the container releases it while holding its lock.
final class IFBReleaseWatcher: Sendable {
    unowned let container: DependencyContainer
    let releases: Counter
    init(container: DependencyContainer, releases: Counter) { (self.container, self.releases) = (container, releases) }
    deinit {
        _ = container.ifbSource()
        _ = container.ifbPlainPart()
        container.setValue(true, forKey: "ifb.touchedByDeinit")
        releases.increment()
    }
}

/// What a scenario saw, checked by the test once the scenario has ended.
final class Findings: @unchecked Sendable {
    // @unchecked: `failures` and `parts` are only touched while holding `lock`.
    private let lock = NSLock()
    private var failures: [String] = []
    private var parts: [String: IFBPart] = [:]

    func check(_ condition: Bool, _ what: String) {
        if !condition { lock.withLock { failures.append(what) } }
    }

    /// Keeps `part` under `name`, for the test to look at.
    func keep(_ part: IFBPart, as name: String) { lock.withLock { parts[name] = part } }
    subscript(name: String) -> IFBPart? { lock.withLock { parts[name] } }

    var problems: [String] { lock.withLock { failures } }
}

/// Starts `resolve` on a thread of its own; the function it returns waits for it and
/// returns what it resolved.
func onThread<Value: Sendable>(_ resolve: @escaping @Sendable () -> Value) -> () -> Value {
    let result = Collected<Value>()
    let finished = DispatchSemaphore(value: 0)
    Thread {
        result.append(resolve())
        finished.signal()
    }.start()
    // The thread's closure holds `result` until the thread has gone, some time after it
    // signals: the value is taken out of it, so that only the caller holds it from then on
    // (a test that checks an instance is released must not depend on when a thread ends).
    let kept = Collected<Value>()
    return {
        if let value = kept.values.first { return value }
        finished.wait()
        let value = result.takeAll()[0]
        kept.append(value)
        return value
    }
}

extension DependencyContainer {
    /// What `ifbGated` and `ifbShared` are built from.
    var ifbSource: Provider<String> { singleton { "live" } }
    var ifbPlainPart: Provider<IFBPart> { factory { IFBPart("plain") } }

    /// Stores `count` gates for the constructions that reach ``ifbPassGate()``.
    func ifbInstallGates(_ count: Int) -> IFBGates {
        let gates = IFBGates(count)
        setValue(gates, forKey: "ifb.gates")
        return gates
    }

    /// Passes the next of the gates stored under "ifb.gates", if any.
    func ifbPassGate() {
        (getValue(forKey: "ifb.gates") as IFBGates?)?.pass()
    }

    /// Built from `ifbSource`, then held at the next gate.
    var ifbGated: Provider<IFBPart> {
        singleton {
            self.count("ifbGated")
            let source = self.ifbSource()
            self.ifbPassGate()
            return IFBPart(source)
        }.onShutdown { $0.close() }
    }

    /// Held at the next gate.
    var ifbInner: Provider<IFBPart> {
        singleton {
            self.ifbPassGate()
            return IFBPart("live")
        }
    }
    var ifbOuter: Provider<IFBPart> {
        singleton {
            self.count("ifbOuter")
            return IFBPart("outer", inner: self.ifbInner())
        }
    }

    /// A weakly held instance built from `ifbSource`, then held at the next gate.
    var ifbShared: Provider<IFBPart> {
        shared {
            self.count("ifbShared")
            let source = self.ifbSource()
            self.ifbPassGate()
            return IFBPart(source)
        }
    }

    var ifbFamily: ProviderFamily<Int, IFBPart> {
        singleton { (argument: Int) in
            self.ifbPassGate()
            return IFBPart("live", argument: argument)
        }
    }
    var ifbStressFamily: ProviderFamily<Int, IFBPart> {
        singleton { (argument: Int) in IFBPart("live", argument: argument) }
    }

    var ifbWatchedFamily: ProviderFamily<Int, IFBReleaseWatcher> {
        singleton { (_: Int) in IFBReleaseWatcher(container: self, releases: self.getValue(forKey: "ifb.releases")!) }
    }

    /// An app-wide singleton held at the next gate, and a scoped instance built from it.
    var ifbAppGated: Provider<IFBPart> {
        singleton {
            self.count("ifbAppGated")
            self.ifbPassGate()
            return IFBPart("app")
        }
    }
    var ifbScopedUser: Provider<IFBPart> {
        scoped { IFBPart("scoped", inner: self.ifbAppGated()) }
    }

    /// An app-wide singleton that reads a stored value through `self`, held at the next gate.
    var ifbAppWho: Provider<IFBPart> {
        singleton {
            self.count("ifbAppWho")
            self.ifbPassGate()
            return IFBPart(self.getValue(forKey: "ifb.who") ?? "none")
        }
    }

    var ifbAsyncGated: AsyncProvider<IFBPart> {
        singleton {
            if let gate: IFBAsyncGate = self.getValue(forKey: "ifb.asyncGate") { await gate.pass() }
            return IFBPart("live")
        }
    }
}

@Suite struct InFlightBookkeepingAttackTests {
    /// Runs `scenario` on a thread of its own behind the hang guard and checks what it found.
    private func run(_ scenario: @escaping @Sendable (Findings) -> Void) async {
        let findings = Findings()
        #expect(await finishesWithoutHangingOffThePool { scenario(findings) }, "a resolution waited for a dropped construction")
        #expect(findings.problems == [])
    }

    // MARK: - Dropped constructions

    @Test func aSingletonDroppedByItsOverrideWhileBuiltIsBuiltAnewNotAwaitedNorKept() async {
        await run { findings in
            let container = DependencyContainer()
            let gates = container.ifbInstallGates(1)
            let held = onThread { container.ifbGated() }
            gates[0].entered.wait()
            container.override(\.ifbGated) { IFBPart("stub") }
            let stub = container.ifbGated()  // hangs if it waits for the held construction
            gates[0].open()
            let handedOut = held()
            findings.check(stub.source == "stub", "built from the override")
            findings.check(handedOut.source == "live", "the construction in flight hands out what it built")
            findings.check(container.ifbGated() === stub, "the dropped construction's instance replaced the override's")
        }
    }

    /// Two changes drop two constructions of the same key, on two threads, while both are
    /// held; a third builds at once. Only the third is kept, and only it is torn down.
    @Test func constructionsOfOneKeyDroppedByAnOverrideThenAResetLeaveOnlyTheLastKept() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("ifbGated")
            let gates = container.ifbInstallGates(2)
            let first = onThread { container.ifbGated() }
            gates[0].entered.wait()
            container.override(\.ifbSource) { "second" }
            let second = onThread { container.ifbGated() }
            gates[1].entered.wait()
            container.reset()
            let third = container.ifbGated()  // hangs if it waits for either held construction
            gates[1].open()
            let secondPart = second()
            gates[0].open()
            let firstPart = first()
            findings.check(firstPart.source == "live" && secondPart.source == "second", "each built from its own time's source")
            findings.check(third.source == "live", "reset removed the override of the source")
            findings.check(container.ifbGated() === third, "a dropped construction's instance was kept")
            findings.check(builds.count == 3, "\(builds.count) constructions")
            container.shutdown()
            findings.check(third.closes.count == 1, "the kept instance is torn down")
            findings.check(firstPart.closes.count + secondPart.closes.count == 0, "a dropped instance was torn down")
        }
    }

    /// `ifbOuter` resolves `ifbInner`, which is held; an override of the inner one drops both
    /// constructions, so the next resolution of the outer one builds both anew.
    @Test func anInnerSingletonOverriddenWhileBuiltForAnOuterOneDropsBothConstructions() async {
        await run { findings in
            let container = DependencyContainer()
            let outers = container.counter("ifbOuter")
            let gates = container.ifbInstallGates(1)
            let held = onThread { container.ifbOuter() }
            gates[0].entered.wait()
            container.override(\.ifbInner) { IFBPart("stub") }
            let outer = container.ifbOuter()  // hangs if it waits for the held outer construction
            gates[0].open()
            let handedOut = held()
            findings.check(handedOut.inner?.source == "live", "the held construction finished with what it resolved")
            findings.check(outer.inner?.source == "stub", "the outer singleton was built from the override")
            findings.check(container.ifbOuter() === outer, "the dropped outer construction's instance was kept")
            findings.check(container.ifbInner() === outer.inner, "the kept inner singleton is the override's")
            findings.check(outers.count == 2, "\(outers.count) outer constructions")
        }
    }

    /// Three arguments of a family are in flight (held) and one is built when the family is
    /// overridden: all four resolve to the override at once, and none of the held ones is kept.
    @Test func argumentsInFlightDuringAFamilyOverrideAreAllBuiltAnewAndNoneIsKept() async {
        await run { findings in
            let container = DependencyContainer()
            let built = container.ifbFamily(0)
            let gates = container.ifbInstallGates(3)
            let held = (1...3).map { argument in onThread { container.ifbFamily(argument) } }
            for index in 0..<3 { gates[index].entered.wait() }
            container.override(\.ifbFamily) { argument in IFBPart("stub", argument: argument) }
            let stubs = (0...3).map { container.ifbFamily($0) }  // hangs if one waits for a held construction
            for index in 0..<3 { gates[index].open() }
            let handedOut = held.map { $0() }
            findings.check(built.source == "live", "built before the override")
            findings.check(stubs.map(\.source) == ["stub", "stub", "stub", "stub"], "\(stubs.map(\.source))")
            findings.check(stubs.map(\.argument) == [0, 1, 2, 3], "\(stubs.map(\.argument))")
            findings.check(handedOut.map(\.source) == ["live", "live", "live"], "\(handedOut.map(\.source))")
            findings.check(handedOut.map(\.argument) == [1, 2, 3], "\(handedOut.map(\.argument))")
            findings.check((0...3).allSatisfy { container.ifbFamily($0) === stubs[$0] }, "a held construction was kept")
        }
    }

    /// A shared instance that died is built again; a construction of it dropped while held is
    /// not kept over the one built after, nor served once that one is gone.
    @Test func aSharedInstanceDroppedWhileBuiltIsNeitherKeptOverTheNextNorServedLater() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("ifbShared")
            weak var dead: IFBPart?
            do {
                let first = container.ifbShared()
                dead = first
            }
            findings.check(dead == nil, "nothing else holds the first instance")
            let gates = container.ifbInstallGates(1)
            let held = onThread { container.ifbShared() }
            gates[0].entered.wait()
            container.override(\.ifbSource) { "second" }
            var after: IFBPart? = container.ifbShared()  // hangs if it waits for the held construction
            gates[0].open()
            let handedOut = held()  // held here, so it stays alive
            findings.check(handedOut.source == "live", "the held construction hands out what it built")
            findings.check(after?.source == "second", "built from the override")
            findings.check(container.ifbShared() === after, "the dropped construction's instance replaced the live one")
            weak var gone: IFBPart?
            gone = after
            after = nil
            findings.check(gone == nil, "nothing else holds the instance built after the override")
            let rebuilt = container.ifbShared()
            findings.check(rebuilt !== handedOut, "the dropped construction's instance was served")
            findings.check(rebuilt.source == "second", "rebuilt from the override")
            findings.check(builds.count == 4, "\(builds.count) constructions")
            withExtendedLifetime(handedOut) {}
        }
    }

    // MARK: - Shutdown

    /// Shutdown keeps a construction in flight: a resolution meanwhile waits for it (one
    /// construction), it is kept when done, and a later shutdown tears it down.
    @Test func aSingletonBuiltWhenShutdownStartsIsTheOneEveryoneGetsAndALaterShutdownTearsItDown() async {
        await run { findings in
            let container = DependencyContainer()
            let builds = container.counter("ifbGated")
            let gates = container.ifbInstallGates(1)
            let first = onThread { container.ifbGated() }
            gates[0].entered.wait()
            container.shutdown()
            let second = onThread { container.ifbGated() }
            gates[0].open()
            let (firstPart, secondPart) = (first(), second())
            findings.check(firstPart === secondPart, "two instances of one singleton")
            findings.check(builds.count == 1, "\(builds.count) constructions")
            findings.check(container.instanceIfBuilt(\.ifbGated) === firstPart, "not kept after the shutdown")
            findings.check(firstPart.closes.count == 0, "torn down by the shutdown it outlived")
            container.shutdown()
            findings.check(firstPart.closes.count == 1, "the later shutdown did not tear it down")
        }
    }

    /// A construction an override dropped before shutdown is not kept by shutdown either, so
    /// no later shutdown tears it down.
    @Test func aConstructionDroppedBeforeShutdownIsNeitherKeptNorTornDown() async {
        await run { findings in
            let container = DependencyContainer()
            let gates = container.ifbInstallGates(1)
            let held = onThread { container.ifbGated() }
            gates[0].entered.wait()
            container.override(\.ifbSource) { "second" }
            container.shutdown()
            gates[0].open()
            let handedOut = held()
            findings.check(container.instanceIfBuilt(\.ifbGated) == nil, "the dropped construction's instance was kept")
            container.shutdown()
            findings.check(handedOut.closes.count == 0, "the dropped construction's instance was torn down")
            findings.check(container.ifbGated().source == "second", "built anew from the override")
        }
    }

    // MARK: - Scopes

    /// A scope builds its own instance from an app-wide singleton held in the app container;
    /// the app container is reset meanwhile. The scope's construction is dropped too: the
    /// next resolution in the scope builds anew, from the app's new singleton, at once.
    @Test func aScopesConstructionFromAnAppSingletonInFlightDuringAnAppResetIsBuiltAnew() async {
        await run { findings in
            let app = DependencyContainer()
            let appBuilds = app.counter("ifbAppGated")
            let scope = DependencyContainer(scopeOf: app)
            let gates = app.ifbInstallGates(1)
            let held = onThread { scope.ifbScopedUser() }
            gates[0].entered.wait()
            app.reset()
            let after = scope.ifbScopedUser()  // hangs if it waits for the held construction
            gates[0].open()
            let handedOut = held()
            findings.check(handedOut.inner !== after.inner, "the scope's new instance has the reset app singleton")
            findings.check(after.inner === app.ifbAppGated(), "the scope's new instance has the app's new singleton")
            findings.check(scope.ifbScopedUser() === after, "the scope kept the instance built from the reset singleton")
            findings.check(app.ifbAppGated() !== handedOut.inner, "the app kept the singleton being built at reset")
            findings.check(appBuilds.count == 2, "\(appBuilds.count) app constructions")
            withExtendedLifetime(scope) {}
        }
    }

    /// A scope that overrides something else asks for an app-wide singleton, which the app
    /// container builds; the app container is reset meanwhile. The singleton is still the
    /// app's: never built by the scope (which would read the scope's stored values), and one
    /// instance for every resolution in the scope afterwards.
    @Test func anAppSingletonAScopeAskedForWhileTheAppIsResetIsNeverBuiltByTheScope() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let builds = app.counter("ifbAppWho")
            let gates = app.ifbInstallGates(1)
            let held = onThread { scope.ifbAppWho() }
            gates[0].entered.wait()
            app.reset()
            gates[0].open()
            let handedOut = held()
            let later = scope.ifbAppWho()
            findings.check(handedOut.source == "app", "the scope built the app-wide singleton, from its own values")
            findings.check(later.source == "app", "built from the scope's values")
            findings.check(later === app.ifbAppWho(), "the scope does not share the app's singleton")
            findings.check(scope.ifbAppWho() === later, "two instances of one singleton in the scope")
            findings.check(builds.count == 2, "\(builds.count) constructions, for one reset")
            withExtendedLifetime(scope) {}
        }
    }

    /// The same, with the app container overriding the singleton while it builds it for the
    /// scope: the scope shares the app's override, which the app keeps, instead of keeping
    /// its own instance of it.
    @Test func anAppSingletonTheAppOverridesWhileBuildingItForAScopeIsTheAppsOverrideInTheScope() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let gates = app.ifbInstallGates(1)
            let held = onThread { scope.ifbAppWho() }
            gates[0].entered.wait()
            app.override(\.ifbAppWho) { IFBPart("app's override") }
            gates[0].open()
            let handedOut = held()
            findings.check(handedOut.source == "app's override", "handed out \(handedOut.source)")
            findings.check(handedOut === app.ifbAppWho(), "the scope kept its own instance of the app's override")
            findings.check(scope.ifbAppWho() === handedOut, "two instances of one singleton in the scope")
            withExtendedLifetime(scope) {}
        }
    }

    /// The app container's tracer shuts the app container down as soon as it hears that the
    /// singleton a scope asked for was built: between the handover and the scope's look at
    /// what the app keeps. The scope asks again and shares the app's new singleton rather
    /// than building one from its own values.
    @Test func anAppSingletonShutDownRightAfterItsHandoverToAScopeIsAskedForAgain() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let shutDowns = Counter()
            app.tracer = ResolutionTracer { [weak app] events in
                guard shutDowns.count == 0, events.contains(where: { $0.outcome == .built }) else { return }
                shutDowns.increment()
                app?.shutdown()
            }
            let handedOut = scope.ifbAppWho()
            app.tracer = nil
            findings.check(shutDowns.count == 1, "\(shutDowns.count) shutdowns")
            findings.check(handedOut.source == "app", "the scope built the app-wide singleton, from its own values")
            findings.check(handedOut === app.ifbAppWho(), "the scope does not share the app's singleton")
            withExtendedLifetime(scope) {}
        }
    }

    /// A tracer shuts the app container down after every build, so the app container drops
    /// every instance it hands a scope before the scope can look at it. The scope stops
    /// asking after a few rounds, instead of hanging, and hands out the app's last instance
    /// rather than building one from its own values.
    @Test func aScopeWhoseAppContainerDropsEveryHandoverStopsAskingAgain() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let builds = app.counter("ifbAppWho")
            app.tracer = ResolutionTracer { [weak app] events in
                if events.contains(where: { $0.outcome == .built }) { app?.shutdown() }
            }
            let handedOut = scope.ifbAppWho()
            app.tracer = nil
            let asks = DependencyContainer.handoversPerResolution
            findings.check(builds.count == asks, "\(builds.count) constructions for \(asks) asks")
            findings.check(handedOut.source == "app", "handed out \(handedOut.source)")
            withExtendedLifetime(scope) {}
        }
    }

    /// The async road: a scope that overrides something else awaits an app-wide singleton
    /// the app container is building; the app container is reset meanwhile. The scope ends
    /// up with the app's new singleton, not one of its own.
    @Test func anAsyncAppSingletonAScopeAwaitsWhileTheAppIsResetIsNeverBuiltByTheScope() async throws {
        let app = DependencyContainer()
        let gate = IFBAsyncGate()
        app.setValue(gate, forKey: "ifb.asyncGate")
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.ifbPlainPart) { IFBPart("scope's") }
        let held = Task { try await scope.ifbAsyncGated() }
        await gate.entered.wait()
        app.reset()
        app.removeValue(forKey: "ifb.asyncGate")
        gate.opened.open()
        let handedOut = try await held.value
        let appInstance = try await app.ifbAsyncGated()
        #expect(handedOut === appInstance)
        #expect(try await scope.ifbAsyncGated() === appInstance)
    }

    // MARK: - Async

    @Test func anAsyncSingletonDroppedByAnOverrideWhileBuiltIsBuiltAnewNotAwaitedNorKept() async throws {
        let container = DependencyContainer()
        let gate = IFBAsyncGate()
        container.setValue(gate, forKey: "ifb.asyncGate")
        let held = Task { try await container.ifbAsyncGated() }
        await gate.entered.wait()
        container.override(\.ifbAsyncGated) { IFBPart("stub") }
        let stub = Handoff<IFBPart?>()
        #expect(await endsWithoutHanging { stub.put(try? await container.ifbAsyncGated()) })
        gate.opened.open()
        let handedOut = try await held.value
        let built = try #require(await stub.value())
        #expect(built.source == "stub")
        #expect(handedOut.source == "live")
        #expect(try await container.ifbAsyncGated() === built)
    }

    // MARK: - Released after unlocking

    /// An override of a family, and a reset, each release dozens of instances at once (more
    /// than the two the bag keeps inline); each deinit resolves from and writes to the
    /// container, which must not be locked then.
    @Test func deinitsOfManyInstancesReleasedAtOnceMayUseTheContainer() async {
        let count = 40
        let container = DependencyContainer()
        let releases = Counter()
        container.setValue(releases, forKey: "ifb.releases")
        let afterOverride = Collected<Int>()
        let touched = Collected<Bool>()
        // A deinit run under the lock blocks for good, holding it: the container is used only
        // inside the guard.
        #expect(await finishesWithoutHangingOffThePool {
            for argument in 0..<count { _ = container.ifbWatchedFamily(argument) }
            container.override(\.ifbWatchedFamily) { _ in IFBReleaseWatcher(container: container, releases: releases) }
            afterOverride.append(releases.count)
            for argument in 0..<count { _ = container.ifbWatchedFamily(argument) }
            container.reset()
            touched.append(container.getValue(forKey: "ifb.touchedByDeinit") == true)
        })
        #expect(afterOverride.values == [count], "released as the override returns")
        #expect(releases.count == 2 * count)
        #expect(touched.values == [true])
    }

    // MARK: - Under load

    /// Threads resolve hundreds of arguments of a family while one overrides the family again
    /// and again: whatever was in flight at each override, every argument kept at the end
    /// was built by the last override.
    @Test func argumentsBuiltWhileAFamilyIsOverriddenAgainAndAgainEndWithTheLastOverride() async {
        let container = DependencyContainer()
        let (arguments, overrides) = (400, 300)
        let finished = await concurrentlyOffThePool(threads: 6) { thread in
            if thread == 0 {
                for version in 0..<overrides {
                    container.override(\.ifbStressFamily) { argument in IFBPart("v\(version)", argument: argument) }
                    for index in 0..<8 { _ = container.ifbStressFamily((version * 7 + index) % arguments) }
                }
            } else {
                for round in 0..<3 {
                    for index in 0..<arguments { _ = container.ifbStressFamily((index * thread + round) % arguments) }
                }
            }
        }
        // A thread that hung may hold the container's lock.
        #expect(finished)
        guard finished else { return }
        let kept = (0..<arguments).map { container.ifbStressFamily($0) }
        let stale = kept.filter { $0.source != "v\(overrides - 1)" }
        #expect(stale.isEmpty, "\(stale.count) arguments kept from an earlier override: \(stale.prefix(3).map(\.source))")
        #expect(zip(kept, 0..<arguments).allSatisfy { $0.argument == $1 })
        #expect((0..<arguments).allSatisfy { container.ifbStressFamily($0) === kept[$0] })
    }

    /// Threads build a chain of two singletons while one alternates an override of the inner
    /// one with a reset: at the end, the kept outer singleton holds the kept inner one, built
    /// by the last override.
    @Test func aChainBuiltWhileItsInnerSingletonIsOverriddenAndResetEndsConsistent() async {
        let container = DependencyContainer()
        let changes = 300
        let finished = await concurrentlyOffThePool(threads: 6) { thread in
            if thread == 0 {
                for version in 0..<changes {
                    if version % 2 == 0 { container.reset() }
                    container.override(\.ifbInner) { IFBPart("v\(version)") }
                    _ = container.ifbOuter()
                }
            } else {
                for _ in 0..<2_000 { _ = container.ifbOuter() }
            }
        }
        #expect(finished)
        guard finished else { return }
        let outer = container.ifbOuter()
        #expect(outer.inner === container.ifbInner(), "the kept outer singleton holds a dropped inner one")
        #expect(outer.inner?.source == "v\(changes - 1)")
        #expect(container.ifbOuter() === outer)
    }
}
