import Foundation
import Testing
@testable import DependencyInjection

// What a scope built from an app-wide instance must follow what that instance was built
// from (`StaleAppInstances`): after any change, in the app, above it, in a session or in a
// request, nothing a request or session serves is built from a value that was replaced.
// And a change must not drop what is still valid: a scope's instance built only from its
// own overrides, or the app's own instances.
//
// Threads are ordered by `deinit`s of dropped instances (which run after the container's
// lock, between the steps of a change), by gates and by barriers; never by sleeps.
// `ConstructionGate` and `DeinitHook` come from Support/Signals.swift, `ChainPart` and
// `ChainProbe` from Support/ScopeFixtures.swift, `onThread` from
// InFlightBookkeepingAttackTests.swift, `concurrently` (which releases its threads
// together) and `Collected` from Support/Concurrently.swift, the hang guards from
// Support/HangGuard.swift.

extension DependencyContainer {
    var saiClock: Provider<ChainPart> { singleton { ChainPart("app clock") } }
    var saiLocal: Provider<ChainPart> { singleton { ChainPart("app local") } }
    var saiTimed: Provider<ChainPart> { singleton { ChainPart("timed", inner: self.saiClock()) } }
    var saiHandler: Provider<ChainPart> { scoped { ChainPart("handler", inner: self.saiTimed()) } }
    /// Built from the clock only, in a scope: it never touches `saiTimed`.
    var saiClockUser: Provider<ChainPart> { scoped { ChainPart("clock user", inner: self.saiClock()) } }
    /// Built from `saiLocal` and `saiTimed`: a scope that overrides `saiLocal` builds its own.
    var saiLocalAndTimed: Provider<ChainPart> {
        singleton { ChainPart("paired with \(self.saiLocal().source)", inner: self.saiTimed()) }
    }
    var saiPairedHandler: Provider<ChainPart> { scoped { ChainPart("paired handler", inner: self.saiLocalAndTimed()) } }

    /// A scope's probe built from the clock, with the hook stored under "sai.hook".
    var saiClockProbe: Provider<ChainProbe> {
        scoped { ChainProbe(inner: self.saiClock(), hook: self.getValue(forKey: "sai.hook")) }
    }
    /// An app-wide probe built from the clock, with the hook stored under "sai.appHook" in
    /// the app container.
    var saiAppClockProbe: Provider<ChainProbe> {
        singleton { ChainProbe(inner: self.saiClock(), hook: self.getValue(forKey: "sai.appHook")) }
    }
    /// A request's handler whose `deinit` runs the hook stored under "sai.hook".
    var saiHookedHandler: Provider<ChainProbe> {
        scoped { ChainProbe(inner: self.saiTimed(), hook: self.getValue(forKey: "sai.hook")) }
    }

    /// Shared instances: one built from the clock, and a scoped copier that keeps only a
    /// string taken from it.
    var saiSharedTimed: Provider<ChainPart> { shared { ChainPart("shared timed", inner: self.saiClock()) } }
    var saiCopier: Provider<ChainPart> {
        scoped { ChainPart("copier of \(self.saiSharedTimed().inner?.source ?? "nothing")") }
    }
    var saiSharedHandler: Provider<ChainPart> { scoped { ChainPart("shared handler", inner: self.saiSharedTimed()) } }

    /// One app-wide singleton per argument, each from the clock, and a scoped handler of each.
    var saiTimedFamily: ProviderFamily<Int, ChainPart> {
        singleton { (number: Int) in ChainPart("timed \(number)", inner: self.saiClock()) }
    }
    subscript(saiFamilyHandler number: Int) -> Provider<ChainPart> {
        scoped(number) { ChainPart("handler \(number)", inner: self.saiTimedFamily(number)) }
    }
    /// One seed per argument, and an app-wide singleton built from seed 1.
    var saiSeed: ProviderFamily<Int, ChainPart> { singleton { (number: Int) in ChainPart("seed \(number)") } }
    var saiSeeded: Provider<ChainPart> { singleton { ChainPart("seeded", inner: self.saiSeed(1)) } }
    var saiSeededHandler: Provider<ChainPart> { scoped { ChainPart("seeded handler", inner: self.saiSeeded()) } }

    /// Many app-wide singletons, none of them from the clock.
    var saiWide: ProviderFamily<Int, ChainPart> { singleton { (number: Int) in ChainPart("wide \(number)") } }

