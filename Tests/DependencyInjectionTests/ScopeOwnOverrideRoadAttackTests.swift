import DependencyInjection
import Foundation
import Testing

// Attacks on the scope's straight road to its own construction of a singleton it
// overrides (`appInstanceShared(_:overriddenInScope:)`): the override goes between the
// look's read of it and the construction, timed by an account's `==` (`LookAccount`, which
// runs while the look compares the keys it read) or raced by a thread. A scope that
// builds notes the use under the lock where its count shows the overrides stood still,
// or takes the handover's road: without that, a handler that resolved its user on a
// helper thread (a use by time window only) was kept, built from a user nobody keeps.

/// What a request builds from its user.
final class OwnRoadAttackHandler: Sendable {
    let user: OwnRoadUser
    init(user: OwnRoadUser) { self.user = user }
}

extension DependencyContainer {
    subscript(ownRoadAttackUser account: LookAccount) -> Provider<OwnRoadUser> {
        singleton(account) { OwnRoadUser("app") }
    }

    /// A handler that resolves its user itself, on its own stack.
    subscript(ownRoadAttackHandler account: LookAccount) -> Provider<OwnRoadAttackHandler> {
        scoped { OwnRoadAttackHandler(user: self[ownRoadAttackUser: account]()) }
    }

    /// A handler that resolves its user on a helper thread it waits for.
    subscript(ownRoadAttackHelperHandler account: LookAccount) -> Provider<OwnRoadAttackHandler> {
        scoped { OwnRoadAttackHandler(user: onThread { self[ownRoadAttackUser: account]() }()) }
    }

    /// A handler that resolves its user in a task it starts and waits for.
    subscript(ownRoadAttackTaskHandler account: LookAccount) -> Provider<OwnRoadAttackHandler> {
        scoped {
            let result = Collected<OwnRoadUser>()
            let done = DispatchSemaphore(value: 0)
            Task {
                result.append(self[ownRoadAttackUser: account]())
                done.signal()
            }
            done.wait()
            return OwnRoadAttackHandler(user: result.values[0])
        }
    }
}

extension DependencyContainer {
    var ownRoadAttackPlainUser: Provider<OwnRoadUser> { singleton { OwnRoadUser("app") } }

    /// A handler that resolves the plain user on a helper thread it waits for.
    var ownRoadAttackPlainHelperHandler: Provider<OwnRoadAttackHandler> {
        scoped { OwnRoadAttackHandler(user: onThread { self.ownRoadAttackPlainUser() }()) }
    }
}

extension DependencyContainer {
    /// A handler that signals `started` as it starts building, then resolves the plain
    /// user on a helper thread it waits for.
    subscript(ownRoadAttackGatedHandler started: DispatchSemaphore) -> Provider<OwnRoadAttackHandler> {
        scoped {
            started.signal()
            return OwnRoadAttackHandler(user: onThread { self.ownRoadAttackPlainUser() }())
        }
    }
}

/// A request of an app, in a session when asked for, and the scope that overrides what
/// the request resolves (the request, or its session), for the scenarios of the attacks on
/// the straight road.
struct OwnRoadWorld {
    let app = DependencyContainer()
    let request: DependencyContainer
    let overriding: DependencyContainer
    /// An account whose `==` runs the work armed on `onCompare`.
    let account: LookAccount
    let onCompare = RunOnce()

    init(inSession: Bool) {
        let session = DependencyContainer(scopeOf: app)
        request = DependencyContainer(scopeOf: inSession ? session : app)
        overriding = inSession ? session : request
        account = LookAccount(number: 1, onCompare: onCompare)
    }
}

/// What a scenario found, reported to the test from the thread it ran on.
private struct OwnRoadAttackFindings: Sendable {
    var handlerSharesAppUser = false
    var handlerAgainSharesAppUser = false
    var requestSharesAppUser = false
}

