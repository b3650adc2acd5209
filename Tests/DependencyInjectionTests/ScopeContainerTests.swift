import DependencyInjection
import Foundation
import Testing

/// A scope container (a session, a request) shares its app container's singletons and
/// builds its own `scoped` instances, and its own singletons only where they are built
/// from what it overrides.
@Suite struct ScopeContainerTests {
    private func request(of app: DependencyContainer, user: String) -> DependencyContainer {
        let request = DependencyContainer(scopeOf: app)
        request.override(\.requestUser) { user }
        return request
    }

    // MARK: - Sharing the app's singletons

    @Test func aScopeSharesItsAppContainersSingletons() {
        let app = DependencyContainer()
        let builds = app.counter("appDatabase")
        let first = request(of: app, user: "ada")
        let second = request(of: app, user: "bob")
        #expect(first.appDatabase() === second.appDatabase())
        #expect(first.appDatabase() === app.appDatabase())
        #expect(builds.count == 1)
        #expect(first.isScope && !app.isScope)
    }

    @Test func aChildMadeWithParentStillBuildsItsOwnSingletons() {
        let app = DependencyContainer()
        let world = DependencyContainer(parent: app)
        #expect(world.appDatabase() !== app.appDatabase())
        #expect(!world.isScope)
    }

    @Test func aSingletonFirstAskedForByAScopeIsBuiltInTheAppContainerAndDoesNotKeepTheScope() {
        let app = DependencyContainer()
        weak var released: DependencyContainer?
        let database: AppDatabase
        do {
            let scope = request(of: app, user: "ada")
            released = scope
            database = scope.appDatabase()
            _ = database.audit  // resolved after the build, from the container that keeps it
        }
        #expect(released == nil)
        #expect(app.instanceIfBuilt(\.appDatabase) === database)
        #expect(database.$audit.container === app)
    }

