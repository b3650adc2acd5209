import Foundation
import Testing
@testable import DependencyInjection

// Attacks on a scope's handover of app-wide registrations to its app container
// (`afterHandover(_:_:asked:)`): the app container resets, overrides or shuts down at each
// point of the handover, and the scope must end up sharing the app's instance (never one
// built from the scope's values) unless the instance is built from something the scope
// overrides, which the scope then builds itself. Scopes of scopes, async providers,
// deinits of dropped instances, and many threads at once.
//
// Each gated scenario runs on a thread of its own behind the hang guard and records what it
// saw in `Findings`; the fixtures `ifbAppWho`, `ifbPlainPart` and the gates come from
// InFlightBookkeepingAttackTests.swift.

/// What the app container does to itself in the middle of a scope's handover.
enum SHAChange: String, Sendable, CustomTestStringConvertible {
    case reset, resetKey, override

    var testDescription: String { rawValue }

    /// Applies the change to `app`.
    func apply(to app: DependencyContainer) {
        switch self {
        case .reset: app.reset()
        case .resetKey: app.reset(\.ifbAppWho)
        case .override: app.override(\.ifbAppWho) { IFBPart("app's override") }
        }
    }

    /// What the app's `ifbAppWho` is built from after the change.
    var appSource: String { self == .override ? "app's override" : "app" }
}

/// Counts down the changes a tracer still makes.
final class SHABudget: @unchecked Sendable {
    // @unchecked: `left` is only touched while holding `lock`.
    private let lock = NSLock()
    private var left: Int
    init(_ left: Int) { self.left = left }

    /// Whether a change is left, taking it.
    func take() -> Bool {
        lock.withLock {
            guard left > 0 else { return false }
            left -= 1
            return true
        }
    }
}

extension DependencyContainer {
    /// What a scope overrides in `shaTimed`.
    var shaClock: Provider<IFBPart> { singleton { IFBPart("app clock") } }
    /// An app-wide singleton built from the clock, held at the next gate after reading it.
    var shaTimed: Provider<IFBPart> {
        singleton {
            self.count("shaTimed")
            let clock = self.shaClock()
            self.ifbPassGate()
            return IFBPart("timed", inner: clock)
        }
    }
    /// The stored value "ifb.who", as this container reads it.
    var shaWho: String { getValue(forKey: "ifb.who") ?? "none" }
    /// A shared class instance that reads a stored value through `self`, held at the next gate.
    var shaSharedWho: Provider<IFBPart> {
        shared {
            self.ifbPassGate()
            return IFBPart(self.shaWho)
        }
    }
    /// A shared value that reads a stored value through `self`.
    var shaWhoValue: Provider<String> { shared { self.shaWho } }
    /// An app-wide singleton whose deinit resolves from the container that built it.
    var shaWatched: Provider<IFBReleaseWatcher> {
        singleton { IFBReleaseWatcher(container: self, releases: self.getValue(forKey: "ifb.releases")!) }
    }
    /// An async app-wide singleton built from the (synchronous) clock.
    var shaAsyncTimed: AsyncProvider<IFBPart> {
        singleton { IFBPart("timed", inner: self.shaClock()) }
    }
    /// An async app-wide singleton that reads a stored value through `self`, held at the
    /// async gate stored under "sha.asyncGate", if any.
    var shaAsyncWho: AsyncProvider<IFBPart> {
        singleton {
            self.count("shaAsyncWho")
            if let gate: IFBAsyncGate = self.getValue(forKey: "sha.asyncGate") { await gate.pass() }
            return IFBPart(self.shaWho)
        }
    }
}

/// An app container and a scope of it that overrides something `ifbAppWho` does not use
/// (`ifbPlainPart`), each with its own "ifb.who": "app" and "scope".
func appAndScopeOverridingSomething() -> (app: DependencyContainer, scope: DependencyContainer) {
    let app = DependencyContainer()
    app.setValue("app", forKey: "ifb.who")
    let scope = DependencyContainer(scopeOf: app)
    scope.setValue("scope", forKey: "ifb.who")
    scope.override(\.ifbPlainPart) { IFBPart("scope's") }
    return (app, scope)
}

