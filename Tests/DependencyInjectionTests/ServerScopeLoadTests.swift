import DependencyInjection
import Foundation
import Testing

// Attacks on request and session scopes under load: many requests at once each with its
// own user, sharing the app's singletons and freed when they end; sessions with nested
// requests while the session and the app change the clock; async scoped constructions in
// flight while their request is dropped or its waiters cancelled; requests ended with
// `shutdown()` while the app shuts down.

/// The signed-in user of one request.
final class SSLUser: Sendable {
    let id: Int
    init(id: Int) { self.id = id }
}

/// An app-wide client, counted as it is built.
final class SSLClient: Sendable {
    let built: Counter
    init(built: Counter) {
        self.built = built
        built.increment()
    }
}

/// An app-wide per-tenant store.
final class SSLTenantStore: Sendable {
    let tenant: Int
    init(tenant: Int) { self.tenant = tenant }
}

/// A shared per-user cache, alive while a handler holds it.
final class SSLUserCache: Sendable {
    let user: Int
    init(user: Int) { self.user = user }
}

/// A request's handler.
final class SSLHandler: @unchecked Sendable {
    let user: SSLUser
    let session: String
    let client: SSLClient
    let tenant: SSLTenantStore
    let cache: SSLUserCache
    @Dependency(\.sslClient) var lazyClient
    @Dependency(\.sslRequestUser) var lazyUser
    init(user: SSLUser, session: String, client: SSLClient, tenant: SSLTenantStore, cache: SSLUserCache) {
        (self.user, self.session, self.client, self.tenant, self.cache) = (user, session, client, tenant, cache)
    }
}

/// An async handler, whose construction a test holds.
final class SSLAsyncHandler: Sendable {
    let user: SSLUser
    let client: SSLClient
    init(user: SSLUser, client: SSLClient) { (self.user, self.client) = (user, client) }
}

/// What the async handler's construction waits for, and counts.
final class SSLAsyncGate: Sendable {
    let entered = AsyncLatch()
    let release = AsyncLatch()
    let built = Counter()
    let tornDown = Counter()
    init() {}
}

extension DependencyContainer {
    var sslClientBuilds: Counter { getValue(forKey: "ssl-client-builds")! }
    var sslClient: Provider<SSLClient> { singleton { SSLClient(built: self.sslClientBuilds) } }
    subscript(sslTenant tenant: Int) -> Provider<SSLTenantStore> { singleton(tenant) { SSLTenantStore(tenant: tenant) } }
    subscript(sslCache user: Int) -> Provider<SSLUserCache> { shared(user) { SSLUserCache(user: user) } }
    var sslRequestUser: Provider<SSLUser> { unimplemented() }
    var sslSessionName: Provider<String> { unimplemented() }
    var sslHandler: Provider<SSLHandler> {
        scoped {
            let user = self.sslRequestUser()
            return SSLHandler(
                user: user, session: self.sslSessionName(), client: self.sslClient(),
                tenant: self[sslTenant: user.id % 37](), cache: self[sslCache: user.id]())
        }
    }

    var sslGate: SSLAsyncGate { getValue(forKey: "ssl-gate")! }
    var sslAsyncHandler: AsyncProvider<SSLAsyncHandler> {
        scoped {
            let gate = self.sslGate
            gate.built.increment()
            gate.entered.open()
            await gate.release.wait()
            return SSLAsyncHandler(user: self.sslRequestUser(), client: self.sslClient())
        }
        .onShutdown { [gate = sslGate] _ in gate.tornDown.increment() }
    }
}

/// A weak reference a task may read.
final class SSLWeak: @unchecked Sendable {
    weak var object: AnyObject?
}

/// Weak references to what one request made.
struct SSLRequestTrace: @unchecked Sendable {
    weak var request: DependencyContainer?
    weak var handler: SSLHandler?
    weak var user: SSLUser?
    weak var cache: SSLUserCache?
}

private func sslApp() -> DependencyContainer {
    let app = DependencyContainer()
    app.setValue(Counter(), forKey: "ssl-client-builds")
    return app
}

