import DependencyInjection
import Foundation
import Testing

// A parent that changes (override, decorate, reset, shutdown) while its children (test
// worlds, sessions, requests) resolve, override and are dropped, on threads released
// together: no child serves an instance older than the last change published before it
// resolved, nothing is torn down twice, and every child and instance is freed.

final class ChurnCell<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ value: T) { self.value = value }
    func get() -> T { lock.withLock { value } }
    func set(_ newValue: T) { lock.withLock { value = newValue } }
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&value) } }
}

final class ChurnWeak<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object?) { self.object = object }
}

final class ChurnClock: Sendable {
    let gen: Int
    init(gen: Int) { self.gen = gen }
}

final class ChurnTimed: Sendable {
    let clock: ChurnClock
    init(clock: ChurnClock) { self.clock = clock }
}

final class ChurnHandler: Sendable {
    let timed: ChurnTimed
    let clock: ChurnClock
    init(timed: ChurnTimed, clock: ChurnClock) { (self.timed, self.clock) = (timed, clock) }
}

extension DependencyContainer {
    var churnClock: Provider<ChurnClock> { singleton { ChurnClock(gen: 0) } }
    var churnTimed: Provider<ChurnTimed> { singleton { ChurnTimed(clock: self.churnClock()) } }
    var churnHandler: Provider<ChurnHandler> { scoped { ChurnHandler(timed: self.churnTimed(), clock: self.churnClock()) } }
    var churnShared: Provider<ChurnTimed> { shared { ChurnTimed(clock: self.churnClock()) } }
}

