import DependencyInjection
import Foundation
import Testing

/// Wraps a client, as a logging or caching decorator does; its name shows the nesting.
final class WrappingHTTPClient: HTTPClient {
    let wrapped: any HTTPClient
    let tag: String
    var name: String { "\(tag)(\(wrapped.name))" }
    init(_ tag: String = "logging", wrapping wrapped: any HTTPClient) {
        self.tag = tag
        self.wrapped = wrapped
    }
}

struct DecorationFailed: Error {}

extension DependencyContainer {
    var factoryClient: Provider<any HTTPClient> { factory { LiveHTTPClient() } }
    var graphClient: Provider<any HTTPClient> { graph { LiveHTTPClient() } }
    var graphClientPair: Provider<(any HTTPClient, any HTTPClient)> {
        factory { (self.graphClient(), self.graphClient()) }
    }
    /// Decorated in the cycle test by a decoration that resolves it.
    var selfDecoratedClient: Provider<any HTTPClient> { singleton { LiveHTTPClient() } }
    /// Records the name of what it tears down in the `Collected<String>` stored as "closed".
    var closableClient: Provider<any HTTPClient> {
        singleton { LiveHTTPClient() }.onShutdown { [unowned self] client in
            (self.getValue(forKey: "closed") as Collected<String>?)?.append(client.name)
        }
    }
    var asyncClient: AsyncProvider<any HTTPClient> { singleton { LiveHTTPClient() } }
}

@Suite struct DecoratorTests {
    // MARK: - Wrapping

    @Test func wrapsTheRegistrationsOwnInstance() throws {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        let client = try #require(container.httpClient() as? WrappingHTTPClient)
        #expect(client.wrapped is LiveHTTPClient)
        #expect(client.name == "logging(live)")
    }

    @Test func dependentsResolveTheDecoratedInstance() {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(container.feedLoader().client.name == "logging(live)")
        #expect(container.cachedFeedLoader().client === container.httpClient())
    }

    @Test func aSingletonIsBuiltAndDecoratedOnce() {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let decorations = Counter()
        container.decorate(\.httpClient) {
            decorations.increment()
            return WrappingHTTPClient(wrapping: $0)
        }
        let client = container.httpClient()
        #expect(container.httpClient() === client)
        #expect(container.feedLoader().client === client)
        #expect(container.instanceIfBuilt(\.httpClient) === client)
        #expect(builds.count == 1)
        #expect(decorations.count == 1)
    }

    @Test func aFactoryIsDecoratedOnEveryResolution() {
        let container = DependencyContainer()
        let decorations = Counter()
        container.decorate(\.factoryClient) {
            decorations.increment()
            return WrappingHTTPClient(wrapping: $0)
        }
        #expect(container.factoryClient() !== container.factoryClient())
        #expect(container.factoryClient().name == "logging(live)")
        #expect(decorations.count == 3)
    }

    @Test func aGraphInstanceIsDecoratedOncePerResolution() {
        let container = DependencyContainer()
        let decorations = Counter()
        container.decorate(\.graphClient) {
            decorations.increment()
            return WrappingHTTPClient(wrapping: $0)
        }
        let (first, second) = container.graphClientPair()
        #expect(first === second)
        #expect(first.name == "logging(live)")
        #expect(decorations.count == 1)
    }

    @Test func decorationsStackInTheOrderTheyWereInstalled() {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { WrappingHTTPClient("first", wrapping: $0) }
        container.decorate(\.httpClient) { WrappingHTTPClient("second", wrapping: $0) }
        #expect(container.httpClient().name == "second(first(live))")
    }

    // MARK: - Overrides, reset and shutdown

