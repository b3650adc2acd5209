import Foundation
import Testing
@testable import DependencyInjection

// Attacks on a scope's async handovers, on what a scope learns it builds itself from the
// constructions it handed over, and on the depth of chains a scope hands over.
//
// - An async app-wide construction a scope handed over runs in a task of its own and keeps
//   the scope's cache aside (`ContainerState.handovers`) until it ends, even when every
//   waiter was cancelled: the count must come back to 0 whatever the ending, and the scope
//   must not outlive the construction.
// - A served resolution whose app instance was built from what the scope overrides makes
//   the scope learn the served chain (`ContainerState.learnedOwn`).
// - Deep chains through a scope must not overflow the stack of a debug build.
//
// `IFBPart`, `IFBAsyncGate`, `HCAError` and the `hca*` registrations come from
// InFlightBookkeepingAttackTests.swift and HandoverCacheAttackTests.swift.

extension DependencyContainer {
    /// An async app-wide singleton built from the clock: it waits at the gate stored in the
    /// app container under "a20.gate", records the clock it got in "a20.seen", and throws
    /// when "a20.fails" is set.
    var a20GatedTimed: AsyncProvider<IFBPart> {
        singleton {
            if let gate: IFBAsyncGate = self.getValue(forKey: "a20.gate") { await gate.pass() }
            let clock = self.hcaClock()
            if let seen: Collected<String> = self.getValue(forKey: "a20.seen") { seen.append(clock.source) }
            if let fails: Bool = self.getValue(forKey: "a20.fails"), fails { throw HCAError() }
            return IFBPart("timed", inner: clock)
        }
    }
    /// App-wide singletons unrelated to the clock: `a20UsesUnrelated` is built from `a20Y`,
    /// built from `a20Z`.
    var a20Z: Provider<IFBPart> { singleton { IFBPart("z") } }
    var a20Y: Provider<IFBPart> { singleton { IFBPart("y", inner: self.a20Z()) } }
    var a20UsesUnrelated: Provider<IFBPart> { singleton { IFBPart("uses y", inner: self.a20Y()) } }
    /// A decorated registration unrelated to the clock, and a singleton built from it.
    var a20Decorated: Provider<IFBPart> { singleton { IFBPart("decorated") } }
    var a20UsesDecorated: Provider<IFBPart> { singleton { IFBPart("uses decorated", inner: self.a20Decorated()) } }
    /// A chain of app-wide singletons, `n` deep, ending at the clock.
    var a20Chain: ProviderFamily<Int, Int> {
        singleton { (n: Int) in n == 0 ? self.hcaClock().argument : 1 + self.a20Chain(n - 1) }
    }

    /// An app-wide singleton built from the clock of 2.
    var a20UsesClock2: Provider<IFBPart> { singleton { IFBPart("uses clock 2", inner: self.hcaClocks(2)) } }
    var a20UsesUsesClock2: Provider<IFBPart> { singleton { IFBPart("uses", inner: self.a20UsesClock2()) } }

    /// What this scope learned it builds itself.
    var a20LearnedOwn: Set<RegistrationKey> { withStateLock { $0.learnedOwn } }
}

/// How the construction a cancelled waiter handed over ends.
enum A20Ending: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case completes, `throws`, appResetMidBuild, appOverriddenMidBuild
    var testDescription: String { rawValue }
}

@Suite struct AsyncHandoverAttackTests {
    // MARK: - The async handover's count

