import DependencyInjection
import Foundation
import Testing

final class AsyncShutdownRaceEngine: Sendable {
    let counters: AsyncShutdownRaceCounters
    init(_ counters: AsyncShutdownRaceCounters) { self.counters = counters; counters.built.increment() }
}
final class AsyncShutdownRaceUser: Sendable {
    let engine: AsyncShutdownRaceEngine
    init(_ engine: AsyncShutdownRaceEngine) { self.engine = engine; engine.counters.usersBuilt.increment() }
}
final class AsyncShutdownRaceCounters: Sendable {
    let built = Counter()
    let tornDown = Counter()
    let usersBuilt = Counter()
    let usersTornDown = Counter()
}

extension DependencyContainer {
    var asyncShutdownRaceCounters: AsyncShutdownRaceCounters { getValue(forKey: "async-shutdown-race.counters")! }
    var asyncShutdownRaceEngine: AsyncProvider<AsyncShutdownRaceEngine> {
        singleton { AsyncShutdownRaceEngine(self.asyncShutdownRaceCounters) }.onShutdown { engine in
            await Task.yield()
            engine.counters.tornDown.increment()
        }
    }
    var asyncShutdownRaceUser: AsyncProvider<AsyncShutdownRaceUser> {
        singleton { AsyncShutdownRaceUser(try await self.asyncShutdownRaceEngine()) }.onShutdown { user in
            await Task.yield()
            user.engine.counters.usersTornDown.increment()
        }
    }
}

@Suite struct AsyncShutdownRaceTests {
    /// Async shutdowns racing async resolutions: once the last shutdown runs with nothing
    /// being built, every instance built was torn down exactly once.
    @Test func racingAsyncShutdownsTearEachInstanceDownOnce() async throws {
        let container = DependencyContainer()
        let counters = AsyncShutdownRaceCounters()
        container.setValue(counters, forKey: "async-shutdown-race.counters")
        let finished = await endsWithoutHanging {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<6 {
                    group.addTask {
                        for _ in 0..<200 {
                            if task < 2 {
                                await container.shutdown()
                            } else if task < 4 {
                                _ = try? await container.asyncShutdownRaceUser()
                            } else {
                                _ = try? await DependencyContainer(scopeOf: container).asyncShutdownRaceEngine()
                            }
                        }
                    }
                }
            }
            await container.shutdown()
        }
        #expect(finished, "hung")
        #expect(counters.built.count == counters.tornDown.count,
                "built \(counters.built.count) engines, tore down \(counters.tornDown.count)")
        #expect(counters.usersBuilt.count == counters.usersTornDown.count,
                "built \(counters.usersBuilt.count) users, tore down \(counters.usersTornDown.count)")
        #expect(container.instanceIfBuilt(\.asyncShutdownRaceEngine) == nil)
    }
}
