import DependencyInjection
import Testing

extension DependencyContainer {
    /// A factory that counts how often it runs.
    var countedLoader: Provider<any FeedLoader> {
        factory {
            self.count("countedLoader")
            return RemoteFeedLoader(client: self.httpClient())
        }
    }
}

/// Thread-safe: its only state is a `@Dependency` property.
final class CountedModel: @unchecked Sendable {
    @Dependency(\.countedLoader) var loader
}

/// Stress tests: threads start together behind a barrier and repeat, so that
/// ThreadSanitizer sees the accesses overlap.
@Suite struct ConcurrencyTests {
    @Test func singletonIsBuiltExactlyOnceUnderContention() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let builds = container.counter("httpClient")
            let seen = Collected<ObjectIdentifier>()
            #expect(await concurrentlyOffThePool { _ in seen.append(ObjectIdentifier(container.httpClient())) })
            #expect(builds.count == 1)
            #expect(Set(seen.values).count == 1)
        }
    }

    @Test func nestedSingletonsFromManyThreadsNeverDeadlock() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let clients = container.counter("httpClient")
            let loaders = container.counter("cachedFeedLoader")
            let threadsEnded = await concurrentlyOffThePool { index in
                if index.isMultiple(of: 2) {
                    _ = container.cachedFeedLoader()
                } else {
                    _ = container.httpClient()
                }
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            #expect(clients.count == 1)
            #expect(loaders.count == 1)
            #expect(container.cachedFeedLoader().client === container.httpClient())
        }
    }

    @Test func taskGroupOfManyTasksBuildsOneSingleton() async {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        await withTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<1_000 {
                group.addTask { ObjectIdentifier(container.httpClient()) }
            }
            var identities = Set<ObjectIdentifier>()
            for await identity in group { identities.insert(identity) }
            #expect(identities.count == 1)
        }
        #expect(builds.count == 1)
    }

    @Test func overrideResetAndResolveMayRunTogether() async {
        let container = DependencyContainer()
        let child = DependencyContainer(parent: container)
        let threadsEnded = await concurrentlyOffThePool { index in
            for round in 0..<200 {
                switch (index + round) % 5 {
                case 0: container.override(\.httpClient) { StubHTTPClient() }
                case 1: container.reset(\.httpClient)
                case 2: _ = container.cachedFeedLoader()
                case 3: _ = child.cachedFeedLoader()
                default: container.reset()
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        container.override(\.httpClient) { StubHTTPClient("final") }
        #expect(container.cachedFeedLoader().client.name == "final")
        #expect(child.cachedFeedLoader().client.name == "final")
    }

    @Test func dependencyPropertyFirstReadResolvesOnce() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let builds = container.counter("countedLoader")
            let model = DependencyContainer.withMain(container) { CountedModel() }
            let seen = Collected<ObjectIdentifier>()
            #expect(await concurrentlyOffThePool { _ in seen.append(ObjectIdentifier(model.loader)) })
            #expect(builds.count == 1)
            #expect(Set(seen.values).count == 1)
        }
    }

    @Test func dependencyPropertyReadSetResetAndSwitchTogether() async {
        let model = DependencyContainer.withMain(DependencyContainer()) { FeedViewModel() }
        let other = DependencyContainer(isMocked: true)
        let threadsEnded = await concurrentlyOffThePool { index in
            for round in 0..<200 {
                switch (index + round) % 4 {
                case 0: model.client = StubHTTPClient()
                case 1: model.$client.reset()
                case 2: model.$baseURL.container = round.isMultiple(of: 2) ? other : .default
                default: _ = (model.client.name, model.baseURL)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        model.$baseURL.container = other
        #expect(model.baseURL == "http://localhost:8080")
    }

    @Test func storageReadsAndWritesTogether() async {
        let container = DependencyContainer()
        let child = DependencyContainer(parent: container)
        let threadsEnded = await concurrentlyOffThePool { index in
            for round in 0..<500 {
                let key = "k\(round % 10)"
                switch (index + round) % 4 {
                case 0: container.setValue(round, forKey: key)
                case 1: _ = child.getValue(forKey: key) as Int?
                case 2: container.removeValue(forKey: key)
                default: child.setValue(index, forKey: key)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        container.setValue(1, forKey: "last")
        #expect(child.getValue(forKey: "last") == 1)
    }

    @Test func sharedInstanceUnderContentionIsOneWhileHeld() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let held = Collected<ImageCache>()
            #expect(await concurrentlyOffThePool { _ in held.append(container.imageCache()) })
            #expect(Set(held.values.map(ObjectIdentifier.init)).count == 1)
        }
    }
}
