import DependencyInjection
import Foundation
import Testing

// MARK: - A container never keeps itself alive through what it caches

/// Holds a part, whatever made it.
final class AdoptingHolder: Sendable {
    let part: ReportingService
    init(part: ReportingService) { self.part = part }
}

/// What a decoration hands out: a wrapper that injects a service itself.
final class InjectingLoggingClient: HTTPClient, @unchecked Sendable {
    @Dependency(\.feedLoader) var loader
    let wrapped: any HTTPClient
    var name: String { "logged " + wrapped.name }
    init(wrapping wrapped: any HTTPClient) { self.wrapped = wrapped }
}

extension DependencyContainer {
    /// A graph part with a `@Dependency`.
    var adoptGraphPart: Provider<ReportingService> { graph { ReportingService() } }
    var holderOfAGraphPart: Provider<AdoptingHolder> { singleton { AdoptingHolder(part: self.adoptGraphPart()) } }
    /// The graph part first built for a factory, then found built by a singleton.
    var adoptPartThenHolder: Provider<(ReportingService, AdoptingHolder)> {
        factory { (self.adoptGraphPart(), self.holderOfAGraphPart()) }
    }
}

/// Whether `use`, given a new container, was served what it checks, and whether the
/// container is released once `use` returns and nothing else holds it.
func isReleased(_ use: (DependencyContainer) -> Bool) -> (served: Bool, released: Bool) {
    weak var released: DependencyContainer?
    var served = false
    do {
        let container = DependencyContainer()
        released = container
        served = use(container)
    }
    return (served, released == nil)
}

@Suite struct AdoptedInstanceHoldTests {

    /// The same graph instance, first built for a factory and then found built by a
    /// singleton in the same resolution: the singleton keeps it.
    @Test func aGraphInstanceASingletonFoundBuiltDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let (part, holder) = container.adoptPartThenHolder()
            return part === holder.part && holder.part.client === container.httpClient()
        }
        #expect(result.served)
        #expect(result.released, "the container was kept alive by the graph instance its singleton keeps")
    }

    /// A decorated singleton's wrapper, created inside the construction, injects from the
    /// container that builds it; the container keeps the wrapper.
    @Test func aDecoratedSingletonsInjectingWrapperDoesNotKeepItsContainer() {
        let result = isReleased { container in
            container.decorate(\.httpClient) { InjectingLoggingClient(wrapping: $0) }
            let client = container.httpClient() as? InjectingLoggingClient
            return client != nil && client?.loader.client === client
        }
        #expect(result.served)
        #expect(result.released, "the container was kept alive by the wrapper of its own singleton")
    }
}

extension DependencyContainer {
    /// A shared part with a `@Dependency`.
    var adoptSharedPart: Provider<ReportingService> { shared { ReportingService() } }
    var holderOfASharedPart: Provider<AdoptingHolder> { singleton { AdoptingHolder(part: self.adoptSharedPart()) } }
}

extension AdoptedInstanceHoldTests {
    /// A shared instance a screen resolved first, which a singleton then finds live and keeps.
    @Test func aSharedInstanceASingletonFoundLiveDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.adoptSharedPart()
            let holder = container.holderOfASharedPart()
            return part === holder.part && holder.part.client === container.httpClient()
        }
        #expect(result.served)
        #expect(result.released, "the container was kept alive by the shared instance its singleton keeps")
    }
}

extension DependencyContainer {
    var scopedHolderOfAGraphPart: Provider<AdoptingHolder> { scoped { AdoptingHolder(part: self.adoptGraphPart()) } }
    /// A request's handler: the graph part of this resolution, and the request's scoped holder of it.
    var adoptRequestPartThenHolder: Provider<(ReportingService, AdoptingHolder)> {
        factory { (self.adoptGraphPart(), self.scopedHolderOfAGraphPart()) }
    }
}

