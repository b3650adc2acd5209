import DependencyInjection
import Foundation
import Testing

final class ShutdownRaceLeaf: Sendable {
    let counters: ShutdownRaceCounters?
    init(_ counters: ShutdownRaceCounters?) { self.counters = counters; counters?.built.increment() }
}
final class ShutdownRaceTop: Sendable {
    let leaf: ShutdownRaceLeaf
    init(_ leaf: ShutdownRaceLeaf) { self.leaf = leaf }
}
final class ShutdownRaceCounters: Sendable {
    let built = Counter()
    let tornDown = Counter()
    let topBuilt = Counter()
    let topTornDown = Counter()
}

extension DependencyContainer {
    var shutdownRaceCounters: ShutdownRaceCounters? { getValue(forKey: "shutdown-race.counters") }
    var shutdownRaceLeaf: Provider<ShutdownRaceLeaf> {
        singleton { ShutdownRaceLeaf(self.shutdownRaceCounters) }.onShutdown { $0.counters?.tornDown.increment() }
    }
    var shutdownRaceTop: Provider<ShutdownRaceTop> {
        singleton {
            self.shutdownRaceCounters?.topBuilt.increment()
            return ShutdownRaceTop(self.shutdownRaceLeaf())
        }.onShutdown { _ in DependencyContainer.shutdownRaceTopTornDown?.topTornDown.increment() }
    }
    var shutdownRaceScopedTop: Provider<ShutdownRaceTop> {
        scoped { ShutdownRaceTop(self.shutdownRaceLeaf()) }
    }
    nonisolated(unsafe) static var shutdownRaceTopTornDown: ShutdownRaceCounters?
}

@Suite(.serialized) struct ShutdownRaceTeardownCountTests {
    /// Every instance built is torn down exactly once by the shutdowns, however they race
    /// with resolutions, provided a last shutdown runs when nothing is being built.
    @Test func eachBuiltSingletonIsTornDownExactlyOnceUnderRacingShutdowns() async {
        let container = DependencyContainer()
        let counters = ShutdownRaceCounters()
        container.setValue(counters, forKey: "shutdown-race.counters")
        DependencyContainer.shutdownRaceTopTornDown = counters
        defer { DependencyContainer.shutdownRaceTopTornDown = nil }
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for _ in 0..<500 {
                if thread == 0 {
                    container.shutdown()
                } else if thread == 1 {
                    _ = container.shutdownRaceTop()
                } else {
                    _ = container.shutdownRaceLeaf()
                    _ = DependencyContainer(scopeOf: container).shutdownRaceTop()
                }
            }
        }, "hung")
        shutdownRaceShutDown(container)
        #expect(counters.built.count == counters.tornDown.count,
                "built \(counters.built.count) leaves, tore down \(counters.tornDown.count)")
        #expect(counters.topBuilt.count == counters.topTornDown.count,
                "built \(counters.topBuilt.count) tops, tore down \(counters.topTornDown.count)")
        #expect(container.instanceIfBuilt(\.shutdownRaceLeaf) == nil)
    }

    /// After the threads are done, what a singleton was built from is what the container
    /// serves, in a world child and in a scope, while the parent overrode the leaf meanwhile.
    @Test func childrenEndConsistentAfterParentOverridesWhileTheyResolve() async {
        let parent = DependencyContainer()
        let world = DependencyContainer(parent: parent)
        let scope = DependencyContainer(scopeOf: parent)
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for round in 0..<500 {
                switch thread {
                case 0: parent.override(\.shutdownRaceLeaf) { ShutdownRaceLeaf(nil) }
                        if round % 10 == 0 { parent.reset(\.shutdownRaceLeaf) }
                case 1: _ = world.shutdownRaceTop(); _ = world.shutdownRaceLeaf()
                case 2: _ = scope.shutdownRaceTop(); _ = scope.shutdownRaceScopedTop(); _ = scope.shutdownRaceLeaf()
                default: _ = parent.shutdownRaceTop()
                }
            }
        }, "hung")
        #expect(world.shutdownRaceTop().leaf === world.shutdownRaceLeaf(), "the world kept a top built from a replaced leaf")
        #expect(scope.shutdownRaceTop().leaf === scope.shutdownRaceLeaf(), "the scope kept a top built from a replaced leaf")
        #expect(scope.shutdownRaceScopedTop().leaf === scope.shutdownRaceLeaf(), "the scope kept a scoped top built from a replaced leaf")
        #expect(parent.shutdownRaceTop().leaf === parent.shutdownRaceLeaf())
        #expect(scope.shutdownRaceTop() === parent.shutdownRaceTop())
    }
}

/// The synchronous shutdown, from async code.
func shutdownRaceShutDown(_ container: DependencyContainer) { container.shutdown() }
