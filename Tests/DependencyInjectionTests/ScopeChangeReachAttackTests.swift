import Foundation
import Testing
@testable import DependencyInjection

// A change that reaches a scope must drop what the scope built from app-wide instances
// built from the changed key (`StaleAppInstances`), and nothing the scope still wants.
//
// `ConstructionGate` comes from Support/Signals.swift, `onThread` from
// InFlightBookkeepingAttackTests.swift, `concurrently` from Support/Concurrently.swift.

/// What the registrations under test build: where it came from, and what it was built from.
final class SCRPart: Sendable {
    let source: String
    let inner: SCRPart?
    init(_ source: String, inner: SCRPart? = nil) { (self.source, self.inner) = (source, inner) }
}

/// An action run once, by the `deinit` of an ``SCRProbe``.
final class SCRHook: @unchecked Sendable {
    // @unchecked: `action` and `fired` are only touched while holding `lock`.
    private let lock = NSLock()
    private var action: (@Sendable () -> Void)?
    private var firedCount = 0
    init() {}

    func set(_ action: @escaping @Sendable () -> Void) { lock.withLock { self.action = action } }

    func fire() {
        let action = lock.withLock {
            defer { self.action = nil }
            firedCount += 1
            return self.action
        }
        action?()
    }

    var fired: Bool { lock.withLock { firedCount > 0 } }
}

/// A scope's instance built from the clock, whose `deinit` runs the hook: it runs while a
/// change that drops it is under way, between the change's steps.
final class SCRProbe: Sendable {
    let inner: SCRPart
    let hook: SCRHook?
    init(inner: SCRPart, hook: SCRHook?) { (self.inner, self.hook) = (inner, hook) }
    deinit { hook?.fire() }
}

/// Passes a gate the first time only.
final class SCROnceGate: @unchecked Sendable {
    // @unchecked: `passed` is only touched while holding `lock`.
    private let lock = NSLock()
    private var passed = false
    let gate = ConstructionGate()
    init() {}

    func pass() {
        let first = lock.withLock {
            defer { passed = true }
            return !passed
        }
        if first { gate.enterAndWait() }
    }
}

extension DependencyContainer {
    var scrClock: Provider<SCRPart> { singleton { SCRPart("app clock") } }
    var scrLocal: Provider<SCRPart> { singleton { SCRPart("app local") } }
    var scrTimed: Provider<SCRPart> { singleton { SCRPart("timed", inner: self.scrClock()) } }
    var scrHandler: Provider<SCRPart> { scoped { SCRPart("handler", inner: self.scrTimed()) } }
    /// Built from `scrLocal` and `scrTimed`: a scope that overrides `scrLocal` builds its own.
    var scrLocalAndTimed: Provider<SCRPart> {
        singleton { SCRPart("paired with \(self.scrLocal().source)", inner: self.scrTimed()) }
    }
    /// Built from the clock, with the hook stored under "scr.hook" in the scope.
    var scrClockProbe: Provider<SCRProbe> {
        scoped { SCRProbe(inner: self.scrClock(), hook: self.getValue(forKey: "scr.hook")) }
    }

    /// A chain of app-wide singletons, and a scope's handler from its top.
    var scrA: Provider<SCRPart> { singleton { SCRPart("a") } }
    var scrB: Provider<SCRPart> { singleton { SCRPart("b", inner: self.scrA()) } }
    var scrC: Provider<SCRPart> { singleton { SCRPart("c", inner: self.scrB()) } }
    var scrCHandler: Provider<SCRPart> { scoped { SCRPart("handler", inner: self.scrC()) } }

    /// A shared instance built from the clock; a handler that holds it; one that copies from it.
    var scrSharedTimed: Provider<SCRPart> { shared { SCRPart("shared timed", inner: self.scrClock()) } }
    var scrSharedHandler: Provider<SCRPart> { scoped { SCRPart("handler", inner: self.scrSharedTimed()) } }
    var scrCopier: Provider<SCRPart> {
        scoped { SCRPart("copier of \(self.scrSharedTimed().inner?.source ?? "nothing")") }
    }
    /// Shared instances that die at once: enough of them make a container sweep dead entries.
    var scrFillers: ProviderFamily<Int, SCRPart> { shared { (number: Int) in SCRPart("filler \(number)") } }

