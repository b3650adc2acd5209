import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// More attacks on a container's running constructions (two inline, the rest in an array):
// a request scope whose handler builds the scoped session and user inside it while other
// scoped constructions run and the scope's request value is replaced; many containers
// building chains in parallel while threads ask for links in flight; async singletons
// ending out of order; instances whose deinit resolves from the container while
// constructions run there.

/// A request's user, built from the request value.
final class RCAUser: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// A request's session, built from its user.
final class RCASession: Sendable {
    let user: RCAUser
    init(user: RCAUser) { self.user = user }
}

/// A request's handler: its session, its user and an app-wide part.
final class RCAHandler: Sendable {
    let session: RCASession
    let user: RCAUser
    let shared: RCAPart
    init(session: RCASession, user: RCAUser, shared: RCAPart) {
        (self.session, self.user, self.shared) = (session, user, shared)
    }
}

/// An instance whose deinit resolves `rcaDeinitTarget` from its container.
final class RCADeinitResolver: Sendable {
    let container: DependencyContainer
    let base: RCABase
    init(_ container: DependencyContainer, base: RCABase) { (self.container, self.base) = (container, base) }
    deinit {
        _ = container.rcaDeinitTarget()
        container.count("rcaDeinitResolver.deinit")
    }
}

extension DependencyContainer {
    var rcaRequestUser: Provider<String> { unimplemented() }

    /// The request's user, held at the scope's "rca.userGate" the first time.
    var rcaScopedUser: Provider<RCAUser> {
        scoped {
            self.count("rcaScopedUser")
            let name = self.rcaRequestUser()
            (self.getValue(forKey: "rca.userGate") as OnceGate?)?.pass()
            return RCAUser(name)
        }
    }
    var rcaScopedSession: Provider<RCASession> {
        scoped {
            self.count("rcaScopedSession")
            return RCASession(user: self.rcaScopedUser())
        }
    }
    /// Builds the session (and so the user) inside it, then the app-wide part.
    var rcaHandler: Provider<RCAHandler> {
        scoped {
            self.count("rcaHandler")
            let session = self.rcaScopedSession()
            return RCAHandler(session: session, user: self.rcaScopedUser(), shared: self.rcaAppShared())
        }
    }
    /// Other scoped constructions, held at the scope's "rca.other<n>" gate the first time.
    subscript(rcaScopedOther n: Int) -> Provider<RCAPart> {
        scoped(n) {
            (self.getValue(forKey: "rca.other\(n)") as OnceGate?)?.pass()
            return RCAPart(n, madeBy: "registration")
        }
    }
    var rcaAppShared: Provider<RCAPart> {
        singleton {
            self.count("rcaAppShared")
            return RCAPart(-1, madeBy: "registration")
        }
    }

    /// Link `n` of a chain with no gates; link 3 also resolves the app-wide part.
    subscript(rcaFree n: Int) -> Provider<RCAPart> {
        singleton(n) {
            self.count("rcaFree\(n)")
            let inner = n > 0 ? self[rcaFree: n - 1]() : nil
            if n == 3 { _ = self.rcaAppShared() }
            return RCAPart(n, madeBy: "registration", inner: inner)
        }
    }

    /// An async singleton that signals "rca.entered<n>" and waits at "rca.latch<n>".
    subscript(rcaAsync n: Int) -> AsyncProvider<RCAPart> {
        singleton(n) {
            self.count("rcaAsync\(n)")
            let base = self.rcaBase()
            (self.getValue(forKey: "rca.entered\(n)") as DispatchSemaphore?)?.signal()
            await (self.getValue(forKey: "rca.latch\(n)") as AsyncLatch?)?.wait()
            return RCAPart(n, madeBy: "registration", base: base)
        }
    }

    /// Kept, built from the base; its deinit resolves from this container.
    var rcaDeinitResolver: Provider<RCADeinitResolver> {
        singleton { RCADeinitResolver(self, base: self.rcaBase()) }
    }
    var rcaDeinitTarget: Provider<RCAPart> {
        singleton {
            self.count("rcaDeinitTarget")
            return RCAPart(-2, madeBy: "registration")
        }
    }
    /// Held at "rca.held<n>" the first time; resolves the base before.
    subscript(rcaHeld n: Int) -> Provider<RCAPart> {
        singleton(n) {
            self.count("rcaHeld\(n)")
            let base = self.rcaBase()
            (self.getValue(forKey: "rca.held\(n)") as OnceGate?)?.pass()
            return RCAPart(n, madeBy: "registration", base: base)
        }
    }
}

