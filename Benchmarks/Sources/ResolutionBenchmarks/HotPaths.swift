import DependencyInjection
import Swinject

// The loops whose instructions `instructions.sh` counts under callgrind: every everyday
// operation in this package (through `DependencyContainer.main`, as app code resolves),
// the same operation in Swinject and swift-dependencies and, where it applies, written by
// hand (the floor); the two hot paths on a local container; this package's side of
// scenarios A, C, D and F for profiling; and every column of the per-request scenarios G
// and H. Each loop is a function of its own, never inlined, named `hotPath…Loop` after
// its `--hot-path` name (`main-leaf-swinject` runs `hotPathMainLeafSwinjectLoop`), so that
// `--toggle-collect` can name it; the setup and the checks (HotPathChecks.swift) happen
// before it is entered, and each runs in a process of its own.
//
// No closure may be written inside a loop function: its symbol contains the loop's name,
// so callgrind would toggle collection off while it runs. The loops call helpers whose
// closures are named after those (`serveRequest…`, `overrideClientInSwinject`,
// `visitFirstSingletons…`) and pass functions, not closures (`respond(with:)`,
// `blackHole`, `makeStubClient`). Nor may two loops have the same body but for the
// function they call or the constants they use: LLVM merges such loops into one body
// named after one of them, and callgrind then collects nothing in the other (so loops
// that would compile alike take their arguments in different orders, and
// `instructions.sh` stops on an empty count or a merged loop). Nor may a loop's name repeat
// a word (`hotPathFloorKeyPathLoop`): the mangled symbol writes the second as a
// back-reference, so it contains no such name, and callgrind collects nothing.

enum HotPath: String, CaseIterable {
    /// `container.client()` on a local container, for a singleton that is already built.
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
    /// Scenario D: a new `InjectedHolder`, its property read once (from `main`).
    case property
    /// Scenario F: `container.override(\.client, makeStubClient)`, then `container.client()`.
    case override
    /// Scenario G: a scope of the app container, the user installed, the handler resolved
    /// and read, the scope dropped.
    case requestScope = "request-scope"
    /// Scenario G in an app container that has built a singleton from other
    /// registrations, as every app's has by the time it serves: its record of uses is not
    /// empty, and a scope asks it, on every handover, whether the app-wide instance was
    /// built from what the scope overrides.
    case requestScopeBuiltApp = "request-scope-built-app"
    /// Scenario H: the same in a plain child container, `DependencyContainer(parent:)`.
    case requestChild = "request-child"
    /// Scenario G in swift-dependencies: `withDependencies` installs the user for an
    /// operation that resolves the handler's factory and reads the handler.
    case requestWithDependencies = "request-with-dependencies"
    /// Scenario G by hand: the handler built from the user and the client.
    case requestDirect = "request-direct"
    /// A live request scope of the app container, the request's user installed:
    /// `request.client()`, the app's singleton, built before the loop. What a request's
    /// code does for every app-wide service it uses.
    case requestSingleton = "request-singleton"
    /// Swinject: a child `Container(parent: app)` with the request's user registered,
    /// resolving the app's client (`.container` scope, built before the loop).
    case requestSingletonSwinject = "request-singleton-swinject"
    /// swift-dependencies: `@Dependency(\.benchClient)` read inside one
    /// `withDependencies { $0.requestUser = user }` operation.
    case requestSingletonDependencies = "request-singleton-dependencies"

    /// `DependencyContainer.main.client()`, built before the loop.
    case mainSingleton = "main-singleton"
    /// `DependencyContainer.main.client()`, built before the loop, in a `main` that also
    /// keeps a singleton with a `@Dependency` property, as an app's container does.
    case mainSingletonApp = "main-singleton-app"
    /// Swinject: `resolve((any Client).self)!` in the `.container` scope, built before.
    case mainSingletonSwinject = "main-singleton-swinject"
    /// swift-dependencies: `@Dependency(\.benchClient)` read, its live value cached before.
    case mainSingletonDependencies = "main-singleton-dependencies"
    /// By hand: a stored `let` read.
    case mainSingletonDirect = "main-singleton-direct"

    /// Swinject's equivalent of a `@Dependency` property: a `lazy var`, read again.
    case wrapperSwinject = "wrapper-swinject"
    /// swift-dependencies' `@Dependency` property, read again.
    case wrapperDependencies = "wrapper-dependencies"
    /// By hand: a stored `let` of an object that received it in `init`.
    case wrapperDirect = "wrapper-direct"

