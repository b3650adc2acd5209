import DependencyInjection
import Foundation
import Testing

// Second attacks on the scope's straight road to its own construction of a singleton it
// overrides (`appInstanceShared(_:overriddenInScope:)`): a construction that starts in
// the scope while a resolution of what the scope overrides is under way, and that takes
// the user that resolution gets (a value shared between threads, a promise), uses it by
// time window only. The look notes the use after its compare of keys, under the lock
// where it checks that the overrides stood still, whether or not the scope built when it
// read them, and the claim notes it again: noting it only when the scope built at the
// first read, and not at the claim, kept such a handler after its override was removed.

/// What a request builds from its user.
final class OwnRoadSecondHandler: Sendable {
    let user: OwnRoadUser
    init(user: OwnRoadUser) { self.user = user }
}

/// A user that one thread resolves and others wait for: a memoised value shared between
/// the threads of a request.
final class OwnRoadSecondPromise: @unchecked Sendable {
    // @unchecked: `value` is read and written under `condition`.
    private let condition = NSCondition()
    private var value: OwnRoadUser?

    func fulfil(_ user: OwnRoadUser) {
        condition.lock()
        value = user
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> OwnRoadUser {
        condition.lock()
        defer { condition.unlock() }
        while value == nil { condition.wait() }
        return value!
    }
}

/// Where a request's handler takes its user from: a promise the test hands it (once),
/// else the container. It signals `started` as it starts building.
final class OwnRoadSecondSource: @unchecked Sendable {
    // @unchecked: `promise` is read and written under `lock`.
    let account: LookAccount
    let started = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var promise: OwnRoadSecondPromise?

    init(account: LookAccount) { self.account = account }

    func hand(_ promise: OwnRoadSecondPromise) { lock.withLock { self.promise = promise } }

    func takePromise() -> OwnRoadSecondPromise? {
        lock.withLock {
            defer { promise = nil }
            return promise
        }
    }
}

extension DependencyContainer {
    subscript(ownRoadSecondUser account: LookAccount) -> Provider<OwnRoadUser> {
        singleton(account) { OwnRoadUser("app") }
    }

    /// A handler that takes the user another thread resolves, when it is handed a
    /// promise, else resolves it itself.
    subscript(ownRoadSecondHandler source: OwnRoadSecondSource) -> Provider<OwnRoadSecondHandler> {
        scoped {
            source.started.signal()
            if let promise = source.takePromise() { return OwnRoadSecondHandler(user: promise.wait()) }
            return OwnRoadSecondHandler(user: self[ownRoadSecondUser: source.account]())
        }
    }