@Suite struct ScopeHandoverAttackTests {
    /// Runs `scenario` on a thread of its own behind the hang guard and checks what it found.
    private func run(_ scenario: @escaping @Sendable (Findings) -> Void) async {
        let findings = Findings()
        #expect(await finishesWithoutHangingOffThePool { scenario(findings) }, "a scope's resolution hung")
        #expect(findings.problems == [])
    }

    /// Sets a tracer on `app` (and its scopes) that applies `change` to `app` as soon as it
    /// hears that `name` was built, `times` times: between a handover and the scope's look
    /// at what the app keeps.
    private func change(
        _ app: DependencyContainer, by change: SHAChange = .reset, whenBuilt name: String, times: Int
    ) {
        let budget = SHABudget(times)
        app.tracer = ResolutionTracer { [weak app] events in
            guard let app, events.contains(where: { $0.name == name && $0.outcome == .built }), budget.take() else {
                return
            }
            change.apply(to: app)
        }
    }

    /// Resolves with `resolve` on a thread of its own, holding the app container's first
    /// construction at a gate while `change` is applied to it, and returns what it handed out.
    private func resolve<Value: Sendable>(
        _ resolve: @escaping @Sendable () -> Value, whileApplying change: SHAChange, to app: DependencyContainer
    ) -> Value {
        let gates = app.ifbInstallGates(1)
        let held = onThread(resolve)
        gates[0].entered.wait()
        change.apply(to: app)
        gates[0].open()
        return held()
    }

    // MARK: - The app container changes while it builds for the scope

    /// Each change of the app container while it builds `ifbAppWho` for a request whose
    /// session overrides something else: the request ends up with the app's instance, built
    /// from the app's values, and keeps no instance of its own.
    @Test(arguments: [SHAChange.reset, .resetKey, .override])
    func aChangeOfTheAppWhileItBuildsForARequestInASessionLeavesTheRequestSharingTheAppsInstance(
        change: SHAChange
    ) async {
        await run { findings in
            let (app, session) = appAndScopeOverridingSomething()
            let request = DependencyContainer(scopeOf: session)
            request.setValue("request", forKey: "ifb.who")
            let handedOut = resolve({ request.ifbAppWho() }, whileApplying: change, to: app)
            let appInstance = app.ifbAppWho()
            findings.check(handedOut.source == change.appSource, "\(change): handed out \(handedOut.source)")
            findings.check(handedOut === appInstance, "\(change): the request does not share the app's instance")
            findings.check(request.ifbAppWho() === appInstance, "\(change): the request keeps an instance of its own")
            findings.check(session.ifbAppWho() === appInstance, "\(change): the session keeps an instance of its own")
            withExtendedLifetime((session, request)) {}
        }
    }