    @Test func anOverrideInstalledEarlierIsWrapped() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(container.httpClient().name == "logging(stub)")
    }

    @Test func aLaterOverrideKeepsTheDecoration() {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(container.httpClient().name == "logging(live)")
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(container.httpClient().name == "logging(stub)")
    }

    @Test func aParentsOverrideIsWrapped() {
        let parent = DependencyContainer()
        parent.override(\.httpClient) { StubHTTPClient("parent") }
        let child = DependencyContainer(parent: parent)
        child.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(child.httpClient().name == "logging(parent)")
        #expect(parent.httpClient().name == "parent")
    }

    @Test func resetOfTheRegistrationRemovesItsDecorationsAndOverride() {
        let container = DependencyContainer()
        container.override(\.httpClient) { StubHTTPClient() }
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        container.decorate(\.factoryClient) { WrappingHTTPClient(wrapping: $0) }
        container.reset(\.httpClient)
        #expect(container.httpClient().name == "live")
        #expect(container.factoryClient().name == "logging(live)")
    }

    @Test func resetRemovesEveryDecoration() {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        container.decorate(\.factoryClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(container.httpClient().name == "logging(live)")
        container.reset()
        #expect(container.httpClient().name == "live")
        #expect(container.factoryClient().name == "live")
    }

    @Test func shutdownKeepsDecorationsAndTearsDownTheDecoratedInstance() {
        let container = DependencyContainer()
        let closed = Collected<String>()
        container.setValue(closed, forKey: "closed")
        container.decorate(\.closableClient) { WrappingHTTPClient(wrapping: $0) }
        _ = container.closableClient()
        container.shutdown()
        #expect(closed.values == ["logging(live)"])
        #expect(container.closableClient().name == "logging(live)")
    }

    // MARK: - Child containers

    @Test func decorationsReachChildContainers() {
        let parent = DependencyContainer()
        parent.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        let child = DependencyContainer(parent: parent)
        #expect(child.httpClient().name == "logging(live)")
        #expect(child.httpClient() !== parent.httpClient())
    }

    @Test func aChildAppliesItsParentsDecorationsThenItsOwn() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        child.decorate(\.httpClient) { WrappingHTTPClient("child", wrapping: $0) }
        parent.decorate(\.httpClient) { WrappingHTTPClient("parent", wrapping: $0) }
        #expect(child.httpClient().name == "child(parent(live))")
        #expect(parent.httpClient().name == "parent(live)")
    }

    @Test func aChildsOwnOverrideReplacesItsParentsDecorations() {
        let parent = DependencyContainer()
        parent.decorate(\.httpClient) { WrappingHTTPClient("parent", wrapping: $0) }
        let child = DependencyContainer(parent: parent)
        child.override(\.httpClient) { StubHTTPClient() }
        child.decorate(\.httpClient) { WrappingHTTPClient("child", wrapping: $0) }
        #expect(child.httpClient().name == "child(stub)")
    }

    // MARK: - Invalidation

    @Test func decoratingDropsCachedInstancesAndWhatWasBuiltFromThem() {
        let container = DependencyContainer()
        let client = container.httpClient()
        let loader = container.cachedFeedLoader()
        let session = container[session: "1"]()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(container.httpClient() !== client)
        #expect(container.cachedFeedLoader() !== loader)
        #expect(container.cachedFeedLoader().client.name == "logging(live)")
        #expect(container[session: "1"]() === session)
    }

    @Test func decoratingDropsWhatChildrenBuilt() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let loader = child.cachedFeedLoader()
        parent.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(child.cachedFeedLoader() !== loader)
        #expect(child.cachedFeedLoader().client.name == "logging(live)")
    }

    @Test func resettingTheParentDropsWhatAChildBuiltDecorated() {
        let parent = DependencyContainer()
        parent.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        let child = DependencyContainer(parent: parent)
        #expect(child.cachedFeedLoader().client.name == "logging(live)")
        parent.reset()
        #expect(child.cachedFeedLoader().client.name == "live")
    }

    // MARK: - Tracing

    @Test func aDecoratedInstanceIsTracedAsBuiltByWhatBuiltIt() throws {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        container.tracer = ResolutionTracer { batches.append($0) }
        _ = container.httpClient()
        container.override(\.httpClient) { StubHTTPClient() }
        _ = container.httpClient()
        #expect(batches.values.map { $0.map(\.outcome) } == [[.built], [.builtFromOverride]])
    }

    // MARK: - Async and main actor

    @Test func anAsyncDecorationWrapsTheInstanceOnce() async throws {
        let container = DependencyContainer()
        container.decorate(\.asyncClient) { client in
            await Task.yield()
            return WrappingHTTPClient(wrapping: client)
        }
        let client = try await container.asyncClient()
        #expect(client.name == "logging(live)")
        #expect(try await container.asyncClient() === client)
    }

    @Test func aThrowingAsyncDecorationFailsTheResolutionAndKeepsNothing() async throws {
        let container = DependencyContainer()
        container.override(\.asyncClient) { StubHTTPClient() }
        container.decorate(\.asyncClient) { _ in throw DecorationFailed() }
        await #expect(throws: DecorationFailed.self) { try await container.asyncClient() }
        #expect(container.instanceIfBuilt(\.asyncClient) == nil)
        container.reset(\.asyncClient)
        #expect(try await container.asyncClient().name == "live")
    }

    @MainActor @Test func aMainActorDecorationWrapsOnTheMainActor() {
        let container = DependencyContainer()
        container.decorate(\.httpClient) { @MainActor client in
            MainActor.assertIsolated()
            return WrappingHTTPClient("main", wrapping: client)
        }
        #expect(container.httpClient().name == "main(live)")
    }

    // MARK: - Failures

    @Test func aDecorationThatResolvesWhatItDecoratesIsACycle() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.decorate(\.selfDecoratedClient) { client in
                _ = container.selfDecoratedClient()
                return client
            }
            _ = container.selfDecoratedClient()
        })
        #expect(cycle?.isCycle(["selfDecoratedClient", "selfDecoratedClient"]) == true, "\(cycle?.description ?? "")")
    }

    // MARK: - Concurrency

    @Test func resolvingWhileDecoratingAndResettingIsSafe() async {
        let container = DependencyContainer()
        let child = DependencyContainer(parent: container)
        let names = Collected<String>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<200 {
                switch index % 4 {
                case 0:
                    container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
                    if round % 3 == 0 { container.reset(\.httpClient) }
                case 1:
                    child.decorate(\.httpClient) { WrappingHTTPClient("child", wrapping: $0) }
                    if round % 5 == 0 { child.reset() }
                case 2:
                    names.append(container.httpClient().name)
                    names.append(container.cachedFeedLoader().client.name)
                default:
                    names.append(child.httpClient().name)
                    names.append(child.feedLoader().client.name)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        // Every instance is the registration's own, wrapped by whole decorations only.
        let unwrapped = names.values.map { name in
            name.replacingOccurrences(of: "child(", with: "").replacingOccurrences(of: "logging(", with: "")
                .replacingOccurrences(of: ")", with: "")
        }
        #expect(unwrapped.allSatisfy { $0 == "live" })
        #expect(names.values.count == 1_600)
        container.reset()
        child.reset()
        #expect(child.cachedFeedLoader().client.name == "live")
        #expect(container.httpClient().name == "live")
    }
}
