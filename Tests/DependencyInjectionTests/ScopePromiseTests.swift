import DependencyInjection
import Foundation
import Testing

// Promises of the Scopes and Overrides and Mocks articles, in settings their own examples
// do not reach: scopes of scopes, graph registrations under scopes, families, decorations
// with teardowns, deinits.

/// A resource that counts its teardowns and says how it was made.
final class ScopePromiseResource: @unchecked Sendable {
    // @unchecked: `closes` is only touched while holding `lock`.
    private let lock = NSLock()
    private var closes = 0
    let tag: String
    init(_ tag: String) { self.tag = tag }
    func close() { lock.withLock { closes += 1 } }
    var closeCount: Int { lock.withLock { closes } }
}

/// What a decoration hands out around a resource.
final class ScopePromiseWrapped: @unchecked Sendable {
    let inner: ScopePromiseResource
    init(_ inner: ScopePromiseResource) { self.inner = inner }
}

/// A family instance whose deinit resolves another argument of its own family.
final class ScopePromiseReentrantSession: @unchecked Sendable {
    let id: Int
    private let container: DependencyContainer
    private let resolvedInDeinit: Collected<Int>
    init(id: Int, container: DependencyContainer, resolvedInDeinit: Collected<Int>) {
        (self.id, self.container, self.resolvedInDeinit) = (id, container, resolvedInDeinit)
    }
    deinit {
        if id == 1 { resolvedInDeinit.append(container.scopePromiseReentrantSession[2]().id) }
    }
}

extension DependencyContainer {
    var scopePromiseLog: Provider<ScopePromiseResource> { scoped { ScopePromiseResource("registration") }.onShutdown { $0.close() } }
    var scopePromiseDecoratedLog: Provider<ScopePromiseWrapped> {
        scoped { ScopePromiseWrapped(ScopePromiseResource("registration")) }.onShutdown { $0.inner.close() }
    }
    var scopePromiseSession: ProviderFamily<Int, ScopePromiseResource> { singleton { (id: Int) in ScopePromiseResource("live \(id)") } }
    var scopePromiseReentrantSession: ProviderFamily<Int, ScopePromiseReentrantSession> {
        singleton { (id: Int) in
            ScopePromiseReentrantSession(id: id, container: self, resolvedInDeinit: self.getValue(forKey: "scopePromise.deinit")!)
        }
    }
}

@Suite struct ScopePromiseTests {
    // MARK: - Scopes: an override keeps the scope

    /// "The scope is fixed by the registration; an override keeps it." An app-level override of
    /// a `scoped` registration is still built once per scope, and torn down by that scope.
    @Test func anAppOverrideOfAScopedRegistrationIsBuiltOncePerScopeAndTornDownByIt() {
        let app = DependencyContainer()
        app.override(\.scopePromiseLog) { ScopePromiseResource("override") }
        let first = DependencyContainer(scopeOf: app)
        let second = DependencyContainer(scopeOf: app)
        let a = first.scopePromiseLog()
        let b = second.scopePromiseLog()
        #expect(a.tag == "override" && b.tag == "override")
        #expect(a === first.scopePromiseLog())
        #expect(a !== b, "two scopes share one instance of an overridden scoped registration")
        first.shutdown()
        #expect(a.closeCount == 1)
        #expect(b.closeCount == 0, "a scope's shutdown tore down another scope's instance")
        #expect(second.scopePromiseLog() === b)
    }

