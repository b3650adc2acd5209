import DependencyInjection
import Foundation
import Testing

// A server team's use of async providers: a request scope per request resolving async
// `scoped(id)` handlers built from async `shared(id)` caches built from an app-wide async
// singleton; cancellation, failure, shutdown and overrides while constructions are in
// flight; sessions holding requests.

/// What the registrations below build: a label, and what it was built from.
final class RASVThing: Sendable {
    let label: String
    let inner: RASVThing?
    init(_ label: String, inner: RASVThing? = nil) { (self.label, self.inner) = (label, inner) }
}

/// Holds a construction in flight until the test opens it.
final class RASVGate: Sendable {
    let entered = AsyncLatch()
    let release = AsyncLatch()
    init() {}
    func pass() async {
        entered.open()
        await release.wait()
    }
}

/// The app's counters, stored in the app container (scopes read it through their parent).
final class RASVProbe: Sendable {
    let dbBuilds = Counter()
    let cacheBuilds = Counter()
    let handlerBuilds = Counter()
    let teardowns = Collected<String>()
    /// How many handler constructions fail before one succeeds.
    let handlerFailures = Counter()
    let handlerFailuresWanted: Int
    init(handlerFailuresWanted: Int = 0) { self.handlerFailuresWanted = handlerFailuresWanted }
}

struct RASVFailed: Error {}

extension DependencyContainer {
    var rasvProbe: RASVProbe { getValue(forKey: "rasv.probe")! }
    var rasvDBGate: RASVGate? { getValue(forKey: "rasv.dbGate") }
    var rasvHandlerGate: RASVGate? { getValue(forKey: "rasv.handlerGate") }

    /// App-wide: one database for every request.
    var rasvDB: AsyncProvider<RASVThing> {
        singleton {
            self.rasvProbe.dbBuilds.increment()
            await self.rasvDBGate?.pass()
            return RASVThing("db")
        }
        .onShutdown { [probe = rasvProbe] db in probe.teardowns.append(db.label) }
    }
    /// A request value.
    var rasvUser: Provider<String> { unimplemented() }
    /// App-wide, per tenant, while held: built from the database.
    subscript(rasvCache tenant: Int) -> AsyncProvider<RASVThing> {
        shared(tenant) {
            self.rasvProbe.cacheBuilds.increment()
            return RASVThing("cache \(tenant)", inner: try await self.rasvDB())
        }
    }
    /// Per request and tenant: built from the request's user and the tenant's cache.
    subscript(rasvHandler tenant: Int) -> AsyncProvider<RASVThing> {
        scoped(tenant) {
            let probe = self.rasvProbe
            probe.handlerBuilds.increment()
            let user = self.rasvUser()
            await self.rasvHandlerGate?.pass()
            if probe.handlerFailures.count < probe.handlerFailuresWanted {
                probe.handlerFailures.increment()
                throw RASVFailed()
            }
            return RASVThing("handler \(tenant) for \(user)", inner: try await self[rasvCache: tenant]())
        }
        .onShutdown { [probe = rasvProbe] handler in probe.teardowns.append(handler.label) }
    }
    /// Per request: built straight from the database.
    var rasvDirectHandler: AsyncProvider<RASVThing> {
        scoped {
            let db = try await self.rasvDB()
            await self.rasvHandlerGate?.pass()
            return RASVThing("direct for \(self.rasvUser())", inner: db)
        }
    }
}

/// Weak references a task may fill.
struct RASVTrace: @unchecked Sendable {
    weak var request: DependencyContainer?
    weak var handler: RASVThing?
    weak var cache: RASVThing?
}

private func rasvApp(_ probe: RASVProbe = RASVProbe()) -> DependencyContainer {
    let app = DependencyContainer()
    app.setValue(probe, forKey: "rasv.probe")
    return app
}

