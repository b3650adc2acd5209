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