    /// The only task waiting for an async construction a scope handed over is cancelled,
    /// and then everybody drops the scope. While the construction runs, its task keeps the
    /// scope and its cache aside (count 1); the construction, completing, throwing, or
    /// dropped by a reset or override of the app container, resolves the clock through the
    /// scope and gets the app's; then the count is back to 0 and the scope is released.
    @Test(arguments: A20Ending.allCases)
    func aCancelledHandoverOfADroppedScopeEndsWithItsConstruction(ending: A20Ending) async {
        let app = DependencyContainer()
        let (gate, seen) = (IFBAsyncGate(), Collected<String>())
        app.setValue(gate, forKey: "a20.gate")
        app.setValue(seen, forKey: "a20.seen")
        if ending == .throws { app.setValue(true, forKey: "a20.fails") }
        weak var weakScope: DependencyContainer?
        do {
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.hcaClock) { IFBPart("scope clock") }
            #expect(scope.hcaClock().source == "scope clock")  // cached in the scope
            weakScope = scope
            let waiter = Task { try await scope.a20GatedTimed() }
            await gate.entered.wait()
            waiter.cancel()
            let result = await waiter.result
            #expect(throws: CancellationError.self) { try result.get() }
        }
        #expect(weakScope != nil, "the construction's task keeps the scope while it runs")
        #expect(weakScope?.hcaHandovers == 1, "the construction's handover, while it runs")
        #expect(weakScope?.hcaCacheStepsAside == true)
        switch ending {
        case .completes, .throws: break
        case .appResetMidBuild: app.reset(\.a20GatedTimed)
        case .appOverriddenMidBuild: app.override(\.a20GatedTimed) { IFBPart("app override") }
        }
        gate.opened.open()
        #expect(await eventually { seen.values.count == 1 && weakScope == nil }, "the scope outlives its construction")
        #expect(seen.values == ["app clock"], "the construction got the scope's clock through `self`")
        switch ending {
        case .completes: #expect((try? await app.a20GatedTimed())?.inner?.source == "app clock")
        case .throws: await #expect(throws: HCAError.self) { try await app.a20GatedTimed() }
        case .appResetMidBuild: #expect((try? await app.a20GatedTimed())?.inner?.source == "app clock")
        case .appOverriddenMidBuild: #expect((try? await app.a20GatedTimed())?.source == "app override")
        }
    }

    /// Four scopes, each overriding the clock, wait for one async construction: the first
    /// hands it over, the others wait for it. All four are cancelled: only the builder's
    /// scope keeps its count (1) until the construction ends, which gets the app's clock;
    /// then every count is 0, and every scope, still held here, serves its cache inline.
    @Test func cancelledWaitersOfSeveralScopesLeaveOnlyTheBuildersCountUntilTheConstructionEnds() async throws {
        let app = DependencyContainer()
        let (gate, seen) = (IFBAsyncGate(), Collected<String>())
        app.setValue(gate, forKey: "a20.gate")
        app.setValue(seen, forKey: "a20.seen")
        let scopes = (0..<4).map { _ in DependencyContainer(scopeOf: app) }
        for scope in scopes { scope.override(\.hcaClock) { IFBPart("scope clock") } }
        let clocks = scopes.map { $0.hcaClock() }
        let builder = Task { try await scopes[0].a20GatedTimed() }
        await gate.entered.wait()
        let waiters = scopes.dropFirst().map { scope in Task { try await scope.a20GatedTimed() } }
        #expect(await eventually { scopes.allSatisfy { $0.hcaHandovers >= 1 } })
        #expect(scopes[0].hcaHandovers == 2, "the builder's waiter and its construction")
        for waiter in [builder] + waiters { waiter.cancel() }
        for waiter in [builder] + waiters { _ = await waiter.result }
        #expect(scopes.map(\.hcaHandovers) == [1, 0, 0, 0])
        gate.opened.open()
        let built = try await app.a20GatedTimed()
        #expect(built.inner?.source == "app clock")
        #expect(await eventually { scopes.allSatisfy { $0.hcaHandovers == 0 && !$0.hcaCacheStepsAside } })
        #expect(seen.values == ["app clock"])
        for (scope, clock) in zip(scopes, clocks) { #expect(scope.hcaClock() === clock) }
    }

    // MARK: - What a served resolution teaches the scope

    /// A scope overrides the clock; the app container keeps `a20Y` (built from `a20Z`),
    /// `a20Decorated`, and family members built from clocks other than the one the scope
    /// overrides. The app's constructions the scope hands over use only those: the scope
    /// shares every instance and learns nothing, also after the app resets them (which
    /// takes its record), and in a request whose session alone overrides the clock.
    @Test func aScopeSharesAppInstancesBuiltFromNothingItOverrides() {
        let app = DependencyContainer()
        _ = app.a20Y()
        _ = app.hcaClock()
        app.decorate(\.a20Decorated) { IFBPart("app decoration", inner: $0) }
        _ = app.a20Decorated()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        session.override(\.hcaClock) { IFBPart("session clock") }
        for round in 0..<2 {
            for container in [scope, request] {
                #expect(container.a20UsesUnrelated() === app.a20UsesUnrelated(), "round \(round)")
                #expect(container.a20UsesDecorated() === app.a20UsesDecorated(), "round \(round)")
                #expect(container.a20UsesDecorated().inner?.source == "app decoration")
            }
            app.reset(\.a20UsesUnrelated)
            app.reset(\.a20UsesDecorated)
        }
        #expect(scope.a20LearnedOwn.isEmpty && request.a20LearnedOwn.isEmpty && session.a20LearnedOwn.isEmpty)
    }

    /// A scope overrides the clock and, unrelated, `ifbPlainPart`. The app keeps `hcaMid`,
    /// built from its clock; the scope's `hcaTop` is built from its own clock, which a served
    /// resolution taught it. Once the scope removes its clock override, it forgets what it
    /// learned and shares the app's `hcaTop` again, although it still overrides something.
    @Test func aScopeThatRemovedTheOverrideAnInstanceWasBuiltFromSharesItAgain() {
        let app = DependencyContainer()
        #expect(app.hcaMid().inner?.source == "app clock")
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.ifbPlainPart) { IFBPart("scope's plain") }
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        #expect(scope.hcaTop().inner?.inner?.source == "scope clock")
        scope.reset(\.hcaClock)
        #expect(scope.hcaTop() === app.hcaTop(), "the scope builds its own hcaTop from the app's clock")
        #expect(scope.hcaTop().inner?.inner?.source == "app clock")
    }

    /// The same when the override was the enclosing session's: a request in the session,
    /// overriding something else, learned to build its own `hcaTimed` from the session's
    /// clock; once the session removes it, the request forgets and shares the app's again.
    @Test func aRequestForgetsWhatItLearnedFromItsSessionsRemovedOverride() {
        let (app, session, request) = appSessionAndRequest()
        session.override(\.hcaClock) { IFBPart("session clock") }
        request.override(\.ifbPlainPart) { IFBPart("request's plain") }
        #expect(request.hcaTimed().inner?.source == "session clock")
        #expect(!request.a20LearnedOwn.isEmpty, "what the request learned from the session's clock")
        session.reset(\.hcaClock)
        #expect(request.a20LearnedOwn.isEmpty)
        #expect(request.hcaTimed() === app.hcaTimed())
        #expect(request.hcaTimed().inner?.source == "app clock")
    }

    /// The same with a clock the construction asks for itself (`hcaTimed`): the scope
    /// shares the app's instance again once it removes the override.
    @Test func aScopeThatRemovedAnOverrideItsHandedOverConstructionAskedForSharesItAgain() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.ifbPlainPart) { IFBPart("scope's plain") }
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        #expect(scope.hcaTimed().inner?.source == "scope clock")
        scope.reset(\.hcaClock)
        #expect(scope.hcaTimed() === app.hcaTimed())
    }

    /// A scope overrides the clock of 1 only; the app keeps `a20UsesClock2`, built from the
    /// clock of 2. The app's `a20UsesUsesClock2`, handed over, should be shared: nothing in
    /// it uses the clock of 1.
    @Test func aScopeOverridingOneArgumentSharesWhatIsBuiltFromAnother() {
        let app = DependencyContainer()
        _ = app.a20UsesClock2()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.hcaClocks[1]) { IFBPart("scope clock", argument: 1) }
        withKnownIssue(
            """
            The app's record of uses files a parameterized use under its registration, all \
            arguments together (ContainerState.recordUse), so `built(_:fromAnyOf:)` takes the \
            clock of 2 for the clock of 1 (pre-existing; 854edb3 also makes the scope learn it).
            """
        ) {
            #expect(scope.a20UsesUsesClock2() === app.a20UsesUsesClock2())
        }
    }

    // MARK: - Depth

    /// A scope that overrides nothing the chain uses, then one that overrides the clock at
    /// its bottom, resolve a 400-deep chain of app-wide singletons on a thread of their own
    /// with the default stack: the first shares the app's chain, the second learns and
    /// builds its own, and neither overflows the stack (also in a debug ThreadSanitizer build).
    @Test func aScopeResolvesADeepChainItHandsOver() async {
        // Each singleton in flight records the uses of those above it: the cost grows as the
        // square of the depth, and 1,000 took 95 s under ThreadSanitizer.
        let depth = 400
        let (shared, own, appValue) = await onAThreadThatEnds {
            let app = DependencyContainer()
            let sharing = DependencyContainer(scopeOf: app)
            sharing.override(\.ifbPlainPart) { IFBPart("scope's plain") }
            let shared = sharing.a20Chain(depth)
            let building = DependencyContainer(scopeOf: app)
            building.override(\.hcaClock) { IFBPart("scope clock", argument: 7) }
            let own = building.a20Chain(depth)
            return (shared, own, app.a20Chain(depth))
        }
        #expect(shared == depth && appValue == depth)
        #expect(own == depth + 7)
    }
}