@Suite struct ServerScopeLoadTests {
    /// Eight threads released together, each a signed-in session serving requests, each
    /// request with its own user object. Every handler sees its own user and session,
    /// shares the app's client and tenant stores (built once each), reads its lazy
    /// properties from its request; when the requests and sessions end, every request,
    /// handler, user and shared cache is freed, and the app keeps no child.
    @Test func requestsInSessionsOnManyThreadsSeeTheirOwnUserAndAreFreed() async {
        let app = sslApp()
        let problems = Collected<String>()
        let traces = Collected<SSLRequestTrace>()
        let tenants = Collected<(Int, ObjectIdentifier)>()
        let sessionsFreed = Collected<Bool>()
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(8) { thread in
                var session: DependencyContainer? = DependencyContainer(scopeOf: app)
                session!.override(\.sslSessionName) { "session-\(thread)" }
                for index in 0..<150 {
                    let id = thread * 1_000 + index
                    var trace = SSLRequestTrace()
                    do {
                        let request = DependencyContainer(scopeOf: session!)
                        let user = SSLUser(id: id)
                        request.override(\.sslRequestUser) { user }
                        let handler = request.sslHandler()
                        if handler.user.id != id { problems.append("request \(id) got user \(handler.user.id)") }
                        if handler.session != "session-\(thread)" { problems.append("request \(id) got \(handler.session)") }
                        if handler.lazyUser.id != id { problems.append("request \(id) lazily read user \(handler.lazyUser.id)") }
                        if handler.lazyClient !== handler.client { problems.append("request \(id) lazily read another client") }
                        if handler.cache.user != id { problems.append("request \(id) got cache \(handler.cache.user)") }
                        if request.sslHandler() !== handler { problems.append("request \(id) built two handlers") }
                        tenants.append((handler.tenant.tenant, ObjectIdentifier(handler.tenant)))
                        trace.request = request
                        trace.handler = handler
                        trace.user = user
                        trace.cache = handler.cache
                    }
                    traces.append(trace)
                }
                let weakSession = SSLWeak()
                weakSession.object = session
                session = nil
                sessionsFreed.append(weakSession.object == nil)
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
        #expect(app.sslClientBuilds.count == 1, "the app's client was built \(app.sslClientBuilds.count) times")
        var byTenant: [Int: Set<ObjectIdentifier>] = [:]
        for (tenant, store) in tenants.values { byTenant[tenant, default: []].insert(store) }
        #expect(byTenant.values.allSatisfy { $0.count == 1 }, "a tenant store was built more than once")
        #expect(sessionsFreed.values.allSatisfy { $0 }, "a session outlived its thread")
        let all = traces.values
        #expect(all.count == 1_200)
        #expect(all.allSatisfy { $0.request == nil }, "\(all.filter { $0.request != nil }.count) requests leaked")
        #expect(all.allSatisfy { $0.handler == nil }, "\(all.filter { $0.handler != nil }.count) handlers leaked")
        #expect(all.allSatisfy { $0.user == nil }, "\(all.filter { $0.user != nil }.count) users leaked")
        #expect(all.allSatisfy { $0.cache == nil }, "\(all.filter { $0.cache != nil }.count) caches leaked")
    }

    /// The same load served by tasks, as a server framework runs requests, on the
    /// cooperative pool whose threads live on: nothing a request made may stay behind in
    /// a thread's bookkeeping once the request ends.
    @Test func requestsServedByTasksAreFreedOnThePoolsThreads() async {
        let app = sslApp()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.sslSessionName) { "tasks" }
        let traces = await withTaskGroup(of: (SSLRequestTrace, String?).self) { group in
            for id in 0..<400 {
                group.addTask {
                    var trace = SSLRequestTrace()
                    var problem: String?
                    do {
                        let request = DependencyContainer(scopeOf: session)
                        let user = SSLUser(id: id)
                        request.override(\.sslRequestUser) { user }
                        let handler = request.sslHandler()
                        if handler.user.id != id || handler.lazyUser.id != id { problem = "request \(id) saw another user" }
                        if handler.lazyClient !== handler.client { problem = "request \(id) lazily read another client" }
                        await Task.yield()
                        trace.request = request
                        trace.handler = handler
                        trace.user = user
                        trace.cache = handler.cache
                    }
                    return (trace, problem)
                }
            }
            var all: [(SSLRequestTrace, String?)] = []
            for await result in group { all.append(result) }
            return all
        }
        #expect(traces.compactMap(\.1).isEmpty, "\(traces.compactMap(\.1).prefix(3))")
        #expect(app.sslClientBuilds.count == 1)
        let all = traces.map(\.0)
        #expect(all.allSatisfy { $0.request == nil }, "\(all.filter { $0.request != nil }.count) requests leaked")
        #expect(all.allSatisfy { $0.handler == nil }, "\(all.filter { $0.handler != nil }.count) handlers leaked")
        #expect(all.allSatisfy { $0.user == nil }, "\(all.filter { $0.user != nil }.count) users leaked")
        #expect(all.allSatisfy { $0.cache == nil }, "\(all.filter { $0.cache != nil }.count) caches leaked")
    }

