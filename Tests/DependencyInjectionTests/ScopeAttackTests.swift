@testable import DependencyInjection
import Foundation
import Testing

// What users expect of scope containers (`DependencyContainer(scopeOf:)`, `scoped { }`) and
// of "the building container is the default" for `@Dependency`, at their edges: values a
// scope holds, closures and tasks an app-wide construction leaves behind, the app
// container's changes reaching what a scope built, the record of uses, tracers, cycles,
// deinits, and many scopes.

// MARK: - Fixtures

/// A cart owned by the signed-in user, read from a stored value.
final class AttackCart: Sendable {
    let owner: String?
    init(owner: String?) { self.owner = owner }
}

/// An app-wide client that reads the user lazily, through a closure.
final class AttackLazyGreeter: Sendable {
    let user: @Sendable () -> String
    init(user: @escaping @Sendable () -> String) { self.user = user }
}

/// A per-request report built from the app's database.
final class AttackReport: Sendable {
    let database: AppDatabase
    init(database: AppDatabase) { self.database = database }
}

/// A scoped instance whose `deinit` resolves from a container.
final class AttackDeinitResolver: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// A flag any thread may set and read.
final class AttackFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var set = false
    func raise() { lock.withLock { set = true } }
    var isRaised: Bool { lock.withLock { set } }
}

/// An object created inside a construction, naming the container it took.
final class AttackTag: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.attackLocale) var locale
}

final class AttackHolder: Sendable {
    let tag: AttackTag
    init(tag: AttackTag) { self.tag = tag }
}

extension DependencyContainer {
    /// A stored value, as in the Scopes article's `userID`.
    var attackUserID: String? { getValue(forKey: "attack-user") }
    var attackCart: Provider<AttackCart> { singleton { AttackCart(owner: self.attackUserID) } }

    /// A request value with an app default, which scopes override.
    var attackLocale: Provider<String> { factory { "app-locale" } }
    var attackGreeter: Provider<AttackLazyGreeter> {
        singleton { AttackLazyGreeter(user: { self.attackLocale() }) }
    }
    /// Keeps what it resolved during its construction, not `self`.
    var attackKeptGreeter: Provider<AttackLazyGreeter> {
        singleton {
            let locale = self.attackLocale()
            return AttackLazyGreeter(user: { locale })
        }
    }

    var attackReport: Provider<AttackReport> { scoped { AttackReport(database: self.appDatabase()) } }
    /// A singleton built from the locale, which a scope may override.
    var attackLocalized: Provider<ScopeClock> { singleton { ScopeClock(name: self.attackLocale()) } }
    /// A singleton whose construction waits at a gate, when one is stored.

    /// A singleton that asks for itself through `self`, the scope that asked.
    var attackSelfCycle: Provider<ScopeClock> { singleton { ScopeClock(name: self.attackSelfCycle().name) } }
    /// A scoped registration and a singleton that need each other.
    var attackScopedSide: Provider<ScopeClock> { scoped { ScopeClock(name: self.attackSingletonSide().name) } }
    var attackSingletonSide: Provider<ScopeClock> { singleton { ScopeClock(name: self.attackScopedSide().name) } }

    var attackHolder: Provider<AttackHolder> { singleton { AttackHolder(tag: AttackTag()) } }

    subscript(attackUpload file: Int) -> Provider<ScopeClock> { scoped(file) { ScopeClock(name: "\(file)") } }
}

/// Collects trace events.
final class AttackEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ResolutionEvent] = []
    func append(_ batch: [ResolutionEvent]) { lock.withLock { events += batch } }
    var names: [String] { lock.withLock { events.map(\.name) } }
}

@Suite struct ScopeAttackTests {
    // MARK: - A scope's values must never reach an app-wide instance

    /// The Scopes article keeps a user's ID as a stored value; the `init(scopeOf:)` docs
    /// promise an app-wide singleton "never sees a scope's values". A scope's stored value
    /// is read through `self` straight from the scope, so the first user's value is baked
    /// into the singleton every other user shares.
    @Test func anAppWideSingletonNeverSeesAScopesStoredValues() {
        let app = DependencyContainer()
        let ada = DependencyContainer(scopeOf: app)
        ada.setValue("ada", forKey: "attack-user")
        let bob = DependencyContainer(scopeOf: app)
        bob.setValue("bob", forKey: "attack-user")
        let adasCart = ada.attackCart()
        #expect(bob.attackCart().owner != "ada", "bob was handed ada's cart")
        #expect(adasCart.owner == nil || adasCart !== app.attackCart(), "the app's cart belongs to ada")
    }

