import Foundation
import Testing
@testable import DependencyInjection

// Attacks on a scope's question whether the app built an instance from what the
// scope overrides, once the app recorded uses by time window only (`ReachedUsers`, which
// sets them aside by counting per registration): the own user of a registration hidden
// among many window-only users of the same registration, after shutdowns, resets and
// overrides that rename or drop what the record holds.

final class SORAPart: Sendable {
    let id: Int
    let limit: Int
    init(id: Int, limit: Int) { (self.id, self.limit) = (id, limit) }
}

final class SORAChain: Sendable {
    let part: SORAPart
    init(part: SORAPart) { self.part = part }
}

extension DependencyContainer {
    /// What scopes override, argument by argument.
    var soraLimit: ProviderFamily<Int, Int> { singleton { _ in 100 } }
    /// App-wide; its construction waits at the gate the container stores for its
    /// argument, if any, and
    /// resolves a limit itself only for argument 0 (or the arguments listed in
    /// "sora.resolves"): the others are users of the limit by time window only, when the
    /// test resolves a limit while they are held.
    var soraWorker: ProviderFamily<Int, SORAPart> {
        singleton { id in
            let gate: ConstructionGate? = self.getValue(forKey: "sora.gate.\(id)")
            gate?.enterAndWait()
            let resolves: Set<Int> = self.getValue(forKey: "sora.resolves") ?? [0]
            return SORAPart(id: id, limit: resolves.contains(id) ? self.soraLimit(id) : -1)
        }
    }
    /// App-wide, built from a worker: a transitive user of the limit through worker 0.
    var soraChain: ProviderFamily<Int, SORAChain> { singleton { id in SORAChain(part: self.soraWorker(id)) } }
    /// App-wide, built from the chain: two steps from the worker.
    var soraTop: Provider<SORAChain> { singleton { SORAChain(part: self.soraChain(0).part) } }
}

/// Holds worker `id`'s construction in flight on a thread of its own while this thread
/// resolves `limit` in `app`: a use of the limit by time window only.
private func buildWorkerSeeingALimitByTimeWindow(_ app: DependencyContainer, worker id: Int, limit: Int) {
    let gate = ConstructionGate()
    app.setValue(gate, forKey: "sora.gate.\(id)")
    let built = DispatchSemaphore(value: 0)
    Thread {
        _ = app.soraWorker(id)
        built.signal()
    }.start()
    gate.entered.wait()
    _ = app.soraLimit(limit)
    gate.open()
    built.wait()
    app.removeValue(forKey: "sora.gate.\(id)")
}

@Suite struct WindowOnlyUsesAttackTests {
    /// Worker 0 used limit 0 itself; `windowOnly` other workers only saw a limit by time
    /// window (the record's counts per registration, few or many). A request overriding
    /// limit 0 builds worker 0, the chain and the top from its value, and shares every
    /// other worker; after the app's shutdown, a reset of one worker, and of the whole
    /// worker family, the same.
    @Test(arguments: [1, 8, 9, 40])
    func theOwnUserHiddenAmongWindowOnlyUsersIsStillFound(windowOnly: Int) async {
        let app = DependencyContainer()
        let prepared = await finishesWithoutHangingOffThePool {
            for id in 1...windowOnly { buildWorkerSeeingALimitByTimeWindow(app, worker: id, limit: 1_000 + id) }
        }
        #expect(prepared)
        for stage in ["built", "shutdown", "reset one", "reset family", "window again"] {
            switch stage {
            case "shutdown": await app.shutdown()
            case "reset one": app.reset(\.soraWorker[1])
            case "reset family": app.reset(\.soraWorker)
            case "window again":
                let again = await finishesWithoutHangingOffThePool {
                    for id in 1...windowOnly {
                        app.reset(\.soraWorker[id])
                        buildWorkerSeeingALimitByTimeWindow(app, worker: id, limit: 2_000 + id)
                    }
                }
                #expect(again)
            default: break
            }
            let appTop = app.soraTop()
            let appWorkers = (0...windowOnly).map { app.soraWorker($0) }
            #expect(appTop.part.limit == 100)
            let request = DependencyContainer(scopeOf: app)
            request.override(\.soraLimit[0]) { 7 }
            #expect(request.soraWorker(0).limit == 7, "\(stage), \(windowOnly): the request's worker 0 is the app's")
            #expect(request.soraChain(0).part.limit == 7, "\(stage), \(windowOnly): the request's chain is the app's")
            #expect(request.soraTop().part.limit == 7, "\(stage), \(windowOnly): the request's top is the app's")
            for id in 1...windowOnly {
                #expect(request.soraWorker(id) === appWorkers[id], "\(stage), \(windowOnly): worker \(id) not shared")
            }
            // In a session of the request's scope, the same.
            let session = DependencyContainer(scopeOf: app)
            for id in 0..<30 { session.override(\.soraLimit[id]) { 7 } }
            let inSession = DependencyContainer(scopeOf: session)
            #expect(inSession.soraTop().part.limit == 7, "\(stage), \(windowOnly): the session's top is the app's")
            #expect(inSession.soraWorker(windowOnly) === appWorkers[windowOnly])
        }
    }