@Suite struct AsyncServerTests {
    /// 240 requests released together behind a latch, each with its own user, resolving
    /// the handler of one of six tenants twice. Every handler is its request's, built for
    /// its user; the six caches are the app's, built once each while held; the database is
    /// built once. When the requests and what they returned are gone, every request,
    /// handler and cache is freed.
    @Test func hundredsOfRequestsReleasedTogetherShareTheAppsInstancesAndAreFreed() async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let start = AsyncLatch()
        let requests = 240
        var handlers: [RASVThing] = []
        var traces: [RASVTrace] = []
        try await withThrowingTaskGroup(of: (RASVThing, RASVTrace).self) { group in
            for index in 0..<requests {
                group.addTask {
                    await start.wait()
                    let request = DependencyContainer(scopeOf: app)
                    request.override(\.rasvUser) { "user \(index)" }
                    let handler = try await request[rasvHandler: index % 6]()
                    let again = try await request[rasvHandler: index % 6]()
                    #expect(handler === again, "request \(index) built its handler twice")
                    #expect(handler.label == "handler \(index % 6) for user \(index)")
                    return (handler, RASVTrace(request: request, handler: handler, cache: handler.inner))
                }
            }
            start.open()
            for try await (handler, trace) in group {
                handlers.append(handler)
                traces.append(trace)
            }
        }
        let caches = Set(handlers.map { ObjectIdentifier($0.inner!) })
        let dbs = Set(handlers.map { ObjectIdentifier($0.inner!.inner!) })
        #expect(caches.count == 6, "\(caches.count) caches for 6 tenants")
        #expect(dbs.count == 1)
        #expect(probe.dbBuilds.count == 1, "the database was built \(probe.dbBuilds.count) times")
        #expect(probe.cacheBuilds.count == 6, "the caches were built \(probe.cacheBuilds.count) times")
        #expect(probe.handlerBuilds.count == requests)
        handlers = []
        let tracked = traces
        let freed = await eventually {
            tracked.allSatisfy { $0.request == nil && $0.handler == nil && $0.cache == nil }
        }
        #expect(freed, "a request, handler or cache outlived its request")
        #expect(app.instanceIfBuilt(\.rasvDB) != nil)
    }

    /// A request's async handler fails twice, then builds: each failure reaches its caller,
    /// nothing is kept, and the third resolution builds and keeps one handler, which a
    /// request shutdown then tears down once. The request is freed afterwards.
    @Test func aHandlerThatThrowsThenBuildsIsKeptOnceAndTornDownOnce() async throws {
        let probe = RASVProbe(handlerFailuresWanted: 2)
        let app = rasvApp(probe)
        let weakRequest = SSLWeak()
        do {
            let request = DependencyContainer(scopeOf: app)
            weakRequest.object = request
            request.override(\.rasvUser) { "bob" }
            await #expect(throws: RASVFailed.self) { _ = try await request[rasvHandler: 2]() }
            #expect(request.instanceIfBuilt(\.[rasvHandler: 2]) == nil)
            await #expect(throws: RASVFailed.self) { _ = try await request[rasvHandler: 2]() }
            let handler = try await request[rasvHandler: 2]()
            #expect(try await request[rasvHandler: 2]() === handler)
            #expect(probe.handlerBuilds.count == 3)
            await request.shutdown()
            await request.shutdown()
            #expect(probe.teardowns.values == ["handler 2 for bob"])
        }
        #expect(await eventually { weakRequest.object == nil }, "the request outlived its failures")
    }

    /// A request shuts down while its async handler is being built: nothing is torn down
    /// then; the handler built afterwards is kept for the request's next shutdown, which
    /// tears it down once.
    @Test func aRequestShutDownWhileItsHandlerBuildsKeepsItForTheNextShutdown() async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let gate = RASVGate()
        app.setValue(gate, forKey: "rasv.handlerGate")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.rasvUser) { "cy" }
        let resolving = Task { try await request[rasvHandler: 3]() }
        await gate.entered.wait()
        await request.shutdown()
        #expect(probe.teardowns.values.isEmpty)
        gate.release.open()
        let handler = try await resolving.value
        #expect(request.instanceIfBuilt(\.[rasvHandler: 3]) === handler)
        #expect(try await request[rasvHandler: 3]() === handler)
        await request.shutdown()
        #expect(probe.teardowns.values == ["handler 3 for cy"])
        #expect(probe.handlerBuilds.count == 1)
    }

    /// The app overrides its database while a request's handler waits for the app to build
    /// it. The request may hand out the handler built from the old database, but once the
    /// override is in and that resolution has returned, the request's next resolution is
    /// built from the new database.
    @Test func anAppOverrideWhileTheDatabaseBuildsForARequestReachesTheRequestsNextHandler() async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let gate = RASVGate()
        app.setValue(gate, forKey: "rasv.dbGate")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.rasvUser) { "dee" }
        let resolving = Task { try await request.rasvDirectHandler() }
        await gate.entered.wait()
        app.override(\.rasvDB) { RASVThing("stub db") }
        gate.release.open()
        _ = try await resolving.value
        let next = try await request.rasvDirectHandler()
        #expect(next.inner?.label == "stub db", "the request kept a handler built from the replaced database")
        #expect(try await app.rasvDB().label == "stub db")
    }

    /// A held async `shared(id)` cache built from the app's database: an override of the
    /// database in the app, and an async shutdown of the app, each make the next
    /// resolution through a request build a new cache, from the database now in use.
    @Test func aHeldSharedCacheBuiltFromTheDatabaseIsNotServedAfterTheDatabaseGoes() async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let request = DependencyContainer(scopeOf: app)
        let held = try await request[rasvCache: 4]()
        #expect(try await app[rasvCache: 4]() === held)
        await app.shutdown()
        #expect(probe.teardowns.values == ["db"])
        let afterShutdown = try await request[rasvCache: 4]()
        #expect(afterShutdown !== held, "a cache holding the torn-down database was served")
        #expect(afterShutdown.inner !== held.inner)
        app.override(\.rasvDB) { RASVThing("stub db") }
        let afterOverride = try await DependencyContainer(scopeOf: app)[rasvCache: 4]()
        #expect(afterOverride.inner?.label == "stub db", "a cache built from the replaced database was served")
        withExtendedLifetime((held, afterShutdown)) {}
    }
}