    /// The async road.
    var saiAsyncTimed: AsyncProvider<ChainPart> { singleton { ChainPart("async timed", inner: self.saiClock()) } }
    var saiAsyncHandler: AsyncProvider<ChainPart> {
        scoped { ChainPart("async handler", inner: try await self.saiAsyncTimed()) }
    }
}

/// Which change runs inside which, in the deinit-ordered race of a scope and its app.
enum SAIRaceOrder: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The scope's override drops the scope's probe, whose `deinit` runs the app's override.
    case appChangeInsideScopeChange
    /// The same, with the override in the app's parent.
    case appParentChangeInsideScopeChange
    /// The app's override drops the app's probe, whose `deinit` runs the scope's override.
    case scopeChangeInsideAppChange
    var testDescription: String { rawValue }
}

/// Where a change of the clock happens, for a request three scopes deep.
enum SAIChanger: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case appParent, app, appReset, appResetKey, appDecoration, session, sessionDecoration, isolated, request
    var testDescription: String { rawValue }
}

@Suite struct StaleAppInstancesAttackTests {
    // MARK: - A session and its app change the same key at once

    /// The session (or the request) overrides the clock while the app (or its parent)
    /// overrides it too. The app's change reads its record (`timed` was built from the
    /// clock), drops `timed` and forgets the record, then reaches the scope, which
    /// overrides the clock by now. The scope's own change reads the app's record, which no
    /// longer names `timed`. Either the app's change finds the scope's change under way
    /// and drops what the scope built from `timed`, or the scope's change finds the app's
    /// under way and reads what it drops: the request never serves a handler built from
    /// the app's old clock.
    ///
    /// The `deinit` of an instance the first change drops runs the second change between
    /// the steps of the first, in both orders.
    @Test(arguments: SAIRaceOrder.allCases, [false, true])
    func aScopeAndItsAppChangingTheSameKeyTogetherLeaveNoHandlerFromTheOldClock(order: SAIRaceOrder, inRequest: Bool) {
        let root = DependencyContainer()
        let app = DependencyContainer(parent: root)
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let changing = inRequest ? request : session
        let expected = inRequest ? "request clock" : "session clock"
        _ = app.saiTimed()
        let old = request.saiHandler()
        #expect(old.inner === app.saiTimed())
        let hook = DeinitHook()
        let changeScope: @Sendable () -> Void = { changing.override(\.saiClock) { ChainPart(expected) } }
        switch order {
        case .appChangeInsideScopeChange, .appParentChangeInsideScopeChange:
            changing.setValue(hook, forKey: "sai.hook")
            _ = changing.saiClockProbe()  // the scope's, from the app's clock
            let above = order == .appChangeInsideScopeChange ? app : root
            hook.set { above.override(\.saiClock) { ChainPart("new app clock") } }
            changeScope()
        case .scopeChangeInsideAppChange:
            app.setValue(hook, forKey: "sai.appHook")
            _ = app.saiAppClockProbe()
            hook.set(changeScope)
            app.override(\.saiClock) { ChainPart("new app clock") }
        }
        #expect(hook.fired == 1)
        let timed = request.saiTimed()
        #expect(timed.inner?.source == expected)
        let handler = request.saiHandler()
        #expect(handler !== old, "kept the handler built from \(old.root)")
        #expect(handler.inner === timed, "a handler built from \(handler.root)")
    }

    /// The same race on threads released together: the session and the app override the
    /// clock at once, many rounds. Counts the rounds that leave the request a handler
    /// built from the app's old clock.
    @Test func aSessionAndItsAppOverridingTheSameKeyOnThreadsLeaveNoHandlerFromTheOldClock() async {
        let stale = Collected<String>()
        let rounds = 300
        let finished = await finishesWithoutHangingOffThePool {
            for _ in 0..<rounds {
                let app = DependencyContainer()
                let session = DependencyContainer(scopeOf: app)
                let request = DependencyContainer(scopeOf: session)
                _ = app.saiTimed()
                _ = request.saiHandler()
                _ = session.saiClockUser()  // gives the session something to drop
                concurrently(threads: 2) { index in
                    if index == 0 {
                        session.override(\.saiClock) { ChainPart("session clock") }
                    } else {
                        app.override(\.saiClock) { ChainPart("new app clock") }
                    }
                }
                let root = request.saiHandler().root
                if root != "session clock" { stale.append(root) }
            }
        }
        #expect(finished)
        let kept = stale.values
        #expect(kept.count == 0, "\(kept.count) of \(rounds) rounds kept a handler built from \(Set(kept).sorted())")
    }