    // MARK: Async constructions in flight

    /// A request's async handler is in flight when its only caller is cancelled and the
    /// server drops the request. The construction ends later; then the request, its
    /// handler and its user are freed, and the handler was built once.
    @Test func aRequestDroppedWhileItsAsyncHandlerIsBuildingIsFreedWhenItEnds() async throws {
        let app = sslApp()
        let gate = SSLAsyncGate()
        app.setValue(gate, forKey: "ssl-gate")
        let weakRequest = SSLWeak()
        let weakUser = SSLWeak()
        let caller: Task<SSLAsyncHandler, any Error>
        do {
            let request = DependencyContainer(scopeOf: app)
            let user = SSLUser(id: 7)
            request.override(\.sslRequestUser) { user }
            (weakRequest.object, weakUser.object) = (request, user)
            caller = Task { try await request.sslAsyncHandler() }
        }
        await gate.entered.wait()
        caller.cancel()
        let outcome = await caller.result
        gate.release.open()
        // The construction runs on; whatever the caller got, once it ends nothing remains.
        if case .success(let handler) = outcome { #expect(handler.user.id == 7) }
        let freed = await endsWithoutHanging {
            while weakRequest.object != nil || weakUser.object != nil { await Task.yield() }
        }
        #expect(freed, "the request or its user outlived the construction")
        #expect(gate.built.count == 1)
        #expect(gate.tornDown.count == 0, "a request dropped without shutdown ran a teardown")
    }

    /// Twenty tasks of one request wait for its async handler; half are cancelled while it
    /// builds. The cancelled ones stop with a cancellation, the others all get the one
    /// handler, built once, and the request keeps it.
    @Test func cancelledWaitersOfARequestsAsyncHandlerLeaveTheOthersServed() async throws {
        let app = sslApp()
        let gate = SSLAsyncGate()
        app.setValue(gate, forKey: "ssl-gate")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.sslRequestUser) { SSLUser(id: 3) }
        var waiters: [Task<ObjectIdentifier, any Error>] = []
        for _ in 0..<20 {
            waiters.append(Task { ObjectIdentifier(try await request.sslAsyncHandler()) })
        }
        await gate.entered.wait()
        for waiter in waiters.prefix(10) { waiter.cancel() }
        var cancelled = 0
        for waiter in waiters.prefix(10) {
            if case .failure = await waiter.result { cancelled += 1 }
        }
        gate.release.open()
        var served: Set<ObjectIdentifier> = []
        for waiter in waiters.suffix(10) { served.insert(try await waiter.value) }
        let kept = try await request.sslAsyncHandler()
        #expect(served == [ObjectIdentifier(kept)], "the waiters got \(served.count) handlers")
        #expect(kept.user.id == 3)
        #expect(gate.built.count == 1, "the handler was built \(gate.built.count) times")
        #expect(cancelled == 10, "only \(cancelled) cancelled waiters stopped")
    }
}

extension DependencyContainer {
    var sslClock: Provider<ChainPart> { singleton { ChainPart("app clock") } }
    var sslAsyncTimed: AsyncProvider<ChainPart> {
        singleton {
            await Task.yield()
            return ChainPart("timed", inner: self.sslClock())
        }
    }
    var sslAsyncChainHandler: AsyncProvider<ChainPart> {
        scoped {
            let timed = try await self.sslAsyncTimed()
            await Task.yield()
            return ChainPart("handler", inner: timed)
        }
    }
}

