import Foundation
import Testing
@testable import DependencyInjection

// Attacks on a scope's check, when its own construction of an app-wide registration ends,
// that it still builds its own (`DependencyContainer.complete(_:_:scope:teardown:)`): a
// session or request adding, removing or replacing overrides and decorations while the
// construction runs, sync and async, `shared` and parameterized registrations, scopes three
// deep; the teardown of what is not kept; waiters of a construction that is not kept;
// deinits and tracers that use the containers meanwhile; changes that must not make a
// scope drop what it still builds itself; and all of it under load.
//
// `IFBPart`, the gates, `Findings` and `onThread` come from InFlightBookkeepingAttackTests.swift;
// `HCABeforeClock` and `appSessionAndRequest()` from HandoverCacheAttackTests.swift.

/// What the app-wide registrations under attack build: parts from the clock and from the
/// clock family, and a watcher whose deinit uses a container, when one is stored.
final class KRAPart: Sendable {
    let clock: IFBPart
    let numbered: IFBPart
    let watcher: KRAWatcher?
    let closes = Counter()
    init(clock: IFBPart, numbered: IFBPart, watch: KRAWatch?) {
        (self.clock, self.numbered) = (clock, numbered)
        watcher = watch.map(KRAWatcher.init)
    }
    func close() { closes.increment() }

    /// Whether nothing in it comes from a scope's override or decoration.
    var isFromTheApp: Bool { clock.source == "app clock" && numbered.source == "app clock" }
}

/// An app-wide singleton built from `kraTimed` and `kraUnrelated`.
final class KRAPair: Sendable {
    let timed: KRAPart
    let unrelated: IFBPart
    init(timed: KRAPart, unrelated: IFBPart) { (self.timed, self.unrelated) = (timed, unrelated) }
}

/// The container a `KRAWatcher`'s deinit uses, and how many deinits ran.
final class KRAWatch: @unchecked Sendable {
    // @unchecked: `container` is set once, in `init`; weak loads are atomic.
    weak var container: DependencyContainer?
    let releases = Counter()
    init(_ container: DependencyContainer) { self.container = container }
}

/// Resolves from its watch's container and writes to it in its deinit: it deadlocks if it
/// is released under a container's lock.
final class KRAWatcher: Sendable {
    let watch: KRAWatch
    init(_ watch: KRAWatch) { self.watch = watch }
    deinit {
        if let container = watch.container {
            _ = container.kraClock()
            _ = container.kraTimed()
            container.setValue(true, forKey: "kra.touchedByDeinit")
        }
        watch.releases.increment()
    }
}

extension DependencyContainer {
    var kraClock: Provider<IFBPart> { singleton { IFBPart("app clock") } }
    var kraClocks: ProviderFamily<Int, IFBPart> { singleton { (n: Int) in IFBPart("app clock", argument: n) } }
    var kraUnrelated: Provider<IFBPart> { singleton { IFBPart("app unrelated") } }

    /// App-wide registrations built from the clock and from the clock of their argument (1
    /// for those without one), after the hook and the gate stored in the container building
    /// them, if any.
    var kraTimed: Provider<KRAPart> { singleton { self.kraBuild("kraTimed", 1) }.onShutdown { $0.close() } }
    var kraSharedTimed: Provider<KRAPart> { shared { self.kraBuild("kraSharedTimed", 1) } }
    var kraTimedFamily: ProviderFamily<Int, KRAPart> { singleton { (n: Int) in self.kraBuild("kraTimedFamily", n) } }
    /// Built from `kraTimed` and `kraUnrelated`.
    var kraPair: Provider<KRAPair> {
        singleton { KRAPair(timed: self.kraTimed(), unrelated: self.kraUnrelated()) }
    }

    var kraAsyncTimed: AsyncProvider<KRAPart> {
        singleton { await self.kraBuildAsync("kraAsyncTimed") }.onShutdown { $0.close() }
    }
    var kraAsyncSharedTimed: AsyncProvider<KRAPart> { shared { await self.kraBuildAsync("kraAsyncSharedTimed") } }

    func kraBuild(_ name: String, _ n: Int) -> KRAPart {
        count(name)
        (getValue(forKey: "kra.beforeClock") as HCABeforeClock?)?.run()
        ifbPassGate()
        return KRAPart(clock: kraClock(), numbered: kraClocks(n), watch: getValue(forKey: "kra.watch"))
    }