    /// The documented way for an app-wide singleton to use something later: resolve it
    /// during the construction and keep that, not `self`. The singleton then does not keep
    /// the scope that first asked, and a scope that overrides what it resolved gets its
    /// own.
    @Test func anAppWideSingletonThatKeepsWhatItResolvedNeitherKeepsNorReadsTheFirstScope() {
        let app = DependencyContainer()
        weak var first: DependencyContainer?
        do {
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.attackLocale) { "ada-locale" }
            first = scope
            _ = scope.attackKeptGreeter()
        }
        let bob = DependencyContainer(scopeOf: app)
        bob.override(\.attackLocale) { "bob-locale" }
        #expect(first == nil)
        #expect(app.attackKeptGreeter().user() == "app-locale")
        #expect(bob.attackKeptGreeter().user() == "bob-locale")
    }

    // MARK: - The app container's changes reach what a scope built

    /// `init(scopeOf:)`: "its parent's overrides and resets reach it". A scoped instance
    /// built from an app singleton keeps the replaced one: the scope resolved the
    /// singleton in the app container, so its own record of uses never saw it.
    @Test func anAppOverrideOfASingletonDropsTheScopedInstancesBuiltFromIt() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let before = scope.attackReport()
        #expect(before.database === app.appDatabase())
        app.override(\.appDatabase) { AppDatabase() }
        let after = scope.attackReport()
        #expect(after.database === app.appDatabase(), "the scope still serves a report on the replaced database")
    }

    /// After `app.reset()` the app builds a new database; a scope's scoped instance still
    /// holds the dropped one.
    @Test func resettingTheAppContainerDropsTheScopedInstancesBuiltFromItsSingletons() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        _ = scope.attackReport()
        app.reset()
        #expect(scope.attackReport().database === app.appDatabase(), "the report still holds the reset database")
    }

    /// A scope's own singleton (built from what it overrides) used an app singleton: the
    /// app's override of that singleton must reach it too.
    @Test func anAppOverrideReachesAScopesOwnSingleton() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.attackLocale) { "scope-locale" }
        // Own instance, from the scope's locale; it also resolves the app's database.
        let own = scope.attackOwnReport()
        #expect(own !== app.attackOwnReport())
        app.override(\.appDatabase) { AppDatabase() }
        #expect(scope.attackOwnReport().database === app.appDatabase(), "the scope's singleton kept the old database")
    }

    // MARK: - The record of uses decides what a scope builds

    /// Once the app replaces a singleton, what its old construction used no longer says
    /// anything about the replacement: a scope overriding that must share the app's.
    @Test func anAppOverrideOfASingletonForgetsWhatTheReplacedConstructionUsed() {
        let app = DependencyContainer()
        _ = app.attackLocalized()  // built from the locale
        app.override(\.attackLocalized) { ScopeClock(name: "replacement") }
        let request = DependencyContainer(scopeOf: app)
        request.override(\.attackLocale) { "request-locale" }
        #expect(request.attackLocalized() === app.attackLocalized(), "the request built its own from the app's override")
    }

    // MARK: - Tracers

    /// A scope's own tracer sees what the scope builds; app-wide instances are built, and
    /// traced, by the app container, whose tracer the scope inherits when it is made.
    @Test func aScopesTracerSeesWhatTheScopeBuildsAndTheAppsTracerWhatTheAppBuildsForIt() {
        let app = DependencyContainer()
        let appEvents = AttackEvents()
        app.tracer = ResolutionTracer { appEvents.append($0) }
        let scope = DependencyContainer(scopeOf: app)
        let scopeEvents = AttackEvents()
        scope.tracer = ResolutionTracer { scopeEvents.append($0) }
        scope.override(\.requestUser) { "ada" }
        _ = scope.requestHandler()
        #expect(scopeEvents.names.contains("requestHandler"), "\(scopeEvents.names)")
        #expect(!scopeEvents.names.contains("appDatabase"), "\(scopeEvents.names)")
        _ = scope.appDatabase()
        #expect(appEvents.names.contains("appDatabase"), "\(appEvents.names)")
    }

    /// A tracer set on the app reaches its scopes, runs outside every construction and may
    /// resolve through the scope; an object it creates takes `main`, not a container.
    @Test func anAppTracerThatResolvesThroughAScopeRunsOutsideEveryConstruction() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.requestUser) { "ada" }
        let events = AttackEvents()
        let tookAContainer = AttackFlag()
        app.tracer = ResolutionTracer { batch in
            events.append(batch)
            _ = scope.requestHandler()
            _ = scope.appDatabase()
            // Not `=== .main`: other tests may switch the process-wide `main` meanwhile.
            let taken = AttackTag().$locale.container
            if taken === app || taken === scope { tookAContainer.raise() }
        }
        #expect(await finishesWithoutHangingOffThePool {
            _ = scope.attackReport()
            _ = scope.requestHandler()
        })
        #expect(events.names.contains("attackReport"))
        #expect(events.names.contains("appDatabase"))
        #expect(!tookAContainer.isRaised)
    }

    // MARK: - Cycles through the scope's hand-over

    @Test func aSingletonThatAsksForItselfThroughTheScopeIsACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("attackSelfCycle")
            _ = DependencyContainer(scopeOf: DependencyContainer()).attackSelfCycle()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
    }

    @Test func aScopedRegistrationAndASingletonThatNeedEachOtherAreACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("attackScopedSide")
            _ = DependencyContainer(scopeOf: DependencyContainer()).attackScopedSide()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
    }

    // MARK: - Deinits that use containers

    /// A scoped instance's `deinit` resolves from the scope (on reset) and from the app
    /// container (when the scope goes): nothing is released under a lock.
    @Test func aScopedInstancesDeinitMayResolveWhenTheScopeIsResetShutDownOrDropped() async {
        let app = DependencyContainer()
        let resolvedFromScope = AttackFlag()
        let resolvedFromApp = AttackFlag()
        let finished = await finishesWithoutHangingOffThePool {
            let scope = DependencyContainer(scopeOf: app)
            let weakScope = Weak(scope)
            scope.override(\.attackDeinitResolver) {
                AttackDeinitResolver {
                    if let scope = weakScope.container, scope.appDatabase() === app.appDatabase() {
                        resolvedFromScope.raise()
                    }
                }
            }
            _ = scope.attackDeinitResolver()
            scope.reset(\.attackDeinitResolver)
            let dropped = DependencyContainer(scopeOf: app)
            dropped.override(\.attackDeinitResolver) {
                AttackDeinitResolver { if app.requestLogFile() === app.requestLogFile() { resolvedFromApp.raise() } }
            }
            _ = dropped.attackDeinitResolver()
            dropped.shutdown()
            _ = dropped.attackDeinitResolver()
        }
        #expect(finished)
        #expect(resolvedFromScope.isRaised)
        #expect(resolvedFromApp.isRaised)
    }

    // MARK: - An object created by an app-wide construction for a scope

    @Test func anObjectCreatedByAnAppWideConstructionForAScopeTakesTheAppContainer() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.attackLocale) { "scope-locale" }
        let holder = scope.attackHolder()
        #expect(holder === app.attackHolder())
        #expect(holder.tag.$locale.container === app)
        #expect(holder.tag.locale == "app-locale")
    }

    // MARK: - instanceIfBuilt

    /// `instanceIfBuilt` answers "as for resolution": a scope resolves the app's singleton,
    /// so a flush at the end of a request finds it.
    @Test func aScopesInstanceIfBuiltFindsTheAppsSingletonItResolves() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let database = request.appDatabase()
        #expect(request.instanceIfBuilt(\.appDatabase) === database)
    }

    // MARK: - Many scopes

    /// Thousands of requests, each with its own values and twenty arguments: every scope is
    /// freed and the app container's bookkeeping does not grow per request. (The first
    /// request's scope is kept by `attackGreeter`, which keeps `self`: see the Scopes
    /// article.)
    @Test func thousandsOfScopesAreFreedAndTheAppsBookkeepingDoesNotGrow() {
        let app = DependencyContainer()
        func request(_ index: Int) -> Weak {
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.requestUser) { "user-\(index)" }
            scope.override(\.attackLocale) { "locale-\(index)" }
            _ = scope.requestHandler().handle()
            _ = scope.attackReport()
            _ = scope.attackLocalized()
            _ = scope.attackGreeter()
            for file in 0..<20 { _ = scope[attackUpload: file]() }
            return Weak(scope)
        }
        _ = request(-1)
        let baseline = app.withStateLock { ($0.dependents.count, $0.dependents.allUsers.map(\.count).reduce(0, +)) }
        var scopes: [Weak] = []
        for index in 0..<2_000 { scopes.append(request(index)) }
        let after = app.withStateLock { ($0.dependents.count, $0.dependents.allUsers.map(\.count).reduce(0, +)) }
        #expect(scopes.allSatisfy { $0.container == nil })
        #expect(after == baseline)
        #expect(app.withStateLock { $0.children.count } <= 1)
    }
}