    /// The window-only worker turns into an own user later (its second build resolves the
    /// limit itself): the record must move it out of the window-only list, and a request
    /// overriding that limit builds it.
    @Test(arguments: [2, 12])
    func aWindowOnlyUserThatLaterUsesTheLimitItselfIsBuiltInTheScope(windowOnly: Int) async {
        let app = DependencyContainer()
        let prepared = await finishesWithoutHangingOffThePool {
            for id in 1...windowOnly { buildWorkerSeeingALimitByTimeWindow(app, worker: id, limit: id) }
        }
        #expect(prepared)
        let request = DependencyContainer(scopeOf: app)
        request.override(\.soraLimit[1]) { 7 }
        #expect(request.soraWorker(1) === app.soraWorker(1), "a use by time window made the request build its own")
        // Worker 1 is dropped and rebuilt, now resolving its limit itself.
        app.setValue(Set([0, 1]), forKey: "sora.resolves")
        app.reset(\.soraWorker[1])
        let appWorker = app.soraWorker(1)
        #expect(appWorker.limit == 100)
        let later = DependencyContainer(scopeOf: app)
        later.override(\.soraLimit[1]) { 7 }
        #expect(later.soraWorker(1).limit == 7, "the rebuilt worker used the limit itself, but the request shares it")
        #expect(later.soraChain(1).part.limit == 7)
        #expect(later.soraWorker(windowOnly) === app.soraWorker(windowOnly))
    }