@Suite struct ServerScopeLoadAsyncChainTests {
    /// Requests of a session resolve async handlers built from the app's async `timed`,
    /// built from `clock`, while the session overrides `clock` again and again and the app
    /// overrides and resets it. Once the session's last override stands, every request's
    /// handler is built from a `timed` of the session's last clock.
    @Test(arguments: [false, true])
    func asyncHandlersEndWithTheSessionsLastClock(appChangesToo: Bool) async throws {
        for round in 0..<30 {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let requests = (0..<6).map { _ in DependencyContainer(scopeOf: session) }
            _ = try await app.sslAsyncTimed()
            for request in requests { _ = try await request.sslAsyncChainHandler() }
            let barrier = AsyncBarrier(parties: 8)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await barrier.arrive()
                    for step in 0..<20 {
                        session.override(\.sslClock) { ChainPart("session clock \(step)") }
                        await Task.yield()
                    }
                    session.override(\.sslClock) { ChainPart("session clock final") }
                }
                group.addTask {
                    await barrier.arrive()
                    for step in 0..<20 {
                        if appChangesToo {
                            if step % 2 == 0 { app.override(\.sslClock) { ChainPart("app clock \(step)") } } else { app.reset(\.sslClock) }
                        }
                        await Task.yield()
                    }
                }
                for request in requests {
                    group.addTask {
                        await barrier.arrive()
                        for _ in 0..<10 {
                            _ = try await request.sslAsyncChainHandler()
                            _ = try await request.sslAsyncTimed()
                        }
                    }
                }
                try await group.waitForAll()
            }
            for (number, request) in requests.enumerated() {
                let timed = try await request.sslAsyncTimed()
                #expect(timed.inner?.source == "session clock final", "round \(round), request \(number): \(timed.inner?.source ?? "-")")
                let handler = try await request.sslAsyncChainHandler()
                #expect(handler.inner === timed, "round \(round), request \(number): handler from \(handler.inner?.inner?.source ?? "-")")
            }
        }
    }
}

/// An async request handler with properties, created after its construction suspended.
final class SSLAsyncPropertyHandler: @unchecked Sendable {
    @Dependency(\.sslRequestUser) var user
    @Dependency(\.sslClient) var client
    let part: SSLAsyncPropertyPart
    init(part: SSLAsyncPropertyPart) { self.part = part }
}

/// A part of the async handler, created in a factory the handler's construction resolves.
final class SSLAsyncPropertyPart: @unchecked Sendable {
    @Dependency(\.sslRequestUser) var user
}

extension DependencyContainer {
    var sslAsyncPart: AsyncProvider<SSLAsyncPropertyPart> {
        factory {
            await Task.yield()
            return SSLAsyncPropertyPart()
        }
    }
    var sslAsyncPropertyHandler: AsyncProvider<SSLAsyncPropertyHandler> {
        scoped {
            await Task.yield()
            let part = try await self.sslAsyncPart()
            await Task.yield()
            return SSLAsyncPropertyHandler(part: part)
        }
    }
}

@Suite struct ServerScopeLoadAsyncPropertyTests {
    /// Requests served by tasks resolve an async scoped handler whose properties (its own
    /// and a part's, made by an async factory) resolve the request's user. Each reads its
    /// own user, and once the request ends the request, handler and part are freed: the
    /// scope keeps the handler, so nothing the handler holds may keep the scope.
    @Test func asyncHandlersWithPropertiesSeeTheirUserAndAreFreed() async throws {
        let app = sslApp()
        let results = try await withThrowingTaskGroup(of: (SSLRequestTrace, SSLWeak, String?).self) { group in
            for id in 0..<200 {
                group.addTask {
                    var trace = SSLRequestTrace()
                    let part = SSLWeak()
                    var problem: String?
                    do {
                        let request = DependencyContainer(scopeOf: app)
                        let user = SSLUser(id: id)
                        request.override(\.sslRequestUser) { user }
                        let handler = try await request.sslAsyncPropertyHandler()
                        if handler.user.id != id || handler.part.user.id != id { problem = "request \(id) saw another user" }
                        _ = handler.client
                        trace.request = request
                        trace.user = user
                        part.object = handler.part
                    }
                    return (trace, part, problem)
                }
            }
            var all: [(SSLRequestTrace, SSLWeak, String?)] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.compactMap(\.2).isEmpty, "\(results.compactMap(\.2).prefix(3))")
        #expect(results.allSatisfy { $0.0.request == nil }, "\(results.filter { $0.0.request != nil }.count) requests leaked")
        #expect(results.allSatisfy { $0.1.object == nil }, "\(results.filter { $0.1.object != nil }.count) parts leaked")
        #expect(results.allSatisfy { $0.0.user == nil }, "\(results.filter { $0.0.user != nil }.count) users leaked")
    }
}