extension DependencyContainer {
    var attackOwnReport: Provider<AttackReport> {
        singleton {
            _ = self.attackLocale()
            return AttackReport(database: self.appDatabase())
        }
    }
    var attackDeinitResolver: Provider<AttackDeinitResolver> { scoped { AttackDeinitResolver {} } }
}

// MARK: - Async, main actor and load

/// A main-actor screen state, one per scope.
final class AttackScreenState {
    var selection = 0
}

extension DependencyContainer {
    var attackAsyncLocale: AsyncProvider<String> { factory { "app-locale" } }
    var attackAsyncLocalized: AsyncProvider<ScopeClock> {
        singleton { ScopeClock(name: try await self.attackAsyncLocale()) }
    }
    var attackAsyncFlaky: AsyncProvider<ScopeClock> {
        scoped {
            let failedOnce: AttackFlag = self.getValue(forKey: "attack-flaky")!
            if !failedOnce.isRaised {
                failedOnce.raise()
                throw CancellationError()
            }
            return ScopeClock(name: "flaky")
        }
    }
    var attackAsyncScopedSide: AsyncProvider<ScopeClock> {
        scoped { ScopeClock(name: try await self.attackAsyncSingletonSide().name) }
    }
    var attackAsyncSingletonSide: AsyncProvider<ScopeClock> {
        singleton { ScopeClock(name: try await self.attackAsyncScopedSide().name) }
    }
    @MainActor var attackScreen: Provider<AttackScreenState> { scoped { @MainActor in AttackScreenState() } }
    @MainActor var attackMainStore: Provider<AttackScreenState> { singleton { @MainActor in AttackScreenState() } }
}

