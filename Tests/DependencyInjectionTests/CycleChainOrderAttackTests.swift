import DependencyInjection
import Foundation
import Testing

// Cycles of constructions that wait for each other across tasks and threads: the message
// names every registration once, ends with the first, and starts with what the app asked
// for when one caller asked.

extension DependencyContainer {
    /// Three async singletons in a ring, each built in a task of its own, with no
    /// suspension of their own: alpha needs beta, beta needs gamma, gamma needs alpha.
    var orderRingAlpha: AsyncProvider<Node> { singleton { _ = try await self.orderRingBeta(); return Node() } }
    var orderRingBeta: AsyncProvider<Node> { singleton { _ = try await self.orderRingGamma(); return Node() } }
    var orderRingGamma: AsyncProvider<Node> { singleton { _ = try await self.orderRingAlpha(); return Node() } }
    /// Outside the ring: needs beta.
    var orderRingEntry: AsyncProvider<Node> { singleton { _ = try await self.orderRingBeta(); return Node() } }

    /// Two async shared instances that need each other.
    var orderSharedPing: AsyncProvider<Node> { shared { _ = try await self.orderSharedPong(); return Node() } }
    var orderSharedPong: AsyncProvider<Node> { shared { _ = try await self.orderSharedPing(); return Node() } }

    /// A family of async singletons: `orderLoop(1)` needs `orderLoop(2)`, which needs
    /// `orderLoop(3)`, which needs `orderLoop(1)`.
    func orderLoop(_ n: Int) -> AsyncProvider<Node> {
        singleton(n) {
            _ = try await self.orderLoop(n % 3 + 1)()
            return Node()
        }
    }

    /// An async singleton whose task runs an async factory inline, which needs another
    /// async singleton, which needs the first: hub -> spoke -> rim -> hub.
    var orderHub: AsyncProvider<Node> { singleton { _ = try await self.orderSpoke(); return Node() } }
    var orderSpoke: AsyncProvider<Node> { factory { _ = try await self.orderRim(); return Node() } }
    var orderRim: AsyncProvider<Node> { singleton { _ = try await self.orderHub(); return Node() } }

    /// Starts a task that asks for `orderSpawnedOther` (not awaited), then asks for it
    /// itself: the other singleton's construction is enclosed through the task.
    var orderSpawner: AsyncProvider<Node> {
        singleton {
            let spawned = Task { _ = try await self.orderSpawnedOther() }
            _ = try await self.orderSpawnedOther()
            _ = try await spawned.value
            return Node()
        }
    }
    var orderSpawnedOther: AsyncProvider<Node> { singleton { _ = try await self.orderSpawner(); return Node() } }

    /// Two sync singletons that need each other through a factory, each first asked by a
    /// thread of its own; both are in flight before either asks for the other.
    var orderCrossLeft: Provider<Node> {
        singleton {
            (self.getValue(forKey: "orderBarrier") as Rendezvous?)?.arrive()
            _ = self.orderCrossMiddle()
            return Node()
        }
    }
    var orderCrossMiddle: Provider<Node> { factory { _ = self.orderCrossRight(); return Node() } }
    var orderCrossRight: Provider<Node> {
        singleton {
            (self.getValue(forKey: "orderBarrier") as Rendezvous?)?.arrive()
            _ = self.orderCrossLeft()
            return Node()
        }
    }

    /// A family of sync singletons: `orderTrack(1)` needs `orderTrack(2)`, which needs
    /// `orderTrack(1)`; each first asked by a thread of its own.
    var orderTrack: ProviderFamily<Int, Node> {
        singleton { n in
            (self.getValue(forKey: "orderBarrier") as Rendezvous?)?.arrive()
            _ = self.orderTrack(n == 1 ? 2 : 1)
            return Node()
        }
    }

    /// An async factory asking for an async singleton that, once let through, needs
    /// another that needs it back: the factory's task can stop waiting (cancelled) and
    /// go on while the ring closes.
    var orderCancelEntry: AsyncProvider<Node> { factory { _ = try await self.orderCancelA(); return Node() } }
    var orderCancelA: AsyncProvider<Node> {
        singleton {
            (self.getValue(forKey: "orderStarted") as AsyncLatch?)?.open()
            await (self.getValue(forKey: "orderGate") as AsyncLatch?)?.wait()
            _ = try await self.orderCancelB()
            return Node()
        }
    }
    var orderLeaf: Provider<Node> { factory { Node() } }
    var orderAsyncLeaf: AsyncProvider<Node> { factory { Node() } }
    var orderCancelB: AsyncProvider<Node> { singleton { _ = try await self.orderCancelA(); return Node() } }