    /// Threads released together: a writer makes uses by time window in the app (holding
    /// workers in flight while it resolves limits, resetting them and worker 0 between);
    /// requests in a session that pins limit 0 resolve the top; requests in a session
    /// whose limit 0 another thread overrides and resets override it themselves; the app
    /// resolves its own. Each request's top is built from the value it sees throughout,
    /// and the app's top always has the app's.
    @Test func windowOnlyUsesComingAndGoingWhileScopesAskServeTheOverride() async {
        let app = DependencyContainer()
        _ = app.soraTop()
        let pinned = DependencyContainer(scopeOf: app)
        pinned.override(\.soraLimit[0]) { 7 }
        let toggled = DependencyContainer(scopeOf: app)
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 5) { thread in
            switch thread {
            case 0:
                for round in 0..<80 {
                    let id = 1 + round % 12
                    app.reset(\.soraWorker[id])
                    buildWorkerSeeingALimitByTimeWindow(app, worker: id, limit: round)
                    if round % 10 == 9 { app.reset(\.soraWorker[0]) }
                    if round % 20 == 19 { app.reset(\.soraLimit) }
                }
            case 1:
                for round in 0..<300 {
                    let request = DependencyContainer(scopeOf: pinned)
                    request.override(\.soraLimit[500 + round]) { round }
                    if request.soraTop().part.limit != 7 { wrong.append("pinned request's top has the app's limit") }
                    if request.soraChain(0).part.limit != 7 { wrong.append("pinned request's chain is the app's") }
                }
            case 2:
                for round in 0..<300 {
                    let request = DependencyContainer(scopeOf: toggled)
                    request.override(\.soraLimit[0]) { 10_000 + round }
                    for id in 0..<20 { request.override(\.soraLimit[1_000 + id]) { id } }
                    if request.soraTop().part.limit != 10_000 + round {
                        wrong.append("toggled request's top has \(request.soraTop().part.limit)")
                    }
                    if request.soraWorker(0).limit != 10_000 + round { wrong.append("toggled request's worker") }
                }
            case 3:
                for round in 0..<300 {
                    toggled.override(\.soraLimit[0]) { -round }
                    let top = toggled.soraTop().part.limit
                    if top != -round && top != 100 { wrong.append("toggled session's top has \(top)") }
                    toggled.reset(\.soraLimit[0])
                    if round % 3 == 0 { toggled.reset() }
                }
            default:
                for _ in 0..<300 {
                    if app.soraTop().part.limit != 100 { wrong.append("the app's top has a scope's limit") }
                    if pinned.soraWorker(0).limit != 7 { wrong.append("the pinned session's worker is the app's") }
                }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        #expect(app.soraTop().part.limit == 100)
        #expect(pinned.soraTop().part.limit == 7)
    }

    /// A request overriding thousands of limits, in an app that recorded window-only uses
    /// of the limit by many workers, is released with everything it built.
    @Test func aRequestOverridingThousandsIsReleasedWithWhatItBuilt() async {
        let app = DependencyContainer()
        let prepared = await finishesWithoutHangingOffThePool {
            for id in 1...20 { buildWorkerSeeingALimitByTimeWindow(app, worker: id, limit: id) }
        }
        #expect(prepared)
        app.setValue(Set(0..<3_000), forKey: "sora.resolves")
        for id in 21..<3_000 { _ = app.soraWorker(id) }
        let request = Collected<Weak>()
        let built = Collected<() -> AnyObject?>()
        let right = Collected<Bool>()
        let finished = await finishesWithoutHangingOffThePool {
            let strong = DependencyContainer(scopeOf: app)
            for id in 0..<3_000 { strong.override(\.soraLimit[id]) { -id } }
            var all = true
            for id in 0..<3_000 { all = all && strong.soraChain(id).part.limit == (id >= 1 && id <= 20 ? -1 : -id) }
            all = all && strong.soraTop().part.limit == 0
            let worker = strong.soraWorker(2_999)
            let chain = strong.soraChain(2_999)
            built.append { [weak worker] in worker }
            built.append { [weak chain] in chain }
            request.append(Weak(strong))
            right.append(all)
        }
        #expect(finished)
        #expect(right.values == [true])
        #expect(request.values.allSatisfy { $0.container == nil }, "the request outlived its last reference")
        #expect(built.values.allSatisfy { $0() == nil }, "what the request built outlived it")
        #expect(app.soraWorker(5).limit == -1)
        #expect(app.soraChain(2_999).part.limit == 100)
    }

    /// A session overriding 2,000 limits (a set of keys), its requests resolving chains
    /// on threads released together, while the app overrides and resets the whole limit
    /// family and resets workers, and holds workers in flight while it resolves limits
    /// (uses by time window): a chain whose limit the session overrides always has the
    /// session's value, one it does not has the app's value of the moment, and nothing hangs.
    @Test func appFamilyChangesWhileASessionOfThousandsOfOverridesResolves() async {
        let count = 2_000
        let app = DependencyContainer()
        app.setValue(Set(0..<(count + 100)), forKey: "sora.resolves")
        let session = DependencyContainer(scopeOf: app)
        for id in 0..<count { session.override(\.soraLimit[id]) { -id } }
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            if thread == 0 {
                for round in 0..<60 {
                    if round % 2 == 0 {
                        app.override(\.soraLimit) { _ in 55 }
                    } else {
                        app.reset(\.soraLimit)
                    }
                    app.reset(\.soraWorker[round % 30])
                    buildWorkerSeeingALimitByTimeWindow(app, worker: count + round % 50, limit: round)
                }
                return
            }
            for round in 0..<150 {
                let request = DependencyContainer(scopeOf: session)
                for step in 0..<6 {
                    let id = (round * 6 + step + thread * 13) % count
                    let chain = request.soraChain(id)
                    if chain.part.limit != -id { wrong.append("chain \(id) has \(chain.part.limit)") }
                    let free = request.soraWorker(count + 50 + id % 40).limit
                    if free != 100 && free != 55 { wrong.append("free worker has \(free)") }
                }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
    }

    /// A request that only decorates limits, more than 16 of them (a set of keys from the
    /// decorations alone), with worker 0's limit among them: it builds worker 0, the chain
    /// and the top from the decorated value, and shares a worker whose limit it does not
    /// decorate; in a session that also overrides the decorated limit, the decoration
    /// applies to the session's value.
    @Test(arguments: [3, 17, 200])
    func decorationsAloneDecideWhatTheScopeBuilds(count: Int) {
        let app = DependencyContainer()
        app.setValue(Set(0..<1_000), forKey: "sora.resolves")
        let appTop = app.soraTop()
        let appFree = app.soraWorker(1_500)
        let request = DependencyContainer(scopeOf: app)
        for id in 0..<count { request.decorate(\.soraLimit[id]) { $0 + 1 } }
        #expect(request.soraTop().part.limit == 101)
        #expect(request.soraWorker(count - 1).limit == 101)
        #expect(request.soraWorker(1_500) === appFree)
        #expect(app.soraTop() === appTop)
        let session = DependencyContainer(scopeOf: app)
        session.override(\.soraLimit[0]) { 40 }
        let inSession = DependencyContainer(scopeOf: session)
        for id in 0..<count { inSession.decorate(\.soraLimit[id]) { $0 + 1 } }
        #expect(inSession.soraTop().part.limit == 41)
        #expect(inSession.soraWorker(1_500) === appFree)
        inSession.reset(\.soraLimit[0])
        #expect(inSession.soraTop().part.limit == 40, "the decoration outlived its reset")
    }
}