extension ScopeAttackTests {
    @Test func anAsyncSingletonBuiltFromWhatAScopeOverridesIsTheScopesOwn() async throws {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.attackAsyncLocale) { "scope-locale" }
        #expect(try await scope.attackAsyncLocalized().name == "scope-locale")
        #expect(try await app.attackAsyncLocalized().name == "app-locale")
        let plain = DependencyContainer(scopeOf: app)
        #expect(try await plain.attackAsyncLocalized() === app.attackAsyncLocalized())
    }

    @Test func anAsyncScopedConstructionThatThrowsIsTriedAgain() async throws {
        let app = DependencyContainer()
        app.setValue(AttackFlag(), forKey: "attack-flaky")
        let scope = DependencyContainer(scopeOf: app)
        await #expect(throws: CancellationError.self) { try await scope.attackAsyncFlaky() }
        let built = try await scope.attackAsyncFlaky()
        #expect(try await scope.attackAsyncFlaky() === built)
        #expect(app.instanceIfBuilt(\.attackAsyncFlaky) == nil)
    }

    @Test func anAsyncScopedRegistrationAndSingletonThatNeedEachOtherAreACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("attackAsyncScopedSide")
            _ = try? await DependencyContainer(scopeOf: DependencyContainer()).attackAsyncScopedSide()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
    }

    @MainActor @Test func aMainActorScopedRegistrationIsOnePerScopeAndAMainActorSingletonIsTheApps() {
        let app = DependencyContainer()
        let first = DependencyContainer(scopeOf: app)
        let second = DependencyContainer(scopeOf: app)
        #expect(first.attackScreen() === first.attackScreen())
        #expect(first.attackScreen() !== second.attackScreen())
        #expect(first.attackMainStore() === second.attackMainStore())
        #expect(first.attackMainStore() === app.attackMainStore())
    }

    /// Requests on several threads, in scopes and nested scopes, while the app container
    /// overrides, resets and traces: each request sees its own values and the right
    /// instances. Run it under ThreadSanitizer.
    @Test func scopesResolveWhileTheAppContainerChanges() async {
        let app = DependencyContainer()
        let mismatches = Collected<String>()
        let tracer = ResolutionTracer { _ in }
        let threadsEnded = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<150 {
                let scope = DependencyContainer(scopeOf: app)
                let user = "user-\(index)-\(round)"
                scope.override(\.requestUser) { user }
                let locale = round % 3 == 0 ? "locale-\(index)-\(round)" : "app-locale"
                if locale != "app-locale" { scope.override(\.attackLocale) { locale } }
                let request = DependencyContainer(scopeOf: scope)
                if request.requestHandler().user != user { mismatches.append("\(user): handler") }
                let first = request.attackLocalized().name
                if first != locale { mismatches.append("\(user): request got \(first), then \(request.attackLocalized().name)") }
                if scope.attackLocalized().name != locale { mismatches.append("\(user): scope localized") }
                _ = scope.attackReport()
                switch index {
                case 0: app.override(\.appDatabase) { AppDatabase() }
                case 1: app.reset(\.appDatabase)
                case 2: app.tracer = round % 2 == 0 ? tracer : nil
                default: if round % 10 == 0 { app.reset() }
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(mismatches.values.isEmpty, "\(mismatches.values.prefix(5))")
    }

    /// A `@Dependency` created in a task an app-wide construction for a scope starts, or
    /// inside `Task.detached`, is no part of the construction: it takes `main`.
    @Test func anObjectCreatedInADetachedTaskOfAnAppWideConstructionTakesMain() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let holder = scope.attackDetachedTagger()
        let tag = await holder.tag.value()
        // `main` itself may be switched by other tests running in parallel: the tag took
        // neither the building container nor the scope.
        #expect(tag.$locale.container !== app && tag.$locale.container !== scope)
    }
}

