// A server with a scope per request and per signed-in session, under load.
import DependencyInjection
import Foundation
import Testing

// MARK: - Server code

final class ServedStore: Sendable {}
final class ServedClock: Sendable {
    let name: String
    init(name: String) { self.name = name }
}
final class ServedTimed: Sendable {
    let clock: ServedClock
    init(clock: ServedClock) { self.clock = clock }
}
/// One request's unit of work: a graph instance.
final class ServedUnit: Sendable {}
final class ServedRepo: Sendable {
    let unit: ServedUnit
    let user: String
    init(unit: ServedUnit, user: String) { (self.unit, self.user) = (unit, user) }
}
final class ServedHandler: @unchecked Sendable {
    // @unchecked: only @Dependency properties are mutable.
    @Dependency(\.servedStore) var store
    @Dependency(\.servedUser) var injectedUser
    @Dependency(\.servedSessionName) var injectedSession
    let user: String
    let session: String
    let orders: ServedRepo
    let payments: ServedRepo
    let timed: ServedTimed
    init(user: String, session: String, orders: ServedRepo, payments: ServedRepo, timed: ServedTimed) {
        (self.user, self.session, self.orders, self.payments, self.timed) = (user, session, orders, payments, timed)
    }
}
/// A controller a framework creates per request, inside `withMain(request)`.
final class ServedController: @unchecked Sendable {
    @Dependency(\.servedUser) var user
    @Dependency(\.servedHandler) var handler
    @Dependency(\.servedStore) var store
    init() {}
}
final class ServedAsyncHandler: Sendable {
    let user: String
    let store: ServedStore
    let unitA: ServedUnit
    let unitB: ServedUnit
    init(user: String, store: ServedStore, unitA: ServedUnit, unitB: ServedUnit) {
        (self.user, self.store, self.unitA, self.unitB) = (user, store, unitA, unitB)
    }
}

extension DependencyContainer {
    var servedStore: Provider<ServedStore> {
        singleton {
            (self.getValue(forKey: "served.storeBuilds") as Counter?)?.increment()
            return ServedStore()
        }
    }
    var servedAsyncStore: AsyncProvider<ServedStore> {
        singleton {
            (self.getValue(forKey: "served.asyncStoreBuilds") as Counter?)?.increment()
            await Task.yield()
            return ServedStore()
        }
    }
    var servedClock: Provider<ServedClock> { singleton { ServedClock(name: "app") } }
    var servedTimed: Provider<ServedTimed> { singleton { ServedTimed(clock: self.servedClock()) } }
    var servedUser: Provider<String> { unimplemented() }
    var servedSessionName: Provider<String> { unimplemented() }
    var servedUnit: Provider<ServedUnit> { graph { ServedUnit() } }
    var servedRepo: Provider<ServedRepo> { factory { ServedRepo(unit: self.servedUnit(), user: self.servedUser()) } }
    var servedHandler: Provider<ServedHandler> {
        scoped {
            ServedHandler(
                user: self.servedUser(), session: self.servedSessionName(), orders: self.servedRepo(),
                payments: self.servedRepo(), timed: self.servedTimed())
        }
    }
    var servedAsyncHandler: AsyncProvider<ServedAsyncHandler> {
        scoped {
            let unitA = self.servedUnit()
            let store = try await self.servedAsyncStore()
            await Task.yield()
            let unitB = self.servedUnit()
            return ServedAsyncHandler(user: self.servedUser(), store: store, unitA: unitA, unitB: unitB)
        }
    }
    var servedAsyncFactoryHandler: AsyncProvider<ServedAsyncHandler> {
        factory {
            let unitA = self.servedUnit()
            let store = try await self.servedAsyncStore()
            await Task.yield()
            let unitB = self.servedUnit()
            return ServedAsyncHandler(user: self.servedUser(), store: store, unitA: unitA, unitB: unitB)
        }
    }
}

