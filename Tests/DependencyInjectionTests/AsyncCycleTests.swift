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
    /// Awaits two singletons at once; one of them needs `fanOut` back.
    var fanOut: AsyncProvider<Node> {
        singleton {
            async let leaf = self.fanLeaf()
            async let back = self.fanBack()
            _ = try await (leaf, back)
            return Node()
        }
    }
    var fanLeaf: AsyncProvider<Node> {
        singleton {
            try await Task.sleep(nanoseconds: 100_000_000)
            return Node()
        }
    }
    var fanBack: AsyncProvider<Node> {
        singleton {
            try await Task.sleep(nanoseconds: 20_000_000)
            _ = try await self.fanOut()
            return Node()
        }
    }
}

@Suite struct AsyncCycleTests {
    /// The cycle runs through one of two concurrent awaits of the same construction;
    /// both waits must be in the graph for it to be found.
    @Test func cycleThroughOneOfSeveralConcurrentAwaitsStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await DependencyContainer().fanOut()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: fanOut -> fanBack -> fanOut"), "\(output)")
    }

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