    func kraBuildAsync(_ name: String) async -> KRAPart {
        count(name)
        (getValue(forKey: "kra.beforeClock") as HCABeforeClock?)?.run()
        if let gate: IFBAsyncGate = getValue(forKey: "kra.asyncGate") { await gate.pass() }
        return KRAPart(clock: kraClock(), numbered: kraClocks(1), watch: getValue(forKey: "kra.watch"))
    }
}

/// An argument whose `==` first runs the action armed in ``armed``, once. A scope's check
/// that it still builds its own instance compares the key of the instance with what it
/// overrides after it read `learnedOwnForgotten` and before it keeps the instance: the one
/// place user code runs in that window, it stands for another thread acting at that moment.
struct KRAHookArgument: Hashable, Sendable {
    let n: Int
    static let armed = _Locked<HCABeforeClock?>(nil)
    static func == (lhs: Self, rhs: Self) -> Bool {
        armed.withLock { armed in
            defer { armed = nil }
            return armed
        }?.run()
        return lhs.n == rhs.n
    }
    // One hash for every `n`: the container compares arguments by value only when their
    // hashes agree, and the armed action stands for the first comparison, whatever it is.
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

extension DependencyContainer {
    /// Built as `kraTimed` is; at the end of the construction, arms the action stored in
    /// the container building it under "kra.armAtEnd", if any.
    var kraHookedFamily: ProviderFamily<KRAHookArgument, KRAPart> {
        singleton { (argument: KRAHookArgument) in
            let part = self.kraBuild("kraHookedFamily", argument.n)
            if let action: HCABeforeClock = self.getValue(forKey: "kra.armAtEnd") {
                KRAHookArgument.armed.withLock { $0 = action }
            }
            return part
        }
    }
}

/// What a scope installs that changes the app-wide registrations under attack.
enum KRAInstall: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case override, decoration, familyOverride, argumentOverride
    var testDescription: String { rawValue }

    func install(in container: DependencyContainer, source: String = "scope clock") {
        switch self {
        case .override: container.override(\.kraClock) { IFBPart(source) }
        case .decoration: container.decorate(\.kraClock) { IFBPart(source, inner: $0) }
        case .familyOverride: container.override(\.kraClocks) { IFBPart(source, argument: $0) }
        case .argumentOverride: container.override(\.kraClocks[1]) { IFBPart(source, argument: 1) }
        }
    }

    func remove(from container: DependencyContainer, byKey: Bool) {
        guard byKey else { return container.reset() }
        switch self {
        case .override, .decoration: container.reset(\.kraClock)
        case .familyOverride: container.reset(\.kraClocks)
        case .argumentOverride: container.reset(\.kraClocks[1])
        }
    }
}

/// The app-wide registration under attack: a singleton, a shared one, a family's member.
enum KRAShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case singleton, shared, familyMember
    var testDescription: String { rawValue }

    func value(in container: DependencyContainer) -> KRAPart {
        switch self {
        case .singleton: container.kraTimed()
        case .shared: container.kraSharedTimed()
        case .familyMember: container.kraTimedFamily(1)
        }
    }
}

/// An app, a session scope, a request scope of the session and a scope of the request.
func kraScopes() -> (app: DependencyContainer, session: DependencyContainer, request: DependencyContainer, sub: DependencyContainer) {
    let (app, session, request) = appSessionAndRequest()
    return (app, session, request, DependencyContainer(scopeOf: request))
}

@Suite struct KeepRecheckAttackTests {
    // MARK: - Removed before the construction uses it

    /// Every kind of install, every shape, removed by key or by `reset()` before the
    /// construction uses it: by the session or the request above a request building its
    /// own, or by the session, the request or the scope itself above a scope three deep.
    /// The construction gets the app's clocks, and the builder must not keep its copy of the
    /// app-wide instance: the next resolution is the app's.
    @Test(arguments: KRAInstall.allCases, KRAShape.allCases)
    func aRemovalBeforeTheConstructionUsesItLeavesTheScopeSharing(install: KRAInstall, shape: KRAShape) {
        // (builder, changer): 0 app, 1 session, 2 request, 3 a scope of the request.
        for (builderLevel, changerLevel) in [(2, 1), (2, 2), (3, 1), (3, 2), (3, 3)] {
            for byKey in [true, false] {
                let (app, session, request, sub) = kraScopes()
                let levels = [app, session, request, sub]
                let (builder, changer) = (levels[builderLevel], levels[changerLevel])
                let appValue = shape.value(in: app)
                let what = "\(install) in level \(changerLevel), removed \(byKey ? "by key" : "by reset()"), "
                    + "builder level \(builderLevel)"
                install.install(in: changer)
                builder.setValue(HCABeforeClock { install.remove(from: changer, byKey: byKey) }, forKey: "kra.beforeClock")
                let counter = builder.counter(shape == .singleton ? "kraTimed" : shape == .shared ? "kraSharedTimed" : "kraTimedFamily")
                weak var copy: KRAPart?
                do {
                    let first = shape.value(in: builder)
                    copy = first
                    #expect(first.isFromTheApp, "\(what): the removal came first")
                    #expect(counter.count == 1, "\(what): the builder built its own")
                    #expect(shape.value(in: builder) === appValue, "\(what): the builder kept its copy of the app's")
                    #expect(shape.value(in: builder) === appValue)
                    #expect(counter.count == 1, "\(what): built again")
                }
                // The next resolution shares the app's whether or not a scope that overrides
                // nothing looks at its own cache: only this shows the copy is not kept.
                #expect(copy == nil, "\(what): the builder keeps its copy in memory")
            }
        }
    }