    /// One app-wide singleton per argument, each from the clock, and a scoped handler of each.
    var scrTimedFamily: ProviderFamily<Int, SCRPart> {
        singleton { (number: Int) in SCRPart("timed \(number)", inner: self.scrClock()) }
    }
    subscript(scrFamilyHandler number: Int) -> Provider<SCRPart> {
        scoped(number) { SCRPart("handler \(number)", inner: self.scrTimedFamily(number)) }
    }
    /// Many app-wide singletons, each from the clock.
    var scrWide: ProviderFamily<Int, SCRPart> {
        singleton { (number: Int) in SCRPart("wide \(number)", inner: self.scrClock()) }
    }

    /// The async road.
    var scrAsyncTimed: AsyncProvider<SCRPart> { singleton { SCRPart("timed", inner: self.scrClock()) } }
    var scrAsyncHandler: AsyncProvider<SCRPart> { scoped { SCRPart("handler", inner: try await self.scrAsyncTimed()) } }
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
        let hook = SCRHook()
        request.setValue(hook, forKey: "scr.hook")
        #expect(request.scrHandler().inner === app.scrTimed())
        _ = request.scrClockProbe()  // only the request keeps it
        hook.set { _ = request.scrTimed() }
        session.override(\.scrClock) { SCRPart("session clock") }
        #expect(hook.fired)
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
            let hook = SCRHook()
            request.setValue(hook, forKey: "scr.hook")
            let old = request.scrHandler()
            _ = request.scrClockProbe()
            let gate = SCROnceGate()
            let building = Collected<() -> SCRPart>()
            hook.set {
                building.append(onThread { request.scrTimed() })
                gate.gate.entered.wait()
            }
            session.override(\.scrClock) {
                gate.pass()
                return SCRPart("session clock")
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
        app.override(\.scrClock) { SCRPart("override clock") }
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
            app.override(\.scrClock) { SCRPart("new clock") }
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
        session.override(\.scrClock) { SCRPart("session clock") }
        _ = app.scrTimedFamily(2)
        let handler = session[scrFamilyHandler: 1]()
        #expect(handler.inner?.inner?.source == "session clock")
        app.override(\.scrClock) { SCRPart("new app clock") }
        #expect(session[scrFamilyHandler: 1]() === handler, "an instance still wanted was dropped")
    }

    /// The same with a shared registration whose session copy died: the session no longer
    /// keeps it, and still keeps what it built from it.
    @Test func anAppChangeOfWhatASessionOverridesKeepsWhatTheSessionBuiltFromItsOwnDeadSharedCopy() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.scrClock) { SCRPart("session clock") }
        let appShared = app.scrSharedTimed()
        let copier = session.scrCopier()
        #expect(copier.source == "copier of session clock")
        app.override(\.scrClock) { SCRPart("new app clock") }
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
        case .outerSession: outer.override(\.scrA) { SCRPart("changed a") }
        case .innerSession: inner.override(\.scrA) { SCRPart("changed a") }
        case .request: request.override(\.scrA) { SCRPart("changed a") }
        case .app: app.override(\.scrA) { SCRPart("changed a") }
        case .appParent: root.override(\.scrA) { SCRPart("changed a") }
        case .appReset:
            app.override(\.scrA) { SCRPart("changed a") }  // before: rebuilt by the next line
            _ = app.scrC()
            _ = request.scrCHandler()
            app.reset()
        case .appDecoration: app.decorate(\.scrA) { SCRPart("changed a", inner: $0) }
        case .outerSessionDecoration: outer.decorate(\.scrA) { SCRPart("changed a", inner: $0) }
        }
        let c = request.scrC()
        let expected = changer == .appReset ? "a" : "changed a"
        #expect(c.inner?.inner?.source == expected)
        #expect(request.scrCHandler().inner === c)
        #expect(request.scrCHandler() !== old)
    }

    /// The app removes its override of the clock (`reset(\.key)`): the request's handler,
    /// built from the app's `timed` from the override, goes.
    @Test func removingAnAppOverrideReachesWhatARequestBuiltFromAnAppInstanceBuiltFromIt() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        app.override(\.scrClock) { SCRPart("override clock") }
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
        session.override(\.scrClock) { SCRPart("session clock") }
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
        session.override(\.scrClock) { SCRPart("session clock") }
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
        session.override(\.scrClock) { SCRPart("session clock") }
        let handler = request.scrHandler()
        #expect(handler.inner?.inner?.source == "session clock")
        session.override(\.scrLocal) { SCRPart("session local") }
        #expect(request.scrHandler() === handler)
        let paired = request.scrLocalAndTimed()
        #expect(paired.source == "paired with session local" && paired.inner === handler.inner)
        session.decorate(\.scrLocal) { SCRPart("decorated", inner: $0) }
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
                    session.override(\.scrClock) { SCRPart("session clock") }
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
