import Foundation
import Testing
@testable import DependencyInjection

// A server team's load: a scope per request (and per session, with requests as scopes of
// the session), the request's user as an override of an `unimplemented()` registration,
// app-wide async singletons, scoped and graph instances, cancellation, failures and
// shutdowns while constructions are in flight.
//
// `RASVThing`, `RASVGate`, `RASVProbe` and the `rasv*` registrations come from
// AsyncServerScopeTests.swift; `SSLWeak` from ServerScopeLoadTests.swift.

/// What the app's async "upstream" singleton does on each construction.
final class SLAUpstreamPlan: @unchecked Sendable {
    private let lock = NSLock()
    private var failuresLeft: Int
    let builds = Counter()
    let gate: RASVGate?
    init(failures: Int, gate: RASVGate?) { (failuresLeft, self.gate) = (failures, gate) }
    /// Whether this construction fails, counting it.
    func takeFailure() -> Bool {
        lock.withLock {
            guard failuresLeft > 0 else { return false }
            failuresLeft -= 1
            return true
        }
    }
}

/// A request's synchronous handler: its user, the app's clock, and a graph unit shared by
/// the two parts built with it.
final class SLAHandler: Sendable {
    let user: String
    let clock: RASVThing
    let unitA: RASVThing
    let unitB: RASVThing
    init(user: String, clock: RASVThing, unitA: RASVThing, unitB: RASVThing) {
        (self.user, self.clock, self.unitA, self.unitB) = (user, clock, unitA, unitB)
    }
}

/// A request-scoped object whose `deinit` resolves from its request.
final class SLAFlusher: @unchecked Sendable {
    weak var request: DependencyContainer?
    let user: String
    let flushed: Collected<String>
    init(request: DependencyContainer, user: String, flushed: Collected<String>) {
        (self.request, self.user, self.flushed) = (request, user, flushed)
    }
    deinit {
        guard let request else {
            flushed.append("gone:\(user)")
            return
        }
        // Resolves the request's user and its scoped handler, which may be rebuilt now.
        flushed.append("flush:\(user) now:\(request.slaUser()) handler:\(request.slaHandler().user)")
    }
}

extension DependencyContainer {
    var slaUser: Provider<String> { unimplemented() }
    var slaClock: Provider<RASVThing> { singleton { RASVThing("clock") } }
    var slaUnit: Provider<RASVThing> { graph { RASVThing("unit") } }
    var slaPart: Provider<RASVThing> { factory { RASVThing("part", inner: self.slaUnit()) } }
    var slaHandler: Provider<SLAHandler> {
        scoped {
            SLAHandler(user: self.slaUser(), clock: self.slaClock(), unitA: self.slaPart().inner!, unitB: self.slaPart().inner!)
        }
    }
    var slaClockFlusher: Provider<SLAFlusher> {
        scoped {
            _ = self.slaClock()
            return SLAFlusher(request: self, user: self.slaUser(), flushed: self.slaFlushed)
        }
    }
    var slaFlushed: Collected<String> { getValue(forKey: "sla.flushed")! }
    var slaFlusher: Provider<SLAFlusher> {
        scoped { SLAFlusher(request: self, user: self.slaUser(), flushed: self.slaFlushed) }
    }

    var slaPlan: SLAUpstreamPlan { getValue(forKey: "sla.plan")! }
    /// The app's async upstream connection: fails (with a `CancellationError`, as an
    /// upstream timeout would) as many times as the plan says, after its gate.
    var slaUpstream: AsyncProvider<RASVThing> {
        singleton {
            let plan = self.slaPlan
            plan.builds.increment()
            await plan.gate?.pass()
            if plan.takeFailure() { throw CancellationError() }
            return RASVThing("upstream")
        }
    }
    /// Per request, from its user and the app's upstream.
    var slaAsyncHandler: AsyncProvider<RASVThing> {
        scoped { RASVThing("handler for \(self.slaUser())", inner: try await self.slaUpstream()) }
    }

    /// How many tasks wait in the room of the construction of `key` running here.
    func slaWaiting(for key: RegistrationKey) -> Int {
        withStateLock { $0.building.construction(of: key)?.asyncWaitRoom?.waitedSoFar ?? 0 }
    }
}

private func slaApp(failures: Int = 0, gated: Bool = false) -> (DependencyContainer, SLAUpstreamPlan) {
    let app = DependencyContainer()
    let plan = SLAUpstreamPlan(failures: failures, gate: gated ? RASVGate() : nil)
    app.setValue(plan, forKey: "sla.plan")
    app.setValue(RASVProbe(), forKey: "rasv.probe")
    return (app, plan)
}

/// Yields until `condition` holds; false if it never did within the bound.
private func slaYieldUntil(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<2_000_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}

