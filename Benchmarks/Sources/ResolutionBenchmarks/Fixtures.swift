// The object graph every contestant builds: the same classes, so that each one does the
// same work and only the way it finds and builds them differs.

/// A service with no dependencies, built anew for scenario A.
final class Leaf: Sendable {
    init() {}
}

/// The service behind the singleton of scenarios B, D, E and F.
protocol Client: AnyObject, Sendable {
    var isStub: Bool { get }
}

/// The production implementation of ``Client``.
final class LiveClient: Client {
    var isStub: Bool { false }
    init() {}
}

/// The test double that scenario F installs.
final class StubClient: Client {
    var isStub: Bool { true }
    init() {}
}

/// Builds the test double: a function rather than a closure, so that the callgrind loops,
/// which may contain no closure, can install it (`override(\.client, makeStubClient)`).
func makeStubClient() -> any Client { StubClient() }

/// One signed-in user's session, built from the app-wide client: a provider family's
/// member, of which a server keeps one per user.
final class UserSession: Sendable {
    let id: Int
    let client: any Client
    init(id: Int, client: any Client) { (self.id, self.client) = (id, client) }
}

/// Builds a test's session, for the `override-member` loop (a function, not a closure).
func makeStubSession() -> UserSession { UserSession(id: -1, client: StubClient()) }

// The five-level chain of scenario C: E needs D needs C needs B needs A.

final class ChainA: Sendable {
    init() {}
}

final class ChainB: Sendable {
    let a: ChainA
    init(a: ChainA) { self.a = a }
}

final class ChainC: Sendable {
    let b: ChainB
    init(b: ChainB) { self.b = b }
}

final class ChainD: Sendable {
    let c: ChainC
    init(c: ChainC) { self.c = c }
}

final class ChainE: Sendable {
    let d: ChainD
    init(d: ChainD) { self.d = d }
}

// The 10- and 50-level chains are generated (Generated/ChainLevels.swift): Chain0 ...
// Chain49, each holding the level below. The checks walk them through this protocol.

/// A level of the generated chain, which holds the level below it (none for `Chain0`).
protocol ChainLevel: AnyObject {
    var lower: (any ChainLevel)? { get }
}

/// The objects of a chain, from `top` down, for the checks: how deep it is, and whether
/// two resolutions share a level.
func chainLevels(from top: any ChainLevel) -> [ObjectIdentifier] {
    var levels = [ObjectIdentifier(top)]
    var level = top.lower
    while let current = level {
        levels.append(ObjectIdentifier(current))
        level = current.lower
    }
    return levels
}

// The per-request object of scenarios G and H.

/// What a server builds for each request: the request's user and the app-wide client.
final class RequestHandler: Sendable {
    let user: String
    let client: any Client
    init(user: String, client: any Client) { (self.user, self.client) = (user, client) }

    /// What a request reads from its handler: both of its dependencies.
    func respond() -> Bool { !user.isEmpty && !client.isStub }
}

/// What every contestant does with a request's handler: hand it to the sink, so that it
/// is really built, and return its response.
///
/// The response is a `Bool`, not the handler: a server returns a response. (It matters to
/// swift-dependencies: `withDependencies` records an operation's result when it is an
/// object, and starts a `Task` to prune that record, on every call.)
@inline(__always)
func respond(with handler: RequestHandler) -> Bool {
    blackHole(handler)
    return handler.respond()
}

/// The request value every contestant installs: a short string, stored inline, so that
/// the user itself costs no allocation. Read once, before a loop, and passed in.
let signedInUser = "ada"
