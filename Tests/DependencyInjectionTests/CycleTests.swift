import DependencyInjection
import Foundation
import Testing

@Suite struct CycleTests {
    @Test func factoryCycleStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().left()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: left -> right -> left"))
    }

    @Test func singletonThatNeedsItselfStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().selfish()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: selfish -> selfish"))
    }

    @Test func cycleThroughAFactoryAndASingletonStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().pong()
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(output.contains("Circular dependency: pong -> ping -> pong"))
    }

    @Test func cycleAcrossTwoThreadsStopsInsteadOfDeadlocking() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.setValue(Rendezvous(), forKey: "rendezvous")
            let other = Thread { _ = container.crossB() }
            other.start()
            _ = container.crossA()
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 10)
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let named = output.contains("Circular dependency: crossA -> crossB -> crossA")
            || output.contains("Circular dependency: crossB -> crossA -> crossB")
        #expect(named, "\(output)")
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