    // MARK: - A change after the app was shut down

    /// After `shutdown()` of the app, a change of the clock, in the app or in the session,
    /// reaches the handler the request built before from the app's `timed`: `shutdown()`
    /// drops the app's singletons and leaves its scopes alone, but keeps its record of
    /// uses, which the change reads to find what the request built from the clock.
    @Test(arguments: [false, true])
    func aChangeAfterAnAppShutdownReachesWhatARequestBuiltBeforeIt(inSession: Bool) {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        _ = app.saiTimed()
        let old = request.saiHandler()
        app.shutdown()
        let expected = inSession ? "session clock" : "new app clock"
        if inSession {
            session.override(\.saiClock) { ChainPart(expected) }
        } else {
            app.override(\.saiClock) { ChainPart(expected) }
        }
        let handler = request.saiHandler()
        #expect(handler !== old, "kept the handler built from \(old.root)")
        #expect(handler.root == expected)
        #expect(handler.inner === request.saiTimed())
    }

    // MARK: - Every change reaches a request three scopes deep

    /// app ← session ← isolated child ← request ← sub-request, or a plain app ← session ←
    /// request ← sub-request: whoever changes the clock, the sub-request's handler follows.
    @Test(arguments: SAIChanger.allCases, [false, true])
    func everyChangeOfTheClockReachesASubRequestsHandler(changer: SAIChanger, isolatedBetween: Bool) {
        let root = DependencyContainer()
        let app = DependencyContainer(parent: root)
        let session = DependencyContainer(scopeOf: app)
        let middle = isolatedBetween ? DependencyContainer(parent: session) : DependencyContainer(scopeOf: session)
        let request = DependencyContainer(scopeOf: middle)
        let sub = DependencyContainer(scopeOf: request)
        if changer == .appReset || changer == .appResetKey {
            app.override(\.saiClock) { ChainPart("override clock") }
        }
        _ = app.saiTimed()
        _ = middle.saiTimed()
        let old = sub.saiHandler()
        let oldRequest = request.saiHandler()
        let expected: String
        switch changer {
        case .appParent:
            root.override(\.saiClock) { ChainPart("changed clock") }
            expected = "changed clock"
        case .app:
            app.override(\.saiClock) { ChainPart("changed clock") }
            expected = "changed clock"
        case .appReset:
            app.reset()
            expected = "app clock"
        case .appResetKey:
            app.reset(\.saiClock)
            expected = "app clock"
        case .appDecoration:
            app.decorate(\.saiClock) { _ in ChainPart("changed clock") }
            expected = "changed clock"
        case .session:
            session.override(\.saiClock) { ChainPart("changed clock") }
            expected = "changed clock"
        case .sessionDecoration:
            session.decorate(\.saiClock) { _ in ChainPart("changed clock") }
            expected = "changed clock"
        case .isolated:
            middle.override(\.saiClock) { ChainPart("changed clock") }
            expected = "changed clock"
        case .request:
            request.override(\.saiClock) { ChainPart("changed clock") }
            expected = "changed clock"
        }
        let handler = sub.saiHandler()
        #expect(handler !== old)
        #expect(handler.root == expected, "the sub-request's handler is built from \(handler.root)")
        #expect(handler.inner === sub.saiTimed())
        #expect(request.saiHandler() !== oldRequest)
        #expect(request.saiHandler().root == expected)
    }

    /// Shared and weak instances, family arguments and async providers follow an app
    /// change and an app reset in a request inside a session.
    @Test(arguments: [false, true])
    func sharedFamilyAndAsyncHandlersFollowAnAppChangeOrReset(resets: Bool) async throws {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        app.override(\.saiClock) { ChainPart("first clock") }
        let appShared = app.saiSharedTimed()
        _ = app.saiTimedFamily(4)
        _ = try await app.saiAsyncTimed()
        #expect(request.saiSharedHandler().inner === appShared)
        #expect(request.saiCopier().source == "copier of first clock")
        #expect(request[saiFamilyHandler: 4]().inner === app.saiTimedFamily(4))
        #expect(try await request.saiAsyncHandler().inner === app.saiAsyncTimed())
        if resets {
            app.reset()
        } else {
            app.override(\.saiClock) { ChainPart("second clock") }
        }
        let expected = resets ? "app clock" : "second clock"
        #expect(request.saiSharedHandler().root == expected)
        #expect(request.saiCopier().source == "copier of \(expected)")
        #expect(request[saiFamilyHandler: 4]().root == expected)
        #expect(try await request.saiAsyncHandler().root == expected)
        #expect(request.saiSharedHandler().inner === app.saiSharedTimed())
        withExtendedLifetime(appShared) {}
    }