    /// `DependencyContainer.main.leaf()`, a factory.
    case mainLeaf = "main-leaf"
    /// Swinject: `resolve(Leaf.self)!`, default `.graph` scope.
    case mainLeafSwinject = "main-leaf-swinject"
    /// swift-dependencies: `@Dependency(\.makeLeaf)` read and called.
    case mainLeafDependencies = "main-leaf-dependencies"
    /// By hand: `Leaf()`.
    case mainLeafDirect = "main-leaf-direct"

    /// `DependencyContainer.main.chainE()`: five factories.
    case mainChain = "main-chain"
    /// Swinject: `resolve(ChainE.self)!`.
    case mainChainSwinject = "main-chain-swinject"
    /// swift-dependencies: `@Dependency(\.makeChainE)` read and called.
    case mainChainDependencies = "main-chain-dependencies"
    /// By hand: nested initializers.
    case mainChainDirect = "main-chain-direct"

    /// `DependencyContainer.main.chain9()`: ten factories.
    case chain10
    /// Swinject: `resolve(Chain9.self)!`.
    case chain10Swinject = "chain10-swinject"
    /// swift-dependencies: `@Dependency(\.makeChain9)` read and called.
    case chain10Dependencies = "chain10-dependencies"
    /// By hand: ten nested initializers.
    case chain10Direct = "chain10-direct"

    /// `DependencyContainer.main.chain49()`: fifty factories.
    case chain50
    /// Swinject: `resolve(Chain49.self)!`.
    case chain50Swinject = "chain50-swinject"
    /// swift-dependencies: `@Dependency(\.makeChain49)` read and called.
    case chain50Dependencies = "chain50-dependencies"
    /// By hand: fifty nested initializers.
    case chain50Direct = "chain50-direct"

    /// Swinject: a new `SwinjectHolder`, its `lazy var` read once.
    case propertySwinject = "property-swinject"
    /// swift-dependencies: a new `DependenciesHolder`, its `@Dependency` read once.
    case propertyDependencies = "property-dependencies"
    /// By hand: a new `HandWiredHolder(client:)`, its `let` read once.
    case propertyDirect = "property-direct"

    /// `DependencyContainer.main.override(\.client, makeStubClient)`, then
    /// `DependencyContainer.main.client()`.
    case overrideMain = "override-main"
    /// Swinject: the stub registered again (`.container` scope), then resolved.
    case overrideSwinject = "override-swinject"
    /// swift-dependencies: `withDependencies { $0.benchClient = StubClient() }` around a read.
    case overrideDependencies = "override-dependencies"
    /// By hand: a factory function assigned, then called.
    case overrideDirect = "override-direct"

    /// A container that built 12,000 users' sessions, each from the client (a provider
    /// family's members): one user's session overridden with a stub, then resolved, a
    /// different user each time. A test that stubs one user of many, or a server that
    /// replaces one signed-in user's session.
    case overrideMember = "override-member"
    /// The same container: one user's session, already built, resolved again, a different
    /// user each time. What a request does to find its user's session.
    case cachedMember = "cached-member"

    /// A new `DependencyContainer()`, its 200 singletons `first0 … first199` resolved once,
    /// the container dropped.
    case first200
    /// Swinject: `resetObjectScope(.container)` on a container holding the 200
    /// registrations, then each resolved once.
    case first200Swinject = "first200-swinject"
    /// swift-dependencies: its cache of live values emptied, then the 200 read once.
    case first200Dependencies = "first200-dependencies"
    /// By hand: the 200 objects built.
    case first200Direct = "first200-direct"

    /// A test world: `DependencyContainer(parent: .mocks)`, the stub installed with
    /// `override`, `client()` resolved, the world dropped.
    case testWorld = "test-world"
    /// Swinject: `Container(parent:)`, the stub registered, resolved, the child dropped.
    case testWorldSwinject = "test-world-swinject"

    /// A new `DependencyContainer()`, its nonisolated `client` singleton resolved once,
    /// the container dropped: the twin of `first-main-actor`.
    case firstNonisolated = "first-nonisolated"
    /// A new `DependencyContainer()`, its main-actor `screenStore` singleton resolved once
    /// on the main actor, the container dropped.
    case firstMainActor = "first-main-actor"
    /// A main-actor singleton resolved again on one container, on the main actor.
    case cachedMainActor = "cached-main-actor"