extension AdoptedInstanceHoldTests {
    /// The server case: every request's scope would stay alive after the request ends.
    @Test func aRequestsGraphInstanceItsScopedInstanceFoundBuiltDoesNotKeepTheRequest() {
        let app = DependencyContainer()
        weak var released: DependencyContainer?
        do {
            let request = DependencyContainer(scopeOf: app)
            released = request
            let (part, holder) = request.adoptRequestPartThenHolder()
            #expect(part === holder.part)
            #expect(holder.part.client === app.httpClient())
        }
        #expect(released == nil, "the request scope was kept alive by the graph instance its scoped instance keeps")
    }
}


/// A singleton that reads a shared part through its own `@Dependency`, lazily.
final class LazyPartHolder: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.adoptSharedPart) var part
    init() {}
}

extension DependencyContainer {
    var lazyPartHolder: Provider<LazyPartHolder> { singleton { LazyPartHolder() } }
    /// A factory's object that takes the shared part: the container does not keep it.
    var factoryHolderOfASharedPart: Provider<AdoptingHolder> { factory { AdoptingHolder(part: self.adoptSharedPart()) } }
    var adoptAsyncSharedPart: AsyncProvider<ReportingService> { shared { ReportingService() } }
    var asyncHolderOfASharedPart: AsyncProvider<AdoptingHolder> {
        singleton { AdoptingHolder(part: try await self.adoptAsyncSharedPart()) }
    }
}

extension AdoptedInstanceHoldTests {
    /// The property of a singleton the container keeps, read for the first time, takes the
    /// live shared part: the part's own property lets go of its strong hold too.
    @Test func aSharedInstanceASingletonsPropertyTakesDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.adoptSharedPart()
            let holder = container.lazyPartHolder()
            return holder.part === part && part.client === container.httpClient()
        }
        #expect(result.served)
        #expect(result.released, "the container was kept alive by the shared instance its singleton's property took")
    }

    /// An async singleton takes a live async shared instance that the app resolved first.
    @Test func anAsyncSharedInstanceAnAsyncSingletonFoundLiveDoesNotKeepItsContainer() async throws {
        weak var released: DependencyContainer?
        var served = false
        do {
            let container = DependencyContainer()
            released = container
            let part = try await container.adoptAsyncSharedPart()
            let holder = try await container.asyncHolderOfASharedPart()
            served = part === holder.part && part.client === container.httpClient()
        }
        #expect(served)
        #expect(released == nil, "the container was kept alive by the async shared instance its singleton keeps")
    }

    /// Only a construction the container keeps makes the hold weak: a factory's object that
    /// takes the shared part leaves it holding the container, so the part works after the
    /// app lets go of the container, as any object a factory made does.
    @Test func aSharedInstanceAFactoryTakesStillHoldsItsContainer() {
        weak var released: DependencyContainer?
        var holder: AdoptingHolder?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.adoptSharedPart()
            holder = container.factoryHolderOfASharedPart()
        }
        #expect(released != nil, "the part of a factory's object no longer holds its container")
        #expect(holder?.part.client.name == "live")
    }

    /// Threads released together: half resolve a singleton that takes the live shared part
    /// (one builds it, the others wait for it), while the other half read the part's
    /// property for the first time. Every read gets the container's client, and the
    /// container goes when the round ends.
    @Test func aSingletonTakingASharedInstanceWhileItsPropertyIsFirstReadLeavesNothingAlive() async {
        for _ in 0..<20 {
            let released = Liveness()
            let reads = Collected<Bool>()
            let finished = await finishesWithoutHangingOffThePool {
                let container = DependencyContainer()
                released.watch(container)
                let part = container.adoptSharedPart()
                let client = container.httpClient()
                onThreadsReleasedTogetherAndJoined(8) { index in
                    if index.isMultiple(of: 2) {
                        reads.append(container.holderOfASharedPart().part === part)
                    } else {
                        reads.append(part.client === client)
                    }
                }
                withExtendedLifetime(part) {}
            }
            #expect(finished)
            #expect(reads.values.count == 8 && reads.values.allSatisfy { $0 })
            #expect(!released.isAlive, "the container was kept alive by the shared instance its singleton keeps")
        }
    }
}