    /// A per-argument override of a family in the app, in the session and in the request:
    /// the request's handler of that argument follows each.
    @Test func perArgumentFamilyOverridesReachARequestsHandlerOfThatArgument() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        _ = app.saiTimedFamily(1)
        let first = request[saiFamilyHandler: 1]()
        #expect(first.inner === app.saiTimedFamily(1))
        app.override(\.saiTimedFamily[1]) { ChainPart("app's timed 1") }
        #expect(request[saiFamilyHandler: 1]().inner?.source == "app's timed 1")
        session.override(\.saiTimedFamily[1]) { ChainPart("session's timed 1") }
        #expect(request[saiFamilyHandler: 1]().inner?.source == "session's timed 1")
        request.override(\.saiTimedFamily) { number in ChainPart("request's timed \(number)") }
        // The request's own override wins over its session's.
        #expect(request[saiFamilyHandler: 1]().inner?.source == "request's timed 1")
        #expect(request[saiFamilyHandler: 2]().inner?.source == "request's timed 2")
        session.reset(\.saiTimedFamily)
        #expect(request[saiFamilyHandler: 1]().inner?.source == "request's timed 1")
        request.reset(\.saiTimedFamily)
        #expect(request[saiFamilyHandler: 1]().inner?.source == "app's timed 1")
        #expect(request[saiFamilyHandler: 1]().inner === app.saiTimedFamily(1))
        #expect(request[saiFamilyHandler: 2]().inner === app.saiTimedFamily(2))
    }

    /// The app overrides seed 2; `seeded` was built from seed 1 of the same family. Uses
    /// are filed per registration, so the app drops its `seeded`: the request drops its
    /// handler too, and keeps sharing the app's instance rather than holding one the app
    /// no longer serves.
    @Test func anAppOverrideOfAnotherArgumentKeepsTheRequestOnTheAppsInstance() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        _ = app.saiSeeded()
        _ = request.saiSeededHandler()
        app.override(\.saiSeed[2]) { ChainPart("seed 2 override") }
        #expect(request.saiSeededHandler().inner === app.saiSeeded())
        #expect(request.saiSeededHandler().root == "seed 1")
    }

    // MARK: - Nothing still valid is dropped

    /// The request overrides the clock and builds its own `timed`, and its handler from it.
    /// The request overrides the clock and builds its handler from its own `timed`; the
    /// session then overrides the clock. Nothing the request built came from the session's
    /// clock or the app's, and the request, which overrides the changed key itself, keeps
    /// its handler.
    @Test func aSessionChangeOfAKeyTheRequestOverridesKeepsTheRequestsHandler() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        _ = app.saiTimed()
        request.override(\.saiClock) { ChainPart("request clock") }
        let handler = request.saiHandler()
        #expect(handler.root == "request clock")
        session.override(\.saiClock) { ChainPart("session clock") }
        #expect(request.saiHandler().root == "request clock")
        #expect(request.saiHandler() === handler, "a handler built from the request's own clock was dropped")
    }

    /// An app change or reset keeps what a request built from its own copy of `timed`, a
    /// singleton it keeps, and the app's instances that were not built from the change.
    @Test(arguments: [false, true])
    func anAppChangeOrResetKeepsWhatARequestBuiltFromItsOwnKeptCopy(resets: Bool) {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        _ = app.saiTimed()
        request.override(\.saiClock) { ChainPart("request clock") }
        let handler = request.saiHandler()
        let local = app.saiLocal()
        if resets {
            app.reset()
        } else {
            app.override(\.saiClock) { ChainPart("new app clock") }
        }
        #expect(request.saiHandler() === handler)
        #expect(resets || app.saiLocal() === local)
    }

    /// An app reset, after the request built its copier from its own shared `timed`, which
    /// died: the request's copier came from its own clock and should stay. A known issue:
    /// the reset names the app's shared `timed`, which the request no longer keeps a copy
    /// of, and the record of uses, filed per registration, makes the copier its user.
    @Test func anAppResetKeepsWhatARequestBuiltFromItsOwnDeadSharedCopy() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let appShared = app.saiSharedTimed()
        request.override(\.saiClock) { ChainPart("request clock") }
        let copier = request.saiCopier()
        #expect(copier.source == "copier of request clock")
        app.reset()
        withKnownIssue("A reset drops the users of a registration whose own copy the scope no longer keeps") {
            #expect(request.saiCopier() === copier, "a copier built from the request's own clock was dropped")
        }
        withExtendedLifetime(appShared) {}
    }

    /// An app change of something else, and of a key nothing the request holds was built
    /// from, leaves the request's handler and the app's `timed`.
    @Test func anAppChangeOfSomethingElseLeavesTheRequestAndTheApp() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let timed = app.saiTimed()
        let handler = request.saiHandler()
        let paired = request.saiPairedHandler()
        app.override(\.saiLocal) { ChainPart("new local") }
        #expect(request.saiHandler() === handler)
        #expect(app.saiTimed() === timed)
        #expect(request.saiPairedHandler() !== paired)
        #expect(request.saiPairedHandler().inner?.source == "paired with new local")
        session.override(\.saiLocal) { ChainPart("session local") }
        #expect(request.saiHandler() === handler)
        #expect(app.saiTimed() === timed)
        #expect(request.saiPairedHandler().inner?.source == "paired with session local")
    }

    /// A request's change drops nothing in the app, in its session or in a sibling.
    @Test func aRequestsChangeLeavesItsSessionTheAppAndASibling() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let sibling = DependencyContainer(scopeOf: session)
        let timed = app.saiTimed()
        let sessionHandler = session.saiHandler()
        let siblingHandler = sibling.saiHandler()
        _ = request.saiHandler()
        request.override(\.saiClock) { ChainPart("request clock") }
        #expect(request.saiHandler().root == "request clock")
        #expect(app.saiTimed() === timed)
        #expect(session.saiHandler() === sessionHandler)
        #expect(sibling.saiHandler() === siblingHandler)
    }
}