    /// A request, a scope of its session, builds its own instance from the session's override.
    @Test func aRequestBuildsItsOwnScopedInstanceFromItsSessionsOverride() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.scopePromiseLog) { ScopePromiseResource("session override") }
        let request = DependencyContainer(scopeOf: session)
        let inSession = session.scopePromiseLog()
        let inRequest = request.scopePromiseLog()
        #expect(inRequest.tag == "session override")
        #expect(inRequest !== inSession)
        request.shutdown()
        #expect(inRequest.closeCount == 1 && inSession.closeCount == 0)
        session.shutdown()
        #expect(inSession.closeCount == 1 && inRequest.closeCount == 1)
    }

    // MARK: - Decorations: kept by shutdown, teardown gets the wrapper

    /// "Shutdown keeps them, and a teardown receives the decorated instance", and "A child
    /// applies its parent's decorations": a request's scoped instance is decorated by its
    /// session's decoration, and the request's teardown receives the wrapper.
    @Test func aRequestsTeardownReceivesTheInstanceItsSessionDecorated() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        session.decorate(\.scopePromiseDecoratedLog) { ScopePromiseWrapped(ScopePromiseResource("wrapper of \($0.inner.tag)")) }
        let request = DependencyContainer(scopeOf: session)
        let log = request.scopePromiseDecoratedLog()
        #expect(log.inner.tag == "wrapper of registration")
        request.shutdown()
        #expect(log.inner.closeCount == 1, "the teardown did not receive the decorated instance")
        let again = request.scopePromiseDecoratedLog()
        #expect(again !== log)
        #expect(again.inner.tag == "wrapper of registration", "shutdown dropped the decoration")
    }

    // MARK: - Graph registrations under scopes

    /// "Per container: ... an app-wide singleton that a scope asks for is built by the app
    /// container, with the app container's instance." In a request of a session.
    @Test func anAppSingletonAskedForInARequestIsBuiltWithTheAppsGraphInstance() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let (work, store) = request.workAndKeptStore()
        #expect(store === app.keptOrderStore())
        #expect(store.work !== work, "the app's singleton was built with the request's graph instance")
        let checkout = request.checkout()
        #expect(checkout.orders.work === checkout.payments.work)
        #expect(checkout.work === checkout.orders.work)
    }

    /// A singleton built from a graph registration that the session overrides is the request's
    /// own, and is built in the request's resolution, with the request's graph instance.
    @Test func aSingletonBuiltFromAGraphOverrideInASessionIsTheScopesOwn() {
        let app = DependencyContainer()
        let appStore = app.keptOrderStore()
        let session = DependencyContainer(scopeOf: app)
        session.override(\.unitOfWork) { UnitOfWork() }
        let request = DependencyContainer(scopeOf: session)
        let (work, store) = request.workAndKeptStore()
        #expect(store !== appStore, "the request shares the app's singleton built from a graph it overrides")
        #expect(store.work === work, "one outermost resolution in one container saw two graph instances")
        #expect(app.keptOrderStore() === appStore)
    }

    // MARK: - Provider families

    /// "one argument at a time through their subscript ... which wins over the family's
    /// override; `container.reset(\.session)` removes both" — also when the argument's override
    /// came first, and in a scope that reads them from its app container.
    @Test func anArgumentsOverrideWinsOverAFamilyOverrideInstalledAfterItAndResetRemovesBoth() {
        let app = DependencyContainer()
        app.override(\.scopePromiseSession[1]) { ScopePromiseResource("one") }
        app.override(\.scopePromiseSession) { id in ScopePromiseResource("family \(id)") }
        let scope = DependencyContainer(scopeOf: app)
        #expect(app.scopePromiseSession[1]().tag == "one")
        #expect(app.scopePromiseSession[2]().tag == "family 2")
        #expect(scope.scopePromiseSession[1]().tag == "one")
        #expect(scope.scopePromiseSession[2]().tag == "family 2")
        app.reset(\.scopePromiseSession)
        #expect(app.scopePromiseSession[1]().tag == "live 1")
        #expect(app.scopePromiseSession[2]().tag == "live 2")
        #expect(scope.scopePromiseSession[1]().tag == "live 1")
    }

    // MARK: - Deinits

    /// "Nothing is released under a lock either, so a `deinit` may use any container": a
    /// family instance that a family override drops resolves its own family in its deinit.
    @Test func aFamilyInstanceDroppedByAFamilyOverrideMayResolveItsFamilyInItsDeinit() async {
        let container = DependencyContainer()
        let resolved = Collected<Int>()
        container.setValue(resolved, forKey: "scopePromise.deinit")
        let finished = await finishesWithoutHangingOffThePool {
            _ = container.scopePromiseReentrantSession[1]()
            container.override(\.scopePromiseReentrantSession) { id in
                ScopePromiseReentrantSession(id: id + 10, container: container, resolvedInDeinit: resolved)
            }
            _ = container.scopePromiseReentrantSession[1]()
        }
        #expect(finished)
        #expect(resolved.values == [12])
    }

    // MARK: - Tracing: a scope takes its parent's tracer

    /// "A scope takes its parent's tracer when it is made": a request in a session with a
    /// tracer of its own takes the session's, not the app's; setting the app's tracer later
    /// sets it in both.
    @Test func aRequestInASessionTakesTheSessionsTracerAndTheAppsLaterOne() {
        let app = DependencyContainer()
        app.tracer = ResolutionTracer { _ in }
        let session = DependencyContainer(scopeOf: app)
        let sessionTracer = ResolutionTracer { _ in }
        session.tracer = sessionTracer
        let request = DependencyContainer(scopeOf: session)
        #expect(request.tracer === sessionTracer)
        let later = ResolutionTracer { _ in }
        app.tracer = later
        #expect(session.tracer === later)
        #expect(request.tracer === later)
    }
}
