import DependencyInjection
import Foundation
import Testing

// A scope resolving an app-wide singleton that it, or a scope it is in, overrides or
// decorates goes straight from its quick look to its own construction
// (`appInstanceShared(_:overriddenInScope:)`), where the handover's road read the same
// overrides again and came to the same construction. These tests pin what that
// construction must be: built in the scope from what the scope installed, never in the
// app container, its use noted so that a change of the override drops what was built
// from it, and, once the override goes, the app's instance again.

/// The signed-in user of a request: app-wide by registration, overridden per request.
final class OwnRoadUser: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// What a request builds from its user and the app's clock.
final class OwnRoadHandler: Sendable {
    let user: OwnRoadUser
    let clock: OwnRoadClock
    init(user: OwnRoadUser, clock: OwnRoadClock) { (self.user, self.clock) = (user, clock) }
}

/// An app-wide service, which a scope may decorate.
final class OwnRoadClock: Sendable {
    let name: String
    let wrapped: OwnRoadClock?
    init(_ name: String, wrapping wrapped: OwnRoadClock? = nil) { (self.name, self.wrapped) = (name, wrapped) }
}

/// One account's ledger, app-wide per account.
final class OwnRoadLedger: Sendable {
    let account: Int
    let owner: String
    init(account: Int, owner: String) { (self.account, self.owner) = (account, owner) }
}

extension DependencyContainer {
    var ownRoadUser: Provider<OwnRoadUser> { singleton { OwnRoadUser("app") } }
    var ownRoadClock: Provider<OwnRoadClock> { singleton { OwnRoadClock("app") } }
    var ownRoadHandler: Provider<OwnRoadHandler> {
        scoped { OwnRoadHandler(user: self.ownRoadUser(), clock: self.ownRoadClock()) }
    }
    var ownRoadLedgers: ProviderFamily<Int, OwnRoadLedger> {
        singleton { account in OwnRoadLedger(account: account, owner: "app") }
    }
}

@Suite struct ScopeOwnOverrideRoadTests {
    /// A request's own user is built in the request, from the request's override: each
    /// request has its own, kept for the request, and the app container never builds one.
    @Test func eachRequestBuildsItsOwnUserAndTheAppBuildsNone() {
        let app = DependencyContainer()
        let alice = DependencyContainer(scopeOf: app)
        let bob = DependencyContainer(scopeOf: app)
        alice.override(\.ownRoadUser) { OwnRoadUser("alice") }
        bob.override(\.ownRoadUser) { OwnRoadUser("bob") }

        let aliceUser = alice.ownRoadUser()
        #expect(aliceUser.name == "alice")
        #expect(bob.ownRoadUser().name == "bob")
        #expect(alice.ownRoadUser() === aliceUser, "the request keeps the singleton it built from its override")
        #expect(alice.ownRoadHandler().user === aliceUser, "its handler is built from the same user")
        #expect(app.instanceIfBuilt(\.ownRoadUser) == nil, "the app container built no user")
    }