/// Weak references collected from many threads.
final class ServedWeakRefs: @unchecked Sendable {
    private struct Ref { weak var object: AnyObject?; let what: String }
    private let lock = NSLock()
    private var refs: [Ref] = []
    func add(_ object: AnyObject, _ what: String) { lock.withLock { refs.append(Ref(object: object, what: what)) } }
    var alive: [String] { lock.withLock { refs.filter { $0.object != nil }.map(\.what) } }
    var count: Int { lock.withLock { refs.count } }
}

final class ServedFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.withLock { items.append(s) } }
    var all: [String] { lock.withLock { items } }
}

@Suite struct ServerUsageServerTests {
    /// 240 requests on threads released together, in four sessions, while the app's clock
    /// override and the sessions' names change: each request sees only its own user and its
    /// session, shares the app's store (built once), gets one unit of work per resolution,
    /// and everything per request is freed when the threads are joined.
    @Test func requestsInSessionsUnderLoadWhileTheAppAndSessionsChange() async {
        let app = DependencyContainer()
        let storeBuilds = Counter()
        app.setValue(storeBuilds, forKey: "served.storeBuilds")
        // Built at launch, as a server builds its app-wide services: built under load, the
        // store would count as built from the clock that another thread resolves meanwhile
        // ("Built from" is judged by what ran while it was built, in the Scopes article),
        // and the clock's next override would rebuild it.
        let store = app.servedStore()
        let sessions = (0..<4).map { index -> DependencyContainer in
            let session = DependencyContainer(scopeOf: app)
            session.override(\.servedSessionName) { "session \(index)" }
            return session
        }
        let refs = ServedWeakRefs()
        let failures = ServedFailures()
        let requests = 240
        let changers = 4
        let rounds = 50

        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(requests + changers) { index in
                if index >= requests {
                    let changer = index - requests
                    for round in 0..<rounds {
                        if changer == 0 {
                            app.override(\.servedClock) { ServedClock(name: "app \(round)") }
                        } else {
                            let session = sessions[changer % sessions.count]
                            let name = "session \(changer % sessions.count)"
                            // A session's name is re-installed (same value, new override).
                            session.override(\.servedSessionName) { name }
                        }
                    }
                    return
                }
                let sessionIndex = index % sessions.count
                let request = DependencyContainer(scopeOf: sessions[sessionIndex])
                let user = "user \(index)"
                request.override(\.servedUser) { user }
                let handler = request.servedHandler()
                if handler.user != user { failures.add("request \(index) got handler of \(handler.user)") }
                if handler.injectedUser != user { failures.add("request \(index) injected \(handler.injectedUser)") }
                if handler.session != "session \(sessionIndex)" { failures.add("request \(index) in \(handler.session)") }
                if handler.injectedSession != "session \(sessionIndex)" {
                    failures.add("request \(index) injected session \(handler.injectedSession)")
                }
                if handler.orders.unit !== handler.payments.unit { failures.add("request \(index): two units") }
                if handler.orders.user != user { failures.add("request \(index) repo of \(handler.orders.user)") }
                if handler.store !== app.servedStore() { failures.add("request \(index) has its own store") }
                if request.servedHandler() !== handler && request.servedHandler().user != user {
                    failures.add("request \(index) second handler of another user")
                }
                let controller = DependencyContainer.withMain(request) { ServedController() }
                if controller.user != user { failures.add("request \(index) controller user \(controller.user)") }
                if controller.handler.user != user { failures.add("request \(index) controller handler") }
                refs.add(request, "request \(index)")
                refs.add(handler, "handler \(index)")
                refs.add(handler.orders, "repo \(index)")
                refs.add(handler.orders.unit, "unit \(index)")
                refs.add(controller, "controller \(index)")
            }
        }
        #expect(finished)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        #expect(storeBuilds.count == 1, "the app's store was built \(storeBuilds.count) times")
        #expect(app.servedStore() === store)
        #expect(refs.count == requests * 5)
        // A thread or task lets go of what it captured as it ends, which may come just
        // after the test saw its work end: wait for that, behind the hang guard.
        #expect(await finishesWithoutHangingOffThePool { while !refs.alive.isEmpty { sched_yield() } },
                "still alive: \(refs.alive.prefix(10))")
        // After the last change, a new request's handler is built from the last clock.
        #expect(app.servedTimed().clock.name == "app \(rounds - 1)")
        let late = DependencyContainer(scopeOf: sessions[1])
        late.override(\.servedUser) { "late" }
        #expect(late.servedHandler().timed.clock.name == "app \(rounds - 1)")
        #expect(late.servedHandler().timed === app.servedTimed())
        withExtendedLifetime(sessions) {}
    }

    /// The article's example: a task per request. The scope, its handler and its values
    /// are freed when `handle` returns.
    @Test func requestsOnTasksAreFreedWhenTheGroupEnds() async {
        let app = DependencyContainer()
        let storeBuilds = Counter()
        app.setValue(storeBuilds, forKey: "served.storeBuilds")
        let refs = ServedWeakRefs()
        let failures = ServedFailures()
        @Sendable func handle(_ index: Int) async {
            let request = DependencyContainer(scopeOf: app)
            let user = "user \(index)"
            request.override(\.servedUser) { user }
            request.override(\.servedSessionName) { "none" }
            let handler = request.servedHandler()
            await Task.yield()
            let controller = await DependencyContainer.withMain(request) { () async -> ServedController in
                await Task.yield()
                return ServedController()
            }
            await Task.yield()
            if controller.user != user { failures.add("\(index): controller user \(controller.user)") }
            if controller.handler !== handler { failures.add("\(index): controller handler") }
            if handler.injectedUser != user { failures.add("\(index): injected \(handler.injectedUser)") }
            if controller.store !== handler.store { failures.add("\(index): two stores") }
            refs.add(request, "request \(index)")
            refs.add(handler, "handler \(index)")
            refs.add(controller, "controller \(index)")
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 { group.addTask { await handle(index) } }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        #expect(storeBuilds.count == 1)
        // A thread or task lets go of what it captured as it ends, which may come just
        // after the test saw its work end: wait for that, behind the hang guard.
        #expect(await finishesWithoutHangingOffThePool { while !refs.alive.isEmpty { sched_yield() } },
                "still alive: \(refs.alive.prefix(10))")
    }

    /// Async scoped handlers per request, on tasks: freed when the group ends; one unit of
    /// work per outermost (async) resolution even across its awaits; the async app store built once.
    @Test func asyncRequestHandlersKeepOneUnitAcrossAwaitsAndAreFreed() async throws {
        let app = DependencyContainer()
        let storeBuilds = Counter()
        app.setValue(storeBuilds, forKey: "served.asyncStoreBuilds")
        let refs = ServedWeakRefs()
        let failures = ServedFailures()
        @Sendable func handle(_ index: Int) async throws {
            let request = DependencyContainer(scopeOf: app)
            let user = "user \(index)"
            request.override(\.servedUser) { user }
            let handler = try await request.servedAsyncHandler()
            let again = try await request.servedAsyncHandler()
            if again !== handler { failures.add("\(index): scoped built twice") }
            if handler.user != user { failures.add("\(index): handler of \(handler.user)") }
            if handler.unitA !== handler.unitB { failures.add("\(index): two units across an await (scoped)") }
            let made = try await request.servedAsyncFactoryHandler()
            if made.unitA !== made.unitB { failures.add("\(index): two units across an await (factory)") }
            if made.unitA === handler.unitA { failures.add("\(index): factory shared the scoped's unit") }
            refs.add(request, "request \(index)")
            refs.add(handler, "handler \(index)")
            refs.add(handler.unitA, "unit \(index)")
            refs.add(made, "made \(index)")
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 { group.addTask { try await handle(index) } }
            try await group.waitForAll()
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        #expect(storeBuilds.count == 1, "the async store was built \(storeBuilds.count) times")
        // A thread or task lets go of what it captured as it ends, which may come just
        // after the test saw its work end: wait for that, behind the hang guard.
        #expect(await finishesWithoutHangingOffThePool { while !refs.alive.isEmpty { sched_yield() } },
                "still alive: \(refs.alive.prefix(10))")
    }

    /// Per-user sessions kept in a table, signed out (shut down and dropped) while other
    /// users' requests run on threads released together; nothing hangs or leaks and no
    /// request sees another user.
    @Test func sessionsSignedOutWhileOtherSessionsServeRequests() async {
        let app = DependencyContainer()
        let refs = ServedWeakRefs()
        let failures = ServedFailures()
        final class Table: @unchecked Sendable {
            let lock = NSLock()
            var sessions: [Int: DependencyContainer] = [:]
        }
        let table = Table()
        for user in 0..<16 {
            let session = DependencyContainer(scopeOf: app)
            session.override(\.servedSessionName) { "s\(user)" }
            table.sessions[user] = session
        }
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(64) { index in
                let user = index % 16
                if index >= 48 {
                    // Sign-out of users 0..<16 (each once, by thread 48 + user).
                    let session = table.lock.withLock { table.sessions.removeValue(forKey: user) }
                    session?.shutdown()
                    return
                }
                guard let session = table.lock.withLock({ table.sessions[user] }) else { return }
                for round in 0..<5 {
                    let request = DependencyContainer(scopeOf: session)
                    let name = "u\(user) r\(round) t\(index)"
                    request.override(\.servedUser) { name }
                    let handler = request.servedHandler()
                    if handler.user != name || handler.injectedUser != name || handler.session != "s\(user)" {
                        failures.add("\(name): got \(handler.user) / \(handler.session)")
                    }
                    refs.add(request, "request \(name)")
                    refs.add(handler, "handler \(name)")
                }
                refs.add(session, "session \(user)")
            }
        }
        #expect(finished)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        #expect(table.sessions.isEmpty)
        // A thread or task lets go of what it captured as it ends, which may come just
        // after the test saw its work end: wait for that, behind the hang guard.
        #expect(await finishesWithoutHangingOffThePool { while !refs.alive.isEmpty { sched_yield() } },
                "still alive: \(refs.alive.prefix(10))")
    }

    /// Requests kept alive across a storm of changes: the app's clock override changes, one
    /// session overrides and resets its own clock ending overridden, another ending reset.
    /// Once the storm ends, every request's handler is built from the final clock.
    @Test func afterAStormOfAppAndSessionClockChangesEveryRequestServesTheFinalClock() async {
        let app = DependencyContainer()
        let sessions = (0..<4).map { index -> DependencyContainer in
            let session = DependencyContainer(scopeOf: app)
            session.override(\.servedSessionName) { "session \(index)" }
            return session
        }
        let kept = Collected<(Int, DependencyContainer)>()
        let failures = ServedFailures()
        let requests = 120
        let rounds = 40
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(requests + 3) { index in
                switch index - requests {
                case 0:
                    for round in 0..<rounds { app.override(\.servedClock) { ServedClock(name: "app \(round)") } }
                    return
                case 1:
                    for round in 0..<rounds {
                        sessions[1].override(\.servedClock) { ServedClock(name: "s1 \(round)") }
                        sessions[1].reset(\.servedClock)
                    }
                    sessions[1].override(\.servedClock) { ServedClock(name: "s1 final") }
                    return
                case 2:
                    for round in 0..<rounds {
                        sessions[2].override(\.servedClock) { ServedClock(name: "s2 \(round)") }
                        sessions[2].reset(\.servedClock)
                    }
                    return
                default: break
                }
                let sessionIndex = index % sessions.count
                let request = DependencyContainer(scopeOf: sessions[sessionIndex])
                let user = "user \(index)"
                request.override(\.servedUser) { user }
                for _ in 0..<5 {
                    let handler = request.servedHandler()
                    if handler.user != user { failures.add("\(index) got \(handler.user)") }
                    _ = handler.timed.clock.name
                }
                kept.append((sessionIndex, request))
            }
        }
        #expect(finished)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        let appTimed = app.servedTimed()
        #expect(appTimed.clock.name == "app \(rounds - 1)")
        var wrong: [String] = []
        for (sessionIndex, request) in kept.values {
            let handler = request.servedHandler()
            let name = handler.timed.clock.name
            switch sessionIndex {
            case 1:
                if name != "s1 final" { wrong.append("session 1 request: \(name)") }
            default:
                if name != "app \(rounds - 1)" || handler.timed !== appTimed {
                    wrong.append("session \(sessionIndex) request: \(name), app's: \(handler.timed === appTimed)")
                }
            }
            if request.servedTimed().clock.name != name { wrong.append("session \(sessionIndex): servedTimed \(request.servedTimed().clock.name) vs handler \(name)") }
        }
        #expect(wrong.isEmpty, "\(wrong.count) stale: \(wrong.prefix(10))")
        withExtendedLifetime(sessions) {}
    }

    /// One request fanned out to eight threads at once: its scoped handler is built once,
    /// its lazily injected user resolved once per property, for 30 requests at once.
    @Test func aRequestFannedOutToThreadsBuildsItsScopedHandlerOnce() async {
        let app = DependencyContainer()
        let requests = (0..<30).map { index -> DependencyContainer in
            let request = DependencyContainer(scopeOf: app)
            request.override(\.servedUser) { "user \(index)" }
            request.override(\.servedSessionName) { "none" }
            return request
        }
        let seen = Collected<(Int, ObjectIdentifier, String)>()
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(240) { index in
                let requestIndex = index % 30
                let handler = requests[requestIndex].servedHandler()
                seen.append((requestIndex, ObjectIdentifier(handler), handler.injectedUser))
            }
        }
        #expect(finished)
        var handlers: [Int: Set<ObjectIdentifier>] = [:]
        var wrong: [String] = []
        for (request, handler, user) in seen.values {
            handlers[request, default: []].insert(handler)
            if user != "user \(request)" { wrong.append("request \(request) saw \(user)") }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(10))")
        #expect(handlers.values.allSatisfy { $0.count == 1 }, "\(handlers.filter { $0.value.count > 1 }.keys.sorted())")
    }

    /// Requests with an async scoped connection torn down by the async shutdown, two
    /// shutdowns racing per request: each connection closed exactly once, all freed.
    @Test func requestsShutDownTwiceAtOnceCloseEachConnectionOnce() async {
        let app = DependencyContainer()
        let closes = Counter()
        app.setValue(closes, forKey: "served.closes")
        let refs = ServedWeakRefs()
        let failures = ServedFailures()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<150 {
                group.addTask {
                    let request = DependencyContainer(scopeOf: app)
                    request.override(\.servedUser) { "user \(index)" }
                    do {
                        let connection = try await request.servedConnection()
                        if connection.user != "user \(index)" { failures.add("\(index): \(connection.user)") }
                        refs.add(connection, "connection \(index)")
                    } catch { failures.add("\(index): \(error)") }
                    refs.add(request, "request \(index)")
                    async let first: Void = request.shutdown()
                    async let second: Void = request.shutdown()
                    _ = await (first, second)
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all.prefix(10))")
        #expect(closes.count == 150, "closed \(closes.count) times for 150 connections")
        // A thread or task lets go of what it captured as it ends, which may come just
        // after the test saw its work end: wait for that, behind the hang guard.
        #expect(await finishesWithoutHangingOffThePool { while !refs.alive.isEmpty { sched_yield() } },
                "still alive: \(refs.alive.prefix(10))")
    }
}

final class ServedConnection: Sendable {
    let user: String
    let closes: Counter?
    init(user: String, closes: Counter?) { (self.user, self.closes) = (user, closes) }
    func close() async {
        await Task.yield()
        closes?.increment()
    }
}

extension DependencyContainer {
    var servedConnection: AsyncProvider<ServedConnection> {
        scoped {
            await Task.yield()
            return ServedConnection(user: self.servedUser(), closes: self.getValue(forKey: "served.closes"))
        }.onShutdown { await $0.close() }
    }
}
