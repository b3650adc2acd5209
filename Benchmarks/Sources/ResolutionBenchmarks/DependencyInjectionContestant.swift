import DependencyInjection

// This package, used the way its README shows.

extension DependencyContainer {
    var leaf: Provider<Leaf> { factory { Leaf() } }
    var client: Provider<any Client> { singleton { LiveClient() } }

    var chainA: Provider<ChainA> { factory { ChainA() } }
    var chainB: Provider<ChainB> { factory { ChainB(a: self.chainA()) } }
    var chainC: Provider<ChainC> { factory { ChainC(b: self.chainB()) } }
    var chainD: Provider<ChainD> { factory { ChainD(c: self.chainC()) } }
    var chainE: Provider<ChainE> { factory { ChainE(d: self.chainD()) } }
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
        ]
    )
}
