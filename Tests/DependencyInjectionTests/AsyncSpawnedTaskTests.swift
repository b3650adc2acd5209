import DependencyInjection
import Foundation
import Testing

final class FeedRefresher: Sendable {
    init() {}
}

final class SyncEngine: Sendable {
    init() {}
}

final class SyncStatus: Sendable {
    let engine: SyncEngine
    init(engine: SyncEngine) { self.engine = engine }
}

extension DependencyContainer {
    /// Starts a task that refreshes through this very singleton, and finishes only once
    /// that task is asking for it.
    var feedRefresher: AsyncProvider<FeedRefresher> {
        singleton {
            let probe: SpawnedTaskProbe<FeedRefresher>? = self.getValue(forKey: "probe")
            Task {
                probe?.asking.open()
                let refresher = try await self.feedRefresher()
                probe?.resolved.put(refresher)
            }
            await probe?.asking.wait()
            return FeedRefresher()
        }
    }

    /// Starts a task that asks for `syncStatus`, which is built from this singleton, and
    /// finishes only once `syncStatus` is asking for it.
    var syncEngine: AsyncProvider<SyncEngine> {
        singleton {
            let probe: SpawnedTaskProbe<SyncStatus>? = self.getValue(forKey: "probe")
            Task {
                let status = try await self.syncStatus()
                probe?.resolved.put(status)
            }
            await probe?.asking.wait()
            return SyncEngine()
        }
    }

    var syncStatus: AsyncProvider<SyncStatus> {
        singleton {
            (self.getValue(forKey: "probe") as SpawnedTaskProbe<SyncStatus>?)?.asking.open()
            return SyncStatus(engine: try await self.syncEngine())
        }
    }
}

extension DependencyContainer {
    /// Starts a task that resolves this very singleton once the test says the construction
    /// has ended.
    var spawner: AsyncProvider<Node> {
        singleton {
            let probe: SpawnedTaskProbe<Node>? = self.getValue(forKey: "probe")
            Task {
                await probe?.constructionEnded.wait()
                probe?.resolved.put(try await self.spawner())
            }
            return Node()
        }
    }

    /// Builds `detachingInner`, then keeps building until the task that `detachingInner`
    /// started is asking for this singleton.
    var detachingOuter: AsyncProvider<Node> {
        singleton {
            let probe: SpawnedTaskProbe<Node>? = self.getValue(forKey: "probe")
            _ = try await self.detachingInner()
            probe?.constructionEnded.open()
            await probe?.asking.wait()
            return Node()
        }
    }

    /// Starts a task that, after this construction ends, asks for `detachingOuter`,
    /// which is still being built.
    var detachingInner: AsyncProvider<Node> {
        singleton {
            let probe: SpawnedTaskProbe<Node>? = self.getValue(forKey: "probe")
            Task {
                await probe?.constructionEnded.wait()
                probe?.asking.open()
                probe?.resolved.put(try await self.detachingOuter())
            }
            return Node()
        }
    }
}

/// A task that a construction starts is not part of that construction: when it asks for
/// the singleton still being built, it waits for it instead of being stopped as a cycle.
/// Each test runs in a child process, so a false cycle (a crash) fails only that test.
@Suite struct AsyncSpawnedTaskTests {
    // MARK: - The same singleton

    @Test func aTaskSpawnedByAConstructionWaitsForTheSingletonInConstruction() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a spawned task waiting for its singleton")
            for _ in 0..<50 {
                let container = DependencyContainer()
                let probe = SpawnedTaskProbe<FeedRefresher>()
                container.setValue(probe, forKey: "probe")
                let built = try await container.feedRefresher()
                let fromTask = await probe.resolved.value()
                precondition(fromTask === built, "the spawned task got another instance")
            }
        }
    }

    // MARK: - A dependent of the singleton

    @Test func aTaskSpawnedByAConstructionMayAwaitADependentOfIt() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a spawned task waiting for a dependent of its singleton")
            for _ in 0..<50 {
                let container = DependencyContainer()
                let probe = SpawnedTaskProbe<SyncStatus>()
                container.setValue(probe, forKey: "probe")
                let engine = try await container.syncEngine()
                let status = await probe.resolved.value()
                precondition(status.engine === engine, "the dependent was built from another engine")
                let cached = try await container.syncStatus()
                precondition(cached === status, "the dependent was built twice")
            }
        }
    }

    // MARK: - After the construction

    /// A task started by a construction outlives it; resolving the singleton from there
    /// later is not a cycle.
    @Test func aTaskStartedByAnAsyncConstructionMayResolveItLater() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a task resolving its singleton later")
            let container = DependencyContainer()
            let probe = SpawnedTaskProbe<Node>()
            container.setValue(probe, forKey: "probe")
            _ = try? await container.spawner()
            probe.constructionEnded.open()
            _ = await probe.resolved.value()
        }
    }

    /// A task started by a finished construction awaits an enclosing construction that is
    /// still in flight: that construction never awaits the task, so it is no cycle.
    @Test func aDetachedTaskMayAwaitAnEnclosingConstructionInFlight() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a task awaiting an enclosing construction")
            let container = DependencyContainer()
            let probe = SpawnedTaskProbe<Node>()
            container.setValue(probe, forKey: "probe")
            _ = try? await container.detachingOuter()
            _ = await probe.resolved.value()
        }
    }
}