// MARK: - Concurrency

extension StaleAppInstancesAttackTests {
    /// Requests resolve on many threads while the app overrides and resets the clock and
    /// the session toggles an override of `saiLocal`, all released together. Afterwards
    /// every request's handlers are built from the app's last clock and the session's last
    /// local, through the instances the request serves now, not a copy of its own built
    /// from the same values.
    @Test func requestsResolvingWhileTheAppChangesAndResetsAndTheSessionTogglesEndConsistent() async {
        let problems = Collected<String>()
        let copies = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<15 {
                let app = DependencyContainer()
                let session = DependencyContainer(scopeOf: app)
                let requests = (0..<4).map { _ in DependencyContainer(scopeOf: session) }
                _ = app.saiTimed()
                for request in requests { _ = (request.saiHandler(), request.saiPairedHandler()) }
                concurrently(threads: 8) { index in
                    switch index {
                    case 0:
                        for step in 0..<6 {
                            if step % 3 == 2 {
                                app.reset()
                            } else {
                                app.override(\.saiClock) { ChainPart("app clock \(step)") }
                            }
                        }
                        app.override(\.saiClock) { ChainPart("last app clock") }
                    case 1:
                        for step in 0..<6 {
                            if step % 2 == 0 {
                                session.override(\.saiLocal) { ChainPart("session local \(step)") }
                            } else {
                                session.reset(\.saiLocal)
                            }
                        }
                        session.override(\.saiLocal) { ChainPart("last session local") }
                    default:
                        let request = requests[(index - 2) % requests.count]
                        for _ in 0..<8 {
                            _ = request.saiHandler()
                            _ = request.saiPairedHandler()
                            _ = request.saiTimed()
                        }
                    }
                }
                for (number, request) in requests.enumerated() {
                    let handler = request.saiHandler()
                    let paired = request.saiPairedHandler()
                    if handler.root != "last app clock" {
                        problems.append("round \(round), request \(number): handler from \(handler.root)")
                    }
                    if paired.inner?.source != "paired with last session local" || paired.root != "last app clock" {
                        problems.append(
                            "round \(round), request \(number): paired handler \(paired.inner?.source ?? "") from \(paired.root)")
                    }
                    if handler.inner !== request.saiTimed() || paired.inner !== request.saiLocalAndTimed() {
                        copies.append("round \(round), request \(number)")
                    }
                }
                if app.saiTimed().root != "last app clock" { problems.append("round \(round): the app's timed") }
            }
        }
        #expect(finished)
        #expect(problems.values == [])
        // A request kept its own copy of timed, built from the app's values, when the record
        // of uses filed a resolution of saiLocal on another thread as a use by it: its
        // handlers held the app's instance, the request served its copy. Scopes now decide
        // on a construction's own uses only (ResolvingCode).
        #expect(copies.values == [])
    }

    /// The request's handler, dropped by an app change, rebuilds itself in its `deinit`
    /// (after the request's lock, while the change is still under way) and overrides
    /// something else in the session. Nothing hangs, and the handler the request serves
    /// afterwards is built from the new clock.
    @Test func aDroppedHandlerThatResolvesAndOverridesInItsDeinitEndsOnTheNewClock() async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            let hook = DeinitHook()
            request.setValue(hook, forKey: "sai.hook")
            _ = app.saiTimed()
            _ = request.saiHookedHandler()
            hook.set {
                _ = request.saiHookedHandler()
                _ = request.saiHandler()
                session.override(\.saiLocal) { ChainPart("session local") }
            }
            app.override(\.saiClock) { ChainPart("new clock") }
            if hook.fired != 1 { problems.append("the hook fired \(hook.fired) times") }
            let handler = request.saiHookedHandler()
            if handler.inner.root != "new clock" || handler.inner !== request.saiTimed() {
                problems.append("hooked handler from \(handler.inner.root)")
            }
            if request.saiHandler().root != "new clock" { problems.append("handler from \(request.saiHandler().root)") }
        }
        #expect(finished)
        #expect(problems.values == [])
    }

    /// A tracer on the request resolves through the request, the session and the app for
    /// every event, while other threads override and reset in the app and the session.
    /// Nothing hangs, and the request ends on the app's last clock.
    @Test func aTracerThatResolvesWhileTheAppAndSessionChangeNeitherHangsNorKeepsStaleHandlers() async {
        let problems = Collected<String>()
        let copies = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<10 {
                let app = DependencyContainer()
                let session = DependencyContainer(scopeOf: app)
                let request = DependencyContainer(scopeOf: session)
                let traced = Counter()
                request.tracer = ResolutionTracer { _ in
                    traced.increment()
                    _ = request.saiHandler()
                    _ = session.saiPairedHandler()
                    _ = app.saiTimed()
                }
                _ = request.saiHandler()
                concurrently(threads: 4) { index in
                    switch index {
                    case 0:
                        for step in 0..<5 { app.override(\.saiClock) { ChainPart("app clock \(step)") } }
                        app.reset()
                        app.override(\.saiClock) { ChainPart("last app clock") }
                    case 1:
                        for step in 0..<5 { session.override(\.saiLocal) { ChainPart("session local \(step)") } }
                    default:
                        for _ in 0..<10 { _ = (request.saiHandler(), request.saiPairedHandler()) }
                    }
                }
                if traced.count == 0 { problems.append("round \(round): nothing traced") }
                let handler = request.saiHandler()
                if handler.root != "last app clock" {
                    problems.append("round \(round): handler from \(handler.root)")
                }
                if handler.inner !== request.saiTimed() { copies.append("round \(round)") }
            }
        }
        #expect(finished)
        #expect(problems.values == [])
        // Seen in about 1 round of 125 on a loaded machine while a record of uses filed
        // another thread's resolution of saiLocal as a use by timed: mostly the request
        // served a copy of timed of its own while its handler held the app's; rarely the
        // handler held the request's own copy while the traced road served the app's (the
        // next test shows that one on one thread).
        #expect(copies.values == [])
    }

    /// The tracer test's rare disagreement, on one thread. While the app builds the clock
    /// on another thread, this thread resolves `local` in the app: the app files that as a
    /// use by the clock by time window only, since the clock's construction did not resolve
    /// it. So the request, asking the app for `timed` while its session overrides `local`,
    /// does not learn to build `timed` itself: it shares the app's, and so does the handler
    /// it builds, through every later change. (Filed as the clock's own use, it built a
    /// copy and a handler from it that outlived the session's next change, and its inline
    /// cache and its traced road then served different instances.)
    @Test func anotherThreadsResolutionDuringAnAppConstructionGivesARequestNoCopy() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        session.override(\.saiLocal) { ChainPart("session local 0") }
        let once = OnceGate()
        app.override(\.saiClock) {
            once.pass()
            return ChainPart("gated clock")
        }
        let clock = onThread { app.saiClock() }
        once.gate.entered.wait()
        _ = app.saiLocal()
        once.gate.open()
        _ = clock()
        #expect(request.saiTimed() === app.saiTimed(), "the request built a copy of timed")
        app.override(\.saiClock) { ChainPart("last app clock") }
        _ = request.saiHandler()
        session.override(\.saiLocal) { ChainPart("session local 1") }
        let handler = request.saiHandler()
        let inline = request.saiTimed()
        request.tracer = ResolutionTracer { _ in }
        let traced = request.saiTimed()
        request.tracer = nil
        #expect(handler.root == "last app clock" && traced.root == "last app clock")
        #expect(inline === traced, "the request serves two instances of timed")
        #expect(handler.inner === traced, "the handler holds a timed the traced road does not serve")
        #expect(traced === app.saiTimed())
        // A change of the clock reaches the request: both roads agree again.
        app.override(\.saiClock) { ChainPart("next app clock") }
        let afterwards = request.saiTimed()
        request.tracer = ResolutionTracer { _ in }
        #expect(request.saiTimed() === afterwards && afterwards.root == "next app clock")
        request.tracer = nil
        #expect(request.saiHandler().inner === afterwards)
    }

    /// Tasks resolve a request's async handler while the app overrides the clock: the
    /// request ends with an async handler built from the app's last clock, shared with the
    /// app's async `timed`.
    @Test func asyncHandlersResolvedWhileTheAppOverridesEndOnTheLastClock() async throws {
        for round in 0..<10 {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            _ = try await request.saiAsyncHandler()
            let barrier = AsyncBarrier(parties: 5)
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    await barrier.arrive()
                    for step in 0..<5 { app.override(\.saiClock) { ChainPart("app clock \(step)") } }
                    app.override(\.saiClock) { ChainPart("last app clock") }
                }
                for _ in 0..<4 {
                    group.addTask {
                        await barrier.arrive()
                        for _ in 0..<5 { _ = try? await request.saiAsyncHandler() }
                    }
                }
            }
            let handler = try await request.saiAsyncHandler()
            #expect(handler.root == "last app clock", "round \(round)")
            #expect(try await handler.inner === app.saiAsyncTimed(), "round \(round)")
        }
    }
}

