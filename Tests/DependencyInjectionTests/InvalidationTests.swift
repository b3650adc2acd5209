import DependencyInjection
import Foundation
import Testing

final class Report: Sendable {
    let id: Int
    let formatter: ReportFormatter
    init(id: Int, formatter: ReportFormatter) {
        self.id = id
        self.formatter = formatter
    }
}

final class CatalogEndpoint: Sendable {
    let url: String
    init(url: String) { self.url = url }
}

final class CatalogService: Sendable {
    let endpoint: CatalogEndpoint
    init(endpoint: CatalogEndpoint) { self.endpoint = endpoint }
}

extension DependencyContainer {
    subscript(report id: Int) -> Provider<Report> {
        singleton(id) {
            self.count("report")
            return Report(id: id, formatter: self.reportFormatter())
        }
    }

    var catalogEndpoint: Provider<CatalogEndpoint> {
        singleton { CatalogEndpoint(url: "https://catalog.example.com") }
    }

    /// Resolves its endpoint on a helper queue and joins it with a `DispatchGroup`.
    var catalogService: Provider<CatalogService> {
        singleton {
            let endpoint = Collected<CatalogEndpoint>()
            let group = DispatchGroup()
            group.enter()
            DispatchQueue.global().async {
                endpoint.append(self.catalogEndpoint())
                group.leave()
            }
            group.wait()
            return CatalogService(endpoint: endpoint.values[0])
        }
    }

    /// Resolves its endpoint in a detached task that it awaits.
    var catalogLoader: AsyncProvider<CatalogService> {
        singleton {
            let endpoint = await Task.detached { self.catalogEndpoint() }.value
            return CatalogService(endpoint: endpoint)
        }
    }
}

extension DependencyContainer {
    /// Counts its constructions, and holds each at the stored gate (if any).
    var gatedOnce: Provider<Node> {
        singleton {
            self.count("gatedOnce")
            (self.getValue(forKey: "gate") as ConstructionGate?)?.enterAndWait()
            return Node()
        }
    }

    /// Starts a task that resolves `laterDependency` once the test says this
    /// construction has ended.
    var laterUser: AsyncProvider<Node> {
        singleton {
            self.count("laterUser")
            let probe: SpawnedTaskProbe<Node>? = self.getValue(forKey: "probe")
            Task {
                await probe?.constructionEnded.wait()
                probe?.resolved.put(try await self.laterDependency())
            }
            return Node()
        }
    }
    var laterDependency: AsyncProvider<Node> { singleton { Node() } }
}

/// An override drops every cached instance built from what it replaces, and only those;
/// they are built again on demand.
@Suite struct InvalidationTests {
    // MARK: - Scale

    /// 10,000 parameterized singletons built from one dependency. Dropping them costs
    /// O(dropped), well under a second; the old per-key rebuild of the singleton table took
    /// minutes for this one override (90 s for 5,000). The time limit is a hang guard,
    /// generous enough for ThreadSanitizer on a loaded machine.
    @Test(.timeLimit(.minutes(5)))
    func anOverrideDropsEveryParameterizedSingletonBuiltFromItAndEachIsRebuiltOnDemand() {
        let count = 10_000
        let container = DependencyContainer()
        let builds = container.counter("report")
        let before = (0..<count).map { container[report: $0]() }
        let unrelated = container[session: "unrelated"]()
        #expect(builds.count == count)

        container.override(\.reportFormatter) { ReportFormatter(locale: "fr") }
        #expect(builds.count == count, "nothing is rebuilt before it is asked for")
        #expect(container[session: "unrelated"]() === unrelated)

        let after = (0..<count).map { container[report: $0]() }
        #expect(builds.count == 2 * count)
        #expect(after.allSatisfy { $0.formatter.locale == "fr" })
        #expect(zip(before, after).allSatisfy { $0 !== $1 })
        #expect(zip(after, 0..<count).allSatisfy { $0.id == $1 })
        #expect(container[report: count - 1]() === after[count - 1])
        #expect(builds.count == 2 * count)
    }

    // MARK: - Uses off the constructing thread

    /// The construction waits on a `DispatchGroup` for a helper queue that resolves the
    /// endpoint: that resolution is a use of the singleton in construction.
    @Test func aSingletonThatResolvedOnAHelperQueueIsRebuiltAfterAnOverride() {
        let container = DependencyContainer()
        let first = container.catalogService()
        #expect(first.endpoint.url == "https://catalog.example.com")

        container.override(\.catalogEndpoint) { CatalogEndpoint(url: "http://localhost:8080") }
        let second = container.catalogService()
        #expect(second !== first)
        #expect(second.endpoint.url == "http://localhost:8080")
        #expect(container.catalogService() === second)
    }

    @Test func anAsyncSingletonThatResolvedInAnAwaitedDetachedTaskIsRebuiltAfterAnOverride() async throws {
        let container = DependencyContainer()
        let first = try await container.catalogLoader()
        #expect(first.endpoint.url == "https://catalog.example.com")

        container.override(\.catalogEndpoint) { CatalogEndpoint(url: "http://localhost:8080") }
        let second = try await container.catalogLoader()
        #expect(second !== first)
        #expect(second.endpoint.url == "http://localhost:8080")
        #expect(try await container.catalogLoader() === second)
    }

    // MARK: - What is not a use

    /// An override of something the construction never resolved, made while it is in
    /// flight, keeps what it builds: one construction.
    @Test func anUnrelatedOverrideDuringAConstructionKeepsOneSingleton() {
        let container = DependencyContainer()
        let builds = container.counter("gatedOnce")
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "gate")
        let first = Collected<Node>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            first.append(container.gatedOnce())
            done.signal()
        }.start()
        gate.entered.wait()
        container.override(\.imageCache) { ImageCache() }
        gate.open()
        done.wait()
        #expect(container.gatedOnce() === first.values.first)
        #expect(builds.count == 1)
    }

    /// What a task started by a construction resolves after the construction has ended is
    /// not a use of it.
    @Test func whatADetachedTaskResolvesLaterIsNotADependency() async throws {
        let container = DependencyContainer()
        let builds = container.counter("laterUser")
        let probe = SpawnedTaskProbe<Node>()
        container.setValue(probe, forKey: "probe")
        let first = try await container.laterUser()
        probe.constructionEnded.open()
        _ = await probe.resolved.value()
        container.override(\.laterDependency) { Node() }
        #expect(try await container.laterUser() === first)
        #expect(builds.count == 1)
    }
}