    /// An async singleton that starts another async singleton in a child task, then
    /// builds a sync singleton itself; the other's task builds a sync singleton that needs
    /// this one's, which needs it back.
    var orderMixTop: AsyncProvider<Node> {
        singleton {
            async let other = self.orderMixOther()
            _ = self.orderMixSyncLeft()
            _ = try await other
            return Node()
        }
    }
    var orderMixOther: AsyncProvider<Node> { singleton { _ = self.orderMixSyncRight(); return Node() } }
    var orderMixSyncLeft: Provider<Node> {
        singleton {
            (self.getValue(forKey: "orderBarrier") as Rendezvous?)?.arrive()
            _ = self.orderMixSyncRight()
            return Node()
        }
    }
    var orderMixSyncRight: Provider<Node> {
        singleton {
            (self.getValue(forKey: "orderBarrier") as Rendezvous?)?.arrive()
            _ = self.orderMixSyncLeft()
            return Node()
        }
    }
}

@Suite struct CycleChainOrderAttackTests {
    /// A ring of three async singletons asked for at alpha reads alpha, beta, gamma, alpha.
    @Test func aRingOfThreeAsyncSingletonsStartsAtAlpha() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("ring asked at alpha")
                _ = try await DependencyContainer().orderRingAlpha()
            })
        #expect(
            cycle?.names == ["orderRingAlpha", "orderRingBeta", "orderRingGamma", "orderRingAlpha"],
            "\(cycle?.description ?? "no message")")
        #expect(cycle?.namesEachRegistrationOnce == true)
    }

    /// Asked for at gamma, the same ring reads from gamma.
    @Test func aRingOfThreeAsyncSingletonsStartsAtGamma() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("ring asked at gamma")
                _ = try await DependencyContainer().orderRingGamma()
            })
        #expect(
            cycle?.names == ["orderRingGamma", "orderRingAlpha", "orderRingBeta", "orderRingGamma"],
            "\(cycle?.description ?? "no message")")
    }

    /// Entered through a singleton outside the ring, the chain starts where the ring is
    /// entered (beta), as on one thread.
    @Test func aRingEnteredFromOutsideStartsWhereItIsEntered() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("ring entered from outside")
                _ = try await DependencyContainer().orderRingEntry()
            })
        #expect(
            cycle?.names == ["orderRingBeta", "orderRingGamma", "orderRingAlpha", "orderRingBeta"],
            "\(cycle?.description ?? "no message")")
    }

    /// Two async shared instances: asked for pong, the chain reads pong, ping, pong.
    @Test func asyncSharedPairStartsWithWhatWasAsked() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("shared pair")
                _ = try await DependencyContainer().orderSharedPong()
            })
        #expect(
            cycle?.names == ["orderSharedPong", "orderSharedPing", "orderSharedPong"],
            "\(cycle?.description ?? "no message")")
    }

    /// Members of a family of async singletons are named by argument, from the one asked.
    @Test func asyncFamilyLoopStartsAtTheAskedMember() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("family loop")
                _ = try await DependencyContainer().orderLoop(2)()
            })
        #expect(cycle?.names == ["orderLoop(_:)", "orderLoop(_:)", "orderLoop(_:)", "orderLoop(_:)"], "\(cycle?.description ?? "no message")")
        #expect(cycle?.arguments == ["2", "3", "1", "2"], "\(cycle?.description ?? "no message")")
        #expect(cycle?.namesEachRegistrationOnce == true)
    }

    /// An async factory run inline in a singleton's task is a step of the chain, in place.
    @Test func anInlineAsyncFactoryKeepsItsPlaceAskedAtTheRim() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("hub asked at rim")
                _ = try await DependencyContainer().orderRim()
            })
        #expect(
            cycle?.names == ["orderRim", "orderHub", "orderSpoke", "orderRim"], "\(cycle?.description ?? "no message")")
    }

    /// Asked at the factory, which is built inline by the app's task and is no waiting
    /// room: the chain starts at the first singleton, as a thread's would.
    @Test func askedAtTheFactoryTheChainStartsAtTheFirstSingleton() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("hub asked at spoke")
                _ = try await DependencyContainer().orderSpoke()
            })
        #expect(
            cycle?.names == ["orderRim", "orderHub", "orderSpoke", "orderRim"], "\(cycle?.description ?? "no message")")
    }

    /// A singleton that starts a task asking for the other, then asks for it itself: the
    /// other is enclosed through the task; the chain starts at the one asked.
    @Test func aTaskStartedByTheConstructionKeepsTheOrder() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("spawner")
                _ = try await DependencyContainer().orderSpawner()
            })
        #expect(
            cycle?.names == ["orderSpawner", "orderSpawnedOther", "orderSpawner"], "\(cycle?.description ?? "no message")")
    }

    /// Two threads, each asking for one of two sync singletons that need each other
    /// through a factory: every registration once, ending with the first.
    @Test func twoThreadsTwoSingletonsThroughAFactory() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("two threads")
                let container = DependencyContainer()
                container.setValue(Rendezvous(), forKey: "orderBarrier")
                let other = DispatchSemaphore(value: 0)
                Thread {
                    _ = container.orderCrossRight()
                    other.signal()
                }.start()
                _ = container.orderCrossLeft()
                other.wait()
            })
        #expect(
            cycle?.isCycle(["orderCrossLeft", "orderCrossMiddle", "orderCrossRight", "orderCrossLeft"]) == true,
            "\(cycle?.description ?? "no message")")
    }

    /// The task that asked has stopped waiting (cancelled) and resolves on while the ring
    /// closes: the walk from the ring's builders passes the asking task's ended frame; the
    /// chain starts at the singleton it asked for.
    @Test func aCancelledAskerThatGoesOnDoesNotDisturbTheChain() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("cancelled asker")
                let container = DependencyContainer()
                let (started, gate) = (AsyncLatch(), AsyncLatch())
                container.setValue(started, forKey: "orderStarted")
                container.setValue(gate, forKey: "orderGate")
                let asker = Task { _ = try await container.orderCancelEntry() }
                await started.wait()
                asker.cancel()
                _ = await asker.result
                let busy = Task {
                    while true {
                        _ = container.orderLeaf()
                        _ = try await container.orderAsyncLeaf()
                        await Task.yield()
                    }
                }
                gate.open()
                _ = await busy.result
            })
        #expect(
            cycle?.names == ["orderCancelA", "orderCancelB", "orderCancelA"], "\(cycle?.description ?? "no message")")
    }

    /// Two threads each asking for one member of a sync family whose members need each
    /// other: both members named by argument, once each, ending with the first.
    @Test func twoThreadsTwoFamilyMembers() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("two family members")
                let container = DependencyContainer()
                container.setValue(Rendezvous(), forKey: "orderBarrier")
                let other = DispatchSemaphore(value: 0)
                Thread {
                    _ = container.orderTrack(2)
                    other.signal()
                }.start()
                _ = container.orderTrack(1)
                other.wait()
            })
        #expect(cycle?.names == ["orderTrack", "orderTrack", "orderTrack"], "\(cycle?.description ?? "no message")")
        #expect(cycle?.namesEachRegistrationOnce == true, "\(cycle?.description ?? "no message")")
        #expect(cycle?.arguments.first == cycle?.arguments.last)
        #expect(Set(cycle?.arguments.compactMap { $0 } ?? []) == ["1", "2"])
    }

    /// Sync singletons built in two tasks of one async construction wait for each other:
    /// every registration once, ending with the first.
    @Test func syncSingletonsInTwoTasksOfOneAsyncConstruction() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("mix")
                let container = DependencyContainer()
                container.setValue(Rendezvous(), forKey: "orderBarrier")
                _ = try await container.orderMixTop()
            })
        #expect(
            cycle?.isCycle(["orderMixSyncLeft", "orderMixSyncRight", "orderMixSyncLeft"]) == true,
            "\(cycle?.description ?? "no message")")
    }

    /// Asked through a request's scope, which hands the singletons to its app container.
    @Test func aRingAskedThroughAScopeStartsWhereAsked() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("ring through a scope")
                let app = DependencyContainer()
                _ = try await DependencyContainer(scopeOf: app).orderRingBeta()
            })
        #expect(
            cycle?.names == ["orderRingBeta", "orderRingGamma", "orderRingAlpha", "orderRingBeta"],
            "\(cycle?.description ?? "no message")")
        #expect(cycle?.namesEachRegistrationOnce == true)
    }

    /// Asked through a child container.
    @Test func aRingAskedThroughAChildStartsWhereAsked() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("ring through a child")
                let app = DependencyContainer()
                _ = try await DependencyContainer(parent: app).orderRingGamma()
            })
        #expect(
            cycle?.names == ["orderRingGamma", "orderRingAlpha", "orderRingBeta", "orderRingGamma"],
            "\(cycle?.description ?? "no message")")
    }
}
