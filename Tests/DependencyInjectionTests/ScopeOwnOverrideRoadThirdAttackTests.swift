import DependencyInjection
import Foundation
import Testing

// Third attacks on the scope's straight road to its own construction of a singleton it
// overrides (`appInstanceShared(_:overriddenInScope:)`): an asynchronous construction of
// the scope in flight while a synchronous resolution of the user takes the straight
// road; the scope's whole reset, and a decoration's removal, while the look compares
// keys; a tracer on the scope and on the app; a `deinit` that resolves through the scope;
// a `shared` registration; an app-wide handler the app builds for the scope that resolves
// the user from a thread it starts.

/// What a request builds from its user.
final class OwnRoadThirdHandler: Sendable {
    let user: OwnRoadUser
    init(user: OwnRoadUser) { self.user = user }
}

/// Something whose `deinit` resolves the request's user.
final class OwnRoadThirdMourner: Sendable {
    let request: DependencyContainer
    let heard: Collected<String>
    init(request: DependencyContainer, heard: Collected<String>) { (self.request, self.heard) = (request, heard) }
    deinit { heard.append(request.ownRoadThirdPlainUser().name) }
}

extension DependencyContainer {
    subscript(ownRoadThirdUser account: LookAccount) -> Provider<OwnRoadUser> {
        singleton(account) { OwnRoadUser("app") }
    }

    var ownRoadThirdPlainUser: Provider<OwnRoadUser> { singleton { OwnRoadUser("app") } }
    var ownRoadThirdSharedUser: Provider<OwnRoadUser> { shared { OwnRoadUser("app") } }

    /// An async handler that resolves the user synchronously inside its construction,
    /// after a suspension point (which orders nothing: the construction is a task's work
    /// either way, and the test times the removal with the account's `==`).
    subscript(ownRoadThirdAsyncHandler account: LookAccount) -> AsyncProvider<OwnRoadThirdHandler> {
        scoped {
            await Task.yield()
            return OwnRoadThirdHandler(user: self[ownRoadThirdUser: account]())
        }
    }

    /// An async handler that resolves the user on a helper thread it awaits.
    subscript(ownRoadThirdAsyncHelperHandler account: LookAccount) -> AsyncProvider<OwnRoadThirdHandler> {
        scoped {
            let user = await withCheckedContinuation { (resumed: CheckedContinuation<OwnRoadUser, Never>) in
                Thread { resumed.resume(returning: self[ownRoadThirdUser: account]()) }.start()
            }
            return OwnRoadThirdHandler(user: user)
        }
    }

    /// A handler that resolves the user on a helper thread it waits for.
    subscript(ownRoadThirdHelperHandler account: LookAccount) -> Provider<OwnRoadThirdHandler> {
        scoped { OwnRoadThirdHandler(user: onThread { self[ownRoadThirdUser: account]() }()) }
    }

    var ownRoadThirdPlainHandler: Provider<OwnRoadThirdHandler> {
        scoped { OwnRoadThirdHandler(user: self.ownRoadThirdPlainUser()) }
    }

    var ownRoadThirdSharedHandler: Provider<OwnRoadThirdHandler> {
        scoped { OwnRoadThirdHandler(user: self.ownRoadThirdSharedUser()) }
    }

    /// An app-wide handler, built from the user on its own stack.
    var ownRoadThirdAppHandler: Provider<OwnRoadThirdHandler> {
        singleton { OwnRoadThirdHandler(user: self.ownRoadThirdPlainUser()) }
    }

    /// An app-wide handler that resolves the user in a task it starts and waits for.
    var ownRoadThirdAppTaskHandler: Provider<OwnRoadThirdHandler> {
        singleton {
            let result = Collected<OwnRoadUser>()
            let done = DispatchSemaphore(value: 0)
            Task {
                result.append(self.ownRoadThirdPlainUser())
                done.signal()
            }
            done.wait()
            return OwnRoadThirdHandler(user: result.values[0])
        }
    }

