import Foundation
import Testing
@testable import DependencyInjection

// A change that reaches a scope must drop what the scope built from app-wide instances
// built from the changed key (`StaleAppInstances`), and nothing the scope still wants.
//
// `ConstructionGate`, `OnceGate` and `DeinitHook` come from Support/Signals.swift,
// `ChainPart` and `ChainProbe` from Support/ScopeFixtures.swift, `onThread` from
// InFlightBookkeepingAttackTests.swift, `concurrently` from Support/Concurrently.swift.

extension DependencyContainer {
    var scrClock: Provider<ChainPart> { singleton { ChainPart("app clock") } }
    var scrLocal: Provider<ChainPart> { singleton { ChainPart("app local") } }
    var scrTimed: Provider<ChainPart> { singleton { ChainPart("timed", inner: self.scrClock()) } }
    var scrHandler: Provider<ChainPart> { scoped { ChainPart("handler", inner: self.scrTimed()) } }
    /// Built from `scrLocal` and `scrTimed`: a scope that overrides `scrLocal` builds its own.
    var scrLocalAndTimed: Provider<ChainPart> {
        singleton { ChainPart("paired with \(self.scrLocal().source)", inner: self.scrTimed()) }
    }
    /// Built from the clock, with the hook stored under "scr.hook" in the scope.
    var scrClockProbe: Provider<ChainProbe> {
        scoped { ChainProbe(inner: self.scrClock(), hook: self.getValue(forKey: "scr.hook")) }
    }

    /// A chain of app-wide singletons, and a scope's handler from its top.
    var scrA: Provider<ChainPart> { singleton { ChainPart("a") } }
    var scrB: Provider<ChainPart> { singleton { ChainPart("b", inner: self.scrA()) } }
    var scrC: Provider<ChainPart> { singleton { ChainPart("c", inner: self.scrB()) } }
    var scrCHandler: Provider<ChainPart> { scoped { ChainPart("handler", inner: self.scrC()) } }

    /// A shared instance built from the clock; a handler that holds it; one that copies from it.
    var scrSharedTimed: Provider<ChainPart> { shared { ChainPart("shared timed", inner: self.scrClock()) } }
    var scrSharedHandler: Provider<ChainPart> { scoped { ChainPart("handler", inner: self.scrSharedTimed()) } }
    var scrCopier: Provider<ChainPart> {
        scoped { ChainPart("copier of \(self.scrSharedTimed().inner?.source ?? "nothing")") }
    }
    /// Shared instances that die at once: enough of them make a container sweep dead entries.
    var scrFillers: ProviderFamily<Int, ChainPart> { shared { (number: Int) in ChainPart("filler \(number)") } }

    /// One app-wide singleton per argument, each from the clock, and a scoped handler of each.
    var scrTimedFamily: ProviderFamily<Int, ChainPart> {
        singleton { (number: Int) in ChainPart("timed \(number)", inner: self.scrClock()) }
    }
    subscript(scrFamilyHandler number: Int) -> Provider<ChainPart> {
        scoped(number) { ChainPart("handler \(number)", inner: self.scrTimedFamily(number)) }
    }
    /// Many app-wide singletons, each from the clock.
    var scrWide: ProviderFamily<Int, ChainPart> {
        singleton { (number: Int) in ChainPart("wide \(number)", inner: self.scrClock()) }
    }

    /// The async road.
    var scrAsyncTimed: AsyncProvider<ChainPart> { singleton { ChainPart("timed", inner: self.scrClock()) } }
    var scrAsyncHandler: AsyncProvider<ChainPart> { scoped { ChainPart("handler", inner: try await self.scrAsyncTimed()) } }
}

/// Who changes `scrA` at the bottom of the chain.
enum SCRChainChanger: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case outerSession, innerSession, request, app, appParent, appReset, appDecoration, outerSessionDecoration
    var testDescription: String { rawValue }
}

@Suite struct ScopeChangeReachAttackTests {
    // MARK: - A request that builds its own copy while the change is under way

