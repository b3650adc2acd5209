import Foundation
import Testing
@testable import DependencyInjection

// Attacks on three caches of the engine: a scope's list of what it and the scopes above it
// override (`ContainerState.overriddenRegistrations`, dropped by every change of overrides or
// decorations but an override of a registration it lists), the override table that keeps its first entry inline
// (`OverrideTable`), and a scope's inline cache stepping aside while it hands a
// registration to its app container (`ContainerState.handovers`).
//
// `IFBPart`, the gates and `IFBReleaseWatcher` come from InFlightBookkeepingAttackTests.swift.

/// The error of a construction that fails during a handover.
struct HCAError: Error {}

extension DependencyContainer {
    /// What a scope overrides in `hcaTimed`.
    var hcaClock: Provider<IFBPart> { singleton { IFBPart("app clock") } }
    /// An app-wide singleton built from the clock.
    var hcaTimed: Provider<IFBPart> { singleton { IFBPart("timed", inner: self.hcaClock()) } }
    /// An app-wide singleton built from `hcaTimed`: a handover inside a handover.
    var hcaOuter: Provider<IFBPart> { singleton { IFBPart("outer", inner: self.hcaTimed()) } }
    /// Clocks by argument, and an app-wide singleton built from the clock of 1.
    var hcaClocks: ProviderFamily<Int, IFBPart> { singleton { (n: Int) in IFBPart("app clock", argument: n) } }
    var hcaFamilyTimed: Provider<IFBPart> { singleton { IFBPart("timed", inner: self.hcaClocks(1)) } }
    /// An app-wide singleton built from the clock, held at the next gate first.
    var hcaSlow: Provider<IFBPart> {
        singleton {
            self.ifbPassGate()
            return IFBPart("slow", inner: self.hcaClock())
        }
    }
    /// Built in the scope, once.
    var hcaScoped: Provider<IFBPart> { scoped { IFBPart("scoped") } }
    /// An app-wide singleton built from the clock through `hcaMid`, which the app may
    /// already keep.
    var hcaMid: Provider<IFBPart> { singleton { IFBPart("mid", inner: self.hcaClock()) } }
    var hcaTop: Provider<IFBPart> { singleton { IFBPart("top", inner: self.hcaMid()) } }
    /// Factories whose overrides the override-table tests install.
    var hcaFactory0: Provider<IFBPart> { factory { IFBPart("registration 0") } }
    var hcaFactory1: Provider<IFBPart> { factory { IFBPart("registration 1") } }
    var hcaFactory2: Provider<IFBPart> { factory { IFBPart("registration 2") } }

    /// Async app-wide singletons: one built from the async clock, one built from the sync
    /// clock after the async gate stored under "hca.asyncGate", one that fails.
    var hcaAsyncClock: AsyncProvider<IFBPart> { singleton { IFBPart("app clock") } }
    var hcaAsyncTimed: AsyncProvider<IFBPart> {
        singleton { IFBPart("timed", inner: try await self.hcaAsyncClock()) }
    }
    var hcaGatedTimed: AsyncProvider<IFBPart> {
        singleton {
            if let gate: IFBAsyncGate = self.getValue(forKey: "hca.asyncGate") { await gate.pass() }
            return IFBPart("timed", inner: self.hcaClock())
        }
    }
    var hcaFailing: AsyncProvider<IFBPart> {
        singleton {
            _ = self.hcaClock()
            throw HCAError()
        }
    }

    /// App-wide singletons built from the clock that first run the `HCABeforeClock` stored
    /// in the container building them, if any.
    var hcaHookedTimed: Provider<IFBPart> {
        singleton {
            (self.getValue(forKey: "hca.beforeClock") as HCABeforeClock?)?.run()
            return IFBPart("timed", inner: self.hcaClock())
        }
    }
    var hcaAsyncHookedTimed: AsyncProvider<IFBPart> {
        singleton {
            (self.getValue(forKey: "hca.beforeClock") as HCABeforeClock?)?.run()
            return IFBPart("timed", inner: try await self.hcaAsyncClock())
        }
    }

