import DependencyInjection
import Foundation
import Testing

final class FASession: Sendable {
    let id: String
    let source: String
    let inner: FASession?
    init(_ id: String, _ source: String = "live", inner: FASession? = nil) {
        self.id = id
        self.source = source
        self.inner = inner
    }
}

final class FAUser: Sendable {
    let session: FASession
    init(session: FASession) { self.session = session }
}

/// Runs `onDeinit` when released.
final class FAProbe: Sendable {
    let id: String
    let onDeinit: @Sendable () -> Void
    init(_ id: String, onDeinit: @escaping @Sendable () -> Void) {
        self.id = id
        self.onDeinit = onDeinit
    }
    deinit { onDeinit() }
}

extension DependencyContainer {
    var faSession: ProviderFamily<String, FASession> {
        singleton { (id: String) in FASession(id) }
    }

    /// An app-wide singleton built from the family's argument "a".
    var faUser: Provider<FAUser> {
        singleton { FAUser(session: self.faSession("a")) }
    }

    /// Each instance resolves argument "z" of its own family when it goes.
    var faProbe: ProviderFamily<String, FAProbe> {
        singleton { (id: String) in
            FAProbe(id) { [weak self] in
                if id != "z" { _ = self?.faProbe("z") }
            }
        }
    }
}

@Suite struct FamilyAttackTests {
    @Test func aScopesFamilyOverrideIsTheScopesOwn() {
        let app = DependencyContainer()
        let before = app.faSession("a")
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.faSession) { id in FASession(id, "scope") }
        #expect(scope.faSession("a").source == "scope")
        #expect(scope.faSession("b").source == "scope")
        #expect(scope.faSession("a") === scope.faSession("a"))
        #expect(app.faSession("a") === before)
        #expect(app.faSession("b").source == "live")
    }

    @Test func resetOfTheFamilyRemovesAPerArgumentDecoration() {
        let container = DependencyContainer()
        container.decorate(\.faSession["a"]) { session in FASession(session.id, "decorated", inner: session) }
        #expect(container.faSession("a").source == "decorated")
        container.reset(\.faSession)
        // reset(\.session) is documented as "every argument is built from the registration again",
        // and a reset removes decorations with the overrides.
        #expect(container.faSession("a").source == "live")
    }

    @Test func aScopesFamilyOverrideReachesAnAppSingletonBuiltFromIt() {
        let app = DependencyContainer()
        let appUser = app.faUser()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.faSession) { id in FASession(id, "scope") }
        #expect(scope.faUser().session.source == "scope")
        #expect(app.faUser() === appUser)
        #expect(appUser.session.source == "live")

        // Override installed before the app ever built the user.
        let app2 = DependencyContainer()
        let scope2 = DependencyContainer(scopeOf: app2)
        scope2.override(\.faSession["a"]) { FASession("a", "scope") }
        #expect(scope2.faUser().session.source == "scope")
        #expect(app2.faUser().session.source == "live")
    }

    /// Uses are recorded per registration, all arguments together, so that resolving many
    /// arguments cannot grow the record (as the Scopes article says): a scope that
    /// overrides argument "b" builds its own copy of a singleton built from argument "a",
    /// with the right values.
    @Test func aScopesOverrideOfAnyArgumentGivesItsOwnCopyOfASingletonBuiltFromTheFamily() {
        let app = DependencyContainer()
        let appUser = app.faUser()  // built from argument "a" only
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.faSession["b"]) { FASession("b", "scope") }
        #expect(scope.faSession("b").source == "scope")
        #expect(scope.faUser() !== appUser)
        #expect(scope.faUser().session.source == "live")
    }

    /// The same record: an override of argument "b" drops a singleton built from argument
    /// "a", which is then built again, the same way.
    @Test func anOverrideOfAnyArgumentRebuildsASingletonBuiltFromTheFamily() {
        let app = DependencyContainer()
        let appUser = app.faUser()  // built from argument "a" only
        app.override(\.faSession["b"]) { FASession("b", "stub") }
        #expect(app.faUser() !== appUser)
        #expect(app.faUser().session.source == "live")
    }

    @Test func aScopesPerArgumentDecorationWrapsTheAppsFamilyOverride() {
        let app = DependencyContainer()
        app.override(\.faSession) { id in FASession(id, "stub") }
        let appA = app.faSession("a")
        let scope = DependencyContainer(scopeOf: app)
        scope.decorate(\.faSession["a"]) { session in FASession(session.id, "decorated", inner: session) }
        #expect(scope.faSession("a").source == "decorated")
        #expect(scope.faSession("a").inner?.source == "stub")
        #expect(scope.faSession("b") === app.faSession("b"))
        #expect(app.faSession("a") === appA)
        scope.reset(\.faSession)
        #expect(scope.faSession("a") === appA)
    }

    @Test func aFamilyInstanceResolvingItsFamilyWhileGoingDoesNotDeadlockAReset() async {
        let container = DependencyContainer()
        container.override(\.faProbe["a"]) { [weak container] in
            FAProbe("a") { [weak container] in _ = container?.faProbe("z") }
        }
        _ = container.faProbe("a")
        _ = container.faProbe("b")
        let done = await finishesWithoutHangingOffThePool { container.reset(\.faProbe) }
        #expect(done)
        // The going instances resolved "z" after the reset let go of the lock.
        #expect(container.instanceIfBuilt(\.faProbe["z"])?.id == "z")
    }
}