@Suite struct RunningConstructionsScopeAttackTests {
    private func run(_ scenario: @escaping @Sendable (Findings) -> Void) async {
        let findings = Findings()
        #expect(await finishesWithoutHangingOffThePool { scenario(findings) }, "the scenario hung")
        #expect(findings.problems == [])
    }

    // MARK: - A request scope

    /// A request's handler builds its session, which builds its user (three constructions
    /// in the scope, after 0 to 3 other scoped ones held there); the request value is
    /// replaced while the user is held. The handler it hands out is built from the old
    /// value, but none of the three is kept: the next handler is built from the new value,
    /// with a session of the same user. A thread asking for the handler in flight before
    /// the change waits for it.
    @Test(arguments: 0...3)
    func aRequestValueReplacedWhileTheHandlerBuildsItsSessionAndUserDropsAllThree(others: Int) async {
        await run { findings in
            let app = DependencyContainer()
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.rcaRequestUser) { "first" }
            let handlers = scope.counter("rcaHandler")
            var held: [(gate: OnceGate, built: () -> ObjectIdentifier)] = []
            for n in 0..<others {
                let gate = OnceGate()
                scope.setValue(gate, forKey: "rca.other\(n)")
                held.append((gate, onThread { ObjectIdentifier(scope[rcaScopedOther: n]()) }))
                gate.gate.entered.wait()
            }
            let userGate = OnceGate()
            scope.setValue(userGate, forKey: "rca.userGate")
            let built = onThread { scope.rcaHandler() }
            userGate.gate.entered.wait()
            let waitedBefore = scope.rcaWaited(for: scope.rcaHandler.key)
            let waiter = onThread { scope.rcaHandler() }
            while scope.rcaWaited(for: scope.rcaHandler.key) <= waitedBefore { sched_yield() }
            scope.override(\.rcaRequestUser) { "second" }
            userGate.gate.open()
            let first = built()
            findings.check(waiter() === first, "the waiter got another handler")
            // Its session was built from the old value; the user it asks for after the
            // change is a new one.
            findings.check(first.session.user.name == "first", "the session in flight saw \(first.session.user.name)")
            let next = scope.rcaHandler()
            findings.check(next !== first, "the handler built from the replaced value was kept")
            findings.check(next.user.name == "second", "the next handler's user is \(next.user.name)")
            findings.check(next.session.user === next.user, "the next handler's session has another user")
            findings.check(scope.rcaScopedSession() === next.session, "the session is not the handler's")
            findings.check(scope.rcaScopedUser() === next.user, "the user is not the handler's")
            findings.check(next.shared === app.rcaAppShared(), "the app-wide part is not the app's")
            findings.check(handlers.count == 2, "the handler was built \(handlers.count) times")
            for (gate, _) in held { gate.gate.open() }
            for (n, (_, other)) in held.enumerated() {
                _ = other()
                // Dropped or kept by the time window of uses; either way one instance from
                // then on.
                findings.check(scope[rcaScopedOther: n]() === scope[rcaScopedOther: n](), "other \(n) is not kept")
            }
            findings.check(scope.rcaNothingRuns && app.rcaNothingRuns, "constructions are still listed")
        }
    }

    /// Requests in three scopes, two threads each, ask for their handler (handler, session
    /// and user in flight in each scope) while two app threads build a six-deep chain of
    /// app singletons, one of which resolves the app-wide part the handlers resolve too:
    /// each scope builds its handler once, for its own user, and every handler and link
    /// shares the app's one part.
    @Test func requestsInScopesBuildTheirHandlersOnceWhileTheAppBuildsAChain() async {
        await run { findings in
            for _ in 0..<60 {
                let app = DependencyContainer()
                let shared = app.counter("rcaAppShared")
                let links = (0..<6).map { app.counter("rcaFree\($0)") }
                let scopes = (0..<3).map { index in
                    let scope = DependencyContainer(scopeOf: app)
                    scope.override(\.rcaRequestUser) { "user \(index)" }
                    return (scope, scope.counter("rcaHandler"))
                }
                let handlers = Collected<(Int, RCAHandler)>()
                let tops = Collected<ObjectIdentifier>()
                concurrently(threads: 8) { index in
                    if index < 6 {
                        handlers.append((index / 2, scopes[index / 2].0.rcaHandler()))
                    } else {
                        tops.append(ObjectIdentifier(app[rcaFree: index == 6 ? 5 : 3]()))
                    }
                }
                let appPart = app.rcaAppShared()
                for (index, handler) in handlers.values {
                    let (scope, built) = scopes[index]
                    findings.check(handler === scope.rcaHandler(), "scope \(index) has two handlers")
                    findings.check(built.count == 1, "scope \(index) built its handler \(built.count) times")
                    findings.check(handler.user.name == "user \(index)", "scope \(index)'s handler is for \(handler.user.name)")
                    findings.check(handler.session.user === handler.user, "scope \(index)'s session has another user")
                    findings.check(handler.shared === appPart, "scope \(index)'s handler has another app-wide part")
                }
                for (index, (scope, _)) in scopes.enumerated() {
                    findings.check(scope.rcaNothingRuns, "scope \(index) still lists constructions")
                }
                findings.check(shared.count == 1, "the app-wide part was built \(shared.count) times")
                for (n, counter) in links.enumerated() {
                    findings.check(counter.count == 1, "link \(n) was built \(counter.count) times")
                }
                var part: RCAPart? = app[rcaFree: 5]()
                for n in stride(from: 5, through: 0, by: -1) {
                    findings.check(part === app[rcaFree: n](), "link \(n) is not the one inside the chain")
                    part = part?.inner
                }
                findings.check(app.rcaNothingRuns, "the app still lists constructions")
            }
        }
    }

    // MARK: - Many containers

    /// Eight threads, two containers each of four, start behind a barrier asking for
    /// links 5, 4, 2 and 1 of a chain: whoever gets there first builds, the others wait for
    /// the link in flight, and each container builds each link once.
    @Test func manyContainersBuildingChainsInParallelBuildEachLinkOnce() async {
        await run { findings in
            for _ in 0..<80 {
                let containers = (0..<2).map { _ in DependencyContainer() }
                let counters = containers.map { container in (0..<6).map { container.counter("rcaFree\($0)") } }
                let got = Collected<(Int, Int, ObjectIdentifier)>()
                concurrently(threads: 8) { index in
                    let container = containers[index % 2]
                    let link = [5, 4, 2, 1][index / 2]
                    got.append((index % 2, link, ObjectIdentifier(container[rcaFree: link]())))
                }
                for (c, link, part) in got.values {
                    findings.check(part == ObjectIdentifier(containers[c][rcaFree: link]()), "container \(c) link \(link) changed")
                }
                for (c, container) in containers.enumerated() {
                    for (n, counter) in counters[c].enumerated() {
                        findings.check(counter.count == 1, "container \(c) built link \(n) \(counter.count) times")
                    }
                    var part: RCAPart? = container[rcaFree: 5]()
                    for n in stride(from: 5, through: 0, by: -1) {
                        findings.check(part === container[rcaFree: n](), "container \(c) link \(n) not inside the chain")
                        part = part?.inner
                    }
                    findings.check(container.rcaNothingRuns, "container \(c) still lists constructions")
                }
            }
        }
    }

    // MARK: - Async singletons

    /// Five async singletons in flight in one container (each in a task of its own, held at
    /// a latch), a task waiting for each, ended in several orders: each is built once, and
    /// its waiter gets its instance. In some orders the base is overridden once two have
    /// ended: those still running are not kept.
    @Test(arguments: [false, true])
    func fiveAsyncSingletonsEndingOutOfOrderAreWaitedForAndBuiltOnce(overriding: Bool) async {
        await run { findings in
            var random = SeededGenerator(seed: overriding ? 17 : 71)
            for _ in 0..<12 {
                let container = DependencyContainer()
                let counters = (0..<5).map { container.counter("rcaAsync\($0)") }
                let latches = (0..<5).map { n in
                    let latch = AsyncLatch()
                    container.setValue(latch, forKey: "rca.latch\(n)")
                    return latch
                }
                var builders: [() -> RCAPart?] = []
                for n in 0..<5 {
                    let entered = DispatchSemaphore(value: 0)
                    container.setValue(entered, forKey: "rca.entered\(n)")
                    builders.append(onTask { try? await container[rcaAsync: n]() })
                    entered.wait()
                }
                var waiters: [() -> RCAPart?] = []
                for n in 0..<5 {
                    let key = container[rcaAsync: n].key
                    let before = container.rcaWaited(for: key)
                    waiters.append(onTask { try? await container[rcaAsync: n]() })
                    while container.rcaWaited(for: key) <= before { sched_yield() }
                }
                var order = Array(0..<5)
                for index in order.indices.reversed() { order.swapAt(index, random.below(index + 1)) }
                for (step, n) in order.enumerated() {
                    if overriding && step == 2 { container.override(\.rcaBase) { RCABase("override") } }
                    latches[n].open()
                    let built = builders[n]()
                    findings.check(built != nil, "async singleton \(n) failed")
                    findings.check(waiters[n]() === built, "the waiter for \(n) got another instance")
                }
                for n in 0..<5 {
                    let final = onTask { try? await container[rcaAsync: n]() }()
                    if overriding {
                        findings.check(final?.base?.madeBy == "override", "async \(n) kept a part built from the old base")
                    } else {
                        findings.check(final === builders[n](), "async \(n) is not its construction's")
                        findings.check(counters[n].count == 1, "async \(n) was built \(counters[n].count) times")
                    }
                }
                findings.check(container.rcaNothingRuns, "constructions are still listed")
            }
        }
    }

    // MARK: - Deinits

    /// A kept singleton built from the base goes when the base is overridden while three
    /// others built from it run; its deinit resolves a singleton from the container then,
    /// which is built once and kept. None of the three running is kept.
    @Test(arguments: [false, true])
    func aDeinitResolvingWhileThreeRunAfterAnOverrideOrReset(resetting: Bool) async {
        await run { findings in
            let container = DependencyContainer()
            let targets = container.counter("rcaDeinitTarget")
            let deinits = container.counter("rcaDeinitResolver.deinit")
            _ = container.rcaDeinitResolver()
            var held: [(gate: OnceGate, built: () -> RCAPart)] = []
            for n in 0..<3 {
                let gate = OnceGate()
                container.setValue(gate, forKey: "rca.held\(n)")
                held.append((gate, onThread { container[rcaHeld: n]() }))
                gate.gate.entered.wait()
            }
            if resetting {
                container.reset()
            } else {
                container.override(\.rcaBase) { RCABase("override") }
            }
            findings.check(deinits.count == 1, "the dropped singleton's deinit ran \(deinits.count) times")
            findings.check(targets.count == 1, "the deinit's target was built \(targets.count) times")
            let target = container.rcaDeinitTarget()
            for (gate, _) in held { gate.gate.open() }
            for (n, (_, built)) in held.enumerated() {
                let handedOut = built()
                let now = container[rcaHeld: n]()
                findings.check(now !== handedOut, "held \(n), running at the change, was kept")
                if !resetting { findings.check(now.base?.madeBy == "override", "held \(n) rebuilt from the old base") }
            }
            findings.check(container.rcaDeinitTarget() === target, "the deinit's target was not kept")
            findings.check(targets.count == 1, "the deinit's target was built \(targets.count) times")
            findings.check(container.rcaDeinitResolver().base.madeBy == (resetting ? "registration" : "override"), "")
            findings.check(container.rcaNothingRuns, "constructions are still listed")
        }
    }
}

/// Starts `body` in a task; the function it returns waits on this thread for it and
/// returns what it resolved. Call it off the cooperative pool.
func onTask<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> () -> Value {
    let result = Collected<Value>()
    let finished = DispatchSemaphore(value: 0)
    Task {
        result.append(await body())
        finished.signal()
    }
    let kept = Collected<Value>()
    return {
        if let value = kept.values.first { return value }
        finished.wait()
        let value = result.takeAll()[0]
        kept.append(value)
        return value
    }
}