    /// A lower bound (GuaranteeFloors.swift): one reference bound as a task-local value
    /// around an empty body, outside any task.
    case floorBind = "floor-bind"
    /// A lower bound: one small object created and dropped.
    case floorObject = "floor-object"
    /// A lower bound: `container[keyPath: \.floorRegistration]`, a key path's projection.
    case floorProjection = "floor-projection"
}

// MARK: - The hot paths on a local container, and the baseline

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

// MARK: - This package's side of scenarios A, C, D and F (profiling)

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
        container.override(\.client, makeStubClient)
        blackHole(container.client())
    }
}

// MARK: - 1. Cached singleton through main

@inline(never)
func hotPathMainSingletonAppLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.client())
    }
}

@inline(never)
func hotPathMainSingletonLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.client())
    }
}

@inline(never)
func hotPathMainSingletonSwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.resolve((any Client).self)!)
    }
}

@inline(never)
func hotPathMainSingletonDependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(resolveClient())
    }
}

@inline(never)
func hotPathMainSingletonDirectLoop(_ root: HandWiredRoot, _ count: Int) {
    for _ in 0..<count {
        blackHole(root.client)
    }
}

// MARK: - The wrapper read, in the peers

@inline(never)
func hotPathWrapperSwinjectLoop(_ holder: SwinjectHolder, _ count: Int) {
    for _ in 0..<count {
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathWrapperDependenciesLoop(_ holder: DependenciesHolder, _ count: Int) {
    for _ in 0..<count {
        blackHole(holder.client)
    }
}

/// Arguments swapped: the body would otherwise compile as `hotPathMainSingletonDirectLoop`'s.
@inline(never)
func hotPathWrapperDirectLoop(_ count: Int, _ holder: HandWiredHolder) {
    for _ in 0..<count {
        blackHole(holder.client)
    }
}

// MARK: - 2. New instance from a factory

@inline(never)
func hotPathMainLeafLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.leaf())
    }
}

@inline(never)
func hotPathMainLeafSwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.resolve(Leaf.self)!)
    }
}

@inline(never)
func hotPathMainLeafDependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(resolveLeaf())
    }
}

@inline(never)
func hotPathMainLeafDirectLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(Leaf())
    }
}

// MARK: - 3. Five-level chain

@inline(never)
func hotPathMainChainLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.chainE())
    }
}

@inline(never)
func hotPathMainChainSwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.resolve(ChainE.self)!)
    }
}

@inline(never)
func hotPathMainChainDependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(resolveChain())
    }
}

@inline(never)
func hotPathMainChainDirectLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(ChainE(d: ChainD(c: ChainC(b: ChainB(a: ChainA())))))
    }
}

// MARK: - 4. Chains of 10 and 50 factories

@inline(never)
func hotPathChain10Loop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.chain9())
    }
}

@inline(never)
func hotPathChain10SwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.resolve(Chain9.self)!)
    }
}

@inline(never)
func hotPathChain10DependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(resolveChain9WithDependencies())
    }
}

@inline(never)
func hotPathChain10DirectLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(makeChain9Directly())
    }
}

@inline(never)
func hotPathChain50Loop(_ count: Int) {
    for _ in 0..<count {
        blackHole(DependencyContainer.main.chain49())
    }
}

@inline(never)
func hotPathChain50SwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.resolve(Chain49.self)!)
    }
}

@inline(never)
func hotPathChain50DependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(resolveChain49WithDependencies())
    }
}

@inline(never)
func hotPathChain50DirectLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(makeChain49Directly())
    }
}

// MARK: - 5. An object with one injected property, read once (ours: `hotPathPropertyLoop`)

@inline(never)
func hotPathPropertySwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        let holder = SwinjectHolder(resolver: container)
        blackHole(holder)
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathPropertyDependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        let holder = DependenciesHolder()
        blackHole(holder)
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathPropertyDirectLoop(_ root: HandWiredRoot, _ count: Int) {
    for _ in 0..<count {
        let holder = HandWiredHolder(client: root.client)
        blackHole(holder)
        blackHole(holder.client)
    }
}

// MARK: - 6. Override, then resolve