@Suite struct ScopeOwnOverrideRoadAttackTests {
    /// Runs the scenario where the request's override of the user goes while the request
    /// looks at it (between its look and its construction's claim), with `handler` the
    /// registration that builds the request's handler from the user.
    private func overrideRemovedDuringTheLook(
        _ handler: @escaping @Sendable (DependencyContainer, LookAccount) -> OwnRoadAttackHandler,
        inSession: Bool
    ) async -> OwnRoadAttackFindings? {
        let found = Collected<OwnRoadAttackFindings>()
        let finished = await finishesWithoutHangingOffThePool {
            let world = OwnRoadWorld(inSession: inSession)
            let (app, request, overriding, account, onCompare) =
                (world.app, world.request, world.overriding, world.account, world.onCompare)
            overriding.override(\.[ownRoadAttackUser: account]) { OwnRoadUser("request") }
            onCompare.arm { overriding.reset(\.[ownRoadAttackUser: account]) }
            _ = handler(request, account)  // the resolution whose look meets the removal
            let appUser = app[ownRoadAttackUser: account]()
            var findings = OwnRoadAttackFindings()
            findings.handlerSharesAppUser = handler(request, account).user === appUser
            findings.requestSharesAppUser = request[ownRoadAttackUser: account]() === appUser
            findings.handlerAgainSharesAppUser = handler(request, account).user === appUser
            found.append(findings)
        }
        #expect(finished)
        return found.values.first
    }

    /// The handler resolves the user on a helper thread it waits for. The request's
    /// override goes while that resolution looks: once it is gone, the request must
    /// share the app's user, and keep no handler built from a user nobody keeps.
    @Test func aHelperThreadsUseOfAnOverrideRemovedDuringTheLookKeepsNoHandler() async {
        let findings = await overrideRemovedDuringTheLook({ $0[ownRoadAttackHelperHandler: $1]() }, inSession: false)
        #expect(findings?.requestSharesAppUser == true, "the request kept a user of its own")
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler built from a one-off user")
        #expect(findings?.handlerAgainSharesAppUser == true)
    }

    /// The same, with the override in the request's session.
    @Test func aHelperThreadsUseOfASessionOverrideRemovedDuringTheLookKeepsNoHandler() async {
        let findings = await overrideRemovedDuringTheLook({ $0[ownRoadAttackHelperHandler: $1]() }, inSession: true)
        #expect(findings?.requestSharesAppUser == true, "the request kept a user of its own")
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler built from a one-off user")
        #expect(findings?.handlerAgainSharesAppUser == true)
    }

    /// The handler resolves the user itself: the one-off user it gets is handed out once,
    /// and the handler built from it is dropped; the next handler shares the app's user.
    @Test func anOwnStackUseOfAnOverrideRemovedDuringTheLookKeepsNoHandler() async {
        let findings = await overrideRemovedDuringTheLook({ $0[ownRoadAttackHandler: $1]() }, inSession: false)
        #expect(findings?.requestSharesAppUser == true)
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler built from a one-off user")
    }

    /// The same, with the override in the request's session.
    @Test func anOwnStackUseOfASessionOverrideRemovedDuringTheLookKeepsNoHandler() async {
        let findings = await overrideRemovedDuringTheLook({ $0[ownRoadAttackHandler: $1]() }, inSession: true)
        #expect(findings?.requestSharesAppUser == true)
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler built from a one-off user")
    }

    /// The handler resolves the user in a task it starts (which inherits its frame).
    @Test func aTasksUseOfAnOverrideRemovedDuringTheLookKeepsNoHandler() async {
        let findings = await overrideRemovedDuringTheLook({ $0[ownRoadAttackTaskHandler: $1]() }, inSession: false)
        #expect(findings?.requestSharesAppUser == true)
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler built from a one-off user")
    }

    /// No argument's `==` to time it: one thread removes the request's override of the
    /// user as soon as the request's handler starts building (a barrier in the handler),
    /// while the handler resolves the user on a helper thread, round after round. Once the
    /// override is gone, whatever the order, the request's handler must be built from the
    /// app's user.
    @Test func aRemovalRacingAHelperThreadsResolutionLeavesAHandlerOfTheAppsUser() async {
        let stale = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let appUser = app.ownRoadAttackPlainUser()
            for round in 0..<400 {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.ownRoadAttackPlainUser) { OwnRoadUser("request") }
                let started = DispatchSemaphore(value: 0)
                concurrently(threads: 2) { thread in
                    if thread == 0 {
                        started.wait()
                        request.reset(\.ownRoadAttackPlainUser)
                    } else {
                        _ = request[ownRoadAttackGatedHandler: started]()
                    }
                }
                if request.ownRoadAttackPlainUser() !== appUser || request[ownRoadAttackGatedHandler: started]().user !== appUser {
                    stale.append(round)
                }
            }
        }
        #expect(finished)
        #expect(stale.values.isEmpty, "rounds whose request kept a handler built from a user nobody keeps: \(stale.values)")
    }
}
