import DependencyInjection

// The loops whose instructions `instructions.sh` counts under callgrind: the two hot paths
// with instruction targets, this package's side of scenarios A, C, D and F for
// profiling, and every column of the per-request scenarios G and H. Each loop is a
// function of its own, never inlined, so that `--toggle-collect` can name it; the setup
// (container, first build, first access) happens before it is entered.
//
// No closure may be written inside a new loop function: its symbol contains the loop's
// name, so callgrind would toggle collection off while it runs. The request loops call
// the contestants' `serveRequest…` functions, whose closures are named after those, and
// pass them `respond(with:)`, a function. Nor may two loops have the same body but for
// the function they call: LLVM merges such loops into one body named after one of them,
// and callgrind then collects nothing in the other (so the two container loops take
// their arguments in different orders, and `instructions.sh` stops on an empty count).

enum HotPath: String, CaseIterable {
    /// `container.client()` for a singleton that is already built.
    case singleton
    /// Reading a `@Dependency` property after its first access.
    case wrapper
    /// The same loop consuming an object it already has: the cost of the loop and sink,
    /// to subtract from the two above.
    case baseline
    /// Scenario A: `container.leaf()`.
    case leaf
    /// Scenario C: `container.chainE()`.
    case chain
    /// Scenario D: a new `InjectedHolder`, its property read once.
    case property
    /// Scenario F: `container.override(\.client) { StubClient() }`, then `container.client()`.
    case override
    /// Scenario G: a scope of the app container, the user installed, the handler resolved
    /// and read, the scope dropped.
    case requestScope = "request-scope"
    /// Scenario H: the same in a plain child container, `DependencyContainer(parent:)`.
    case requestChild = "request-child"
    /// Scenario G in swift-dependencies: `withDependencies` installs the user for an
    /// operation that resolves the handler's factory and reads the handler.
    case requestWithDependencies = "request-with-dependencies"
    /// Scenario G by hand: the handler built from the user and the client.
    case requestDirect = "request-direct"
}

@inline(never)
func hotPathSingletonLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.client())
    }
}

@inline(never)
func hotPathWrapperLoop(_ holder: InjectedHolder, _ count: Int) {
    for _ in 0..<count {
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathBaselineLoop(_ object: AnyObject, _ count: Int) {
    for _ in 0..<count {
        blackHole(object)
    }
}

@inline(never)
func hotPathLeafLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.leaf())
    }
}

@inline(never)
func hotPathChainLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.chainE())
    }
}

@inline(never)
func hotPathPropertyLoop(_ count: Int) {
    for _ in 0..<count {
        let holder = InjectedHolder()
        blackHole(holder)
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathOverrideLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        container.override(\.client) { StubClient() }
        blackHole(container.client())
    }
}

@inline(never)
func hotPathRequestScopeLoop(_ app: DependencyContainer, _ user: String, _ count: Int) {
    for _ in 0..<count {
        blackHole(serveRequestInScope(of: app, user: user))
    }
}

@inline(never)
func hotPathRequestChildLoop(_ user: String, _ app: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(serveRequestInChild(of: app, user: user))
    }
}

@inline(never)
func hotPathRequestWithDependenciesLoop(_ user: String, _ count: Int) {
    for _ in 0..<count {
        blackHole(serveRequestWithDependencies(user: user, respond(with:)))
    }
}

@inline(never)
func hotPathRequestDirectLoop(_ root: HandWiredRoot, _ user: String, _ count: Int) {
    for _ in 0..<count {
        blackHole(serveRequestDirectly(root: root, user: user, respond(with:)))
    }
}

/// Runs one hot path `count` times after its setup, for callgrind.
func runHotPath(_ path: HotPath, count: Int) {
    let container = DependencyContainer()
    let built = container.client()
    let holder = InjectedHolder()
    precondition(holder.client === DependencyContainer.main.client())
    switch path {
    case .singleton:
        hotPathSingletonLoop(container, count)
    case .wrapper:
        hotPathWrapperLoop(holder, count)
    case .baseline:
        hotPathBaselineLoop(built, count)
    case .leaf:
        _ = container.leaf()
        hotPathLeafLoop(container, count)
    case .chain:
        _ = container.chainE()
        hotPathChainLoop(container, count)
    case .property:
        hotPathPropertyLoop(count)
    case .override:
        container.override(\.client) { StubClient() }
        _ = container.client()
        hotPathOverrideLoop(container, count)
    case .requestScope:
        checkRequest(of: container, sharesClient: true) { DependencyContainer(scopeOf: $0) }
        hotPathRequestScopeLoop(container, signedInUser, count)
    case .requestChild:
        checkRequest(of: container, sharesClient: false) { DependencyContainer(parent: $0) }
        hotPathRequestChildLoop(signedInUser, container, count)
    case .requestWithDependencies:
        warmUpSwiftDependencies()
        checkRequestWithDependencies()
        hotPathRequestWithDependenciesLoop(signedInUser, count)
    case .requestDirect:
        let root = HandWiredRoot()
        precondition(serveRequestDirectly(root: root, user: signedInUser) { $0.client === root.client })
        hotPathRequestDirectLoop(root, signedInUser, count)
    }
}