/// An app-wide resource with a teardown, built from the clock.
final class SSLPool: @unchecked Sendable {
    let clock: ChainPart
    private let lock = NSLock()
    private var closes = 0
    init(clock: ChainPart) { self.clock = clock }
    func close() { lock.withLock { closes += 1 } }
    var closed: Int { lock.withLock { closes } }
}

extension DependencyContainer {
    var sslPool: Provider<SSLPool> { singleton { SSLPool(clock: self.sslClock()) }.onShutdown { $0.close() } }
    var sslPoolsBuilt: Collected<SSLPool> { getValue(forKey: "ssl-pools")! }
    var sslCountedPool: Provider<SSLPool> {
        singleton {
            let pool = SSLPool(clock: self.sslClock())
            self.sslPoolsBuilt.append(pool)
            return pool
        }
        .onShutdown { $0.close() }
    }
    var sslPoolHandler: Provider<ChainPart> { scoped { ChainPart("handler of \(self.sslPool().clock.source)") } }
}

@Suite struct ServerScopeLoadShutdownTests {
    /// Ending requests with `shutdown()` never closes the app's pool that they shared,
    /// even with many requests ending at once on many threads; a request that overrides
    /// the clock builds its own pool, which its own shutdown closes once, and the app's
    /// shutdown leaves alone.
    @Test(arguments: [false, true])
    func endingRequestsWithShutdownLeavesTheAppsPoolOpen(traced: Bool) async {
        let app = DependencyContainer()
        if traced { app.tracer = ResolutionTracer { _ in } }
        let own = Collected<SSLPool>()
        let shared = Collected<SSLPool>()
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(8) { thread in
                for index in 0..<200 {
                    let request = DependencyContainer(scopeOf: app)
                    if index % 2 == 0 {
                        request.override(\.sslClock) { ChainPart("request \(thread)-\(index)") }
                        own.append(request.sslPool())
                    } else {
                        shared.append(request.sslPool())
                    }
                    _ = request.sslPoolHandler()
                    request.shutdown()
                    if index % 3 == 0 { request.shutdown() }
                }
            }
        }
        #expect(finished)
        let appPool = app.sslPool()
        #expect(appPool.closed == 0, "requests closed the app's pool \(appPool.closed) times")
        #expect(shared.values.allSatisfy { $0 === appPool }, "\(Set(shared.values.map(ObjectIdentifier.init)).count) app pools")
        let owns = own.values
        #expect(owns.allSatisfy { $0 !== appPool && $0.clock.source.hasPrefix("request") })
        #expect(owns.allSatisfy { $0.closed == 1 }, "\(owns.filter { $0.closed != 1 }.count) request pools not closed once")
        await app.shutdown()
        #expect(appPool.closed == 1)
        #expect(owns.allSatisfy { $0.closed == 1 })
    }

    /// Requests on six threads resolve the app's pool (half of them through their own
    /// clock, so their own pool) and end with `shutdown()`, while two threads shut the app
    /// down again and again. Every pool is closed at most once, the app's current one
    /// stays usable, and a last shutdown of the app leaves every pool closed exactly once.
    @Test func appShutdownsRacingRequestsCloseEveryPoolOnce() async {
        for round in 0..<10 {
            let app = DependencyContainer()
            app.setValue(Collected<SSLPool>(), forKey: "ssl-pools")
            let finished = await finishesWithoutHangingOffThePool {
                onThreadsReleasedTogetherAndJoined(8) { thread in
                    for index in 0..<150 {
                        if thread < 2 {
                            app.shutdown()
                            continue
                        }
                        let request = DependencyContainer(scopeOf: app)
                        if index % 2 == 0 { request.override(\.sslClock) { ChainPart("request") } }
                        _ = request.sslCountedPool()
                        request.shutdown()
                    }
                }
            }
            #expect(finished)
            await app.shutdown()
            let pools = app.sslPoolsBuilt.values
            let wrong = pools.filter { $0.closed != 1 }
            #expect(wrong.isEmpty, "round \(round): of \(pools.count) pools, \(wrong.count) closed \(wrong.map(\.closed)) times; sources \(wrong.map(\.clock.source))")
            if !wrong.isEmpty { break }
        }
    }
}