    /// How many handovers this scope has under way.
    var hcaHandovers: Int { withStateLock { $0.handovers } }
    /// Whether this container's inline cache steps aside now.
    var hcaCacheStepsAside: Bool { withStateLock { $0.isBuilding } }
}

/// What a construction runs before it resolves the clock, once.
final class HCABeforeClock: Sendable {
    private let action: @Sendable () -> Void
    private let ran = _Locked(false)
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    func run() {
        let first = ran.withLock { ran in
            defer { ran = true }
            return !ran
        }
        if first { action() }
    }
}

/// What a test installs in a scope, and which app-wide singleton it changes.
enum HCAInstall: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case override, decoration, mainActorOverride, familyOverride, argumentOverride

    var testDescription: String { rawValue }

    @MainActor func install(in container: DependencyContainer) {
        switch self {
        case .override: container.override(\.hcaClock) { IFBPart("scope clock") }
        case .decoration: container.decorate(\.hcaClock) { IFBPart("scope clock", inner: $0) }
        case .mainActorOverride: container.override(\.hcaClock) { @MainActor in IFBPart("scope clock") }
        case .familyOverride: container.override(\.hcaClocks) { IFBPart("scope clock", argument: $0) }
        case .argumentOverride: container.override(\.hcaClocks[1]) { IFBPart("scope clock", argument: 1) }
        }
    }

    /// Removes what ``install(in:)`` installed, by key.
    func resetKey(in container: DependencyContainer) {
        switch self {
        case .override, .decoration, .mainActorOverride: container.reset(\.hcaClock)
        case .familyOverride: container.reset(\.hcaClocks)
        case .argumentOverride: container.reset(\.hcaClocks[1])
        }
    }

    /// The app-wide singleton built from what is installed.
    func timed(in container: DependencyContainer) -> IFBPart {
        switch self {
        case .override, .decoration, .mainActorOverride: container.hcaTimed()
        case .familyOverride, .argumentOverride: container.hcaFamilyTimed()
        }
    }
}

/// Where the change is made: the request itself, or the session it is a scope of.
enum HCAChanger: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case request, session
    var testDescription: String { rawValue }
}

/// Installs an override of `hcaFactory*` whose closure holds the only reference to a
/// watcher whose deinit resolves from and writes to `container`.
/// An app container, a session scope of it and a request scope of the session.
func appSessionAndRequest() -> (app: DependencyContainer, session: DependencyContainer, request: DependencyContainer) {
    let app = DependencyContainer()
    let session = DependencyContainer(scopeOf: app)
    return (app, session, DependencyContainer(scopeOf: session))
}

private func overrideHoldingWatcher(
    _ keyPath: KeyPath<DependencyContainer, Provider<IFBPart>>, in container: DependencyContainer, releases: Counter
) {
    let watcher = IFBReleaseWatcher(container: container, releases: releases)
    container.override(keyPath) { withExtendedLifetime(watcher) { IFBPart("override") } }
}

@Suite struct HandoverCacheAttackTests {
    // MARK: - A scope's list of overridden keys

