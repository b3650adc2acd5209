import DependencyInjection
import Testing

extension DependencyContainer {
    var asyncLeft: AsyncProvider<Node> { factory { _ = try await self.asyncRight(); return Node() } }
    var asyncRight: AsyncProvider<Node> { factory { _ = try await self.asyncLeft(); return Node() } }
    var asyncSelfish: AsyncProvider<Node> { singleton { _ = try await self.asyncSelfish(); return Node() } }

    /// `asyncCrossA` and `asyncCrossB` need each other; resolved in two tasks at once,
    /// both constructions are in flight (they meet at the stored rendezvous) before either
    /// asks for the other.
    var asyncCrossA: AsyncProvider<Node> {
        singleton {
            await (self.getValue(forKey: "rendezvous") as AsyncRendezvous?)?.arrive()
            _ = try await self.asyncCrossB()
            return Node()
        }
    }
    var asyncCrossB: AsyncProvider<Node> {
        singleton {
            await (self.getValue(forKey: "rendezvous") as AsyncRendezvous?)?.arrive()
            _ = try await self.asyncCrossA()
            return Node()
        }
    }

    var singletonOverFactory: AsyncProvider<Node> {
        singleton { _ = try await self.factoryBack(); return Node() }
    }
    var factoryBack: AsyncProvider<Node> {
        factory { _ = try await self.singletonOverFactory(); return Node() }
    }
}

@Suite struct AsyncCycleTests {
    @Test func asyncFactoryCycleStopsWithTheChain() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { _ = try await DependencyContainer().asyncLeft() })
        #expect(cycle?.names == ["asyncLeft", "asyncRight", "asyncLeft"], "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(["asyncLeft", "asyncRight", "asyncLeft"]) == true)
    }

    @Test func asyncSingletonThatNeedsItselfStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { _ = try await DependencyContainer().asyncSelfish() })
        #expect(cycle?.isCycle(["asyncSelfish", "asyncSelfish"]) == true, "\(cycle?.description ?? "")")
    }

    @Test func anAsyncCycleThroughAFactoryNamesTheFactory() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await DependencyContainer().singletonOverFactory()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["singletonOverFactory", "factoryBack", "singletonOverFactory"], "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(["singletonOverFactory", "factoryBack", "singletonOverFactory"]) == true)
    }

    @Test func cycleAcrossTwoTasksStopsInsteadOfHanging() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle across two tasks")
            let container = DependencyContainer()
            container.setValue(AsyncRendezvous(), forKey: "rendezvous")
            async let first = container.asyncCrossA()
            async let second = container.asyncCrossB()
            _ = try await (first, second)
        })
        #expect(cycle?.isCycle(["asyncCrossA", "asyncCrossB", "asyncCrossA"]) == true, "\(cycle?.description ?? "")")
    }
}