@Suite struct AsyncServerChangeTests {
    /// Requests keep resolving their tenant's handler, each in a fresh request, while the
    /// app overrides its database once. Every resolution that starts after the override
    /// returned gets a handler built from a cache built from the new database.
    @Test(arguments: [false, true])
    func anAppOverrideDuringLoadReachesEveryLaterRequest(overrideTheCache: Bool) async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let overridden = Flag()
        let arrived = Arrivals()
        let stale = Collected<String>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<48 {
                group.addTask {
                    var counted = false
                    var afterOverride = 0
                    var round = 0
                    while afterOverride < 3 {
                        let startedAfter = overridden.isSet
                        let request = DependencyContainer(scopeOf: app)
                        request.override(\.rasvUser) { "user \(index)" }
                        let handler = try await request[rasvHandler: index % 3]()
                        let again = try await request[rasvHandler: index % 3]()
                        if startedAfter {
                            afterOverride += 1
                            for got in [handler, again] where got.inner?.inner?.label != "stub db" {
                                stale.append("request \(index) round \(round): \(got.inner?.label ?? "?") over \(got.inner?.inner?.label ?? "?")")
                            }
                        }
                        round += 1
                        if !counted {
                            counted = true
                            arrived.arrive()
                        }
                        await Task.yield()
                    }
                }
            }
            group.addTask {
                let ready = await finishesWithoutHangingOffThePool { arrived.wait(for: 48) }
                #expect(ready)
                if overrideTheCache {
                    for tenant in 0..<3 {
                        app.override(\.[rasvCache: tenant]) { RASVThing("stub cache", inner: RASVThing("stub db")) }
                    }
                } else {
                    app.override(\.rasvDB) { RASVThing("stub db") }
                }
                overridden.set()
            }
            try await group.waitForAll()
        }
        #expect(stale.values.isEmpty, "\(stale.values.count) stale: \(stale.values.prefix(4))")
    }
}

@Suite struct AsyncServerOwnCopyTests {
    /// One request overrides the database (a request-level test double), another does not;
    /// both ask for tenant 1's async `shared(id)` cache while the app's database is still
    /// being built. The first gets a cache of its own, built from its database; the second
    /// the app's, built from the app's database; whichever asked first.
    @Test(arguments: [false, true])
    func aRequestOverridingTheDatabaseGetsItsOwnCacheAlongsideTheApps(overridingFirst: Bool) async throws {
        let probe = RASVProbe()
        let app = rasvApp(probe)
        let gate = RASVGate()
        app.setValue(gate, forKey: "rasv.dbGate")
        let own = DependencyContainer(scopeOf: app)
        own.override(\.rasvDB) { RASVThing("request db") }
        let plain = DependencyContainer(scopeOf: app)
        let (firstScope, secondScope) = overridingFirst ? (own, plain) : (plain, own)
        let first = Task { try await firstScope[rasvCache: 1]() }
        if !overridingFirst { await gate.entered.wait() }
        let second = Task { try await secondScope[rasvCache: 1]() }
        if overridingFirst { await gate.entered.wait() }
        gate.release.open()
        let (a, b) = (try await first.value, try await second.value)
        let (ownCache, plainCache) = overridingFirst ? (a, b) : (b, a)
        #expect(ownCache.inner?.label == "request db")
        #expect(plainCache.inner?.label == "db")
        #expect(try await own[rasvCache: 1]() === ownCache)
        #expect(try await plain[rasvCache: 1]() === plainCache)
        #expect(try await app[rasvCache: 1]() === plainCache)
    }
}

@Suite struct AsyncServerShutdownRaceTests {
    /// A request builds thirty async handlers, one per tenant, while other tasks shut it
    /// down again and again. When everything has ended and a last shutdown ran, each
    /// handler the request built was torn down exactly once, and none twice.
    @Test func shutdownsRacingARequestsHandlerConstructionsTearEachDownOnce() async throws {
        for _ in 0..<20 {
            let probe = RASVProbe()
            let app = rasvApp(probe)
            let request = DependencyContainer(scopeOf: app)
            request.override(\.rasvUser) { "gus" }
            let start = AsyncLatch()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for tenant in 0..<30 {
                    group.addTask {
                        await start.wait()
                        _ = try await request[rasvHandler: tenant]()
                    }
                }
                for _ in 0..<4 {
                    group.addTask {
                        await start.wait()
                        for _ in 0..<5 {
                            await request.shutdown()
                            await Task.yield()
                        }
                    }
                }
                start.open()
                try await group.waitForAll()
            }
            await request.shutdown()
            let torn = probe.teardowns.values
            #expect(probe.handlerBuilds.count == 30)
            #expect(torn.count == 30, "30 built, \(torn.count) torn down")
            #expect(Set(torn).count == 30, "a handler was torn down twice, or another never")
        }
    }
}