    /// Each kind of change, made in the request or in the session above it, drops the
    /// listed keys: installing makes the request build its own singleton from the change
    /// (a stale, empty list would share the app's), removing by key or by `reset()` makes
    /// it share the app's again (a stale list would build its own from the app's values).
    @MainActor
    @Test(arguments: HCAInstall.allCases, HCAChanger.allCases)
    func aScopeSeesEveryChangeOfWhatItAndItsParentScopeOverride(install: HCAInstall, changer: HCAChanger) {
        for removesByKey in [true, false] {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            let changed = changer == .request ? request : session
            #expect(install.timed(in: request) === install.timed(in: app), "nothing overridden yet: listed empty")
            install.install(in: changed)
            let own = install.timed(in: request)
            #expect(own !== install.timed(in: app), "\(install) installed: the request shares the app's")
            #expect(own.inner?.source == "scope clock")
            if removesByKey { install.resetKey(in: changed) } else { changed.reset() }
            #expect(
                install.timed(in: request) === install.timed(in: app),
                "\(install) removed \(removesByKey ? "by key" : "by reset()"): the request keeps building its own")
        }
    }

    /// The async road: an async override, then an async decoration, installed and removed.
    @Test func aScopeSeesAsyncOverridesAndDecorationsComeAndGo() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        #expect(try await scope.hcaAsyncTimed() === app.hcaAsyncTimed())
        scope.override(\.hcaAsyncClock) { IFBPart("scope clock") }
        #expect(try await scope.hcaAsyncTimed().inner?.source == "scope clock")
        scope.reset(\.hcaAsyncClock)
        #expect(try await scope.hcaAsyncTimed() === app.hcaAsyncTimed())
        scope.decorate(\.hcaAsyncClock) { IFBPart("scope clock", inner: $0) }
        #expect(try await scope.hcaAsyncTimed().inner?.source == "scope clock")
        scope.reset()
        #expect(try await scope.hcaAsyncTimed() === app.hcaAsyncTimed())
    }

    /// A session installs and removes its override of the clock in a loop while requests
    /// of it resolve `hcaTimed` on other threads, released together. Each value is built
    /// from one of the two clocks; once the session stops, every request follows what the
    /// session has installed then.
    @Test func requestsFollowTheirSessionTogglingAnOverrideUnderLoad() async {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let requests = (0..<4).map { _ in DependencyContainer(scopeOf: session) }
        let wrong = Collected<String>()
        for endsInstalled in [true, false] {
            let finished = await concurrentlyOffThePool { index in
                if index == 0 {
                    for round in 0..<150 {
                        if round % 2 == 0 {
                            session.override(\.hcaClock) { IFBPart("session clock") }
                        } else {
                            session.reset(\.hcaClock)
                        }
                    }
                    if endsInstalled { session.override(\.hcaClock) { IFBPart("session clock") } }
                } else {
                    for _ in 0..<150 {
                        let source = requests[index % 4].hcaTimed().inner?.source ?? "none"
                        if source != "app clock" && source != "session clock" { wrong.append(source) }
                    }
                }
            }
            #expect(finished)
            let appTimed = app.hcaTimed()
            #expect(appTimed.inner?.source == "app clock")
            for request in requests {
                let timed = request.hcaTimed()
                if endsInstalled {
                    #expect(timed !== appTimed && timed.inner?.source == "session clock")
                } else {
                    #expect(timed === appTimed, "a request builds its own after its session removed the override")
                }
            }
        }
        #expect(wrong.values.isEmpty)
    }

    /// A request decides to build its own `hcaHookedTimed`, since its session overrides
    /// the clock; the session removes the override after that decision, before the
    /// construction uses the clock, so the removal drops nothing in the request. The
    /// construction gets the app's clock, and the request must not keep its own copy of
    /// the app-wide singleton: the next resolution shares the app's.
    @Test func aSessionRemovingItsOverrideWhileARequestBuildsItsOwnLeavesTheRequestSharing() {
        for removal in ["by key", "by reset()"] {
            let (app, session, request) = appSessionAndRequest()
            session.override(\.hcaClock) { IFBPart("session clock") }
            request.setValue(
                HCABeforeClock { if removal == "by key" { session.reset(\.hcaClock) } else { session.reset() } },
                forKey: "hca.beforeClock")
            #expect(request.hcaHookedTimed().inner?.source == "app clock", "the removal came first")
            #expect(request.hcaHookedTimed() === app.hcaHookedTimed(), "removed \(removal): the request kept its own")
        }
    }

    /// The same on the async road, where a scope that overrides nothing asks the app
    /// container before its own cache: the copy it kept would stay unused in memory as
    /// long as the request lives. And with an override installed while the request
    /// builds: the instance it keeps is its own, from the session's new clock.
    @Test func aSessionChangingItsOverrideWhileARequestBuildsAsyncKeepsWhatTheChangeDecides() async throws {
        let (app, session, request) = appSessionAndRequest()
        session.override(\.hcaAsyncClock) { IFBPart("session clock") }
        request.setValue(HCABeforeClock { session.reset(\.hcaAsyncClock) }, forKey: "hca.beforeClock")
        let copy = try await request.hcaAsyncHookedTimed()
        #expect(copy.inner?.source == "app clock", "the removal came first")
        // What the request's own table keeps, not whether the copy is alive: the task that
        // built it lets go of it some time after its waiters wake.
        let key = request[keyPath: \.hcaAsyncHookedTimed].key
        #expect(!request.keepsInstanceNow(of: key), "the request keeps a copy of the app-wide singleton")
        #expect(try await request.hcaAsyncHookedTimed() === app.hcaAsyncHookedTimed())

        let (_, otherSession, otherRequest) = appSessionAndRequest()
        otherSession.override(\.hcaAsyncClock) { IFBPart("session clock") }
        otherRequest.setValue(
            HCABeforeClock { otherSession.override(\.hcaAsyncClock) { IFBPart("new session clock") } },
            forKey: "hca.beforeClock")
        let built = try await otherRequest.hcaAsyncHookedTimed()
        #expect(built.inner?.source == "new session clock")
        #expect(try await otherRequest.hcaAsyncHookedTimed() === built, "an own instance still wanted is kept")
    }

    /// The request's own override of an app-wide singleton, removed by the override itself
    /// while it builds: the request hands that instance out, keeps nothing, and shares the
    /// app's from then on (the check a scope makes when its construction ends is skipped
    /// for what it overrides itself, which the removal drops instead).
    @Test func aScopesOwnOverrideRemovedWhileItBuildsLeavesNothingKept() {
        for removal in ["by key", "by reset()"] {
            let (app, session, request) = appSessionAndRequest()
            session.override(\.hcaClock) { IFBPart("session clock") }
            request.override(\.hcaTimed) { [weak request] in
                if removal == "by key" { request?.reset(\.hcaTimed) } else { request?.reset() }
                return IFBPart("the request's own")
            }
            #expect(request.hcaTimed().source == "the request's own")
            let again = request.hcaTimed()
            #expect(again.source == "timed" && again.inner?.source == "session clock", "removed \(removal): kept")
            #expect(again !== app.hcaTimed())
        }
    }

    /// The same with the request's own override of a provider family, or of one argument,
    /// removed by the override while it builds the argument's instance.
    @Test(arguments: ["family", "argument"])
    func aScopesOwnFamilyOverrideRemovedWhileItBuildsLeavesNothingKept(overridden: String) {
        let (app, _, request) = appSessionAndRequest()
        if overridden == "family" {
            request.override(\.hcaClocks) { [weak request] n in
                request?.reset(\.hcaClocks)
                return IFBPart("the request's own", argument: n)
            }
        } else {
            request.override(\.hcaClocks[1]) { [weak request] in
                request?.reset(\.hcaClocks[1])
                return IFBPart("the request's own", argument: 1)
            }
        }
        #expect(request.hcaClocks(1).source == "the request's own")
        #expect(request.hcaClocks(1) === app.hcaClocks(1), "\(overridden) override removed: the request kept its own")
    }

    // MARK: - The override table

    /// Every transition of the table, against a dictionary: 0, 1 (inline), replaced inline,
    /// 2 (a dictionary), back to 1 and 0 in the dictionary, 1 inline again, removals of
    /// absent keys, then a long pseudo-random walk over three keys.
    @Test func anOverrideTableAgreesWithADictionaryThroughEveryTransition() {
        let keys = (0..<3).map { RegistrationKey(file: #fileID, position: UInt64($0), type: ObjectIdentifier(Int.self)) }
        var table = OverrideTable()
        var model: [Int: AnyObject] = [:]
        var problems: [String] = []
        func check(_ step: String) {
            if table.isEmpty != model.isEmpty { problems.append("\(step): isEmpty \(table.isEmpty)") }
            for (index, key) in keys.enumerated() where table[key] !== model[index] {
                problems.append("\(step): entry \(index)")
            }
            if Set(table.keys) != Set(model.keys.map { keys[$0] }) || table.keys.count != model.count {
                problems.append("\(step): keys \(table.keys.count) for \(model.count)")
            }
        }
        func add(_ index: Int) {
            let value = IFBPart("override \(index)")
            let replaced = table.updateValue(value, forKey: keys[index])
            if replaced !== model.updateValue(value, forKey: index) { problems.append("add \(index): replaced") }
            check("add \(index)")
        }
        func remove(_ index: Int) {
            var released = DependencyInjection.Released()
            if table.removeValue(forKey: keys[index], into: &released) !== model.removeValue(forKey: index) {
                problems.append("remove \(index): removed")
            }
            check("remove \(index)")
        }
        check("empty")
        for (isAdd, index) in [
            (true, 0), (true, 0), (false, 1), (true, 1), (true, 1), (false, 0), (false, 1), (false, 1),
            (true, 2), (false, 0), (false, 2), (false, 2), (true, 0), (true, 1), (true, 2), (false, 1),
            (false, 0), (false, 2), (true, 1), (false, 1),
        ] {
            if isAdd { add(index) } else { remove(index) }
        }
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<3_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let index = Int((seed >> 33) % 3)
            if (seed >> 40) % 2 == 0 { add(index) } else { remove(index) }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// The same transitions through a container, as a child (`installedOverride(for:below:)`)
    /// and the container itself resolve them, ending with `reset()`.
    @Test func aChildReadsItsParentsOverridesThroughEveryTransition() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let paths = [\DependencyContainer.hcaFactory0, \.hcaFactory1, \.hcaFactory2]
        var installed: [Int: String] = [:]
        var problems: [String] = []
        func check(_ step: String) {
            for (index, path) in paths.enumerated() {
                let expected = installed[index] ?? "registration \(index)"
                if parent[keyPath: path]().source != expected { problems.append("\(step): parent \(index)") }
                if child[keyPath: path]().source != expected { problems.append("\(step): child \(index)") }
            }
        }
        var version = 0
        func add(_ index: Int) {
            version += 1
            let source = "override \(index) v\(version)"
            parent.override(paths[index]) { IFBPart(source) }
            installed[index] = source
            check("add \(index)")
        }
        func remove(_ index: Int) {
            parent.reset(paths[index])
            installed[index] = nil
            check("remove \(index)")
        }
        check("none")
        add(0); add(0); add(1); remove(0); remove(1); add(2); remove(0); remove(2); add(1); add(0); add(2)
        parent.reset()
        installed = [:]
        check("reset")
        add(1); remove(1)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// Overrides whose closures hold the last reference to an object whose deinit uses the
    /// container are released after unlocking, at every transition: replacing the inline
    /// one, removing from the dictionary down to empty, `reset()` of one and of two.
    @Test func overridesReleasedAtEveryTransitionMayUseTheContainerInTheirDeinit() async {
        let releases = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            overrideHoldingWatcher(\.hcaFactory0, in: container, releases: releases)
            overrideHoldingWatcher(\.hcaFactory0, in: container, releases: releases)  // replaces inline: 1
            overrideHoldingWatcher(\.hcaFactory1, in: container, releases: releases)
            container.reset(\.hcaFactory0)  // from the dictionary: 2
            container.reset(\.hcaFactory1)  // the dictionary empties: 3
            overrideHoldingWatcher(\.hcaFactory2, in: container, releases: releases)
            container.reset()  // inline: 4
            overrideHoldingWatcher(\.hcaFactory0, in: container, releases: releases)
            overrideHoldingWatcher(\.hcaFactory1, in: container, releases: releases)
            container.reset()  // two: 6
        }
        #expect(finished, "a deinit run under the container's lock deadlocked")
        #expect(releases.count == 6)
    }

    /// Two thousand per-argument overrides in a scope (and its list of keys), half removed
    /// one by one, the rest by the family's reset, down to an empty table, then one again.
    @Test func thousandsOfArgumentOverridesComeAndGoInAScope() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let scope = DependencyContainer(scopeOf: app)
            let count = 2_000
            for n in 0..<count { scope.override(\.hcaClocks[n]) { IFBPart("scope clock", argument: n) } }
            var wrong = 0
            for n in 0..<count where scope.hcaClocks(n).source != "scope clock" || scope.hcaClocks(n).argument != n {
                wrong += 1
            }
            findings.check(scope.hcaFamilyTimed().inner?.source == "scope clock", "the timed family missed the scope's clock")
            for n in 0..<count / 2 { scope.reset(\.hcaClocks[n]) }
            for n in 0..<count where (scope.hcaClocks(n).source == "scope clock") != (n >= count / 2) { wrong += 1 }
            scope.reset(\.hcaClocks)
            for n in 0..<count where scope.hcaClocks(n) !== app.hcaClocks(n) { wrong += 1 }
            findings.check(scope.hcaFamilyTimed() === app.hcaFamilyTimed(), "the scope kept a timed family of its own")
            scope.override(\.hcaClocks[7]) { IFBPart("scope clock", argument: 7) }
            findings.check(
                scope.hcaClocks(7).source == "scope clock" && scope.hcaClocks(8) === app.hcaClocks(8),
                "an override after the reset did not reach its argument alone")
            findings.check(wrong == 0, "\(wrong) clocks came from the wrong container")
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    // MARK: - The cache stepping aside during a handover

    /// A handover inside a handover, in a request of a session: the request keeps its own
    /// clock; the app's `hcaOuter`, built for the request, resolves `hcaTimed` through it,
    /// which resolves the clock through it, and both come from the app. Afterwards no
    /// handover is counted and the request's cache serves inline again.
    @Test func aHandoverInsideAHandoverTakesNothingFromTheRequestsCache() {
        let (app, session, request) = appSessionAndRequest()
        session.override(\.ifbPlainPart) { IFBPart("session's") }
        request.override(\.hcaClock) { IFBPart("scope clock") }
        let clock = request.hcaClock()
        let outer = request.hcaOuter()
        #expect(outer.inner?.inner === clock, "the request builds its own from its clock")
        #expect(app.hcaOuter().inner?.inner?.source == "app clock")
        #expect(app.hcaTimed().inner?.source == "app clock")
        #expect(app.hcaOuter() !== outer)
        #expect(request.hcaHandovers == 0 && session.hcaHandovers == 0)
        #expect(!request.hcaCacheStepsAside && !session.hcaCacheStepsAside)
        #expect(request.hcaClock() === clock)
    }

    /// An async construction handed over fails, in eight tasks at once: each handover ends,
    /// and the scope's cache serves inline again.
    @Test func aFailingAsyncHandoverEndsTheHandover() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        let clock = scope.hcaClock()
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await scope.hcaFailing()
                        return false
                    } catch {
                        return error is HCAError
                    }
                }
            }
            for await threw in group { #expect(threw) }
        }
        #expect(scope.hcaHandovers == 0)
        #expect(!scope.hcaCacheStepsAside)
        #expect(scope.hcaClock() === clock)
    }

    /// While one thread's handover of `hcaSlow` is held at a gate, eight threads released
    /// together resolve through the scope: its own clock, a scoped instance, and `hcaTimed`,
    /// which the scope builds from its clock. Each gets the scope's, nothing hangs; then
    /// the held construction gets the app's clock, and the handover ends (the scope, which
    /// learned that `hcaSlow` uses its clock, builds its own).
    @Test func threadsResolveThroughAScopeDuringALongHandover() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        let (clock, scoped) = (scope.hcaClock(), scope.hcaScoped())
        let gates = app.ifbInstallGates(1)
        let wrong = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let held = onThread { scope.hcaSlow() }
            gates[0].entered.wait()
            concurrently { _ in
                for _ in 0..<200 {
                    if scope.hcaClock() !== clock { wrong.append("clock") }
                    if scope.hcaScoped() !== scoped { wrong.append("scoped") }
                    if scope.hcaTimed().inner !== clock { wrong.append("timed") }
                }
            }
            if scope.hcaHandovers != 1 { wrong.append("\(scope.hcaHandovers) handovers while one is held") }
            gates[0].open()
            // Built from the clock, which the scope overrides: the scope builds its own.
            if held().inner !== clock { wrong.append("the scope's slow not built from its clock") }
        }
        #expect(finished)
        #expect(Set(wrong.values) == [])
        #expect(scope.hcaHandovers == 0 && !scope.hcaCacheStepsAside)
        #expect(app.hcaSlow().inner?.source == "app clock")
    }

    /// The task that handed an async singleton over is cancelled while the app container
    /// builds it. Its wait ends, but the construction goes on in its own task, and the
    /// scope's cache stays aside until it ends: when it resolves the clock through the
    /// scope (`self`), it gets the app's clock, not the scope's own, which the app would
    /// otherwise keep for every scope.
    @Test func aCancelledAsyncHandoverKeepsTheScopesCacheAsideUntilTheConstructionEnds() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        #expect(scope.hcaClock().source == "scope clock")  // now cached in the scope
        let gate = IFBAsyncGate()
        app.setValue(gate, forKey: "hca.asyncGate")
        let waiter = Task { try await scope.hcaGatedTimed() }
        await gate.entered.wait()
        #expect(scope.hcaHandovers == 2, "the waiting task's and the construction's")
        waiter.cancel()
        let result = await waiter.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(scope.hcaHandovers == 1, "the construction's, while it runs")
        gate.opened.open()
        let built = try await app.hcaGatedTimed()  // the construction still in flight
        let other = try await DependencyContainer(scopeOf: app).hcaGatedTimed()
        #expect(built.inner?.source == "app clock")
        #expect(other.inner?.source == "app clock")
        #expect(scope.hcaHandovers == 0)
    }

    /// The app container already keeps `hcaMid`, built from its clock; the scope overrides
    /// the clock and asks for `hcaTop`, built from `hcaMid`. A tracer resets `hcaTop` after
    /// each build, which takes the app's record that it uses `hcaMid`. The scope learns it
    /// itself, when the construction it handed over asks for `hcaMid`, which the app built
    /// from the clock: it builds its own `hcaTop` from its own clock, and never hands out
    /// the app's.
    @Test func aScopeWhoseAppKeepsDroppingAnInstanceBuiltFromWhatItOverridesBuildsItsOwn() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        #expect(app.hcaMid().inner?.source == "app clock")
        scope.override(\.hcaClock) { IFBPart("scope clock") }
        let budget = SHABudget(DependencyContainer.handoversPerResolution)
        app.tracer = ResolutionTracer { [weak app] events in
            guard let app, events.contains(where: { $0.outcome == .built && $0.name.contains("hcaTop") }), budget.take()
            else { return }
            app.reset(\.hcaTop)
        }
        let top = Collected<IFBPart>()
        #expect(await finishesWithoutHangingOffThePool { top.append(scope.hcaTop()) })
        app.tracer = nil
        #expect(top.values.first?.inner?.inner?.source == "scope clock")
        #expect(scope.hcaTop().inner?.inner?.source == "scope clock")
    }
}