// MARK: - Scale

extension StaleAppInstancesAttackTests {
    /// Prints how long `work` took: the scale tests assert no timing.
    private static func timed<Result>(_ what: String, _ work: () throws -> Result) rethrows -> Result {
        let start = ContinuousClock.now
        defer { print("[SAI timing] \(what): \(ContinuousClock.now - start)") }
        return try work()
    }

    /// An app with 2,000 singletons built from the clock, 100 requests of which 90 are
    /// idle and 10 built a handler from one of those singletons: an app change and an app
    /// reset each hand every request the app's stale keys. The busy requests follow.
    @Test func anAppWithThousandsOfSingletonsAndAHundredRequestsChangesAndResets() async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let requests = (0..<100).map { _ in DependencyContainer(scopeOf: app) }
            Self.timed("build 2,000 app singletons") {
                for number in 0..<2_000 { _ = app.saiTimedFamily(number) }
            }
            for (number, request) in requests.enumerated() where number % 10 == 0 {
                _ = request[saiFamilyHandler: number]()
            }
            Self.timed("app override with 2,000 stale keys, 100 requests") {
                app.override(\.saiClock) { ChainPart("new clock") }
            }
            for (number, request) in requests.enumerated() where number % 10 == 0 {
                if request[saiFamilyHandler: number]().root != "new clock" { problems.append("request \(number) after change") }
            }
            for number in 0..<2_000 { _ = app.saiTimedFamily(number) }
            Self.timed("app reset with 2,000 built keys, 100 requests") { app.reset() }
            for (number, request) in requests.enumerated() where number % 10 == 0 {
                if request[saiFamilyHandler: number]().root != "app clock" { problems.append("request \(number) after reset") }
            }
            // The same change in an app without scopes, for comparison.
            let alone = DependencyContainer()
            for number in 0..<2_000 { _ = alone.saiTimedFamily(number) }
            Self.timed("app override with 2,000 built keys, no scopes") {
                alone.override(\.saiClock) { ChainPart("new clock") }
            }
        }
        #expect(finished)
        #expect(problems.values == [])
    }

    /// A request built 3,000 handlers, one per argument, each from the app's singleton of
    /// that argument, built before: an app change, or a session change, hands it 3,000
    /// stale keys of one registration, whose users are taken once.
    @Test(arguments: [false, true])
    func aRequestWithThousandsOfFamilyArgumentsFollowsAChange(inSession: Bool) async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let count = 3_000
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            for number in 0..<count { _ = app.saiTimedFamily(number) }
            Self.timed("request builds \(count) family handlers") {
                for number in 0..<count { _ = request[saiFamilyHandler: number]() }
            }
            let expected = inSession ? "session clock" : "new clock"
            Self.timed("\(inSession ? "session" : "app") override reaching \(count) family handlers") {
                if inSession {
                    session.override(\.saiClock) { ChainPart(expected) }
                } else {
                    app.override(\.saiClock) { ChainPart(expected) }
                }
            }
            for number in stride(from: 0, to: count, by: 97) where request[saiFamilyHandler: number]().root != expected {
                problems.append("handler \(number)")
            }
        }
        #expect(finished)
        #expect(problems.values == [])
    }

    /// 20,000 nested scopes that built nothing: an app change walks them, and releasing
    /// the innermost releases them all, one `deinit` inside the next.
    @Test func aChainOfTwentyThousandIdleNestedScopesFollowsAnAppChangeAndIsReleased() async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let depth = 20_000
            let app = DependencyContainer()
            var innermost: DependencyContainer? = Self.timed("make \(depth) nested scopes") {
                var scope = app
                for _ in 0..<depth { scope = DependencyContainer(scopeOf: scope) }
                return scope
            }
            _ = app.saiTimed()
            Self.timed("app override through \(depth) idle nested scopes") {
                app.override(\.saiClock) { ChainPart("new clock") }
            }
            if innermost?.saiHandler().root != "new clock" { problems.append("innermost handler") }
            Self.timed("app override through \(depth) nested scopes, the innermost busy") {
                app.override(\.saiClock) { ChainPart("last clock") }
            }
            if innermost?.saiHandler().root != "last clock" { problems.append("innermost handler after the second change") }
            Self.timed("release \(depth) nested scopes") { innermost = nil }
        }
        #expect(finished)
        #expect(problems.values == [])
    }

    /// A chain of 1,000 nested scopes, each with a handler from the app's `timed`: changes
    /// at the app, at the top scope and at the bottom one reach the bottom, and releasing
    /// the chain ends.
    @Test func aChainOfThousandsOfNestedScopesFollowsChangesAndIsReleased() async {
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let depth = 1_000
            let app = DependencyContainer()
            var chain: [DependencyContainer] = []
            Self.timed("make \(depth) nested scopes, each with a handler") {
                var parent = app
                for _ in 0..<depth {
                    let scope = DependencyContainer(scopeOf: parent)
                    _ = scope.saiHandler()
                    chain.append(scope)
                    parent = scope
                }
            }
            Self.timed("app override through \(depth) nested scopes") {
                app.override(\.saiClock) { ChainPart("new clock") }
            }
            if chain[depth - 1].saiHandler().root != "new clock" { problems.append("bottom after the app change") }
            Self.timed("top scope override through \(depth) nested scopes") {
                chain[0].override(\.saiClock) { ChainPart("top clock") }
            }
            if chain[depth - 1].saiHandler().root != "top clock" { problems.append("bottom after the top change") }
            if chain[depth / 2].saiHandler().root != "top clock" { problems.append("middle after the top change") }
            Self.timed("bottom scope override") { chain[depth - 1].override(\.saiClock) { ChainPart("bottom clock") } }
            if chain[depth - 1].saiHandler().root != "bottom clock" { problems.append("bottom after its own change") }
            Self.timed("release \(depth) nested scopes") { chain = [] }
        }
        #expect(finished)
        #expect(problems.values == [])
    }
}