    /// An override replaced before the construction uses it: the construction gets the new
    /// one, and the request keeps it (it still builds its own), for each shape and each
    /// changer; a resolution after it is the same instance and nothing is built again.
    @Test(arguments: KRAShape.allCases)
    func aReplacementBeforeTheConstructionUsesItIsKept(shape: KRAShape) {
        for changerLevel in [1, 2] {
            let (app, session, request, _) = kraScopes()
            let changer = [app, session, request][changerLevel]
            let appValue = shape.value(in: app)
            KRAInstall.override.install(in: changer, source: "scope clock")
            KRAInstall.argumentOverride.install(in: changer, source: "scope clock")
            request.setValue(
                HCABeforeClock {
                    KRAInstall.override.install(in: changer, source: "new scope clock")
                    KRAInstall.argumentOverride.install(in: changer, source: "new scope clock")
                }, forKey: "kra.beforeClock")
            let first = shape.value(in: request)
            #expect(first.clock.source == "new scope clock" && first.numbered.source == "new scope clock")
            #expect(shape.value(in: request) === first, "changer \(changerLevel): an own instance still wanted is dropped")
            #expect(first !== appValue)
        }
    }

    /// The async road: a singleton and a shared registration, the override removed before
    /// the construction uses it by the session or the request itself, then replaced.
    @Test func anAsyncConstructionKeepsWhatTheChangeDecides() async throws {
        for shared in [false, true] {
            for changerIsSession in [true, false] {
                let (app, session, request) = appSessionAndRequest()
                let changer = changerIsSession ? session : request
                func value(_ container: DependencyContainer) async throws -> KRAPart {
                    shared ? try await container.kraAsyncSharedTimed() : try await container.kraAsyncTimed()
                }
                let appValue = try await value(app)
                changer.override(\.kraClock) { IFBPart("scope clock") }
                request.setValue(HCABeforeClock { changer.reset(\.kraClock) }, forKey: "kra.beforeClock")
                let first = try await value(request)
                #expect(first.isFromTheApp)
                #expect(try await value(request) === appValue, "shared \(shared), session \(changerIsSession): kept a copy")
                // What the request's own tables keep, not whether the copy is alive: the task
                // that built it lets go of it some time after its waiters wake.
                let key = shared ? request[keyPath: \.kraAsyncSharedTimed].key : request[keyPath: \.kraAsyncTimed].key
                #expect(
                    !request.keepsInstanceNow(of: key),
                    "shared \(shared), session \(changerIsSession): the request keeps its copy")

                changer.override(\.kraClock) { IFBPart("scope clock") }
                request.setValue(
                    HCABeforeClock { changer.override(\.kraClock) { IFBPart("new scope clock") } }, forKey: "kra.beforeClock")
                let own = try await value(request)
                #expect(own.clock.source == "new scope clock")
                #expect(try await value(request) === own, "shared \(shared): an own instance still wanted is dropped")
                withExtendedLifetime(appValue) {}
            }
        }
    }

    // MARK: - What the request built from a copy it did not keep

    /// The session overrides the clock and `kraUnrelated`; the app keeps `kraPair`, built
    /// from `kraTimed` (from the clock) and `kraUnrelated`. The request builds its own pair,
    /// and inside it its own `kraTimed`; the session removes the clock's override before
    /// `kraTimed` uses it. The request rightly keeps no copy of `kraTimed`, and must not
    /// keep the pair built from that copy either (it is still its own, from the session's
    /// `kraUnrelated`): within the request, the pair's `kraTimed` would not be the
    /// request's `kraTimed` (the app's) for as long as the request lives.
    @Test func aRequestKeepsNothingBuiltFromACopyItDidNotKeep() {
        let (app, session, request) = appSessionAndRequest()
        let appPair = app.kraPair()
        #expect(appPair.timed === app.kraTimed())
        session.override(\.kraClock) { IFBPart("session clock") }
        session.override(\.kraUnrelated) { IFBPart("session unrelated") }
        request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
        let pair = request.kraPair()
        #expect(pair.unrelated.source == "session unrelated")
        #expect(pair.timed.isFromTheApp, "the removal came first")
        #expect(request.kraTimed() === app.kraTimed(), "the request kept its copy of kraTimed")
        #expect(request.kraPair().timed === request.kraTimed(), "the pair holds a copy nobody keeps")
    }

    // MARK: - Changes that must not make a scope drop what it builds itself

    /// The request builds its own `kraTimed`, from the session's clock, held at a gate;
    /// meanwhile the session and the request change unrelated overrides and decorations
    /// fifty times, and another request of the session resolves. Nothing relevant changed:
    /// the request keeps its instance, and builds it once.
    @Test func unrelatedChangesDuringTheConstructionDropNothing() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            for warmApp in [true, false] {
                let (app, session, request, sub) = kraScopes()
                if warmApp { _ = app.kraTimed() }
                session.override(\.kraClock) { IFBPart("session clock") }
                let other = DependencyContainer(scopeOf: session)
                let counter = request.counter("kraTimed")
                let gates = request.ifbInstallGates(1)
                let held = onThread { request.kraTimed() }
                gates[0].entered.wait()
                for round in 0..<50 {
                    let changer = [session, request, sub][round % 3]
                    if round % 2 == 0 {
                        changer.override(\.kraUnrelated) { IFBPart("scope unrelated") }
                        changer.decorate(\.ifbPlainPart) { IFBPart("decorated", inner: $0) }
                    } else {
                        changer.reset(\.kraUnrelated)
                        changer.reset(\.ifbPlainPart)
                    }
                    _ = other.kraTimed()
                }
                gates[0].open()
                let first = held()
                findings.check(first.clock.source == "session clock", "warm \(warmApp): not from the session's clock")
                findings.check(request.kraTimed() === first, "warm \(warmApp): the request dropped its own instance")
                findings.check(counter.count == 1, "warm \(warmApp): built \(counter.count) times")
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The same on the async road.
    @Test func unrelatedChangesDuringAnAsyncConstructionDropNothing() async throws {
        let (app, session, request) = appSessionAndRequest()
        _ = try await app.kraAsyncTimed()
        session.override(\.kraClock) { IFBPart("session clock") }
        let counter = request.counter("kraAsyncTimed")
        let gate = IFBAsyncGate()
        request.setValue(gate, forKey: "kra.asyncGate")
        let held = Task { try await request.kraAsyncTimed() }
        await gate.entered.wait()
        for round in 0..<50 {
            let changer = round % 2 == 0 ? session : request
            if round % 4 < 2 {
                changer.override(\.kraUnrelated) { IFBPart("scope unrelated") }
            } else {
                changer.reset(\.kraUnrelated)
            }
        }
        gate.opened.open()
        let first = try await held.value
        #expect(first.clock.source == "session clock")
        #expect(try await request.kraAsyncTimed() === first)
        #expect(counter.count == 1)
    }

    /// The app already keeps `kraTimed`, built from its clock; the session overrides the
    /// clock, so the request builds its own, from the session's clock, held at a gate.
    /// Meanwhile the app changes: it shuts down, or it removes or installs an override of
    /// its clock (which stops at the session, which overrides the clock itself). None of it
    /// touches what the request builds: the session's clock is still in place, and the
    /// request still builds its own, and must keep it, though the app's change took the
    /// app's record that `kraTimed` is built from the clock: the request's own record of
    /// what its construction used decides.
    @Test(arguments: ["shutdown()", "reset(\\.kraClock)", "override(\\.kraClock)"])
    func anAppChangeDuringAScopesOwnConstructionLeavesItsInstanceKept(change: String) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = app.kraTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            let counter = request.counter("kraTimed")
            let gates = request.ifbInstallGates(1)
            let held = onThread { request.kraTimed() }
            gates[0].entered.wait()
            switch change {
            case "shutdown()": app.shutdown()
            case "reset(\\.kraClock)": app.reset(\.kraClock)
            default: app.override(\.kraClock) { IFBPart("new app clock") }
            }
            gates[0].open()
            let first = held()
            findings.check(first.clock.source == "session clock", "not built from the session's clock")
            findings.keep(first.clock, as: "first clock")
            let again = request.kraTimed()
            findings.check(again.clock.source == "session clock", "the second from \(again.clock.source)")
            findings.check(again === first, "the request did not keep its own instance")
            findings.check(counter.count == 1, "the request built kraTimed \(counter.count) times")
            findings.check(appTimed.closes.count == (change == "shutdown()" ? 1 : 0), "the app's closed wrongly")
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The request builds its own member of a family from the session's clock; the session
    /// changes an unrelated override while the request's check runs (from the argument's
    /// `==`, which the check calls then). The session's clock is still in place: the
    /// request must keep its instance, and build it once.
    @Test func anUnrelatedChangeJustAfterTheCheckReadTheCountDropsNothing() async {
        let findings = Findings()
        let changed = Counter()
        let counter = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let (one, two) = (KRAHookArgument(n: 1), KRAHookArgument(n: 2))
            let appValue = app.kraHookedFamily(one)
            session.override(\.kraClock) { IFBPart("session clock") }
            session.override(\.kraHookedFamily[two]) { KRAPart(clock: IFBPart("two"), numbered: IFBPart("two"), watch: nil) }
            request.setValue(counter, forKey: "builds.kraHookedFamily")
            request.setValue(
                HCABeforeClock {
                    changed.increment()
                    session.override(\.kraUnrelated) { IFBPart("session unrelated") }
                }, forKey: "kra.armAtEnd")
            let first = request.kraHookedFamily(one)
            // Disarmed before anything else compares arguments, perhaps under a lock.
            KRAHookArgument.armed.withLock { $0 = nil }
            findings.check(first !== appValue && first.clock.source == "session clock", "not the request's own")
            findings.check(request.kraHookedFamily(one) === first, "the request dropped its own instance")
        }
        #expect(finished)
        #expect(changed.count == 1, "the change ran in the check")
        #expect(findings.problems == [])
        #expect(counter.count == 1, "built \(counter.count) times")
    }

    // MARK: - Teardowns

    /// A request builds its own `kraTimed` (with a teardown) after the session removed the
    /// override: the request does not keep it. Shutting down the request and then the app
    /// closes the app's instance once and never the request's instance twice; a user who
    /// declared `onShutdown` expects every instance a container built with it to be closed,
    /// at the latest by that container's `shutdown()`, but nobody closes the copy.
    /// A copy the request keeps, still its own, is closed by the request alone.
    @Test func theTeardownOfAnInstanceTheScopeDidNotKeep() async throws {
        let (app, session, request) = appSessionAndRequest()
        let appTimed = app.kraTimed()
        session.override(\.kraClock) { IFBPart("session clock") }
        request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
        let copy = request.kraTimed()
        #expect(copy !== appTimed && copy.isFromTheApp)
        #expect(request.kraTimed() === appTimed)
        await request.shutdown()
        #expect(appTimed.closes.count == 0, "the request closed the app's instance")
        await app.shutdown()
        #expect(appTimed.closes.count == 1)
        #expect(copy.closes.count <= 1)
        withKnownIssue(
            """
            A construction a scope does not keep is handed out with its teardown dropped \
            (ContainerState.complete keeps nothing): no shutdown ever closes it, and nothing reports it.
            """
        ) {
            #expect(copy.closes.count == 1, "the copy the request built was never closed")
        }

        let (otherApp, otherSession, otherRequest) = appSessionAndRequest()
        otherSession.override(\.kraClock) { IFBPart("session clock") }
        let own = otherRequest.kraTimed()
        #expect(own.clock.source == "session clock")
        await otherApp.shutdown()
        #expect(own.closes.count == 0, "the app closed the request's own instance")
        await otherRequest.shutdown()
        await otherRequest.shutdown()
        #expect(own.closes.count == 1)

        // Async: the same copy, not kept, with its teardown awaited by nobody.
        let (asyncApp, asyncSession, asyncRequest) = appSessionAndRequest()
        let asyncAppTimed = try await asyncApp.kraAsyncTimed()
        asyncSession.override(\.kraClock) { IFBPart("session clock") }
        asyncRequest.setValue(HCABeforeClock { asyncSession.reset(\.kraClock) }, forKey: "kra.beforeClock")
        let asyncCopy = try await asyncRequest.kraAsyncTimed()
        #expect(try await asyncRequest.kraAsyncTimed() === asyncAppTimed)
        await asyncRequest.shutdown()
        await asyncApp.shutdown()
        #expect(asyncAppTimed.closes.count == 1 && asyncCopy.closes.count <= 1)
    }

    // MARK: - Waiters

    /// Threads ask the request while its own construction is held at a gate, and the
    /// session removes the clock's override (which the construction has not used yet).
    /// Those that joined the construction get its copy; those that came after the removal
    /// share the app's instance; one that decided to build its own before the removal but
    /// claimed after the held construction ended builds one more copy, handed out once.
    /// Every thread gets a value built from the app's clocks, nothing hangs, and afterwards
    /// the request shares the app's.
    @Test func threadsWaitingForAConstructionThatIsNotKeptAllGetItsValue() async {
        let findings = Findings()
        let results = Collected<KRAPart>()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = app.kraTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            let gates = request.ifbInstallGates(1)
            let held = onThread { request.kraTimed() }
            gates[0].entered.wait()
            let asking = Arrivals()
            let waiters = (0..<6).map { _ in
                onThread {
                    asking.arrive()
                    return request.kraTimed()
                }
            }
            asking.wait(for: 6)
            session.reset(\.kraClock)
            gates[0].open()
            let copy = held()
            for waiter in waiters { results.append(waiter()) }
            findings.check(copy !== appTimed && copy.isFromTheApp, "the construction")
            for value in results.values {
                findings.check(value.isFromTheApp, "a waiter got a value built from the removed override")
            }
            findings.check(request.kraTimed() === appTimed, "the request kept the copy")
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The same with tasks asking for the request's own async construction.
    @Test func tasksAwaitingAConstructionThatIsNotKeptAllGetItsValue() async throws {
        let (app, session, request) = appSessionAndRequest()
        let appTimed = try await app.kraAsyncTimed()
        session.override(\.kraClock) { IFBPart("session clock") }
        let gate = IFBAsyncGate()
        request.setValue(gate, forKey: "kra.asyncGate")
        let held = Task { try await request.kraAsyncTimed() }
        await gate.entered.wait()
        let asking = AsyncBarrier(parties: 9)
        let waiters = (0..<8).map { _ in
            Task {
                await asking.arrive()
                return try await request.kraAsyncTimed()
            }
        }
        await asking.arrive()
        session.reset(\.kraClock)
        gate.opened.open()
        let finished = await endsWithoutHanging {
            _ = try? await held.value
            for waiter in waiters { _ = try? await waiter.value }
        }
        #expect(finished)
        let copy = try await held.value
        #expect(copy !== appTimed && copy.isFromTheApp)
        for waiter in waiters {
            #expect(try await waiter.value.isFromTheApp, "a waiter got a value built from the removed override")
        }
        #expect(try await request.kraAsyncTimed() === appTimed)
    }

    // MARK: - Deinits and tracers

    /// The copy the request does not keep holds a watcher whose deinit resolves from and
    /// writes to the request: released by the caller, outside every lock, it runs once,
    /// and the request shares the app's instance.
    @Test func theDeinitOfACopyNotKeptMayUseTheScope() async {
        let findings = Findings()
        let watch = Collected<KRAWatch>()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = app.kraTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            let requestWatch = KRAWatch(request)
            watch.append(requestWatch)
            request.setValue(requestWatch, forKey: "kra.watch")
            request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
            do {
                let copy = request.kraTimed()
                findings.check(copy.watcher != nil && copy !== appTimed, "the copy has no watcher")
            }
            findings.check(requestWatch.releases.count == 1, "the copy was kept, or released twice")
            findings.check(request.getValue(forKey: "kra.touchedByDeinit") == true, "the deinit did not run")
            findings.check(request.kraTimed() === appTimed, "the request kept its copy")

            // Shared: the request keeps its own weakly, from the session's clock; the one it
            // did not keep is gone with its caller.
            session.override(\.kraClock) { IFBPart("session clock") }
            let appShared = app.kraSharedTimed()
            request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
            do { _ = request.kraSharedTimed() }
            findings.check(request.kraSharedTimed() === appShared, "the request kept its shared copy")
            withExtendedLifetime(appShared) {}
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// A tracer on the app, and so on its scopes, toggles the session's clock override and
    /// resolves through the request each time the request builds `kraTimed`, a number of
    /// times: nothing hangs, and in the end the request follows what the session overrides.
    @Test func aTracerThatTogglesOverridesAndResolvesDuringTheBuilds() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            for endsInstalled in [true, false] {
                let (app, session, request) = appSessionAndRequest()
                let appTimed = app.kraTimed()
                session.override(\.kraClock) { IFBPart("session clock") }
                let budget = SHABudget(40)
                let installed = _Locked(true)
                app.tracer = ResolutionTracer { [weak session, weak request] events in
                    guard let session, let request,
                        events.contains(where: { $0.outcome != .cached && $0.name.contains("kraTimed") }), budget.take()
                    else { return }
                    let install = installed.withLock { installed in
                        installed.toggle()
                        return installed
                    }
                    if install { session.override(\.kraClock) { IFBPart("session clock") } } else { session.reset(\.kraClock) }
                    _ = request.kraTimed()
                    _ = request.kraPair()
                }
                for _ in 0..<40 { _ = request.kraTimed() }
                app.tracer = nil
                if endsInstalled {
                    session.override(\.kraClock) { IFBPart("session clock") }
                } else {
                    session.reset(\.kraClock)
                }
                let timed = request.kraTimed()
                if endsInstalled {
                    findings.check(timed !== appTimed && timed.clock.source == "session clock", "not the session's")
                    findings.check(request.kraTimed() === timed, "the request did not keep its own")
                } else {
                    findings.check(timed === appTimed, "the request kept a copy")
                }
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The request's own construction resolves on another thread, and waits for it: the
    /// tracer that receives that resolution, while the construction is in flight, removes
    /// the session's override and then resolves through the request. The construction gets
    /// the app's clock; the request keeps no copy, and nothing hangs.
    @Test func aTracerRemovingTheOverrideWhileTheRequestBuilds() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = app.kraTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            let bystander = DependencyContainer(scopeOf: app)
            app.tracer = ResolutionTracer { [weak session, weak request] events in
                guard let session, let request, events.contains(where: { $0.name == "kraUnrelated" }) else { return }
                session.reset(\.kraClock)
                _ = request.kraTimed()
            }
            request.setValue(HCABeforeClock { _ = onThread { bystander.kraUnrelated() }() }, forKey: "kra.beforeClock")
            let copy = request.kraTimed()
            app.tracer = nil
            findings.check(copy.isFromTheApp && copy !== appTimed, "the tracer's removal came first")
            findings.check(request.kraTimed() === appTimed, "the request kept its copy")
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    // MARK: - Load

    /// Threads released together: one toggles the session's or a request's override (and a
    /// decoration, and a family override) while the others resolve every shape through
    /// three requests and two scopes three deep. Every value is built from one of the two
    /// clocks; once the toggling stops, each scope follows what is installed then.
    @Test func scopesFollowOverridesToggledUnderLoad() async {
        let wrong = Collected<String>()
        for endsInstalled in [true, false] {
            for changerIsSession in [true, false] {
                let (app, session, request, sub) = kraScopes()
                let requests = [request, DependencyContainer(scopeOf: session), DependencyContainer(scopeOf: session)]
                let subs = [sub, DependencyContainer(scopeOf: requests[1])]
                let scopes = requests + subs
                let changer = changerIsSession ? session : request
                let affected = changerIsSession ? scopes : [request, sub]
                let appValues = KRAShape.allCases.map { $0.value(in: app) }
                let finished = await concurrentlyOffThePool { index in
                    if index == 0 {
                        for round in 0..<120 {
                            let install = [KRAInstall.override, .decoration, .familyOverride][round % 3]
                            if round % 2 == 0 { install.install(in: changer) } else { install.remove(from: changer, byKey: true) }
                        }
                        changer.reset()
                        if endsInstalled { KRAInstall.override.install(in: changer) }
                    } else {
                        for round in 0..<120 {
                            let shape = KRAShape.allCases[(round + index) % 3]
                            let value = shape.value(in: scopes[(round + index) % scopes.count])
                            let sources = [value.clock.source, value.numbered.source]
                            if !sources.allSatisfy({ $0 == "app clock" || $0 == "scope clock" }) {
                                wrong.append("\(sources)")
                            }
                        }
                    }
                }
                #expect(finished)
                for scope in scopes {
                    for (shape, appValue) in zip(KRAShape.allCases, appValues) {
                        let value = shape.value(in: scope)
                        if endsInstalled && affected.contains(where: { $0 === scope }) {
                            if value === appValue || value.clock.source != "scope clock" || shape.value(in: scope) !== value {
                                wrong.append("\(shape): a scope does not keep its own from the installed clock")
                            }
                        } else if value !== appValue {
                            wrong.append("\(shape): a scope \(endsInstalled ? "unaffected" : "after the removal") keeps a copy")
                        }
                    }
                }
            }
        }
        #expect(wrong.values == [])
    }

    /// The async road under load: tasks released together, one toggling the session's
    /// override, the others resolving the async singleton and shared registration through
    /// requests; in the end each request follows the session.
    @Test func asyncScopesFollowAnOverrideToggledUnderLoad() async throws {
        let found = Collected<String>()
        var wrong: [String] = []
        for endsInstalled in [true, false] {
            let (app, session, request) = appSessionAndRequest()
            let requests = [request, DependencyContainer(scopeOf: session), DependencyContainer(scopeOf: request)]
            let appTimed = try await app.kraAsyncTimed()
            let appShared = try await app.kraAsyncSharedTimed()
            let barrier = AsyncBarrier(parties: 8)
            let finished = await endsWithoutHanging {
                await withTaskGroup(of: [String].self) { group in
                    for index in 0..<8 {
                        group.addTask {
                            await barrier.arrive()
                            if index == 0 {
                                for round in 0..<100 {
                                    if round % 2 == 0 {
                                        session.override(\.kraClock) { IFBPart("scope clock") }
                                    } else {
                                        session.reset(\.kraClock)
                                    }
                                }
                                if endsInstalled { session.override(\.kraClock) { IFBPart("scope clock") } }
                                return []
                            }
                            var wrong: [String] = []
                            for round in 0..<100 {
                                let scope = requests[(round + index) % 3]
                                let resolved: KRAPart?
                                if round % 2 == 0 {
                                    resolved = try? await scope.kraAsyncTimed()
                                } else {
                                    resolved = try? await scope.kraAsyncSharedTimed()
                                }
                                guard let value = resolved else {
                                    wrong.append("threw")
                                    continue
                                }
                                if value.clock.source != "app clock" && value.clock.source != "scope clock" {
                                    wrong.append(value.clock.source)
                                }
                            }
                            return wrong
                        }
                    }
                    for await wrong in group { for problem in wrong { found.append(problem) } }
                }
            }
            #expect(finished)
            for scope in requests {
                let timed = try await scope.kraAsyncTimed()
                let shared = try await scope.kraAsyncSharedTimed()
                if endsInstalled {
                    if timed === appTimed || timed.clock.source != "scope clock" { wrong.append("timed not own") }
                    if try await scope.kraAsyncTimed() !== timed { wrong.append("own timed not kept") }
                    if shared === appShared || shared.clock.source != "scope clock" { wrong.append("shared not own") }
                } else {
                    if timed !== appTimed { wrong.append("kept a timed copy") }
                    if shared !== appShared { wrong.append("kept a shared copy") }
                }
                withExtendedLifetime(shared) {}
            }
        }
        #expect(wrong + found.values == [])
    }

    /// Many fresh requests, each building its own `kraTimed` from the session's clock, on
    /// threads released together, while one thread makes the session change an unrelated
    /// override as fast as it can. Nothing any request builds depends on it: each request
    /// must build its instance once and keep it.
    @Test func unrelatedChangesUnderLoadNeverMakeARequestBuildTwice() async {
        let (app, session, _) = appSessionAndRequest()
        _ = app.kraTimed()
        session.override(\.kraClock) { IFBPart("session clock") }
        // Overrides nothing here uses, which the request reads when it decides and checks.
        for n in 0..<300 { session.override(\.ifbStressFamily[n]) { IFBPart("session's", argument: n) } }
        let workersDone = Counter()
        let builtTwice = Counter()
        let requestsServed = Counter()
        let notKept = Counter()
        let finished = await concurrentlyOffThePool { index in
            if index == 0 {
                var round = 0
                // Until every other thread is done: no timing decides when it stops.
                while workersDone.count < 7 {
                    if round % 2 == 0 {
                        session.override(\.kraUnrelated) { IFBPart("session unrelated") }
                    } else {
                        session.reset(\.kraUnrelated)
                    }
                    round += 1
                }
            } else {
                for _ in 0..<150 {
                    let request = DependencyContainer(scopeOf: session)
                    let counter = request.counter("kraTimed")
                    let first = request.kraTimed()
                    if request.kraTimed() !== first { notKept.increment() }
                    if counter.count > 1 { builtTwice.increment() }
                    requestsServed.increment()
                }
                workersDone.increment()
            }
        }
        #expect(finished)
        #expect(requestsServed.count == 7 * 150)
        // How many requests the timing lets a change reach in that window varies (a few in a
        // hundred here, nearly all under ThreadSanitizer): the deterministic form is
        // `anUnrelatedChangeJustAfterTheCheckReadTheCountDropsNothing`.
        #expect(notKept.count == 0, "\(notKept.count) requests did not keep their own instance")
        #expect(builtTwice.count == 0)
    }
}
