import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// Lets `gated`'s construction go on, then needs it.
    var needsGated: Provider<Node> {
        singleton {
            (self.getValue(forKey: "gate") as ConstructionGate?)?.open()
            _ = self.gated()
            return Node()
        }
    }
    /// Held in its construction until `needsGated`'s construction opens the gate.
    var gated: Provider<Node> {
        singleton {
            (self.getValue(forKey: "gate") as ConstructionGate?)?.enterAndWait()
            return Node()
        }
    }
}

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
            endProcessIfHung("a cycle across two threads")
            let container = DependencyContainer()
            container.setValue(Rendezvous(), forKey: "rendezvous")
            let otherFinished = DispatchSemaphore(value: 0)
            Thread {
                _ = container.crossB()
                otherFinished.signal()
            }.start()
            _ = container.crossA()
            otherFinished.wait()  // one of the two threads stops the process
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

    // MARK: - Not a cycle

    /// A thread builds `gated` while the main thread waits for it inside `needsGated`;
    /// the thread then asks for `needsGated`. Nothing deadlocks, so nothing may stop. The
    /// gate holds `gated` until `needsGated`'s construction has started, so the main thread
    /// is almost always already waiting when `gated` ends; every order must succeed.
    @Test func aFinishedConstructionIsNeverPartOfACycle() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a finished construction")
            for _ in 0..<30 {
                let container = DependencyContainer()
                let gate = ConstructionGate()
                container.setValue(gate, forKey: "gate")
                let done = DispatchSemaphore(value: 0)
                Thread {
                    _ = container.gated()
                    _ = container.needsGated()
                    done.signal()
                }.start()
                gate.entered.wait()
                _ = container.needsGated()
                done.wait()
            }
        }
    }
}