    /// A shared class instance: the app container is reset while it builds it for a scope
    /// that overrides something else; the scope gets the app's instance, not one built from
    /// its own values.
    @Test func aSharedInstanceTheAppResetsWhileBuildingItForAScopeIsTheAppsInTheScope() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let handedOut = resolve({ scope.shaSharedWho() }, whileApplying: .reset, to: app)
            findings.check(handedOut.source == "app", "handed out \(handedOut.source)")
            findings.check(handedOut === app.shaSharedWho(), "the scope does not share the app's instance")
            findings.check(scope.shaSharedWho() === handedOut, "two instances in the scope")
            withExtendedLifetime(scope) {}
        }
    }

    // MARK: - The app container changes after it built for the scope

    /// The app container's tracer changes the app container as soon as it hears that
    /// `ifbAppWho` was built, between the handover and the scope's look at what the app
    /// keeps: the scope asks again and shares the app's instance.
    @Test(arguments: [SHAChange.reset, .resetKey, .override])
    func aChangeOfTheAppRightAfterItsHandoverLeavesTheScopeSharingTheAppsInstance(change: SHAChange) async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let builds = app.counter("ifbAppWho")
            self.change(app, by: change, whenBuilt: "ifbAppWho", times: 1)
            let handedOut = scope.ifbAppWho()
            app.tracer = nil
            let appInstance = app.ifbAppWho()
            findings.check(handedOut.source == change.appSource, "\(change): handed out \(handedOut.source)")
            findings.check(handedOut === appInstance, "\(change): the scope does not share the app's instance")
            findings.check(scope.ifbAppWho() === appInstance, "\(change): the scope keeps an instance of its own")
            findings.check(builds.count == (change == .override ? 1 : 2), "\(change): \(builds.count) constructions")
            withExtendedLifetime(scope) {}
        }
    }

    /// The app container drops what it hands over one time fewer than the scope asks: the
    /// scope's last ask finds the app's instance, and the scope shares it.
    @Test func aScopeAsksAsOftenAsAllowedBeforeGivingUp() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let builds = app.counter("ifbAppWho")
            let drops = DependencyContainer.handoversPerResolution - 1
            change(app, whenBuilt: "ifbAppWho", times: drops)
            let handedOut = scope.ifbAppWho()
            app.tracer = nil
            findings.check(handedOut.source == "app", "handed out \(handedOut.source)")
            findings.check(handedOut === app.ifbAppWho(), "the scope does not share the app's instance")
            findings.check(builds.count == drops + 1, "\(builds.count) constructions for \(drops) drops")
            withExtendedLifetime(scope) {}
        }
    }

    /// Instances the app container drops during a handover are released as the scope asks
    /// again, outside every lock: their deinits resolve from and write to the container.
    @Test func instancesDroppedDuringAHandoverMayUseTheContainerWhenReleased() async {
        let drops = 3
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            let releases = Counter()
            app.setValue(releases, forKey: "ifb.releases")
            change(app, whenBuilt: "shaWatched", times: drops)
            do {
                let handedOut = scope.shaWatched()
                app.tracer = nil
                findings.check(releases.count == drops, "\(releases.count) instances released for \(drops) drops")
                findings.check(handedOut === app.shaWatched(), "the scope does not share the app's instance")
                findings.check(scope.getValue(forKey: "ifb.touchedByDeinit") == true, "no deinit wrote to the container")
            }
            // The kept instance holds the scope unowned: release it while the scope lives.
            app.reset()
            findings.check(releases.count == drops + 1, "\(releases.count) instances released in all")
            withExtendedLifetime(scope) {}
        }
    }

    // MARK: - Async

    /// The async road: the app container resets `shaAsyncWho` alone while it builds it for
    /// a scope that overrides something else; the scope ends up with the app's instance.
    @Test func anAsyncSingletonTheAppResetsWhileBuildingItForAScopeIsTheAppsInTheScope() async throws {
        let (app, scope) = appAndScopeOverridingSomething()
        let gate = IFBAsyncGate()
        app.setValue(gate, forKey: "sha.asyncGate")
        let held = Task { try await scope.shaAsyncWho() }
        await gate.entered.wait()
        app.reset(\.shaAsyncWho)
        app.removeValue(forKey: "sha.asyncGate")
        gate.opened.open()
        let handedOut = try await held.value
        let appInstance = try await app.shaAsyncWho()
        #expect(handedOut.source == "app")
        #expect(handedOut === appInstance)
        #expect(try await scope.shaAsyncWho() === appInstance)
    }

    /// The async road, after the build: a tracer resets the app container right after it
    /// built `shaAsyncWho` for a request in a session that overrides something else.
    @Test func anAsyncSingletonResetRightAfterItsHandoverToARequestIsAskedForAgain() async throws {
        let (app, session) = appAndScopeOverridingSomething()
        let request = DependencyContainer(scopeOf: session)
        let builds = app.counter("shaAsyncWho")
        change(app, whenBuilt: "shaAsyncWho", times: 1)
        let handedOut = try await request.shaAsyncWho()
        app.tracer = nil
        let appInstance = try await app.shaAsyncWho()
        #expect(handedOut.source == "app")
        #expect(handedOut === appInstance)
        #expect(builds.count == 2)
        withExtendedLifetime((session, request)) {}
    }

    // MARK: - Under load

    /// Threads resolve app-wide registrations through scopes (some overriding something
    /// else, one overriding the clock, a request in a session) while one thread resets,
    /// overrides and shuts down the app container in a loop. Every instance a scope that
    /// overrides nothing it uses was handed is built from the app's values, and at the end
    /// such scopes share the app's instances; the scope that overrides the clock keeps its own.
    @Test func scopesResolvingWhileTheAppChangesInALoopEndSharingTheAppsInstances() async {
        let app = DependencyContainer()
        app.setValue("app", forKey: "ifb.who")
        let plain = (0..<3).map { index in
            let scope = DependencyContainer(scopeOf: app)
            scope.setValue("scope \(index)", forKey: "ifb.who")
            scope.override(\.ifbPlainPart) { IFBPart("scope's") }
            return scope
        }
        let session = plain[0]
        let request = DependencyContainer(scopeOf: session)
        request.setValue("request", forKey: "ifb.who")
        let clocked = DependencyContainer(scopeOf: app)
        clocked.setValue("clocked", forKey: "ifb.who")
        clocked.override(\.shaClock) { IFBPart("scope clock") }
        let sharing = plain + [request]
        let (wrong, leaked) = (Collected<String>(), Collected<String>())
        let (changes, rounds) = (1_000, 600)
        let finished = await concurrentlyOffThePool(threads: 5) { thread in
            if thread == 0 {
                for round in 0..<changes {
                    switch round % 4 {
                    case 0: app.reset()
                    case 1: app.reset(\.ifbAppWho)
                    case 2: app.override(\.ifbSource) { "v\(round)" }
                    default: app.shutdown()
                    }
                }
            } else {
                for round in 0..<rounds {
                    let scope = sharing[(round + thread) % sharing.count]
                    let who = scope.ifbAppWho()
                    if who.source != "app" { wrong.append("ifbAppWho read \(who.source)") }
                    let timed = scope.shaTimed()
                    if timed.inner?.source == "scope clock" {
                        leaked.append("shaTimed built from the clocked scope's clock")
                    } else if timed.inner?.source != "app clock" {
                        wrong.append("shaTimed built from \(timed.inner?.source ?? "")")
                    }
                    let shared = scope.shaSharedWho()
                    if shared.source != "app" { wrong.append("shaSharedWho read \(shared.source)") }
                    let own = clocked.shaTimed()
                    if own.inner?.source != "scope clock" { wrong.append("the clocked scope's shaTimed has \(own.inner?.source ?? "")") }
                }
            }
        }
        #expect(finished)
        guard finished else { return }
        #expect(wrong.values.isEmpty, "\(wrong.values.count) wrong: \(Array(Set(wrong.values)))")
        // The clocked scope, handing `shaTimed` over before it learned that it builds its own,
        // must not serve its cached clock to the app's construction.
        #expect(leaked.values.isEmpty, "\(leaked.values.count) handed out from the app built from a scope's clock")
        #expect(app.shaTimed().inner?.source == "app clock")
        #expect(clocked.shaTimed() !== app.shaTimed() && clocked.shaTimed().inner?.source == "scope clock")
        let (who, timed) = (app.ifbAppWho(), app.shaTimed())
        for scope in sharing {
            #expect(scope.ifbAppWho() === who, "a scope keeps its own ifbAppWho")
            #expect(scope.shaTimed() === timed, "a scope keeps its own shaTimed")
        }
    }

    // MARK: - What the handover decides from

    /// A shared value type is never kept, so the app container keeps no instance to look at;
    /// the app's record of uses, which survives the construction when nothing was dropped,
    /// shows that the value uses nothing the scope overrides: the scope shares the app's
    /// value, and never builds one from its own stored values.
    @Test func aSharedValueAScopeOverridingSomethingElseAsksForIsTheApps() {
        let (app, scope) = appAndScopeOverridingSomething()
        let bystander = DependencyContainer(scopeOf: app)
        bystander.setValue("bystander", forKey: "ifb.who")
        #expect(app.shaWhoValue() == "app")
        #expect(bystander.shaWhoValue() == "app", "a scope that overrides nothing shares the app's value")
        #expect(scope.shaWhoValue() == "app")
    }

    /// Inside an app-wide construction a scope handed over, `self` is the scope, and what the
    /// construction resolves through it comes from the app container, even a singleton the
    /// scope already keeps (its own clock, from its override): the scope's inline cache
    /// steps aside while it hands over, else the app would build and keep `shaTimed` from
    /// the scope's clock, record no use of the clock, and every other scope would share it.
    @Test func anAppSingletonBuiltForAScopeNeverTakesTheScopesCachedOverride() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.shaClock) { IFBPart("scope clock") }
        #expect(scope.shaClock().source == "scope clock")  // now cached in the scope
        let timed = scope.shaTimed()
        #expect(timed.inner?.source == "scope clock")
        #expect(app.shaTimed().inner?.source == "app clock")
        #expect(app.shaTimed() !== timed)
        #expect(DependencyContainer(scopeOf: app).shaTimed().inner?.source == "app clock")
        withExtendedLifetime(scope) {}
    }

    /// The async road: the scope's inline cache steps aside while it hands an async
    /// singleton over, so the app's construction gets the app's clock, not the one the
    /// scope keeps.
    @Test func anAsyncAppSingletonBuiltForAScopeNeverTakesTheScopesCachedOverride() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.shaClock) { IFBPart("scope clock") }
        #expect(scope.shaClock().source == "scope clock")  // now cached in the scope
        let timed = try await scope.shaAsyncTimed()
        #expect(timed.inner?.source == "scope clock")
        #expect(try await app.shaAsyncTimed().inner?.source == "app clock")
        #expect(try await app.shaAsyncTimed() !== timed)
        withExtendedLifetime(scope) {}
    }

    /// The same reached without resolving the clock by hand: the scope builds its own
    /// `shaTimed` because the app's record shows it uses the clock, and keeps its own clock
    /// on the way. The app container is reset, which takes the record (and the scope's
    /// `shaTimed`, not its clock). The scope hands `shaTimed` over again; the app builds it
    /// from its own clock, and the scope, learning that it uses the clock, builds its own.
    @Test func anAppResetMakesAScopeHandOverASingletonItBuiltFromItsOverrideAndTheAppTakesTheScopesValue() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.shaClock) { IFBPart("scope clock") }
        #expect(app.shaTimed().inner?.source == "app clock")
        #expect(scope.shaTimed().inner?.source == "scope clock")
        app.reset()
        let timed = scope.shaTimed()
        #expect(timed.inner?.source == "scope clock")
        #expect(app.shaTimed().inner?.source == "app clock")
        #expect(timed !== app.shaTimed())
        withExtendedLifetime(scope) {}
    }

    /// A tracer resets the app container after every build until the scope gives up asking;
    /// the scope then hands out the app's last instance, keeping nothing of its own: once
    /// the app stops dropping it, the scope shares the app's instance.
    @Test func aScopeThatGaveUpAskingStillSharesTheAppsInstanceAfterwards() async {
        await run { findings in
            let (app, scope) = appAndScopeOverridingSomething()
            change(app, whenBuilt: "ifbAppWho", times: DependencyContainer.handoversPerResolution)
            let handedOut = scope.ifbAppWho()
            app.tracer = nil
            findings.check(handedOut.source == "app", "handed out \(handedOut.source)")
            findings.check(scope.ifbAppWho() === app.ifbAppWho(), "the scope keeps an instance of its own")
            withExtendedLifetime(scope) {}
        }
    }
}
