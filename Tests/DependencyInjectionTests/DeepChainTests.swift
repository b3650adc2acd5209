import DependencyInjection
import Testing

extension DependencyContainer {
    /// A chain of `n + 1` factories, each a registration of its own (one per argument).
    subscript(chainDepth n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? 0 : self[chainDepth: n - 1]() + 1 }
    }
    /// A chain that runs from `n` up to 199, then asks for 150 again: a cycle of 50
    /// registrations that closes 200 constructions deep.
    subscript(lateLoop n: Int) -> Provider<Int> {
        factory(n) { self[lateLoop: n == 199 ? 150 : n + 1]() }
    }
}

/// Chains far deeper than the buckets that file a thread's frames for the cycle check:
/// many frames share each bucket, and only a real repeat may stop.
@Suite struct DeepChainTests {
    @Test func aChainOfThreeHundredDistinctFactoriesIsNotACycle() {
        let container = DependencyContainer()
        #expect(container[chainDepth: 300]() == 300)
        // The same chain again, now from inside another construction of the same keys' family.
        #expect(container[chainDepth: 120]() == 120)
    }

    @Test func theSameRegistrationInTwoContainersIsNotACycle() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        parent.override(\.[chainDepth: 3]) { child[chainDepth: 2]() + 100 }
        // parent builds 3 through its override, which asks the child for 2: different
        // containers, so no repeat, and the child's 2 resolves normally.
        #expect(parent[chainDepth: 5]() == 104)
    }

    @Test func aCycleThatClosesTwoHundredConstructionsDeepStopsWithExactlyTheCycle() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[lateLoop: 0]()
        })
        // From the first construction of 150 to its second: 50 registrations, then 150 again.
        #expect(cycle?.links.count == 51, "\(cycle?.description ?? "")")
        #expect(cycle?.names.allSatisfy { $0 == "subscript(lateLoop:)" } == true)
    }
}