@inline(never)
func hotPathOverrideMainLoop(_ count: Int) {
    for _ in 0..<count {
        DependencyContainer.main.override(\.client, makeStubClient)
        blackHole(DependencyContainer.main.client())
    }
}

@inline(never)
func hotPathOverrideSwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(overrideClientInSwinject(container))
    }
}

@inline(never)
func hotPathOverrideDependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        blackHole(overrideClientWithDependencies())
    }
}

@inline(never)
func hotPathOverrideDirectLoop(_ root: HandWiredRoot, _ count: Int) {
    for _ in 0..<count {
        root.makeStubbableClient = makeStubClient
        blackHole(root.makeStubbableClient())
    }
}

// MARK: - 7. First resolution of 200 singletons

@inline(never)
func hotPathFirst200Loop(_ count: Int) {
    for _ in 0..<count {
        let container = DependencyContainer()
        visitFirstSingletons(in: container, blackHole)
    }
}

@inline(never)
func hotPathFirst200SwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        container.resetObjectScope(.container)
        visitFirstSingletons(inSwinject: container, blackHole)
    }
}

@inline(never)
func hotPathFirst200DependenciesLoop(_ count: Int) {
    for _ in 0..<count {
        resetSwiftDependenciesCache()
        visitFirstSingletonsWithDependencies(blackHole)
    }
}

@inline(never)
func hotPathFirst200DirectLoop(_ count: Int) {
    for _ in 0..<count {
        visitFirstObjectsDirectly(blackHole)
    }
}

// MARK: - 8. A test world (swift-dependencies' is `hotPathOverrideDependenciesLoop`)

@inline(never)
func hotPathOverrideMemberLoop(_ container: DependencyContainer, _ count: Int) {
    for user in 0..<count {
        container.override(\.session[user % sessionsBuilt], makeStubSession)
        blackHole(container.session(user % sessionsBuilt))
    }
}

@inline(never)
func hotPathCachedMemberLoop(_ count: Int, _ container: DependencyContainer) {
    for user in 0..<count {
        blackHole(container.session(user % sessionsBuilt))
    }
}

@inline(never)
func hotPathTestWorldLoop(_ count: Int) {
    for _ in 0..<count {
        let world = DependencyContainer(parent: .mocks)
        world.override(\.client, makeStubClient)
        blackHole(world.client())
    }
}

@inline(never)
func hotPathTestWorldSwinjectLoop(_ container: Container, _ count: Int) {
    for _ in 0..<count {
        blackHole(resolveClientInSwinjectTestWorld(of: container))
    }
}

@inline(never)
func hotPathFirstNonisolatedLoop(_ count: Int) {
    for _ in 0..<count {
        let container = DependencyContainer()
        blackHole(container.client())
    }
}

@inline(never)
@MainActor
func hotPathFirstMainActorLoop(_ count: Int) {
    for _ in 0..<count {
        let container = DependencyContainer()
        blackHole(container.screenStore())
    }
}

@inline(never)
@MainActor
func hotPathCachedMainActorLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.screenStore())
    }
}

// MARK: - 9. Per-request scope (scenarios G and H)

@inline(never)
func hotPathRequestScopeLoop(_ app: DependencyContainer, _ user: String, _ count: Int) {
    for _ in 0..<count {
        blackHole(serveRequestInScope(of: app, user: user))
    }
}