    /// The handler's construction notes that it used the request's user, though the user
    /// took no handover: replacing the request's user drops the handler, and the next
    /// handler is built from the new user.
    @Test func replacingTheRequestsUserDropsTheHandlerBuiltFromIt() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ownRoadUser) { OwnRoadUser("first") }
        let first = request.ownRoadHandler()
        #expect(first.user.name == "first")
        #expect(first.clock === app.ownRoadClock(), "the handler shares the app's clock")

        request.override(\.ownRoadUser) { OwnRoadUser("second") }
        let second = request.ownRoadHandler()
        #expect(second !== first, "the handler built from the first user was dropped")
        #expect(second.user.name == "second")
        #expect(second.clock === first.clock, "the app's clock stayed")
    }

    /// A request in a session takes the session's user, built in the request from the
    /// session's override; a change of that override drops the request's user and handler.
    @Test func aRequestInASessionBuildsFromTheSessionsOverrideAndFollowsItsChanges() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        session.override(\.ownRoadUser) { OwnRoadUser("session") }

        let handler = request.ownRoadHandler()
        #expect(handler.user.name == "session")
        #expect(request.ownRoadUser() === handler.user)
        #expect(app.instanceIfBuilt(\.ownRoadUser) == nil)

        session.override(\.ownRoadUser) { OwnRoadUser("switched") }
        #expect(request.ownRoadUser().name == "switched", "the request dropped the user built from the old override")
        let next = request.ownRoadHandler()
        #expect(next !== handler && next.user.name == "switched")
    }

    /// A scope that decorates an app-wide singleton builds its own decorated instance,
    /// from the registration, and leaves the app's instance as it was.
    @Test func aDecoratingScopeBuildsItsOwnInstanceAndTheAppKeepsItsOwn() {
        let app = DependencyContainer()
        let appClock = app.ownRoadClock()
        let request = DependencyContainer(scopeOf: app)
        request.decorate(\.ownRoadClock) { OwnRoadClock("decorated", wrapping: $0) }

        let clock = request.ownRoadClock()
        #expect(clock.name == "decorated")
        #expect(clock.wrapped !== appClock, "the scope decorated an instance it built, not the app's")
        #expect(clock.wrapped?.name == "app")
        #expect(request.ownRoadClock() === clock, "the scope keeps its decorated instance")
        #expect(app.ownRoadClock() === appClock, "the app's instance is untouched")
        #expect(request.ownRoadHandler().clock === clock)
    }

    /// An override of one account, and one of the whole family, in the scope: each account
    /// it covers is built in the scope; an account only the app has is the app's.
    @Test func aScopesFamilyAndArgumentOverridesBuildInTheScope() {
        let app = DependencyContainer()
        let appSeven = app.ownRoadLedgers(7)
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ownRoadLedgers[3]) { OwnRoadLedger(account: 3, owner: "request") }
        #expect(request.ownRoadLedgers(3).owner == "request")
        #expect(request.ownRoadLedgers(7) === appSeven, "an account the scope does not override is shared")

        let session = DependencyContainer(scopeOf: app)
        let inSession = DependencyContainer(scopeOf: session)
        session.override(\.ownRoadLedgers) { account in OwnRoadLedger(account: account, owner: "session") }
        let seven = inSession.ownRoadLedgers(7)
        #expect(seven.owner == "session" && seven.account == 7, "the family override of the session covers every account")
        #expect(inSession.ownRoadLedgers(7) === seven)
        #expect(app.ownRoadLedgers(7) === appSeven)
    }

    /// Once the scope's override goes, the scope shares the app's instance again, through
    /// the look, and keeps nothing of its own.
    @Test func removingTheOverrideSharesTheAppsInstanceAgain() {
        let app = DependencyContainer()
        let appUser = app.ownRoadUser()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ownRoadUser) { OwnRoadUser("request") }
        #expect(request.ownRoadUser().name == "request")

        request.reset(\.ownRoadUser)
        #expect(request.ownRoadUser() === appUser)
        #expect(request.ownRoadHandler().user === appUser)
    }

    /// Threads resolve the user through a request, directly and through its handler, while
    /// others install and remove the request's override, released together. A resolution
    /// that meets the removal between its look and its claim builds from the registration
    /// in the request and hands that user out once; none is kept: when the threads end,
    /// the request answers what its last change says, and the app's user never changed.
    @Test func overridesComingAndGoingWhileThreadsResolve() async {
        let app = DependencyContainer()
        let appUser = app.ownRoadUser()
        for round in 0..<20 {
            let request = DependencyContainer(scopeOf: app)
            let finished = await concurrentlyOffThePool(threads: 6) { thread in
                for step in 0..<200 {
                    if thread < 2 {
                        if (step + thread).isMultiple(of: 2) {
                            request.override(\.ownRoadUser) { OwnRoadUser("request") }
                        } else {
                            request.reset(\.ownRoadUser)
                        }
                    } else if thread.isMultiple(of: 2) {
                        _ = request.ownRoadUser()
                    } else {
                        _ = request.ownRoadHandler()
                    }
                }
            }
            #expect(finished)

            request.reset(\.ownRoadUser)
            #expect(request.ownRoadUser() === appUser, "round \(round): the request kept a user of its own")
            #expect(request.ownRoadHandler().user === appUser, "round \(round): a handler built from a removed user stayed")
            request.override(\.ownRoadUser) { OwnRoadUser("request") }
            let own = request.ownRoadUser()
            #expect(own !== appUser && own.name == "request", "round \(round)")
            #expect(request.ownRoadHandler().user === own, "round \(round): the handler of the app's user stayed")
            #expect(app.ownRoadUser() === appUser)
            #expect(app.instanceIfBuilt(\.ownRoadHandler) == nil, "round \(round): the app built a handler")
        }
    }
}
