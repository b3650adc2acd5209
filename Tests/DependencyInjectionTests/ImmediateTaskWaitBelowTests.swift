@testable import DependencyInjection
import Foundation
import Testing

// While a task started with `Task.immediate` blocks its thread waiting for a construction
// on another thread, the construction below the task waits with it. That is a cycle only
// when the other construction waits, at some depth, for the one below: a third owner
// that merely waits for the construction below must wait, and get it, with no stop. And a
// cycle through three threads and two such tasks stops as the one through two does.

final class WaitBelowSignals: @unchecked Sendable {
    // @unchecked: the semaphores are thread-safe, and the flags are set before any thread starts.
    let engineBegan = DispatchSemaphore(value: 0)
    let releaseEngine = DispatchSemaphore(value: 0)
    let taskAsks = DispatchSemaphore(value: 0)
    let taskDone = DispatchSemaphore(value: 0)
    init() {}
}

final class WaitBelowObject: Sendable {
    init() {}
}

extension DependencyContainer {
    var waitBelowSignals: WaitBelowSignals { getValue(forKey: "wait-below.signals") as WaitBelowSignals? ?? WaitBelowSignals() }

    /// A store whose construction has the engine built on another thread, then starts a
    /// task at once that waits for the engine.
    var waitBelowStore: Provider<WaitBelowObject> {
        singleton {
            let signals = self.waitBelowSignals
            Thread { _ = self.waitBelowEngine() }.start()
            signals.engineBegan.wait()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate {
                    signals.taskAsks.signal()
                    _ = self.waitBelowEngine()
                    signals.taskDone.signal()
                }
            }
            return WaitBelowObject()
        }
    }

    /// An engine that waits for nothing the store builds: only for the test's release.
    var waitBelowEngine: Provider<WaitBelowObject> {
        singleton {
            let signals = self.waitBelowSignals
            signals.engineBegan.signal()
            signals.releaseEngine.wait()
            return WaitBelowObject()
        }
    }

    /// How many waited for the construction of `key` running here so far.
    func waitBelowWaiters(_ key: RegistrationKey) -> Int {
        withStateLock { $0.building.construction(of: key)?.waitRoom().waitedSoFar ?? 0 }
    }

    var threeThreadsA: Provider<WaitBelowObject> {
        singleton {
            Thread { _ = self.threeThreadsB() }.start()
            self.waitBelowSignals.engineBegan.wait()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.threeThreadsB() }
            }
            return WaitBelowObject()
        }
    }
    var threeThreadsB: Provider<WaitBelowObject> {
        singleton {
            Thread { _ = self.threeThreadsC() }.start()
            self.waitBelowSignals.taskAsks.wait()
            self.waitBelowSignals.engineBegan.signal()
            _ = self.threeThreadsC()
            return WaitBelowObject()
        }
    }
    var threeThreadsC: Provider<WaitBelowObject> {
        singleton {
            self.waitBelowSignals.taskAsks.signal()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.threeThreadsA() }
            }
            return WaitBelowObject()
        }
    }
}

/// Yields until `condition` holds: what the other threads reached, read under the
/// container's lock, lines the threads up.
private func yieldUntil(_ condition: () -> Bool) {
    while !condition() { sched_yield() }
}

@Suite struct ImmediateTaskWaitBelowTests {
    /// The store's task waits for the engine, which waits only for the test; a third
    /// thread then waits for the store, and only then is the engine released. The wait
    /// graph holds the third thread waiting for the store, whose owner waits (below the
    /// task) for the engine: no cycle, and everything finishes.
    @Test func aThirdOwnerWaitingForTheConstructionBelowTheTaskWaitsWithNoStop() async {
        let distinctStores = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
                for _ in 0..<20 {
                    let container = DependencyContainer()
                    let signals = WaitBelowSignals()
                    container.setValue(signals, forKey: "wait-below.signals")
                    let done = DispatchGroup()
                    let stores = Collected<ObjectIdentifier>()
                    done.enter()
                    Thread {
                        stores.append(ObjectIdentifier(container.waitBelowStore()))
                        done.leave()
                    }.start()
                    done.enter()
                    Thread {
                        signals.taskAsks.wait()
                        yieldUntil { container.waitBelowWaiters(container.waitBelowEngine.key) > 0 }
                        stores.append(ObjectIdentifier(container.waitBelowStore()))
                        done.leave()
                    }.start()
                    yieldUntil { container.waitBelowWaiters(container.waitBelowStore.key) > 0 }
                    signals.releaseEngine.signal()
                    done.wait()
                    signals.taskDone.wait()
                    distinctStores.append(Set(stores.values).count)
                }
            }
        #expect(finished)
        #expect(distinctStores.values == Array(repeating: 1, count: 20))
    }

    /// Thread 1 builds A, whose task waits for B; thread 2 builds B, which waits for C;
    /// thread 3 builds C, whose task waits for A.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func aCycleThroughThreeThreadsAndTwoImmediateTasksStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through three threads and two immediate tasks")
            let container = DependencyContainer()
            container.setValue(WaitBelowSignals(), forKey: "wait-below.signals")
            _ = container.threeThreadsA()
        }
        let output = standardError(of: result)
        #expect(output.contains("Fatal error: Circular dependency: "), "\(output)")
        #expect(output.contains("threeThreadsA ("), "\(output)")
        #expect(output.contains("A task started with Task.immediate inside"), "\(output)")
    }
}
