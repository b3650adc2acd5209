import DependencyInjection

// This package, used the way its README shows.

extension DependencyContainer {
    var leaf: Provider<Leaf> { factory { Leaf() } }
    var client: Provider<any Client> { singleton { LiveClient() } }
    /// Each user's session, built from the client.
    var session: ProviderFamily<Int, UserSession> { singleton { id in UserSession(id: id, client: self.client()) } }

    var chainA: Provider<ChainA> { factory { ChainA() } }
    var chainB: Provider<ChainB> { factory { ChainB(a: self.chainA()) } }
    var chainC: Provider<ChainC> { factory { ChainC(b: self.chainB()) } }
    var chainD: Provider<ChainD> { factory { ChainD(c: self.chainC()) } }
    var chainE: Provider<ChainE> { factory { ChainE(d: self.chainD()) } }

    // Scenarios G and H, as the Scopes article's request-scoped server writes them.
    var requestUser: Provider<String> { unimplemented() }
    var requestHandler: Provider<RequestHandler> {
        scoped { RequestHandler(user: self.requestUser(), client: self.client()) }
    }

    // What an app container has built by the time it serves requests: a singleton built
    // from others, so that its record of uses is not empty (`request-scope-built-app`).
    var appService: Provider<AppService> {
        singleton { AppService(client: self.client(), leaf: self.leaf()) }
    }
}

/// An app-wide service built from the client and a factory's object.
final class AppService: Sendable {
    let client: any Client
    let leaf: Leaf
    init(client: any Client, leaf: Leaf) { (self.client, self.leaf) = (client, leaf) }
}

/// Serves one request in `request`, a container made for it: installs the request's user,
/// resolves the request's handler and hands it to `respond`. The caller drops `request`.
@inline(__always)
func serveRequest<Response>(
    in request: DependencyContainer, user: String, _ respond: (RequestHandler) -> Response
) -> Response {
    request.override(\.requestUser) { user }
    return respond(request.requestHandler())
}

/// Scenario G: one request in a scope of `app`, which shares the app's built client.
@inline(__always)
func serveRequestInScope(of app: DependencyContainer, user: String) -> Bool {
    serveRequest(in: DependencyContainer(scopeOf: app), user: user, respond(with:))
}

/// Scenario H: the same request in a plain child of `app`, an isolated world that builds
/// its own client.
@inline(__always)
func serveRequestInChild(of app: DependencyContainer, user: String) -> Bool {
    serveRequest(in: DependencyContainer(parent: app), user: user, respond(with:))
}

/// Serves one request in a container that `makeRequest` makes of `app`, and checks what
/// scenarios G and H claim: the handler has the request's user, shares the app's client
/// or not, is one per request container, is never built in `app`, and the request
/// container, its handler and what it built are all freed once the request is over.
func checkRequest(
    of app: DependencyContainer, sharesClient: Bool,
    _ makeRequest: (DependencyContainer) -> DependencyContainer
) {
    weak var weakRequest: DependencyContainer?
    weak var weakHandler: RequestHandler?
    weak var weakClient: (any Client)?
    do {
        let request = makeRequest(app)
        weakRequest = request
        let responded = serveRequest(in: request, user: signedInUser) { handler in
            precondition(handler.user == signedInUser && request.requestHandler() === handler)
            precondition((handler.client === app.client()) == sharesClient)
            weakHandler = handler
            weakClient = handler.client
            return respond(with: handler)
        }
        precondition(responded && request.isScope == sharesClient)
    }
    precondition(weakRequest == nil, "the request container outlived its request")
    precondition(weakHandler == nil, "the request's handler outlived its request")
    precondition(sharesClient ? weakClient === app.client() : weakClient == nil)
    precondition(app.instanceIfBuilt(\.requestHandler) == nil)
}

/// An object with one injected property, resolved from `DependencyContainer.main` on
/// first access.
final class InjectedHolder {
    @Dependency(\.client) var client
}

func dependencyInjectionContestant() -> Contestant {
    let container = DependencyContainer()
    let overrideContainer = DependencyContainer()
    // Scenario D's holders resolve from `main`, which is `.default`.
    let main = DependencyContainer.main

    // Build the singletons before anything is timed: B, D and E read a cached instance.
    _ = container.client()
    _ = main.client()
    _ = overrideContainer.client()

    return Contestant(
        name: "DependencyInjection",
        isPeer: false,
        check: {
            precondition(container.leaf() !== container.leaf())
            precondition(container.client() === container.client())
            precondition(main.client() === InjectedHolder().client)
            let chain = container.chainE()
            precondition(chain.d.c.b.a !== container.chainE().d.c.b.a)
            let probe = DependencyContainer()
            probe.override(\.client) { StubClient() }
            precondition(probe.client().isStub)
            checkRequest(of: container, sharesClient: true) { DependencyContainer(scopeOf: $0) }
            checkRequest(of: container, sharesClient: false) { DependencyContainer(parent: $0) }
        },
        measures: [
            .leaf: { count in timeLoop(count) { container.leaf() } },
            .singleton: { count in timeLoop(count) { container.client() } },
            .chain: { count in timeLoop(count) { container.chainE() } },
            .property: { count in
                timeLoop(count) {
                    let holder = InjectedHolder()
                    blackHole(holder)
                    return holder.client
                }
            },
            .concurrentSingleton: { count in
                timeConcurrently(count) { perThread in
                    _ = timeLoop(perThread) { container.client() }
                }
            },
            .override: { count in
                timeLoop(count) {
                    overrideContainer.override(\.client) { StubClient() }
                    return overrideContainer.client()
                }
            },
            .requestScope: { count in
                let user = signedInUser
                return timeLoop(count) { serveRequestInScope(of: container, user: user) }
            },
            .requestChild: { count in
                let user = signedInUser
                return timeLoop(count) { serveRequestInChild(of: container, user: user) }
            },
        ]
    )
}

// A main-actor app's singleton: a plain protocol and a class that is not `Sendable`.
protocol ScreenStore: AnyObject { var items: [String] { get } }

final class LiveScreenStore: ScreenStore {
    var items: [String] = []
    init() {}
}

extension DependencyContainer {
    @MainActor var screenStore: Provider<any ScreenStore> { singleton { @MainActor in LiveScreenStore() } }
}

/// An app's service with an injected property, built by the container: what makes the
/// container of a real app (`main-singleton-app`).
final class PropertyHoldingService: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.client) var client
    init() {}
}

extension DependencyContainer {
    var propertyHoldingService: Provider<PropertyHoldingService> { singleton { PropertyHoldingService() } }
}