    /// A scoped holder of a mourner, whose `deinit` resolves the user.
    var ownRoadThirdMourner: Provider<OwnRoadThirdMourner> {
        scoped { OwnRoadThirdMourner(request: self, heard: Collected()) }
    }
}

@Suite struct ScopeOwnOverrideRoadThirdAttackTests {
    /// An async handler of the request, in flight, resolves the user synchronously in its
    /// task, and the request's override goes while that resolution compares keys. Once it
    /// is gone, the request must not keep a handler built from a user nobody keeps.
    @Test func anAsyncHandlersUserRemovedDuringTheLookLeavesNoHandlerOfIt() async throws {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let onCompare = RunOnce()
        let account = LookAccount(number: 1, onCompare: onCompare)
        request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("request") }
        onCompare.arm { request.reset(\.[ownRoadThirdUser: account]) }
        _ = try await request[ownRoadThirdAsyncHandler: account]()
        let appUser = app[ownRoadThirdUser: account]()
        #expect(request[ownRoadThirdUser: account]() === appUser)
        let again = try await request[ownRoadThirdAsyncHandler: account]()
        #expect(again.user === appUser, "the request kept an async handler of a removed user: \(again.user.name)")
    }

    /// The same, with the async handler resolving the user on a helper thread it awaits
    /// (a use by time window only), the override in the request or in its session.
    @Test(arguments: [false, true])
    func anAsyncHandlersHelperUseOfAUserRemovedDuringTheLookLeavesNoHandlerOfIt(inSession: Bool) async throws {
        let world = OwnRoadWorld(inSession: inSession)
        let (app, request, overriding, account, onCompare) =
            (world.app, world.request, world.overriding, world.account, world.onCompare)
        overriding.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("request") }
        let compared = Collected<Bool>()
        onCompare.arm {
            compared.append(true)
            overriding.reset(\.[ownRoadThirdUser: account])
        }
        _ = try await request[ownRoadThirdAsyncHelperHandler: account]()
        #expect(compared.values == [true], "the look compared no keys")
        let appUser = app[ownRoadThirdUser: account]()
        #expect(request[ownRoadThirdUser: account]() === appUser)
        let again = try await request[ownRoadThirdAsyncHelperHandler: account]()
        #expect(again.user === appUser, "the request kept an async handler of a removed user: \(again.user.name)")
    }

    /// An async handler built from the request's user goes when the user is replaced.
    @Test func anAsyncHandlerGoesWhenTheUserIsReplaced() async throws {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let account = LookAccount(number: 2, onCompare: RunOnce())
        request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("first") }
        let first = try await request[ownRoadThirdAsyncHandler: account]()
        #expect(first.user.name == "first")
        #expect(first.user === request[ownRoadThirdUser: account]())
        request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("second") }
        let second = try await request[ownRoadThirdAsyncHandler: account]()
        #expect(second.user.name == "second")
        #expect(app.instanceIfBuilt(\.[ownRoadThirdUser: account]) == nil)
    }

    /// The whole request is reset while a resolution of its user compares keys, with a
    /// handler in flight that waits for it on a helper thread: afterwards the request
    /// keeps nothing of the override, and its handler shares the app's user.
    @Test func aResetOfTheWholeRequestDuringTheLookKeepsNothing() async {
        let findings = await installedThenRemovedDuringTheLook(
            install: { request, account in request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("request") } },
            remove: { request, _ in request.reset() })
        #expect(findings?.sharesAppUser == true, "the request kept a user of its own after its reset")
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler of a user it reset: \(findings?.handlerName ?? "-")")
    }

    /// Installs what `install` does in a request, then resolves the request's handler,
    /// which waits for the user on a helper thread, with `remove` run while the
    /// resolution of the user compares keys; then says whether the request and its next
    /// handler share the app's user.
    private func installedThenRemovedDuringTheLook(
        install: @escaping @Sendable (DependencyContainer, LookAccount) -> Void,
        remove: @escaping @Sendable (DependencyContainer, LookAccount) -> Void
    ) async -> (sharesAppUser: Bool, handlerSharesAppUser: Bool, handlerName: String)? {
        let found = Collected<(sharesAppUser: Bool, handlerSharesAppUser: Bool, handlerName: String)>()
        let finished = await finishesWithoutHangingOffThePool {
            let world = OwnRoadWorld(inSession: false)
            let (app, request, account, onCompare) = (world.app, world.request, world.account, world.onCompare)
            install(request, account)
            onCompare.arm { remove(request, account) }
            _ = request[ownRoadThirdHelperHandler: account]()
            let appUser = app[ownRoadThirdUser: account]()
            let handler = request[ownRoadThirdHelperHandler: account]()
            found.append((request[ownRoadThirdUser: account]() === appUser, handler.user === appUser, handler.user.name))
        }
        #expect(finished)
        return found.values.first
    }

    /// The app is reset while a resolution of the request's user compares keys, with a
    /// handler in flight that waits for it on a helper thread: the request's override
    /// stands, so the request keeps its own user, and the handler is built from it.
    @Test func aResetOfTheAppDuringTheLookLeavesTheRequestsOwnUser() async {
        let found = Collected<(String, Bool, Bool)>()
        let finished = await finishesWithoutHangingOffThePool {
            let world = OwnRoadWorld(inSession: false)
            let (app, request, account, onCompare) = (world.app, world.request, world.account, world.onCompare)
            _ = app[ownRoadThirdUser: account]()
            request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("request") }
            onCompare.arm { app.reset() }
            let during = request[ownRoadThirdHelperHandler: account]()
            let user = request[ownRoadThirdUser: account]()
            found.append((
                user.name, request[ownRoadThirdHelperHandler: account]().user === user,
                during.user === user && app.instanceIfBuilt(\.[ownRoadThirdUser: account]) == nil))
        }
        #expect(finished)
        #expect(found.values.first?.0 == "request")
        #expect(found.values.first?.1 == true, "the request's handler is not built from its user")
        #expect(found.values.first?.2 == true)
    }

    /// The request decorates the user; the decoration goes while a resolution of the user
    /// compares keys, with a handler in flight that waits for it on a helper thread.
    @Test func aDecorationRemovedDuringTheLookLeavesTheAppsUser() async {
        let findings = await installedThenRemovedDuringTheLook(
            install: { request, account in
                request.decorate(\.[ownRoadThirdUser: account]) { OwnRoadUser("decorated " + $0.name) }
            },
            remove: { request, account in request.reset(\.[ownRoadThirdUser: account]) })
        #expect(findings?.sharesAppUser == true, "the request kept a decorated user after the decoration went")
        #expect(findings?.handlerSharesAppUser == true, "the request kept a handler of a removed decoration: \(findings?.handlerName ?? "-")")
    }

    /// The request overrides the user; a decoration is added while a resolution compares
    /// keys: the request's user from then on is the decorated override.
    @Test func aDecorationAddedDuringTheLookIsKept() async {
        let found = Collected<(String, String)>()
        let finished = await finishesWithoutHangingOffThePool {
            let world = OwnRoadWorld(inSession: false)
            let (app, request, account, onCompare) = (world.app, world.request, world.account, world.onCompare)
            request.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("request") }
            onCompare.arm { request.decorate(\.[ownRoadThirdUser: account]) { OwnRoadUser("decorated " + $0.name) } }
            _ = request[ownRoadThirdHelperHandler: account]()
            let user = request[ownRoadThirdUser: account]()
            found.append((user.name, request[ownRoadThirdHelperHandler: account]().user.name))
            _ = app
        }
        #expect(finished)
        #expect(found.values.first?.0 == "decorated request")
        #expect(found.values.first?.1 == "decorated request")
    }

    /// With a tracer on the request and one on the app: the request's tracer hears the
    /// user built from its override below the handler; the app's hears nothing of it.
    @Test func tracersHearTheUserBuiltInTheRequest() throws {
        let app = DependencyContainer()
        let appEvents = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { appEvents.append($0) }
        let request = DependencyContainer(scopeOf: app)
        let requestEvents = Collected<[ResolutionEvent]>()
        request.tracer = ResolutionTracer { requestEvents.append($0) }
        request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("request") }

        _ = request.ownRoadThirdPlainHandler()
        _ = request.ownRoadThirdPlainUser()

        let trees = requestEvents.values.map { $0.map { "\($0.name) \($0.outcome.rawValue) \($0.depth)" } }
        #expect(
            trees == [
                ["ownRoadThirdPlainHandler built 0", "ownRoadThirdPlainUser built from override 1"],
                ["ownRoadThirdPlainUser cached 0"],
            ])
        #expect(appEvents.values.isEmpty, "the app's tracer heard \(appEvents.values)")
    }

    /// A `deinit` that resolves the request's user, run as a change drops what it was in.
    @Test func aDeinitResolvingTheUserThroughTheRequestGetsTheCurrentOne() async {
        let heard = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("first") }
            // The mourner is built from the user, so replacing the user drops it.
            request.override(\.ownRoadThirdMourner) { [unowned request] in
                _ = request.ownRoadThirdPlainUser()
                return OwnRoadThirdMourner(request: request, heard: heard)
            }
            _ = request.ownRoadThirdMourner()
            request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("second") }
            #expect(request.ownRoadThirdPlainUser().name == "second")
            #expect(request.ownRoadThirdPlainHandler().user === request.ownRoadThirdPlainUser())
        }
        #expect(finished)
        #expect(heard.values == ["second"], "the deinit heard \(heard.values)")
    }

    /// A `shared` user the request overrides: the handler holds the request's, and goes
    /// with it; once the override goes, the app's.
    @Test func aSharedUserTheRequestOverridesIsItsOwn() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ownRoadThirdSharedUser) { OwnRoadUser("request") }
        let handler = request.ownRoadThirdSharedHandler()
        #expect(handler.user.name == "request")
        #expect(request.ownRoadThirdSharedUser() === handler.user)
        request.reset(\.ownRoadThirdSharedUser)
        let appUser = app.ownRoadThirdSharedUser()
        #expect(request.ownRoadThirdSharedUser() === appUser)
        #expect(request.ownRoadThirdSharedHandler().user === appUser)
        withExtendedLifetime(appUser) {}
    }

    /// An app-wide handler that the request's user makes the request's own: the request
    /// builds its own, from its user, and the app builds its own from the app's user.
    @Test func anAppWideHandlerOfTheRequestsUserIsTheRequestsOwn() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("request") }
        let handler = request.ownRoadThirdAppHandler()
        #expect(handler.user.name == "request")
        #expect(handler.user === request.ownRoadThirdPlainUser())
        #expect(request.ownRoadThirdAppHandler() === handler)
        let appHandler = app.ownRoadThirdAppHandler()
        #expect(appHandler.user.name == "app" && appHandler !== handler)
        request.reset(\.ownRoadThirdPlainUser)
        #expect(request.ownRoadThirdAppHandler() === appHandler)
    }

    /// An app-wide handler the app builds for the request, which resolves the user in a
    /// task it starts and waits for: the task resolves through the request (as documented,
    /// a task the closure starts resolves in the scope), so the handler holds the
    /// request's user, the one the request keeps, and the request keeps that handler. (The
    /// app keeps it too, built from the request's user: the documented limit, as at the
    /// base.)
    @Test func anAppWideHandlersTaskResolvesTheUserInTheRequest() async {
        let found = Collected<(String, Bool, Bool)>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("request") }
            let handler = request.ownRoadThirdAppTaskHandler()
            let requestUser = request.ownRoadThirdPlainUser()
            found.append((handler.user.name, handler.user === requestUser, request.ownRoadThirdAppTaskHandler() === handler))
            _ = app
        }
        #expect(finished)
        #expect(found.values.first?.0 == "request")
        #expect(found.values.first?.1 == true, "the handler's user is not the one the request keeps")
        #expect(found.values.first?.2 == true)
    }

    /// A session's override comes and goes while threads of its request resolve the user
    /// straight and build handlers that resolve it on helper threads, and a task builds
    /// the async handler that does the same: when they end and the override is gone, the
    /// request keeps no handler of a user nobody keeps.
    @Test func aSessionsOverrideComingAndGoingWhileHelpersResolve() async throws {
        let app = DependencyContainer()
        let account = LookAccount(number: 9, onCompare: RunOnce())
        let appUser = app[ownRoadThirdUser: account]()
        for round in 0..<30 {
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            let tasks = Task {
                for _ in 0..<20 { _ = try? await request[ownRoadThirdAsyncHelperHandler: account]() }
            }
            let finished = await concurrentlyOffThePool(threads: 4) { thread in
                for step in 0..<60 {
                    switch thread {
                    case 0:
                        if step.isMultiple(of: 2) {
                            session.override(\.[ownRoadThirdUser: account]) { OwnRoadUser("session") }
                        } else {
                            session.reset(\.[ownRoadThirdUser: account])
                        }
                    case 1: _ = request[ownRoadThirdUser: account]()
                    default: _ = request[ownRoadThirdHelperHandler: account]()
                    }
                }
            }
            await tasks.value
            #expect(finished)
            session.reset(\.[ownRoadThirdUser: account])
            #expect(request[ownRoadThirdUser: account]() === appUser, "round \(round): the request kept a user")
            let helper = await finishesWithoutHangingOffThePool {
                if request[ownRoadThirdHelperHandler: account]().user !== appUser {
                    Issue.record("round \(round): a handler of a removed user stayed")
                }
            }
            #expect(helper)
            let asyncHandler = try await request[ownRoadThirdAsyncHelperHandler: account]()
            #expect(asyncHandler.user === appUser, "round \(round): an async handler of a removed user stayed: \(asyncHandler.user.name)")
        }
    }

    /// Threads resolve the user straight while others replace and reset the whole request
    /// and its decorations: when they end, the request answers its last change.
    @Test func resetsAndDecorationsRacingTheStraightRoad() async {
        let app = DependencyContainer()
        let appUser = app.ownRoadThirdPlainUser()
        for round in 0..<20 {
            let request = DependencyContainer(scopeOf: app)
            request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("request") }
            let finished = await concurrentlyOffThePool(threads: 6) { thread in
                for step in 0..<200 {
                    switch thread {
                    case 0:
                        if step.isMultiple(of: 2) { request.reset() } else {
                            request.override(\.ownRoadThirdPlainUser) { OwnRoadUser("request") }
                        }
                    case 1:
                        if step.isMultiple(of: 2) {
                            request.decorate(\.ownRoadThirdPlainUser) { OwnRoadUser("decorated " + $0.name) }
                        } else {
                            request.reset(\.ownRoadThirdPlainUser)
                        }
                    case 2, 3: _ = request.ownRoadThirdPlainUser()
                    default: _ = request.ownRoadThirdPlainHandler()
                    }
                }
            }
            #expect(finished)
            request.reset()
            #expect(request.ownRoadThirdPlainUser() === appUser, "round \(round): the request kept a user of its own")
            #expect(request.ownRoadThirdPlainHandler().user === appUser, "round \(round): a stale handler stayed")
            #expect(app.instanceIfBuilt(\.ownRoadThirdPlainHandler) == nil)
        }
    }
}