    /// Something else a request builds, which resolves the user on its own stack.
    subscript(ownRoadSecondGreeting account: LookAccount) -> Provider<String> {
        scoped { "hello " + self[ownRoadSecondUser: account]().name }
    }
}

/// What a scenario found, reported to the test from the thread it ran on.
private struct OwnRoadSecondFindings: Sendable {
    var handlerTookTheResolvedUser = false
    var requestSharesAppUser = false
    var handlerSharesAppUser = false
    var handlerName = ""
}

@Suite struct ScopeOwnOverrideRoadSecondAttackTests {
    /// The scenario: a request (in a session when `inSession`) overrides the user, there or
    /// in the session; a thread resolves the user through the request; while that
    /// resolution looks (its compare of the account), the request's handler starts on
    /// another thread and waits for the user that resolution gets. Then the override goes.
    /// With `insideAConstruction`, the user is first resolved inside a construction of the
    /// request (its greeting), so that the scope builds when the look reads its overrides.
    private func handlerStartedDuringTheLook(
        inSession: Bool, insideAConstruction: Bool = false
    ) async -> OwnRoadSecondFindings? {
        let found = Collected<OwnRoadSecondFindings>()
        let finished = await finishesWithoutHangingOffThePool {
            let world = OwnRoadWorld(inSession: inSession)
            let (app, request, overriding, account, onCompare) =
                (world.app, world.request, world.overriding, world.account, world.onCompare)
            let source = OwnRoadSecondSource(account: account)
            overriding.override(\.[ownRoadSecondUser: account]) { OwnRoadUser("request") }
            let promise = OwnRoadSecondPromise()
            source.hand(promise)
            let handlerThread = Collected<() -> OwnRoadSecondHandler>()
            onCompare.arm {
                // The handler starts building while the resolution looks, and waits for
                // the user that resolution gets.
                handlerThread.append(onThread { request[ownRoadSecondHandler: source]() })
                source.started.wait()
            }
            // The greeting's construction resolves the user: the look runs while it builds.
            let greeting = insideAConstruction ? request[ownRoadSecondGreeting: account]() : "hello request"
            let user = request[ownRoadSecondUser: account]()
            promise.fulfil(user)
            guard let handler = handlerThread.values.first?() else { return }
            var findings = OwnRoadSecondFindings()
            findings.handlerTookTheResolvedUser =
                handler.user === user && user.name == "request" && greeting == "hello request"

            overriding.reset(\.[ownRoadSecondUser: account])
            let appUser = app[ownRoadSecondUser: account]()
            findings.requestSharesAppUser = request[ownRoadSecondUser: account]() === appUser
                && (!insideAConstruction || request[ownRoadSecondGreeting: account]() == "hello app")
            let again = request[ownRoadSecondHandler: source]()
            findings.handlerSharesAppUser = again.user === appUser
            findings.handlerName = again.user.name
            found.append(findings)
        }
        #expect(finished)
        return found.values.first
    }

    /// The request builds nothing when the resolution starts; its handler starts during
    /// the resolution's look and takes the user it gets. Once the request's override goes,
    /// the request must not keep a handler built from a user it no longer has.
    @Test func aHandlerStartedDuringTheLookOfAnIdleRequestIsDroppedWithTheOverride() async {
        let findings = await handlerStartedDuringTheLook(inSession: false)
        #expect(findings?.handlerTookTheResolvedUser == true)
        #expect(findings?.requestSharesAppUser == true)
        #expect(
            findings?.handlerSharesAppUser == true,
            "the request kept a handler built from the user of a removed override: \(findings?.handlerName ?? "-")")
    }

