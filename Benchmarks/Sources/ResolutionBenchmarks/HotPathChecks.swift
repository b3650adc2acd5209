import DependencyInjection
import Swinject

// What each callgrind loop's operation claims, checked in every column before any loop
// runs: a cached singleton is the same instance each time, a factory builds anew, a chain
// has all its levels and builds them anew, an override serves a new stub, a first
// resolution builds each of the 200 singletons once and a fresh world builds them again,
// a test world serves its stub and is freed. The checks also build what the loops read
// cached (singletons, swift-dependencies' live values, resolved properties).

/// Operation 1: the singleton, already built, through `main` and in each peer.
func checkCachedSingletons() -> (Container, HandWiredRoot) {
    let main = DependencyContainer.main
    let swinject = makeSwinjectContainer()
    let root = HandWiredRoot()
    precondition(main.client() === main.client() && !main.client().isStub)
    precondition(swinject.resolve((any Client).self)! === swinject.resolve((any Client).self)!)
    precondition(resolveClient() === resolveClient() && !resolveClient().isStub)
    precondition(root.client === root.client)
    return (swinject, root)
}

/// The wrapper read: each holder's property, read once, is the singleton, and stays it.
func checkWrapperReads() -> (SwinjectHolder, DependenciesHolder, HandWiredHolder) {
    let (swinject, root) = checkCachedSingletons()
    let swinjectHolder = SwinjectHolder(resolver: swinject)
    let dependenciesHolder = DependenciesHolder()
    let directHolder = HandWiredHolder(client: root.client)
    let singleton = swinject.resolve((any Client).self)!
    precondition(swinjectHolder.client === singleton && swinjectHolder.client === singleton)
    precondition(dependenciesHolder.client === resolveClient() && dependenciesHolder.client === resolveClient())
    precondition(directHolder.client === root.client)
    return (swinjectHolder, dependenciesHolder, directHolder)
}

/// Operation 2: a factory builds a new leaf each time.
func checkFactories() -> Container {
    let main = DependencyContainer.main
    let swinject = makeSwinjectContainer()
    warmUpSwiftDependencies()
    precondition(main.leaf() !== main.leaf())
    precondition(swinject.resolve(Leaf.self)! !== swinject.resolve(Leaf.self)!)
    precondition(resolveLeaf() !== resolveLeaf())
    return swinject
}

/// Operation 3: the five-level chain, built anew each time, down to its last level.
func checkFiveLevelChains() -> Container {
    let main = DependencyContainer.main
    let swinject = makeSwinjectContainer()
    warmUpSwiftDependencies()
    precondition(main.chainE().d.c.b.a !== main.chainE().d.c.b.a)
    precondition(swinject.resolve(ChainE.self)!.d.c.b.a !== swinject.resolve(ChainE.self)!.d.c.b.a)
    precondition(resolveChain().d.c.b.a !== resolveChain().d.c.b.a)
    return swinject
}

/// Operation 4: the 10- and 50-level chains have all their levels, and two resolutions
/// share none.
func checkLongChains() -> Container {
    let main = DependencyContainer.main
    let swinject = makeSwinjectContainer()
    func check(_ depth: Int, _ resolve: () -> any ChainLevel) {
        let first = resolve()  // kept, so that the second chain cannot reuse its addresses
        let levels = chainLevels(from: first)
        precondition(levels.count == depth && Set(levels).count == depth)
        precondition(Set(levels).isDisjoint(with: chainLevels(from: resolve())))
        withExtendedLifetime(first) {}
    }
    check(10) { main.chain9() }
    check(10) { swinject.resolve(Chain9.self)! }
    check(10) { resolveChain9WithDependencies() }
    check(10) { makeChain9Directly() }
    check(50) { main.chain49() }
    check(50) { swinject.resolve(Chain49.self)! }
    check(50) { resolveChain49WithDependencies() }
    check(50) { makeChain49Directly() }
    return swinject
}

/// Operation 5: a new holder's property, read once, is the cached singleton.
func checkInjectedProperties() -> (Container, HandWiredRoot) {
    let (swinject, root) = checkCachedSingletons()
    precondition(InjectedHolder().client === DependencyContainer.main.client())
    precondition(SwinjectHolder(resolver: swinject).client === swinject.resolve((any Client).self)!)
    precondition(DependenciesHolder().client === resolveClient())
    precondition(HandWiredHolder(client: root.client).client === root.client)
    return (swinject, root)
}

