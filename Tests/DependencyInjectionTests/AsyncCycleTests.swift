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

@Suite struct AsyncCycleTests {
    @Test func asyncFactoryCycleStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await DependencyContainer().asyncLeft()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: asyncLeft -> asyncRight -> asyncLeft"))
    }

    @Test func asyncSingletonThatNeedsItselfStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await DependencyContainer().asyncSelfish()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: asyncSelfish -> asyncSelfish"))
    }

    @Test func cycleAcrossTwoTasksStopsInsteadOfHanging() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            async let first = container.asyncCrossA()
            async let second = container.asyncCrossB()
            _ = try await (first, second)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let named = output.contains("Circular dependency: asyncCrossA -> asyncCrossB -> asyncCrossA")
            || output.contains("Circular dependency: asyncCrossB -> asyncCrossA -> asyncCrossB")
        #expect(named, "\(output)")
    }
}
