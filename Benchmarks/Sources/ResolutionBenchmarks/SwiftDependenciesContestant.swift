@_spi(Internals) import Dependencies

// swift-dependencies 1.17.1, used the way its documentation shows: a `DependencyKey` per
// dependency, a computed property on `DependencyValues`, `@Dependency` to read it and
// `withDependencies` to override it.
//
// Its dependencies are values, and a live value is built once and cached, so "a new
// object each time" is a factory closure as the dependency (the library's own idiom for
// clients), read through `@Dependency` and called.

private enum LeafFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> Leaf = { Leaf() }
}

private enum ClientKey: DependencyKey {
    static let liveValue: any Client = LiveClient()
}

private enum ChainAFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> ChainA = { ChainA() }
}

private enum ChainBFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> ChainB = {
        @Dependency(\.makeChainA) var makeChainA
        return ChainB(a: makeChainA())
    }
}

private enum ChainCFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> ChainC = {
        @Dependency(\.makeChainB) var makeChainB
        return ChainC(b: makeChainB())
    }
}

private enum ChainDFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> ChainD = {
        @Dependency(\.makeChainC) var makeChainC
        return ChainD(c: makeChainC())
    }
}

private enum ChainEFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> ChainE = {
        @Dependency(\.makeChainD) var makeChainD
        return ChainE(d: makeChainD())
    }
}

// Scenario G: the request's user has no live value (the equivalent of `unimplemented()`:
// reading it outside an override reports an issue), and the handler is a factory whose
// closure reads the user and the client through `@Dependency`, as the chain's levels do.

private enum RequestUserKey: TestDependencyKey {
    static let testValue = ""
}

private enum RequestHandlerFactoryKey: DependencyKey {
    static let liveValue: @Sendable () -> RequestHandler = {
        @Dependency(\.requestUser) var user
        @Dependency(\.benchClient) var client
        return RequestHandler(user: user, client: client)
    }
}

extension DependencyValues {
    var requestUser: String {
        get { self[RequestUserKey.self] }
        set { self[RequestUserKey.self] = newValue }
    }

    var makeRequestHandler: @Sendable () -> RequestHandler {
        get { self[RequestHandlerFactoryKey.self] }
        set { self[RequestHandlerFactoryKey.self] = newValue }
    }

    var makeLeaf: @Sendable () -> Leaf {
        get { self[LeafFactoryKey.self] }
        set { self[LeafFactoryKey.self] = newValue }
    }

    var benchClient: any Client {
        get { self[ClientKey.self] }
        set { self[ClientKey.self] = newValue }
    }

    var makeChainA: @Sendable () -> ChainA {
        get { self[ChainAFactoryKey.self] }
        set { self[ChainAFactoryKey.self] = newValue }
    }

    var makeChainB: @Sendable () -> ChainB {
        get { self[ChainBFactoryKey.self] }
        set { self[ChainBFactoryKey.self] = newValue }
    }

    var makeChainC: @Sendable () -> ChainC {
        get { self[ChainCFactoryKey.self] }
        set { self[ChainCFactoryKey.self] = newValue }
    }

    var makeChainD: @Sendable () -> ChainD {
        get { self[ChainDFactoryKey.self] }
        set { self[ChainDFactoryKey.self] = newValue }
    }

    var makeChainE: @Sendable () -> ChainE {
        get { self[ChainEFactoryKey.self] }
        set { self[ChainEFactoryKey.self] = newValue }
    }
}

/// An object with one injected property, read through the package's own wrapper.
final class DependenciesHolder {
    @Dependency(\.benchClient) var client
}

@inline(__always)
func resolveLeaf() -> Leaf {
    @Dependency(\.makeLeaf) var makeLeaf
    return makeLeaf()
}

@inline(__always)
func resolveClient() -> any Client {
    @Dependency(\.benchClient) var client
    return client
}

@inline(__always)
func resolveChain() -> ChainE {
    @Dependency(\.makeChainE) var makeChainE
    return makeChainE()
}

/// Scenario F: installs the stub for one operation, which reads it.
@inline(__always)
func overrideClientWithDependencies() -> any Client {
    withDependencies {
        $0.benchClient = StubClient()
    } operation: {
        resolveClient()
    }
}

/// Empties swift-dependencies' cache of live values, as it does itself between tests, so
/// that the next read of each dependency builds its live value again.
@inline(__always)
func resetSwiftDependenciesCache() {
    DependencyValues._current.cachedValues.resetCache()
}

/// Scenario G: one request whose user is installed with `withDependencies` for the
/// duration of the operation, which resolves the handler and hands it to `respond`.
@inline(__always)
func serveRequestWithDependencies<Response>(user: String, _ respond: (RequestHandler) -> Response) -> Response {
    withDependencies {
        $0.requestUser = user
    } operation: {
        @Dependency(\.makeRequestHandler) var makeRequestHandler
        return respond(makeRequestHandler())
    }
}

/// Operation 10: runs the loop that reads the app's client inside one request, the
/// request's user installed.
func readClientInRequestWithDependencies(count: Int) {
    warmUpSwiftDependencies()
    withDependencies {
        $0.requestUser = signedInUser
    } operation: {
        @Dependency(\.requestUser) var user
        precondition(user == signedInUser && resolveClient() === resolveClient() && !resolveClient().isStub)
        hotPathRequestSingletonDependenciesLoop(signedInUser, count)
    }
}

/// Builds the cached live values before anything is timed or counted.
func warmUpSwiftDependencies() {
    _ = resolveClient()
    _ = resolveLeaf()
    _ = resolveChain()
}

/// Checks what scenario G claims: the handler has the request's user and the app's client,
/// is new for each request, and is freed once the request is over.
func checkRequestWithDependencies() {
    weak var weakHandler: RequestHandler?
    let responded = serveRequestWithDependencies(user: signedInUser) { handler in
        precondition(handler.user == signedInUser && handler.client === resolveClient())
        weakHandler = handler
        return respond(with: handler)
    }
    precondition(responded && weakHandler == nil, "the request's handler outlived its request")
    var handlers: [RequestHandler] = []
    for _ in 0..<2 { serveRequestWithDependencies(user: signedInUser) { handlers.append($0) } }
    precondition(handlers[0] !== handlers[1])
}

func swiftDependenciesContestant() -> Contestant {
    warmUpSwiftDependencies()

    return Contestant(
        name: "swift-dependencies",
        isPeer: true,
        check: {
            precondition(resolveLeaf() !== resolveLeaf())
            precondition(resolveClient() === resolveClient())
            precondition(DependenciesHolder().client === resolveClient())
            precondition(resolveChain().d.c.b.a !== resolveChain().d.c.b.a)
            let stub = withDependencies { $0.benchClient = StubClient() } operation: { resolveClient() }
            precondition(stub.isStub && !resolveClient().isStub)
            checkRequestWithDependencies()
        },
        measures: [
            .leaf: { count in timeLoop(count) { resolveLeaf() } },
            .singleton: { count in timeLoop(count) { resolveClient() } },
            .chain: { count in timeLoop(count) { resolveChain() } },
            .property: { count in
                timeLoop(count) {
                    let holder = DependenciesHolder()
                    blackHole(holder)
                    return holder.client
                }
            },
            .concurrentSingleton: { count in
                timeConcurrently(count) { perThread in
                    _ = timeLoop(perThread) { resolveClient() }
                }
            },
            .override: { count in timeLoop(count) { overrideClientWithDependencies() } },
            .requestScope: { count in
                let user = signedInUser
                return timeLoop(count) { serveRequestWithDependencies(user: user, respond(with:)) }
            },
        ]
    )
}