/// Operation 6: each override serves a new stub. Ours overrides `main` itself: each
/// callgrind loop runs in a process of its own, so nothing else sees it.
func checkOverrides() -> (Container, HandWiredRoot) {
    let swinject = makeSwinjectContainer()
    let root = HandWiredRoot()
    warmUpSwiftDependencies()
    _ = swinject.resolve((any Client).self)!
    func check(_ overrideAndResolve: () -> any Client) {
        let first = overrideAndResolve()
        let second = overrideAndResolve()
        precondition(first.isStub && second.isStub && first !== second)
    }
    check {
        DependencyContainer.main.override(\.client, makeStubClient)
        return DependencyContainer.main.client()
    }
    check { overrideClientInSwinject(swinject) }
    check { overrideClientWithDependencies() }
    check {
        root.makeStubbableClient = makeStubClient
        return root.makeStubbableClient()
    }
    precondition(!resolveClient().isStub, "withDependencies leaked its stub")
    return (swinject, root)
}

/// Operation 7: a fresh world resolves 200 distinct singletons, each built once in it
/// (a second pass returns the same ones), and the next fresh world builds them again.
func checkFirstResolutions() -> Container {
    func collect(_ visitAll: ((AnyObject) -> Void) -> Void) -> [ObjectIdentifier] {
        var objects: [AnyObject] = []
        visitAll { objects.append($0) }
        precondition(objects.count == 200)
        return objects.map(ObjectIdentifier.init)
    }
    func check(startOver: () -> Void, _ visitAll: ((AnyObject) -> Void) -> Void) {
        startOver()
        let first = collect(visitAll)
        precondition(Set(first).count == 200 && collect(visitAll) == first)
        startOver()
        // Objects of the first world could be freed and their addresses reused: keep them.
        var kept: [AnyObject] = []
        visitAll { kept.append($0) }
        startOver()
        let again = collect(visitAll)
        precondition(Set(again).isDisjoint(with: kept.map(ObjectIdentifier.init)))
    }
    var world = DependencyContainer()
    check(startOver: { world = DependencyContainer() }) { visitFirstSingletons(in: world, $0) }
    let swinject = Container()
    registerFirstSingletons(in: swinject)
    check(startOver: { swinject.resetObjectScope(.container) }) { visitFirstSingletons(inSwinject: swinject, $0) }
    check(startOver: resetSwiftDependenciesCache) { visitFirstSingletonsWithDependencies($0) }
    precondition(Set(collect(visitFirstObjectsDirectly)).count == 200)
    return swinject
}

/// Operation 8: a test world serves its own stub, leaves its parent untouched, and is
/// freed when dropped.
/// How many users' sessions the `override-member` container built.
let sessionsBuilt = 12_000

/// A container with `sessionsBuilt` sessions built from its client: overriding one
/// session serves the stub for that user alone, and keeps the others and the client.
func checkMemberOverrides() -> DependencyContainer {
    let container = DependencyContainer()
    let client = container.client()
    for user in 0..<sessionsBuilt { precondition(container.session(user).client === client) }
    let kept = container.session(1)
    container.override(\.session[0], makeStubSession)
    precondition(container.session(0).client.isStub && container.session(1) === kept)
    container.reset(\.session[0])
    precondition(container.session(0).client === client && container.client() === client)
    return container
}

func checkTestWorlds() -> Container {
    weak var weakWorld: DependencyContainer?
    do {
        let world = DependencyContainer(parent: .mocks)
        weakWorld = world
        world.override(\.client, makeStubClient)
        let stub = world.client()
        precondition(stub.isStub && world.client() === stub)
    }
    precondition(weakWorld == nil, "the test world outlived its test")
    precondition(DependencyContainer.mocks.instanceIfBuilt(\.client) == nil)

    let swinject = makeSwinjectContainer()
    let live = swinject.resolve((any Client).self)!
    let first = resolveClientInSwinjectTestWorld(of: swinject)
    precondition(first.isStub && resolveClientInSwinjectTestWorld(of: swinject) !== first)
    precondition(swinject.resolve((any Client).self)! === live)
    return swinject
}