    /// The session's change drops, in the request, what it built from the clock, then reads
    /// the app's record and drops what the request built from the app's `timed`. Between
    /// the two, a dropped instance's `deinit` has the request build its own `timed`, from
    /// the session's clock. The handler built from the app's `timed`, filed under the same
    /// registration, still goes: the request never keeps a handler from the app's clock.
    @Test func aRequestThatBuildsItsOwnCopyBetweenTheStepsOfASessionChangeStillDropsWhatItBuiltFromTheAppsCopy() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        _ = app.scrTimed()
        let hook = DeinitHook()
        request.setValue(hook, forKey: "scr.hook")
        #expect(request.scrHandler().inner === app.scrTimed())
        _ = request.scrClockProbe()  // only the request keeps it
        hook.set { _ = request.scrTimed() }
        session.override(\.scrClock) { ChainPart("session clock") }
        #expect(hook.fired == 1)
        let timed = request.scrTimed()
        #expect(timed.inner?.source == "session clock")
        let handler = request.scrHandler()
        #expect(handler.inner === timed, "kept a handler built from \(handler.inner?.inner?.source ?? "nothing")")
    }

    /// The same, with the request's own `timed` still being built (held at a gate in the
    /// session's clock) when the change reads the app's record.
    @Test func aRequestBuildingItsOwnCopyDuringASessionChangeStillDropsWhatItBuiltFromTheAppsCopy() async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            _ = app.scrTimed()
            let hook = DeinitHook()
            request.setValue(hook, forKey: "scr.hook")
            let old = request.scrHandler()
            _ = request.scrClockProbe()
            let gate = OnceGate()
            let building = Collected<() -> ChainPart>()
            hook.set {
                building.append(onThread { request.scrTimed() })
                gate.gate.entered.wait()
            }
            session.override(\.scrClock) {
                gate.pass()
                return ChainPart("session clock")
            }
            gate.gate.open()
            let timed = building.values.first?() ?? request.scrTimed()
            if timed.inner?.source != "session clock" { problems.append("timed from \(timed.inner?.source ?? "nothing")") }
            let handler = request.scrHandler()
            if handler === old || handler.inner !== request.scrTimed() {
                problems.append("kept a handler built from \(handler.inner?.inner?.source ?? "nothing")")
            }
        }
        #expect(finished)
        #expect(problems.values == [])
    }

    /// A shared instance the request built from died, and the app swept it: a `reset()` of
    /// the app, which hands its scopes every key in its record, not only those of the
    /// instances it keeps, drops what the request built from it, as an override of the
    /// clock does.
    @Test(arguments: [false, true])
    func anAppChangeReachesWhatARequestBuiltFromASweptSharedInstance(resets: Bool) {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        app.override(\.scrClock) { ChainPart("override clock") }
        do {
            let shared = app.scrSharedTimed()
            #expect(request.scrCopier().source == "copier of override clock")
            withExtendedLifetime(shared) {}
        }
        for number in 0..<40 { _ = app.scrFillers(number) }  // the app sweeps the dead entry
        if resets {
            app.reset()
            #expect(request.scrCopier().source == "copier of app clock")
        } else {
            app.override(\.scrClock) { ChainPart("new clock") }
            #expect(request.scrCopier().source == "copier of new clock")
        }
    }

    /// The session overrides the clock and builds its own `timed 1`, and a handler from
    /// it; the app built `timed 2` from its clock. The app's override of the clock, which
    /// the session overrides itself, leaves the session's handler: handing the session the
    /// app's `timed 2` would drop every user of the family's registration.
    @Test func anAppChangeOfWhatASessionOverridesKeepsWhatTheSessionBuiltFromItsOwnFamilyCopy() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.scrClock) { ChainPart("session clock") }
        _ = app.scrTimedFamily(2)
        let handler = session[scrFamilyHandler: 1]()
        #expect(handler.inner?.inner?.source == "session clock")
        app.override(\.scrClock) { ChainPart("new app clock") }
        #expect(session[scrFamilyHandler: 1]() === handler, "an instance still wanted was dropped")
    }

    /// The same with a shared registration whose session copy died: the session no longer
    /// keeps it, and still keeps what it built from it.
    @Test func anAppChangeOfWhatASessionOverridesKeepsWhatTheSessionBuiltFromItsOwnDeadSharedCopy() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.scrClock) { ChainPart("session clock") }
        let appShared = app.scrSharedTimed()
        let copier = session.scrCopier()
        #expect(copier.source == "copier of session clock")
        app.override(\.scrClock) { ChainPart("new app clock") }
        #expect(session.scrCopier() === copier, "an instance still wanted was dropped")
        withExtendedLifetime(appShared) {}
    }

    // MARK: - What the fix covers

    /// App `a` ← `b` ← `c`, a request's handler from `c`, the request in a session in a
    /// session; `a` changes anywhere.
    @Test(arguments: SCRChainChanger.allCases)
    func aChangeAtTheBottomOfAChainReachesARequestsHandlerFromItsTop(changer: SCRChainChanger) {
        let root = DependencyContainer()
        let app = DependencyContainer(parent: root)
        let outer = DependencyContainer(scopeOf: app)
        let inner = DependencyContainer(scopeOf: outer)
        let request = DependencyContainer(scopeOf: inner)
        _ = app.scrC()
        let old = request.scrCHandler()
        #expect(old.inner === app.scrC())
        switch changer {
        case .outerSession: outer.override(\.scrA) { ChainPart("changed a") }
        case .innerSession: inner.override(\.scrA) { ChainPart("changed a") }
        case .request: request.override(\.scrA) { ChainPart("changed a") }
        case .app: app.override(\.scrA) { ChainPart("changed a") }
        case .appParent: root.override(\.scrA) { ChainPart("changed a") }
        case .appReset:
            app.override(\.scrA) { ChainPart("changed a") }  // before: rebuilt by the next line
            _ = app.scrC()
            _ = request.scrCHandler()
            app.reset()
        case .appDecoration: app.decorate(\.scrA) { ChainPart("changed a", inner: $0) }
        case .outerSessionDecoration: outer.decorate(\.scrA) { ChainPart("changed a", inner: $0) }
        }
        let c = request.scrC()
        let expected = changer == .appReset ? "a" : "changed a"
        #expect(c.inner?.inner?.source == expected)
        #expect(request.scrCHandler().inner === c)
        #expect(request.scrCHandler() !== old)
        // A change in the app or above it leaves the request sharing the app's new `c`.
        let inApp: Set<SCRChainChanger> = [.app, .appParent, .appReset, .appDecoration]
        #expect((c === app.scrC()) == inApp.contains(changer))
    }

    /// The app removes its override of the clock (`reset(\.key)`): the request's handler,
    /// built from the app's `timed` from the override, goes.
    @Test func removingAnAppOverrideReachesWhatARequestBuiltFromAnAppInstanceBuiltFromIt() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        app.override(\.scrClock) { ChainPart("override clock") }
        _ = app.scrTimed()
        #expect(request.scrHandler().inner?.inner?.source == "override clock")
        app.reset(\.scrClock)
        #expect(request.scrHandler().inner?.inner?.source == "app clock")
    }

    /// A shared app instance, kept alive by the test; per-argument family overrides; async.
    @Test func aSessionChangeReachesHandlersFromSharedFamilyAndAsyncAppInstances() async throws {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let appShared = app.scrSharedTimed()
        _ = app.scrTimedFamily(3)
        _ = try await app.scrAsyncTimed()
        #expect(request.scrSharedHandler().inner === appShared)
        #expect(request[scrFamilyHandler: 3]().inner === app.scrTimedFamily(3))
        #expect(try await request.scrAsyncHandler().inner === app.scrAsyncTimed())
        session.override(\.scrClock) { ChainPart("session clock") }
        #expect(request.scrSharedHandler().inner?.inner?.source == "session clock")
        #expect(request[scrFamilyHandler: 3]().inner?.inner?.source == "session clock")
        #expect(try await request.scrAsyncHandler().inner?.inner?.source == "session clock")
        #expect(app.scrSharedTimed() === appShared)
        withExtendedLifetime(appShared) {}
    }

    /// A request in a scope of an isolated child of a session: the session's change reaches
    /// the isolated child, which hands the request what it drops.
    @Test func aSessionChangeReachesARequestOfAnIsolatedChildOfTheSession() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let child = DependencyContainer(parent: session)
        let request = DependencyContainer(scopeOf: child)
        _ = child.scrTimed()
        #expect(request.scrHandler().inner === child.scrTimed())
        session.override(\.scrClock) { ChainPart("session clock") }
        let timed = request.scrTimed()
        #expect(timed.inner?.source == "session clock")
        #expect(request.scrHandler().inner === timed)
    }

    // MARK: - Nothing still wanted is dropped

    /// A session change leaves the app's own instances alone, and what the request built
    /// from its own copies when the change is of something else.
    @Test func aSessionChangeLeavesTheAppsInstancesAndTheRequestsOwnCopies() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let appTimed = app.scrTimed()
        let appPaired = app.scrLocalAndTimed()
        session.override(\.scrClock) { ChainPart("session clock") }
        let handler = request.scrHandler()
        #expect(handler.inner?.inner?.source == "session clock")
        session.override(\.scrLocal) { ChainPart("session local") }
        #expect(request.scrHandler() === handler)
        let paired = request.scrLocalAndTimed()
        #expect(paired.source == "paired with session local" && paired.inner === handler.inner)
        session.decorate(\.scrLocal) { ChainPart("decorated", inner: $0) }
        #expect(request.scrHandler() === handler)
        #expect(app.scrTimed() === appTimed && app.scrLocalAndTimed() === appPaired)
    }

    // MARK: - Concurrency

    /// Requests resolve their handlers and `timed` while the session overrides the clock;
    /// afterwards every request's handler is built from its own `timed`, from the session's
    /// clock. Run under ThreadSanitizer too.
    @Test func requestsResolvingWhileTheSessionOverridesEndWithHandlersFromTheChangedClock() async {
        for round in 0..<20 {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let requests = (0..<7).map { _ in DependencyContainer(scopeOf: session) }
            _ = app.scrTimed()
            for request in requests { _ = request.scrHandler() }
            let finished = await concurrentlyOffThePool(threads: 8) { index in
                if index == 0 {
                    session.override(\.scrClock) { ChainPart("session clock") }
                } else {
                    let request = requests[index - 1]
                    for _ in 0..<3 {
                        _ = request.scrHandler()
                        _ = request.scrTimed()
                    }
                }
            }
            #expect(finished)
            for (number, request) in requests.enumerated() {
                let timed = request.scrTimed()
                #expect(timed.inner?.source == "session clock", "round \(round), request \(number)")
                #expect(request.scrHandler().inner === timed, "round \(round), request \(number)")
            }
        }
    }
}