@Suite struct ServerLoadAttackTests {
    /// Request 0 starts building the app's upstream; 60 other requests wait for it, half
    /// directly and half through their own async handler. The builder and every third
    /// waiter are cancelled while the upstream is held. The cancelled ones throw
    /// `CancellationError`; the others get the one upstream; a fresh request afterwards is
    /// served at once; nothing is left in flight and every request is freed.
    @Test func cancelledRequestsAwaitingTheUpstreamAnotherRequestBuildsLeaveTheRestServed() async throws {
        let (app, plan) = slaApp(gated: true)
        let gate = plan.gate!
        let count = 60
        let weak = (0...count).map { _ in SSLWeak() }
        func request(_ index: Int) -> Task<RASVThing, any Error> {
            Task {
                let request = DependencyContainer(scopeOf: app)
                weak[index].object = request
                request.override(\.slaUser) { "user \(index)" }
                return index % 2 == 0 ? try await request.slaUpstream() : try await request.slaAsyncHandler()
            }
        }
        let builder = request(0)
        await gate.entered.wait()
        let waiters = (1...count).map(request)
        let key = app.slaUpstream.key
        // The builder, plus each waiter: direct ones wait themselves, the others through
        // their handler's construction.
        #expect(await slaYieldUntil { app.slaWaiting(for: key) == count + 1 })
        builder.cancel()
        for (index, waiter) in waiters.enumerated() where (index + 1) % 3 == 0 { waiter.cancel() }
        // Cancelled waiters leave the room before the construction ends.
        await #expect(throws: CancellationError.self) { _ = try await builder.value }
        gate.release.open()
        var upstreams: Set<ObjectIdentifier> = []
        for (offset, waiter) in waiters.enumerated() {
            let index = offset + 1
            if index % 3 == 0 {
                await #expect(throws: CancellationError.self, "request \(index)") { _ = try await waiter.value }
            } else {
                let got = try await waiter.value
                let upstream = index % 2 == 0 ? got : got.inner!
                if index % 2 == 1 { #expect(got.label == "handler for user \(index)") }
                upstreams.insert(ObjectIdentifier(upstream))
            }
        }
        #expect(upstreams.count == 1)
        #expect(plan.builds.count == 1)
        let fresh = DependencyContainer(scopeOf: app)
        fresh.override(\.slaUser) { "late" }
        let finished = await endsWithoutHanging { _ = try? await fresh.slaAsyncHandler() }
        #expect(finished)
        #expect(try await fresh.slaUpstream() === app.instanceIfBuilt(\.slaUpstream))
        #expect(app.slaWaiting(for: key) == 0)
        #expect(await eventually { weak.allSatisfy { $0.object == nil } }, "a request outlived its cancelled task")
    }

    /// The app's upstream fails its first construction with a `CancellationError` of its
    /// own while 40 requests wait for it, none of them cancelled: each gets the error,
    /// nothing is cached, and the next request builds it and is served; the requests that
    /// failed retry and get that one.
    @Test func anUpstreamThatFailsWhileRequestsWaitIsBuiltAgainByTheNextOnes() async throws {
        let (app, plan) = slaApp(failures: 1, gated: true)
        let gate = plan.gate!
        let requests = (0..<40).map { index in
            let request = DependencyContainer(scopeOf: app)
            request.override(\.slaUser) { "user \(index)" }
            return request
        }
        let first = Task { try await requests[0].slaAsyncHandler() }
        await gate.entered.wait()
        let others = requests.dropFirst().map { request in Task { try await request.slaAsyncHandler() } }
        let key = app.slaUpstream.key
        #expect(await slaYieldUntil { app.slaWaiting(for: key) == 40 })
        gate.release.open()
        for task in [first] + others {
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
        #expect(app.instanceIfBuilt(\.slaUpstream) == nil)
        for request in requests { #expect(request.instanceIfBuilt(\.slaAsyncHandler) == nil) }
        var upstreams: Set<ObjectIdentifier> = []
        for (index, request) in requests.enumerated() {
            let handler = try await request.slaAsyncHandler()
            #expect(handler.label == "handler for user \(index)")
            upstreams.insert(ObjectIdentifier(handler.inner!))
        }
        #expect(upstreams.count == 1)
        #expect(plan.builds.count == 2)
    }

    /// 2,000 requests in 20 sessions, released together on tasks: each overrides its user,
    /// resolves its synchronous scoped handler twice (its user, the app's clock, one
    /// graph unit per outermost resolution) and its async handler. Every handler is its
    /// request's; the clock and upstream are built once. When the requests end, every
    /// request, session and handler is freed.
    @Test func thousandsOfRequestsInSessionsOnTasksSeeTheirUserAndAreFreed() async throws {
        let (app, plan) = slaApp()
        let sessions = (0..<20).map { _ in DependencyContainer(scopeOf: app) }
        let start = AsyncLatch()
        let problems = Collected<String>()
        let clocks = Collected<ObjectIdentifier>()
        let weakRequests = Collected<SSLWeak>()
        let weakHandlers = Collected<SSLWeak>()
        let finished = await endsWithoutHanging {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<2_000 {
                    group.addTask {
                        await start.wait()
                        let request = DependencyContainer(scopeOf: sessions[index % 20])
                        request.override(\.slaUser) { "user \(index)" }
                        let handler = request.slaHandler()
                        let again = request.slaHandler()
                        if handler !== again { problems.append("\(index): two handlers") }
                        if handler.user != "user \(index)" { problems.append("\(index): user \(handler.user)") }
                        if handler.unitA !== handler.unitB { problems.append("\(index): two units in one graph") }
                        clocks.append(ObjectIdentifier(handler.clock))
                        guard let asyncHandler = try? await request.slaAsyncHandler() else {
                            problems.append("\(index): async handler threw")
                            return
                        }
                        if asyncHandler.label != "handler for user \(index)" { problems.append("\(index): \(asyncHandler.label)") }
                        let w = SSLWeak()
                        w.object = request
                        weakRequests.append(w)
                        let h = SSLWeak()
                        h.object = handler
                        weakHandlers.append(h)
                        let a = SSLWeak()
                        a.object = asyncHandler
                        weakHandlers.append(a)
                    }
                }
                start.open()
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
        #expect(Set(clocks.values).count == 1)
        #expect(plan.builds.count == 1)
        let weakSessions = sessions.map { session in
            let w = SSLWeak()
            w.object = session
            return w
        }
        _ = consume sessions
        let requests = weakRequests.values, handlers = weakHandlers.values
        #expect(requests.count == 2_000)
        #expect(await eventually { requests.allSatisfy { $0.object == nil } }, "a request outlived its task")
        #expect(await eventually { handlers.allSatisfy { $0.object == nil } }, "a handler outlived its request")
        #expect(await eventually { weakSessions.allSatisfy { $0.object == nil } }, "a session outlived its requests")
    }

    /// A request-scoped flusher whose `deinit` resolves the request's user and its scoped
    /// handler: dropped by an override of the user it was built from, by a reset, and by
    /// a shutdown, on many threads at once; none of it hangs, and each `deinit` sees the
    /// request's values as they are then.
    @Test func aScopedInstanceWhoseDeinitResolvesFromItsRequestNeverHangs() async {
        let (app, _) = slaApp()
        let flushed = Collected<String>()
        app.setValue(flushed, forKey: "sla.flushed")
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(8) { thread in
                for index in 0..<50 {
                    let request = DependencyContainer(scopeOf: app)
                    request.override(\.slaUser) { "a\(thread).\(index)" }
                    _ = request.slaFlusher()
                    request.override(\.slaUser) { "b\(thread).\(index)" }
                    _ = request.slaFlusher()
                    request.shutdown()
                    _ = request.slaFlusher()
                    request.reset(\.slaFlusher)
                    _ = request.slaFlusher()
                }
            }
        }
        #expect(finished)
        let lines = flushed.values
        #expect(lines.contains("flush:a0.0 now:b0.0 handler:b0.0"), "\(lines.prefix(4))")
        #expect(!lines.contains { $0.contains("now:a") }, "a flusher saw a replaced user")
    }

    /// Async app shutdowns keep running while 32 requests resolve the app's async
    /// singleton (with an async teardown) again and again. When the load and a last
    /// shutdown are over, every instance built was torn down exactly once.
    @Test func appShutdownsRacingRequestsTearDownEveryInstanceOnce() async throws {
        let app = DependencyContainer()
        let builds = Counter()
        let torn = Collected<String>()
        app.setValue(builds, forKey: "sla.tornBuilds")
        app.setValue(torn, forKey: "sla.torn")
        let start = AsyncLatch()
        let done = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<32 {
                group.addTask {
                    await start.wait()
                    for round in 0..<40 {
                        let request = DependencyContainer(scopeOf: app)
                        request.override(\.slaUser) { "user \(index).\(round)" }
                        _ = try await request.slaTornDB()
                    }
                    done.increment()
                }
            }
            group.addTask {
                await start.wait()
                while done.count < 32 {
                    await app.shutdown()
                    await Task.yield()
                }
            }
            start.open()
            try await group.waitForAll()
        }
        await app.shutdown()
        let tornDown = torn.values
        #expect(tornDown.count == Set(tornDown).count, "an instance was torn down twice")
        #expect(builds.count == tornDown.count, "\(builds.count) built, \(tornDown.count) torn down")
    }

    /// 600 requests released together, each building its async scoped job, whose
    /// construction takes two parts across suspensions: the two share one graph unit,
    /// no two requests share one, and a request's second job resolution serves the first.
    @Test func asyncScopedJobsUnderLoadKeepOneGraphUnitAcrossSuspensions() async throws {
        let (app, _) = slaApp()
        let start = AsyncLatch()
        let problems = Collected<String>()
        var jobs: [SLAJob] = []
        try await withThrowingTaskGroup(of: SLAJob.self) { group in
            for index in 0..<600 {
                group.addTask {
                    await start.wait()
                    let request = DependencyContainer(scopeOf: app)
                    request.override(\.slaUser) { "user \(index)" }
                    let job = try await request.slaJob()
                    if try await request.slaJob() !== job { problems.append("\(index): two jobs") }
                    if job.user != "user \(index)" { problems.append("\(index): \(job.user)") }
                    return job
                }
            }
            start.open()
            for try await job in group { jobs.append(job) }
        }
        for job in jobs where job.first.inner !== job.second.inner {
            problems.append("\(job.user): two units in one construction")
        }
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
        #expect(Set(jobs.map { ObjectIdentifier($0.first.inner!) }).count == 600, "requests shared graph units")
    }

    /// A request replaces its user while its async job, built from the old user, is
    /// suspended: that resolution may return the old job, but the request does not keep
    /// it, and its next resolution is built for the new user.
    @Test func aRequestsUserReplacedWhileItsAsyncJobBuildsReachesTheNextResolution() async throws {
        let (app, _) = slaApp()
        let gate = RASVGate()
        app.setValue(gate, forKey: "sla.jobGate")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.slaUser) { "ann" }
        let first = Task { try await request.slaJob() }
        await gate.entered.wait()
        request.override(\.slaUser) { "bob" }
        gate.release.open()
        _ = try await first.value
        app.removeValue(forKey: "sla.jobGate")
        #expect(try await request.slaJob().user == "bob")
    }

    /// Sessions override the user and their requests build a flusher from it and from the
    /// app's clock; the flusher's `deinit` resolves the request's user and handler. The
    /// sessions replace their user, and the app its clock, on other threads meanwhile, which
    /// drop flushers in requests two levels down: nothing hangs, and no flusher's `deinit`
    /// sees a user older than the one it was built with.
    @Test func flushersDroppedByTheirSessionsAndAppsChangesResolveInTheirDeinitWithoutHanging() async {
        let (app, _) = slaApp()
        let flushed = Collected<String>()
        app.setValue(flushed, forKey: "sla.flushed")
        let sessions = (0..<4).map { index in
            let session = DependencyContainer(scopeOf: app)
            session.override(\.slaUser) { "s\(index).0" }
            return session
        }
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(10) { thread in
                if thread < 4 {
                    for _ in 0..<300 {
                        let request = DependencyContainer(scopeOf: sessions[thread])
                        _ = request.slaClockFlusher()
                        _ = request.slaHandler()
                        _ = request.slaClockFlusher()
                    }
                } else if thread < 8 {
                    for round in 1...300 {
                        sessions[thread - 4].override(\.slaUser) { "s\(thread - 4).\(round)" }
                    }
                } else {
                    for round in 0..<300 {
                        app.override(\.slaClock) { RASVThing("clock \(thread).\(round)") }
                    }
                }
            }
        }
        #expect(finished)
        #expect(!flushed.values.isEmpty)
    }
}