final class AttackDetachedTagger: Sendable {
    let tag = Handoff<AttackTag>()
}

extension DependencyContainer {
    var attackDetachedTagger: Provider<AttackDetachedTagger> {
        singleton {
            let tagger = AttackDetachedTagger()
            Task.detached { tagger.tag.put(AttackTag()) }
            return tagger
        }
    }
}

// MARK: - Helpers that wrap `scoped`

extension DependencyContainer {
    /// A helper that wraps `scoped`, forwarding its caller's identity.
    func attackRequestScoped<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation, _ make: @escaping () -> Value
    ) -> Provider<Value> {
        scoped(name: name, fileID: fileID, line: line, column: column, isolation: isolation, make)
    }

    var attackWrappedFirst: Provider<ScopeClock> { attackRequestScoped { ScopeClock(name: "first") } }
    var attackWrappedSecond: Provider<ScopeClock> { attackRequestScoped { ScopeClock(name: "second") } }
    var attackWrappedUser: Provider<String> { attackRequestScoped { self.requestUser() } }
}

extension ScopeAttackTests {
    @Test func registrationsMadeThroughAHelperThatWrapsScopedStayApartAndPerScope() {
        let app = DependencyContainer()
        let first = DependencyContainer(scopeOf: app)
        first.override(\.requestUser) { "ada" }
        let second = DependencyContainer(scopeOf: app)
        second.override(\.requestUser) { "bob" }
        #expect(first.attackWrappedFirst().name == "first")
        #expect(first.attackWrappedSecond().name == "second")
        #expect(first.attackWrappedFirst() === first.attackWrappedFirst())
        #expect(first.attackWrappedFirst() !== second.attackWrappedFirst())
        #expect(first.attackWrappedUser() == "ada")
        #expect(second.attackWrappedUser() == "bob")
    }
}

// MARK: - A per-request object outliving its scope's variable

extension ScopeAttackTests {
    /// A scoped object's `@Dependency` properties hold their scope weakly (the scope keeps
    /// the object, so a strong reference would keep both forever): an object used after
    /// its scope is gone stops on its first property read, saying to keep the scope.
    @Test func aScopedObjectUsedAfterItsScopeIsGoneStopsSayingToKeepTheScopeAlive() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let handler = { () -> RequestHandler in
                let scope = DependencyContainer(scopeOf: app)
                scope.override(\.requestUser) { "ada" }
                return scope.requestHandler()
            }()
            _ = handler.handle()
        }
        let output = standardError(of: result)
        #expect(output.contains("was released before the property was first read"), "\(output)")
        #expect(output.contains("keep a scope alive until its request ends"), "\(output)")
    }

    /// The documented way: the scope lives as long as the request's work.
    @Test func aScopeKeptAliveForTheRequestServesItsObjectsProperties() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.requestUser) { "ada" }
        withExtendedLifetime(scope) {
            let handler = scope.requestHandler()
            #expect(handler.handle() == "ada")
        }
    }
}
