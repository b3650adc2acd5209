import DependencyInjection
import Testing

extension DependencyContainer {
    var asyncLeft: AsyncProvider<Node> { factory { _ = try await self.asyncRight(); return Node() } }
    var asyncRight: AsyncProvider<Node> { factory { _ = try await self.asyncLeft(); return Node() } }
    var asyncSelfish: AsyncProvider<Node> { singleton { _ = try await self.asyncSelfish(); return Node() } }
    var asyncCrossA: AsyncProvider<Node> {
        singleton {
            try await Task.sleep(nanoseconds: 50_000_000)
            _ = try await self.asyncCrossB()
            return Node()
        }
    }
    var asyncCrossB: AsyncProvider<Node> {
        singleton {
            try await Task.sleep(nanoseconds: 50_000_000)
            _ = try await self.asyncCrossA()
            return Node()
        }
    }
}

extension DependencyContainer {
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

    @Test func cycleAcrossTwoTasksStopsInsteadOfHanging() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            async let first = container.asyncCrossA()
            async let second = container.asyncCrossB()
            _ = try await (first, second)
        })
        #expect(cycle?.isCycle(["asyncCrossA", "asyncCrossB", "asyncCrossA"]) == true, "\(cycle?.description ?? "")")
    }
}