/// A request's async job: its user and two parts built in one construction.
final class SLAJob: Sendable {
    let user: String
    let first: RASVThing
    let second: RASVThing
    init(user: String, first: RASVThing, second: RASVThing) { (self.user, self.first, self.second) = (user, first, second) }
}

extension DependencyContainer {
    var slaJobGate: RASVGate? { getValue(forKey: "sla.jobGate") }
    /// Per request: reads the user, then two parts across suspensions.
    var slaJob: AsyncProvider<SLAJob> {
        scoped {
            let user = self.slaUser()
            await self.slaJobGate?.pass()
            let first = self.slaPart()
            await Task.yield()
            _ = try await self.slaUpstream()
            return SLAJob(user: user, first: first, second: self.slaPart())
        }
    }
}


extension DependencyContainer {
    var slaTornBuilds: Counter { getValue(forKey: "sla.tornBuilds")! }
    var slaTorn: Collected<String> { getValue(forKey: "sla.torn")! }
    /// An app-wide async singleton with an async teardown.
    var slaTornDB: AsyncProvider<RASVThing> {
        singleton {
            self.slaTornBuilds.increment()
            let number = self.slaTornBuilds.count
            await Task.yield()
            return RASVThing("db \(number) \(UUID())")
        }
        .onShutdown { [torn = slaTorn] db in
            await Task.yield()
            torn.append(db.label)
        }
    }
}