    /// The same, with the override in the request's session.
    @Test func aHandlerStartedDuringTheLookOfAnIdleRequestIsDroppedWithTheSessionsOverride() async {
        let findings = await handlerStartedDuringTheLook(inSession: true)
        #expect(findings?.handlerTookTheResolvedUser == true)
        #expect(findings?.requestSharesAppUser == true)
        #expect(
            findings?.handlerSharesAppUser == true,
            "the request kept a handler built from the user of a removed override: \(findings?.handlerName ?? "-")")
    }

    /// The same, but the resolution of the user runs inside a construction of the request
    /// (its greeting; the scope builds at the look's first read): the look notes the use
    /// after its compare, for the handler that started meanwhile too, and the handler goes
    /// with the override, as does the greeting.
    @Test func aHandlerStartedDuringTheLookOfABuildingRequestIsDroppedWithTheOverride() async {
        let findings = await handlerStartedDuringTheLook(inSession: false, insideAConstruction: true)
        #expect(findings?.handlerTookTheResolvedUser == true)
        #expect(findings?.requestSharesAppUser == true)
        #expect(
            findings?.handlerSharesAppUser == true,
            "the request kept a handler built from the user of a removed override: \(findings?.handlerName ?? "-")")
    }

    /// An idle request (no construction under way) whose override of the user goes while
    /// a resolution of the user looks at it: that resolution may hand out a one-off user,
    /// but the request keeps none, and from then on shares the app's user, also in the
    /// handler it builds next.
    @Test func anIdleRequestsOverrideRemovedDuringTheLookLeavesNothingKept() async {
        let found = Collected<(Bool, Bool, Bool)>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            let onCompare = RunOnce()
            let account = LookAccount(number: 1, onCompare: onCompare)
            let source = OwnRoadSecondSource(account: account)
            request.override(\.[ownRoadSecondUser: account]) { OwnRoadUser("request") }
            onCompare.arm { request.reset(\.[ownRoadSecondUser: account]) }
            let during = request[ownRoadSecondUser: account]()
            let appUser = app[ownRoadSecondUser: account]()
            let after = request[ownRoadSecondUser: account]()
            found.append((
                during === appUser || during.name == "app",
                after === appUser && request[ownRoadSecondUser: account]() === appUser,
                request[ownRoadSecondHandler: source]().user === appUser))
        }
        #expect(finished)
        let findings = found.values.first
        #expect(findings?.0 == true, "the resolution built from the removed override")
        #expect(findings?.1 == true, "the request kept a user of its own")
        #expect(findings?.2 == true)
    }

    /// Four constructions of the request in flight at once (so that noting a use walks
    /// the first, the second and the others), each resolving the user on its own stack
    /// once all have started: replacing the request's user then drops all four, round
    /// after round.
    @Test func fourConstructionsInFlightAllGoWhenTheUserIsReplaced() async {
        let stale = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let never = RunOnce()
            let account = LookAccount(number: 7, onCompare: never)
            for round in 0..<200 {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.[ownRoadSecondUser: account]) { OwnRoadUser("first") }
                let sources = (0..<4).map { _ in OwnRoadSecondSource(account: account) }
                let gate = DispatchSemaphore(value: 0)
                let built = Collected<OwnRoadSecondGroupHandler>()
                concurrently(threads: 5) { thread in
                    if thread == 4 {
                        for source in sources { source.started.wait() }
                        gate.signal(); gate.signal(); gate.signal(); gate.signal()
                    } else {
                        built.append(request[ownRoadSecondGroup: OwnRoadSecondGroupKey(slot: thread, gate: gate, source: sources[thread])]())
                    }
                }
                request.override(\.[ownRoadSecondUser: account]) { OwnRoadUser("second") }
                for slot in 0..<4 {
                    let again = request[ownRoadSecondGroup: OwnRoadSecondGroupKey(slot: slot, gate: nil, source: sources[slot])]()
                    if again.user.name != "second" { stale.append("round \(round) slot \(slot): \(again.user.name)") }
                }
            }
        }
        #expect(finished)
        #expect(stale.values.isEmpty, "constructions kept with the replaced user: \(stale.values.prefix(5))")
    }
}

/// One of four handlers a request builds at once.
final class OwnRoadSecondGroupHandler: Sendable {
    let user: OwnRoadUser
    init(user: OwnRoadUser) { self.user = user }
}

/// Which of the four handlers, and the gate it waits at before it resolves the user.
struct OwnRoadSecondGroupKey: Hashable, Sendable {
    let slot: Int
    let gate: DispatchSemaphore?
    let source: OwnRoadSecondSource

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.slot == rhs.slot }
    func hash(into hasher: inout Hasher) { hasher.combine(slot) }
}

extension DependencyContainer {
    /// Four scoped handlers, one a slot (a family keyed by slot: each its own construction).
    subscript(ownRoadSecondGroup key: OwnRoadSecondGroupKey) -> Provider<OwnRoadSecondGroupHandler> {
        switch key.slot {
        case 0: return scoped { self.groupHandler(key) }
        case 1: return scoped { self.groupHandler(key) }
        case 2: return scoped { self.groupHandler(key) }
        default: return scoped { self.groupHandler(key) }
        }
    }

    private func groupHandler(_ key: OwnRoadSecondGroupKey) -> OwnRoadSecondGroupHandler {
        key.source.started.signal()
        key.gate?.wait()
        return OwnRoadSecondGroupHandler(user: self[ownRoadSecondUser: key.source.account]())
    }
}