@inline(never)
func hotPathRequestScopeBuiltAppLoop(_ app: DependencyContainer, _ user: String, _ count: Int) {
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

// MARK: - 10. An app singleton in a request

@inline(never)
func hotPathRequestSingletonLoop(_ count: Int, _ request: DependencyContainer) {
    for _ in 0..<count {
        blackHole(request.client())
    }
}

@inline(never)
func hotPathRequestSingletonSwinjectLoop(_ count: Int, _ request: Container) {
    for _ in 0..<count {
        blackHole(request.resolve((any Client).self)!)
    }
}

@inline(never)
func hotPathRequestSingletonDependenciesLoop(_ user: String, _ count: Int) {
    for _ in 0..<count {
        blackHole(resolveClient())
    }
}

// MARK: - Running one

/// Runs one hot path `count` times, for callgrind, after checking that every column of
/// its operation does the same work (HotPathChecks.swift), which also builds what must be
/// cached before the loop.
func runHotPath(_ path: HotPath, count: Int) {
    switch path {
    case .singleton, .wrapper, .baseline, .leaf, .chain, .property, .override:
        runLocalHotPath(path, count: count)
    case .mainSingleton, .mainSingletonSwinject, .mainSingletonDependencies, .mainSingletonDirect:
        let (swinject, root) = checkCachedSingletons()
        switch path {
        case .mainSingletonSwinject: hotPathMainSingletonSwinjectLoop(swinject, count)
        case .mainSingletonDependencies: hotPathMainSingletonDependenciesLoop(count)
        case .mainSingletonDirect: hotPathMainSingletonDirectLoop(root, count)
        default: hotPathMainSingletonLoop(count)
        }
    case .mainSingletonApp:
        _ = checkCachedSingletons()
        let service = DependencyContainer.main.propertyHoldingService()
        precondition(service.client === DependencyContainer.main.client())
        hotPathMainSingletonAppLoop(count)
    case .wrapperSwinject, .wrapperDependencies, .wrapperDirect:
        let (swinjectHolder, dependenciesHolder, directHolder) = checkWrapperReads()
        switch path {
        case .wrapperSwinject: hotPathWrapperSwinjectLoop(swinjectHolder, count)
        case .wrapperDependencies: hotPathWrapperDependenciesLoop(dependenciesHolder, count)
        default: hotPathWrapperDirectLoop(count, directHolder)
        }
    case .mainLeaf, .mainLeafSwinject, .mainLeafDependencies, .mainLeafDirect:
        let swinject = checkFactories()
        switch path {
        case .mainLeafSwinject: hotPathMainLeafSwinjectLoop(swinject, count)
        case .mainLeafDependencies: hotPathMainLeafDependenciesLoop(count)
        case .mainLeafDirect: hotPathMainLeafDirectLoop(count)
        default: hotPathMainLeafLoop(count)
        }
    case .mainChain, .mainChainSwinject, .mainChainDependencies, .mainChainDirect:
        let swinject = checkFiveLevelChains()
        switch path {
        case .mainChainSwinject: hotPathMainChainSwinjectLoop(swinject, count)
        case .mainChainDependencies: hotPathMainChainDependenciesLoop(count)
        case .mainChainDirect: hotPathMainChainDirectLoop(count)
        default: hotPathMainChainLoop(count)
        }
    case .chain10, .chain10Swinject, .chain10Dependencies, .chain10Direct,
        .chain50, .chain50Swinject, .chain50Dependencies, .chain50Direct:
        let swinject = checkLongChains()
        switch path {
        case .chain10Swinject: hotPathChain10SwinjectLoop(swinject, count)
        case .chain10Dependencies: hotPathChain10DependenciesLoop(count)
        case .chain10Direct: hotPathChain10DirectLoop(count)
        case .chain50: hotPathChain50Loop(count)
        case .chain50Swinject: hotPathChain50SwinjectLoop(swinject, count)
        case .chain50Dependencies: hotPathChain50DependenciesLoop(count)
        case .chain50Direct: hotPathChain50DirectLoop(count)
        default: hotPathChain10Loop(count)
        }
    case .propertySwinject, .propertyDependencies, .propertyDirect:
        let (swinject, root) = checkInjectedProperties()
        switch path {
        case .propertySwinject: hotPathPropertySwinjectLoop(swinject, count)
        case .propertyDependencies: hotPathPropertyDependenciesLoop(count)
        default: hotPathPropertyDirectLoop(root, count)
        }
    case .overrideMain, .overrideSwinject, .overrideDependencies, .overrideDirect:
        let (swinject, root) = checkOverrides()
        switch path {
        case .overrideSwinject: hotPathOverrideSwinjectLoop(swinject, count)
        case .overrideDependencies: hotPathOverrideDependenciesLoop(count)
        case .overrideDirect: hotPathOverrideDirectLoop(root, count)
        default: hotPathOverrideMainLoop(count)
        }
    case .overrideMember:
        hotPathOverrideMemberLoop(checkMemberOverrides(), count)
    case .cachedMember:
        hotPathCachedMemberLoop(count, checkMemberOverrides())
    case .first200, .first200Swinject, .first200Dependencies, .first200Direct:
        let swinject = checkFirstResolutions()
        switch path {
        case .first200Swinject: hotPathFirst200SwinjectLoop(swinject, count)
        case .first200Dependencies: hotPathFirst200DependenciesLoop(count)
        case .first200Direct: hotPathFirst200DirectLoop(count)
        default: hotPathFirst200Loop(count)
        }
    case .testWorld, .testWorldSwinject:
        let swinject = checkTestWorlds()
        if path == .testWorldSwinject {
            hotPathTestWorldSwinjectLoop(swinject, count)
        } else {
            hotPathTestWorldLoop(count)
        }
    case .requestScope, .requestScopeBuiltApp, .requestChild, .requestWithDependencies, .requestDirect:
        runRequestHotPath(path, count: count)
    case .requestSingleton, .requestSingletonSwinject, .requestSingletonDependencies:
        runRequestSingletonHotPath(path, count: count)
    case .floorBind, .floorObject, .floorProjection:
        runFloorHotPath(path, count: count)
    case .firstNonisolated:
        hotPathFirstNonisolatedLoop(count)
    case .firstMainActor:
        MainActor.assumeIsolated { hotPathFirstMainActorLoop(count) }
    case .cachedMainActor:
        MainActor.assumeIsolated {
            let container = DependencyContainer()
            precondition(container.screenStore() === container.screenStore())
            hotPathCachedMainActorLoop(container, count)
        }
    }
}

/// The hot paths and profiling loops on a local container.
private func runLocalHotPath(_ path: HotPath, count: Int) {
    let container = DependencyContainer()
    let built = container.client()
    let holder = InjectedHolder()
    precondition(holder.client === DependencyContainer.main.client())
    switch path {
    case .singleton:
        hotPathSingletonLoop(container, count)
    case .wrapper:
        hotPathWrapperLoop(holder, count)
    case .leaf:
        precondition(container.leaf() !== container.leaf())
        hotPathLeafLoop(container, count)
    case .chain:
        precondition(container.chainE().d.c.b.a !== container.chainE().d.c.b.a)
        hotPathChainLoop(container, count)
    case .property:
        hotPathPropertyLoop(count)
    case .override:
        container.override(\.client, makeStubClient)
        let stub = container.client()
        container.override(\.client, makeStubClient)
        precondition(stub.isStub && container.client().isStub && container.client() !== stub)
        hotPathOverrideLoop(container, count)
    default:
        hotPathBaselineLoop(built, count)
    }
}

/// Every column of the per-request scenarios G and H.
private func runRequestHotPath(_ path: HotPath, count: Int) {
    let container = DependencyContainer()
    _ = container.client()
    switch path {
    case .requestScope:
        checkRequest(of: container, sharesClient: true) { DependencyContainer(scopeOf: $0) }
        hotPathRequestScopeLoop(container, signedInUser, count)
    case .requestScopeBuiltApp:
        precondition(container.appService().client === container.client())
        checkRequest(of: container, sharesClient: true) { DependencyContainer(scopeOf: $0) }
        hotPathRequestScopeBuiltAppLoop(container, signedInUser, count)
    case .requestChild:
        checkRequest(of: container, sharesClient: false) { DependencyContainer(parent: $0) }
        hotPathRequestChildLoop(signedInUser, container, count)
    case .requestWithDependencies:
        warmUpSwiftDependencies()
        checkRequestWithDependencies()
        hotPathRequestWithDependenciesLoop(signedInUser, count)
    default:
        let root = HandWiredRoot()
        precondition(serveRequestDirectly(root: root, user: signedInUser) { $0.client === root.client })
        hotPathRequestDirectLoop(root, signedInUser, count)
    }
}

/// Every column of operation 10: a request's code resolving an app-wide singleton the app
/// built before, with the request's user installed.
private func runRequestSingletonHotPath(_ path: HotPath, count: Int) {
    switch path {
    case .requestSingletonSwinject:
        let app = makeSwinjectContainer()
        let request = Container(parent: app)
        request.register(String.self) { _ in signedInUser }
        precondition(request.resolve((any Client).self)! === app.resolve((any Client).self)!)
        hotPathRequestSingletonSwinjectLoop(count, request)
    case .requestSingletonDependencies:
        readClientInRequestWithDependencies(count: count)
    default:
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.requestUser) { signedInUser }
        precondition(request.requestUser() == signedInUser && request.client() === app.client() && !app.client().isStub)
        hotPathRequestSingletonLoop(count, request)
    }
}