    @Test func anAppWideSingletonsClosureResolvesThroughTheAppContainerNotTheScope() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        // `self` in the closure is the scope that asked; its factories run in the app container.
        let scheduler = scope.scheduler()
        #expect(scheduler.clock === app.scopeClock())
    }

    @Test func aParentsOverrideReachesItsScopes() {
        let app = DependencyContainer()
        let scope = request(of: app, user: "ada")
        let before = scope.appDatabase()
        app.override(\.appDatabase) { AppDatabase() }
        let after = scope.appDatabase()
        #expect(after !== before)
        #expect(after === app.appDatabase())
    }

    // MARK: - What a scope builds itself

    @Test func aScopedRegistrationIsBuiltOncePerScope() {
        let app = DependencyContainer()
        let builds = app.counter("requestHandler")
        let first = request(of: app, user: "ada")
        let second = request(of: app, user: "bob")
        #expect(first.requestHandler() === first.requestHandler())
        #expect(first.requestHandler() !== second.requestHandler())
        #expect(first.requestHandler().user == "ada")
        #expect(second.requestHandler().user == "bob")
        #expect(builds.count == 2)
    }

    @Test func aScopedRegistrationOutsideAnyScopeIsKeptLikeASingleton() {
        let app = DependencyContainer()
        app.override(\.requestUser) { "app" }
        #expect(app.requestHandler() === app.requestHandler())
    }

    @Test func aScopedInstancesPropertiesResolveFromItsScope() {
        let app = DependencyContainer()
        let scope = request(of: app, user: "ada")
        let handler = scope.requestHandler()
        #expect(handler.handle() == "ada")
        #expect(handler.$injectedUser.container === scope)
        #expect(handler.database === app.appDatabase())
    }

    @Test func aFactoryInAScopeSeesTheScopesValues() {
        let app = DependencyContainer()
        #expect(request(of: app, user: "ada").requestStamp() == "stamp for ada")
    }

    @Test func aSingletonBuiltFromWhatAScopeOverridesIsTheScopesOwnFromTheFirstResolution() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.scopeClock) { ScopeClock(name: "scope") }
        // The first resolution: nothing is known yet of what `scheduler` uses.
        #expect(scope.scheduler().clock.name == "scope")
        #expect(scope.scheduler() === scope.scheduler())
        #expect(app.scheduler().clock.name == "app")
        // A scope that overrides nothing shares the app's.
        #expect(DependencyContainer(scopeOf: app).scheduler() === app.scheduler())
    }

    @Test func aScopeResetToNoOverridesSharesTheAppsSingletonAgain() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.scopeClock) { ScopeClock(name: "scope") }
        #expect(scope.scheduler().clock.name == "scope")
        scope.reset()
        #expect(scope.scheduler() === app.scheduler())
        #expect(scope.scheduler().clock.name == "app")
    }

    @Test func aScopesOverrideOfASingletonIsItsOwn() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let replacement = AppDatabase()
        scope.override(\.appDatabase) { replacement }
        #expect(scope.appDatabase() === replacement)
        #expect(app.appDatabase() !== replacement)
    }

    @Test func aRequestInASessionSharesTheAppsSingletonsAndSeesTheSessionsValues() {
        let app = DependencyContainer()
        let session = request(of: app, user: "ada")
        let request = DependencyContainer(scopeOf: session)
        #expect(request.isScope)
        #expect(request.requestHandler().user == "ada")
        #expect(request.requestHandler() !== session.requestHandler())
        #expect(request.appDatabase() === app.appDatabase())
    }

    @Test func shuttingAScopeDownTearsDownItsScopedInstancesAndNotTheAppsSingletons() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        _ = scope.appDatabase()
        let appFile = app.requestLogFile()
        let file = scope.requestLogFile()
        #expect(file !== appFile)
        scope.shutdown()
        #expect(file.isClosed)
        #expect(!appFile.isClosed)
        #expect(app.instanceIfBuilt(\.appDatabase) != nil)
    }

    // MARK: - Request values

    @Test func aRequestValueThatWasNeverInstalledStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scope = DependencyContainer(scopeOf: DependencyContainer())
            _ = scope.requestHandler()
        }
        let output = standardError(of: result)
        #expect(output.contains("requestUser is not implemented"), "\(output)")
        #expect(output.contains("override(\\.requestUser)"), "\(output)")
    }

    @Test func anAppWideSingletonThatReadsARequestValueStopsNamingTheFix() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scope = DependencyContainer(scopeOf: DependencyContainer())
            scope.override(\.requestUser) { "ada" }
            _ = scope.greetingCache()
        }
        let output = standardError(of: result)
        #expect(output.contains("requestUser is not implemented"), "\(output)")
        #expect(output.contains("while building greetingCache, which is app-wide"), "\(output)")
        #expect(output.contains("scoped { … }"), "\(output)")
    }

    // MARK: - Async providers

    @Test func asyncRegistrationsFollowTheSameRules() async throws {
        let app = DependencyContainer()
        let first = request(of: app, user: "ada")
        let second = request(of: app, user: "bob")
        #expect(try await first.asyncDatabase() === second.asyncDatabase())
        #expect(try await first.asyncDatabase() === app.asyncDatabase())
        #expect(try await first.asyncProfile().user == "ada")
        #expect(try await second.asyncProfile().user == "bob")
        #expect(try await first.asyncProfile() === first.asyncProfile())
    }

    // MARK: - Under load

    /// 200 simulated requests at once, each in its own scope with its own user: one
    /// database for all, no request sees another's user, and every scope is freed.
    @Test func twoHundredConcurrentRequestsShareOneDatabaseSeeOnlyTheirOwnUserAndAreFreed() async {
        let app = DependencyContainer()
        let builds = app.counter("appDatabase")
        let requests = 200
        let barrier = AsyncBarrier(parties: requests)
        let scopes = Collected<Weak>()
        let databases = Collected<ObjectIdentifier>()
        let mismatches = Collected<String>()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<requests {
                group.addTask {
                    let user = "user-\(index)"
                    let scope = DependencyContainer(scopeOf: app)
                    scope.override(\.requestUser) { user }
                    scopes.append(Weak(scope))
                    await barrier.arrive()
                    let handler = scope.requestHandler()
                    let seen = handler.handle()
                    if seen != user || handler.user != user || scope.requestStamp() != "stamp for \(user)" {
                        mismatches.append("\(user) saw \(seen)")
                    }
                    databases.append(ObjectIdentifier(handler.database))
                }
            }
        }
        #expect(mismatches.values.isEmpty, "\(mismatches.values.prefix(5))")
        #expect(Set(databases.values).count == 1)
        #expect(builds.count == 1)
        #expect(app.appDatabase().all.count == requests)
        #expect(scopes.values.allSatisfy { $0.container == nil })
    }

    /// Threads released together, each in a new scope, ask for the app's singleton for the
    /// first time while others override the app's clock.
    @Test func scopesOnManyThreadsBuildTheAppsSingletonOnce() async {
        let app = DependencyContainer()
        let builds = app.counter("appDatabase")
        let seen = Collected<ObjectIdentifier>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<50 {
                let scope = DependencyContainer(scopeOf: app)
                scope.override(\.requestUser) { "user-\(index)-\(round)" }
                seen.append(ObjectIdentifier(scope.requestHandler().database))
                if index == 0 { app.override(\.scopeClock) { ScopeClock(name: "round \(round)") } }
                _ = scope.scheduler()
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(builds.count == 1)
        #expect(Set(seen.values).count == 1)
    }
}

/// A weak reference to a scope, to see it freed.
final class Weak: @unchecked Sendable {
    weak var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
}