@Suite struct ParentChildChurnAttackTests {
    /// A writer overrides the app's clock with increasing generations; readers in the app, in
    /// long-lived and fresh worlds and scopes check that nothing older than what was published
    /// before their resolution began is served.
    @Test(arguments: [false, true]) func parentOverridesWhileChildrenResolveNeverServeStale(decorating: Bool) async {
        let stale = ChurnCell<[String]>([])
        let childWeaks = ChurnCell<[ChurnWeak<DependencyContainer>]>([])
        let instanceWeaks = ChurnCell<[ChurnWeak<ChurnTimed>]>([])
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let published = ChurnCell(0)
            let done = ChurnCell(false)
            let world = DependencyContainer(parent: app)
            let session = DependencyContainer(scopeOf: app)
            let rounds = 400
            concurrently(threads: 5) { index in
                if index == 0 {
                    for g in 1...rounds {
                        if decorating {
                            app.decorate(\.churnClock) { ChurnClock(gen: $0.gen + 1) }
                        } else {
                            app.override(\.churnClock) { ChurnClock(gen: g) }
                        }
                        published.set(g)
                    }
                    done.set(true)
                    return
                }
                var n = 0
                while !done.get() || n < 50 {
                    n += 1
                    let seen = published.get()
                    func check(_ what: String, _ gen: Int) {
                        if gen < seen { stale.mutate { $0.append("\(what): \(gen) < \(seen)") } }
                    }
                    switch (index + n) % 8 {
                    case 0: check("app timed", app.churnTimed().clock.gen)
                    case 1: check("world timed", world.churnTimed().clock.gen)
                    case 2:
                        let fresh = DependencyContainer(parent: app)
                        childWeaks.mutate { $0.append(ChurnWeak(fresh)) }
                        let t = fresh.churnTimed()
                        instanceWeaks.mutate { $0.append(ChurnWeak(t)) }
                        check("fresh world timed", t.clock.gen)
                    case 3:
                        let h = session.churnHandler()
                        check("session handler timed", h.timed.clock.gen)
                        check("session handler clock", h.clock.gen)
                    case 4:
                        let request = DependencyContainer(scopeOf: session)
                        childWeaks.mutate { $0.append(ChurnWeak(request)) }
                        let h = request.churnHandler()
                        check("request handler timed", h.timed.clock.gen)
                        check("request handler clock", h.clock.gen)
                    case 5:
                        let request = DependencyContainer(scopeOf: app)
                        request.override(\.churnTimed) { [unowned request] in ChurnTimed(clock: request.churnClock()) }
                        childWeaks.mutate { $0.append(ChurnWeak(request)) }
                        check("overriding request timed", request.churnTimed().clock.gen)
                    case 6:
                        let s = session.churnShared()
                        check("session shared", s.clock.gen)
                    default:
                        let inner = DependencyContainer(parent: world)
                        childWeaks.mutate { $0.append(ChurnWeak(inner)) }
                        check("world of world timed", inner.churnTimed().clock.gen)
                    }
                }
            }
            app.reset(\.churnClock)
            #expect(app.churnTimed().clock.gen == 0)
            #expect(world.churnTimed().clock.gen == 0)
            #expect(session.churnHandler().timed.clock.gen == 0)
            #expect(DependencyContainer(scopeOf: session).churnHandler().clock.gen == 0)
        }
        #expect(ok)
        let s = stale.get()
        #expect(s.isEmpty, "\(s.count) stale: \(s.prefix(10))")
        let liveChildren = childWeaks.get().filter { $0.object != nil }.count
        #expect(liveChildren == 0, "\(liveChildren) children still alive")
        let liveInstances = instanceWeaks.get().filter { $0.object != nil }.count
        #expect(liveInstances == 0, "\(liveInstances) instances still alive")
    }

    /// Same with resets: the writer alternates override(g) and reset(\.churnClock); a reader that
    /// saw a reset (odd epoch) must never get a generation older than the last override.
    @Test func parentResetAndOverrideWhileScopesResolve() async {
        let stale = ChurnCell<[String]>([])
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            // epoch: 2g-1 after override(g), 2g after reset.
            let epoch = ChurnCell(0)
            let done = ChurnCell(false)
            let session = DependencyContainer(scopeOf: app)
            let world = DependencyContainer(parent: app)
            concurrently(threads: 4) { index in
                if index == 0 {
                    for g in 1...300 {
                        app.override(\.churnClock) { ChurnClock(gen: g) }
                        epoch.set(2 * g - 1)
                        if g % 3 == 0 { app.reset() } else { app.reset(\.churnClock) }
                        epoch.set(2 * g)
                    }
                    done.set(true)
                    return
                }
                var n = 0
                while !done.get() || n < 50 {
                    n += 1
                    let e = epoch.get()
                    let gens: [(String, Int)]
                    switch (index + n) % 4 {
                    case 0: gens = [("app", app.churnTimed().clock.gen)]
                    case 1: gens = [("world", world.churnTimed().clock.gen)]
                    case 2:
                        let h = DependencyContainer(scopeOf: session).churnHandler()
                        gens = [("req timed", h.timed.clock.gen), ("req clock", h.clock.gen)]
                    default:
                        let h = session.churnHandler()
                        gens = [("session timed", h.timed.clock.gen), ("session clock", h.clock.gen)]
                    }
                    for (what, gen) in gens {
                        // After override(g) (epoch 2g-1) valid gens: g, 0 (a later reset), or > g.
                        // After reset (epoch 2g): 0 or > g.
                        let g = (e + 1) / 2
                        let valid: Bool
                        if e == 0 { valid = true } else if e % 2 == 1 { valid = gen == 0 || gen >= g } else { valid = gen == 0 || gen > g }
                        if !valid { stale.mutate { $0.append("\(what): gen \(gen) at epoch \(e)") } }
                    }
                }
            }
        }
        #expect(ok)
        let s = stale.get()
        #expect(s.isEmpty, "\(s.count) stale: \(s.prefix(10))")
    }

    /// Scopes with scoped instances that have teardowns are created, used and dropped (some
    /// shut down) while the app is shut down over and over. Nothing hangs, every app
    /// singleton is torn down at most once, and every container is freed.
    @Test func childrenComeAndGoWhileTheParentShutsDown() async {
        let teardowns = churnTeardownCounts
        let weaks = ChurnCell<[ChurnWeak<DependencyContainer>]>([])
        let handlerWeaks = ChurnCell<[ChurnWeak<ChurnTornHandler>]>([])
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let done = ChurnCell(false)
            concurrently(threads: 4) { index in
                if index == 0 {
                    for _ in 0..<400 {
                        _ = app.churnTornTimed()
                        app.shutdown()
                    }
                    done.set(true)
                    return
                }
                var n = 0
                while !done.get() || n < 30 {
                    n += 1
                    let request = DependencyContainer(scopeOf: app)
                    weaks.mutate { $0.append(ChurnWeak(request)) }
                    let h = request.churnTornHandler()
                    handlerWeaks.mutate { $0.append(ChurnWeak(h)) }
                    if n % 2 == 0 { request.shutdown() }
                    if n % 5 == 0 {
                        let world = DependencyContainer(parent: app)
                        weaks.mutate { $0.append(ChurnWeak(world)) }
                        _ = world.churnTornTimed()
                        world.shutdown()
                    }
                }
            }
            app.shutdown()
        }
        #expect(ok)
        let twice = teardowns.get().values.filter { $0.1 > 1 }.count
        #expect(twice == 0, "\(twice) instances torn down more than once")
        let live = weaks.get().filter { $0.object != nil }.count
        #expect(live == 0, "\(live) containers alive")
        let liveH = handlerWeaks.get().filter { $0.object != nil }.count
        #expect(liveH == 0, "\(liveH) handlers alive")
    }
}

let churnTeardownCounts = ChurnCell<[ObjectIdentifier: (ChurnTimed, Int)]>([:])

final class ChurnTornHandler: Sendable {
    let timed: ChurnTimed
    init(timed: ChurnTimed) { self.timed = timed }
}

extension DependencyContainer {
    var churnTornTimed: Provider<ChurnTimed> {
        singleton { ChurnTimed(clock: self.churnClock()) }.onShutdown { timed in
            churnTeardownCounts.mutate { $0[ObjectIdentifier(timed), default: (timed, 0)].1 += 1 }
        }
    }
    var churnTornHandler: Provider<ChurnTornHandler> {
        scoped { ChurnTornHandler(timed: self.churnTornTimed()) }.onShutdown { _ in }
    }
}
