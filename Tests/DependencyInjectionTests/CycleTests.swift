import DependencyInjection
import Foundation
import Testing

@Suite struct CycleTests {
    @Test func factoryCycleStopsWithTheChain() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { _ = DependencyContainer().left() })
        #expect(cycle?.names == ["left", "right", "left"])
        #expect(cycle?.isCycle(["left", "right", "left"]) == true, "\(cycle?.description ?? "")")
    }

    @Test func singletonThatNeedsItselfStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { _ = DependencyContainer().selfish() })
        #expect(cycle?.isCycle(["selfish", "selfish"]) == true, "\(cycle?.description ?? "")")
    }

    @Test func cycleThroughAFactoryAndASingletonStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { _ = DependencyContainer().pong() })
        #expect(cycle?.names == ["pong", "ping", "pong"], "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(["pong", "ping", "pong"]) == true)
    }

    @Test func cycleAcrossTwoThreadsStopsInsteadOfDeadlocking() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.setValue(Rendezvous(), forKey: "rendezvous")
            let other = Thread { _ = container.crossB() }
            other.start()
            _ = container.crossA()
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 10)
        })
        #expect(cycle?.isCycle(["crossA", "crossB", "crossA"]) == true, "\(cycle?.description ?? "")")
    }

    @Test func cycleThroughLazyDependencyPropertiesWorks() {
        let container = DependencyContainer()
        DependencyContainer.withMain(container) {
            let parent = container.lazyParent()
            #expect(parent.child.parent === parent)
            #expect(parent.child === container.lazyChild())
        }
    }
}
