import Swinject

// Swinject 2.10, used the way its README shows: a `Container` with registrations, the
// default `.graph` scope for services built on each resolution and `.container` for the
// singleton.

/// Registers the benchmark graph in `container`.
func registerGraph(in container: Container) {
    container.register(Leaf.self) { _ in Leaf() }
    container.register((any Client).self) { _ in LiveClient() }.inObjectScope(.container)
    container.register(ChainA.self) { _ in ChainA() }
    container.register(ChainB.self) { resolver in ChainB(a: resolver.resolve(ChainA.self)!) }
    container.register(ChainC.self) { resolver in ChainC(b: resolver.resolve(ChainB.self)!) }
    container.register(ChainD.self) { resolver in ChainD(c: resolver.resolve(ChainC.self)!) }
    container.register(ChainE.self) { resolver in ChainE(d: resolver.resolve(ChainD.self)!) }
}

/// An object with one lazily injected property.
///
/// Swinject ships no property wrapper; the closest equivalent of `@Dependency` is a
/// `lazy var` that resolves from the container on first access.
final class SwinjectHolder {
    let resolver: any Resolver
    lazy var client: any Client = resolver.resolve((any Client).self)!
    init(resolver: any Resolver) { self.resolver = resolver }
}

/// A container with the whole benchmark graph, the generated 50-level chain included.
func makeSwinjectContainer() -> Container {
    let container = Container()
    registerGraph(in: container)
    registerChainLevels(in: container)
    return container
}

/// Scenario F: registers the stub again (`.container` scope), then resolves it.
@inline(__always)
func overrideClientInSwinject(_ container: Container) -> any Client {
    container.register((any Client).self) { _ in StubClient() }.inObjectScope(.container)
    return container.resolve((any Client).self)!
}

/// A test world: a child container of `parent` with the stub registered, resolved once.
/// The child is dropped on return.
@inline(__always)
func resolveClientInSwinjectTestWorld(of parent: Container) -> any Client {
    let world = Container(parent: parent)
    world.register((any Client).self) { _ in StubClient() }.inObjectScope(.container)
    return world.resolve((any Client).self)!
}

func swinjectContestant() -> Contestant {
    let container = Container()
    registerGraph(in: container)
    // Container is not thread-safe; Swinject's documented way to share one between
    // threads is a synchronized view, which scenario E uses.
    let synchronized = Shared(value: container.synchronize())
    let overrideContainer = Container()
    registerGraph(in: overrideContainer)

    // Build the singletons before anything is timed.
    _ = container.resolve((any Client).self)!
    _ = overrideContainer.resolve((any Client).self)!

    return Contestant(
        name: "Swinject",
        isPeer: true,
        check: {
            precondition(container.resolve(Leaf.self)! !== container.resolve(Leaf.self)!)
            precondition(container.resolve((any Client).self)! === container.resolve((any Client).self)!)
            precondition(synchronized.value.resolve((any Client).self)! === container.resolve((any Client).self)!)
            precondition(SwinjectHolder(resolver: container).client === container.resolve((any Client).self)!)
            let chain = container.resolve(ChainE.self)!
            precondition(chain.d.c.b.a !== container.resolve(ChainE.self)!.d.c.b.a)
            let probe = Container()
            registerGraph(in: probe)
            probe.register((any Client).self) { _ in StubClient() }.inObjectScope(.container)
            precondition(probe.resolve((any Client).self)!.isStub)
        },
        measures: [
            .leaf: { count in timeLoop(count) { container.resolve(Leaf.self)! } },
            .singleton: { count in timeLoop(count) { container.resolve((any Client).self)! } },
            .chain: { count in timeLoop(count) { container.resolve(ChainE.self)! } },
            .property: { count in
                timeLoop(count) {
                    let holder = SwinjectHolder(resolver: container)
                    blackHole(holder)
                    return holder.client
                }
            },
            .concurrentSingleton: { count in
                timeConcurrently(count) { perThread in
                    let resolver = synchronized.value
                    _ = timeLoop(perThread) { resolver.resolve((any Client).self)! }
                }
            },
            .override: { count in timeLoop(count) { overrideClientInSwinject(overrideContainer) } },
        ]
    )
}
