import Foundation
import Testing
@testable import DependencyInjection

// A synchronous resolution is the frame its construction runs in, and an override of one
// key drops it without the list of keys. These tests try to break both: tasks that inherit
// a resolution's frame and outlive it, tracers, graph instances, waiters, changes during a
// construction, deinits that use the container, families, children and deep chains.

/// A weak reference that closures of any isolation may set and read.
final class FMAWeak: @unchecked Sendable {
    // @unchecked: `object` is only touched while holding `lock`.
    private let lock = NSLock()
    private weak var stored: FMAObject?
    init() {}
    var object: FMAObject? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// Something a test watches with a weak reference.
final class FMAObject: Sendable {
    let tag: Int
    init(_ tag: Int = 0) { self.tag = tag }
}

/// Uses its container when released: resolves, overrides and resets. A container that
/// released it under its lock would deadlock.
final class FMAUsesContainerWhenReleased: Sendable {
    unowned let container: DependencyContainer
    let releases: Counter
    init(_ container: DependencyContainer, releases: Counter) { (self.container, self.releases) = (container, releases) }
    deinit {
        _ = container.fmaPlain()
        _ = container.fmaLeaf()
        container.override(\.fmaOther) { FMAObject(99) }
        container.reset(\.fmaOther)
        releases.increment()
    }
}

extension DependencyContainer {
    var fmaLeaf: Provider<FMAObject> {
        singleton {
            self.count("fmaLeaf")
            return FMAObject(1)
        }
    }
    var fmaOther: Provider<FMAObject> { singleton { FMAObject(2) } }
    var fmaPlain: Provider<FMAObject> { factory { FMAObject(3) } }

    /// A singleton whose construction starts the task of the `WaitingTaskProbe` stored here.
    var fmaSpawning: Provider<FMAObject> {
        singleton {
            self.startWaitingTask()
            return FMAObject(4)
        }
    }
    /// A factory built from `fmaSpawning`, so that a traced resolution of it nests.
    var fmaAroundSpawning: Provider<FMAObject> { factory { self.fmaSpawning() } }

    /// Held at the gate under "fma.gate", if any, then built from `fmaLeaf`.
    var fmaGated: Provider<FMAObject> {
        singleton {
            self.count("fmaGated")
            (self.getValue(forKey: "fma.gate") as ConstructionGate?)?.enterAndWait()
            return FMAObject(self.fmaLeaf().tag + 10)
        }
    }

    /// A singleton whose construction starts a task that asks for the construction in
    /// progress; the construction ends once the task is about to ask.
    var fmaAskedBySpawnedTask: Provider<FMAObject> {
        singleton {
            self.count("fmaAskedBySpawnedTask")
            let probe: SpawnedTaskProbe<FMAObject>? = self.getValue(forKey: "fma.probe")
            let asking = DispatchSemaphore(value: 0)
            Task {
                asking.signal()
                probe?.resolved.put(self.fmaAskedBySpawnedTask())
            }
            asking.wait()
            return FMAObject(5)
        }
    }

    // Graph scope nested in singletons and factories.
    var fmaGraph: Provider<FMAObject> {
        graph {
            self.count("fmaGraph")
            return FMAObject(6)
        }
    }
    var fmaSingletonOverGraph: Provider<[FMAObject]> { singleton { [self.fmaGraph(), self.fmaGraph()] } }
    var fmaFactoryOverGraph: Provider<[FMAObject]> {
        factory { [self.fmaGraph()] + self.fmaSingletonOverGraph() + [self.fmaGraph()] }
    }

    // A family, with constructions that may be held at a gate.
    var fmaFamily: ProviderFamily<Int, FMAObject> {
        singleton { (n: Int) in
            if n < 0 { (self.getValue(forKey: "fma.gate") as ConstructionGate?)?.enterAndWait() }
            return FMAObject(n)
        }
    }

    /// A chain of singletons and factories, `n` deep, over `fmaLeaf`.
    subscript(fmaChain n: Int) -> Provider<Int> {
        if n % 3 == 1 {
            return factory(n) { n == 0 ? self.fmaLeaf().tag : self[fmaChain: n - 1]() + 1 }
        }
        return singleton(n) { n == 0 ? self.fmaLeaf().tag : self[fmaChain: n - 1]() + 1 }
    }

    /// Built from `fmaLeaf`, for children.
    var fmaFromLeaf: Provider<FMAObject> {
        singleton {
            self.count("fmaFromLeaf")
            return FMAObject(self.fmaLeaf().tag + 100)
        }
    }

    /// A construction that replaces its own override while it runs, leaving the resolution
    /// as the last holder of the override it ran.
    var fmaSelfReplacing: Provider<FMAObject> { singleton { FMAObject(7) } }

    // A cycle through three singletons, the middle one starting a task.
    var fmaCycleA: Provider<FMAObject> { singleton { _ = self.fmaCycleB(); return FMAObject() } }
    var fmaCycleB: Provider<FMAObject> {
        singleton {
            Task { _ = 0 }
            _ = self.fmaCycleC()
            return FMAObject()
        }
    }
    var fmaCycleC: Provider<FMAObject> { singleton { _ = self.fmaCycleA(); return FMAObject() } }

    /// A singleton whose value uses the container when released.
    var fmaReleasedUser: Provider<FMAUsesContainerWhenReleased> {
        singleton { [unowned self] in
            FMAUsesContainerWhenReleased(self, releases: self.getValue(forKey: "fma.releases") ?? Counter())
        }
    }
}

/// An object created in a task that a singleton's construction started.
final class FMAInjected: @unchecked Sendable {
    // @unchecked: the property resolves once, race-free, as `@Dependency` promises.
    @Dependency(\.fmaLeaf) var leaf
    init() {}
}

@Suite struct FrameMergeAttackTests {
    // MARK: - Tasks that inherit the resolution's frame

    /// A task started by a traced construction outlives it. Once the container's tracer is
    /// removed, nothing should hold it (nor what it captures): the frame the task inherited
    /// held only the trace batch, delivered and emptied at the end of the resolution.
    @Test func aTaskStartedByATracedConstructionDoesNotKeepTheTracer() async {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        weak var captured: FMAObject?
        let delivered = Counter()
        do {
            let sentinel = FMAObject()
            captured = sentinel
            container.tracer = ResolutionTracer { _ in withExtendedLifetime(sentinel) { delivered.increment() } }
        }
        _ = container.fmaAroundSpawning()
        let task = await probe.started.value()
        #expect(delivered.count == 1, "the batch is delivered when the outermost resolution ends")
        container.tracer = nil
        #expect(captured == nil, "a task the traced construction started keeps the removed tracer")
        probe.latch.open()
        await task.value
        #expect(captured == nil)
    }

    /// The container goes once nothing but a task its construction started refers to it:
    /// the resolution (the task's inherited frame) holds it unowned, and its in-flight
    /// record and override are cleared at the end.
    @Test func aTaskStartedByAConstructionDoesNotKeepTheContainer() async {
        let probe: WaitingTaskProbe
        weak var weakContainer: DependencyContainer?
        weak var built: FMAObject?
        do {
            let container = DependencyContainer()
            probe = WaitingTaskProbe(in: container)
            container.override(\.fmaSpawning) { [unowned container] in
                container.startWaitingTask()
                return FMAObject(40)
            }
            weakContainer = container
            built = container.fmaSpawning()
            #expect(built?.tag == 40)
        }
        let task = await probe.started.value()
        #expect(weakContainer == nil, "a running task started by a construction keeps the container")
        #expect(built == nil, "a running task started by a construction keeps what the container built")
        probe.latch.open()
        await task.value
    }

    /// A task the construction started asks for the construction in progress: it waits
    /// for it, and gets the same instance; no false cycle, no second build.
    @Test func aTaskStartedByAConstructionWaitsForIt() async {
        let container = DependencyContainer()
        let probe = SpawnedTaskProbe<FMAObject>()
        container.setValue(probe, forKey: "fma.probe")
        let builds = container.counter("fmaAskedBySpawnedTask")
        let resolvedHere = Collected<FMAObject>()
        let finished = await finishesWithoutHangingOffThePool { resolvedHere.append(container.fmaAskedBySpawnedTask()) }
        #expect(finished)
        let fromTask = await probe.resolved.value()
        #expect(fromTask === resolvedHere.values.first)
        #expect(builds.count == 1)
    }

    /// A `@Dependency` created in a task that a singleton's construction started, while
    /// that construction runs, must not hold the container strongly: the container keeps
    /// the singleton, which may keep the object. Once the container is dropped it goes,
    /// though the object lives on.
    @Test func aDependencyCreatedInATaskStartedByASingletonsConstructionHoldsTheContainerWeakly() async {
        weak var weakContainer: DependencyContainer?
        let made = Handoff<FMAInjected>()
        do {
            let container = DependencyContainer()
            weakContainer = container
            container.override(\.fmaSpawning) { [unowned container] in
                let created = DispatchSemaphore(value: 0)
                Task { [container] in
                    made.put(DependencyContainer.withMain(container) { FMAInjected() })
                    created.signal()
                }
                created.wait()
                return FMAObject(41)
            }
            let finished = await finishesWithoutHangingOffThePool { _ = container.fmaSpawning() }
            #expect(finished)
            let injected = await made.value()
            #expect(injected.leaf.tag == 1)
        }
        let injected = await made.value()
        #expect(weakContainer == nil, "a @Dependency created in a task the construction started keeps the container")
        withExtendedLifetime(injected) {}
    }

    // MARK: - Cycles

    /// A cycle through three singletons is stopped with its chain, though the middle
    /// construction started a task that inherited the frames.
    @Test func aCycleThroughSingletonsThatStartTasksStops() async {
        let cycle = CycleChain(
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                endProcessIfHung("a cycle through singletons")
                _ = DependencyContainer().fmaCycleA()
            })
        #expect(cycle?.isCycle(["fmaCycleA", "fmaCycleB", "fmaCycleC", "fmaCycleA"]) == true, "\(cycle?.description ?? "")")
    }

    // MARK: - Graph scope

    /// One graph instance per outermost resolution, through a singleton and a factory: the
    /// singleton is the frame that keeps them, and they go when it ends.
    @Test func graphInstancesAreSharedThroughNestedSingletonsAndFactories() {
        let container = DependencyContainer()
        let builds = container.counter("fmaGraph")
        let first = container.fmaFactoryOverGraph()
        #expect(first.count == 4)
        #expect(first.allSatisfy { $0 === first[0] }, "one graph instance per outermost resolution")
        #expect(builds.count == 1)
        let second = container.fmaFactoryOverGraph()
        #expect(second[0] === second[3])
        #expect(second[0] !== first[0], "the next outermost resolution gets another graph instance")
        #expect(second[1] === first[1], "the singleton keeps the instance it was built with")
        #expect(builds.count == 2)
    }

    /// What an outermost resolution built in graph scope goes when it ends, unless
    /// something else holds it: the resolution that kept it is a frame a task inherits.
    @Test func graphInstancesGoWithTheirResolutionThoughATaskInheritedIt() async {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        let graphInstance = FMAWeak()
        container.override(\.fmaSpawning) { [unowned container] in
            let instance = container.fmaGraph()
            graphInstance.object = instance
            #expect(container.fmaGraph() === instance)
            container.startWaitingTask()
            return FMAObject(42)
        }
        _ = container.fmaSpawning()
        let task = await probe.started.value()
        #expect(graphInstance.object == nil, "a graph instance outlives its outermost resolution")
        probe.latch.open()
        await task.value
    }

    // MARK: - Tracers

    /// Depths of traced resolutions through singletons and factories; the tracer resolves
    /// and overrides from its callback.
    @Test func tracedDepthsAndATracerThatResolvesAndOverrides() {
        let container = DependencyContainer()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { [unowned container] events in
            batches.append(events.map { "\($0.name)@\($0.depth):\($0.outcome.rawValue)" })
            _ = container.fmaLeaf()
            _ = container.fmaOther()
            container.override(\.fmaOther) { FMAObject(50) }
        }
        #expect(container[fmaChain: 3]() == 4)
        #expect(container.fmaOther().tag == 50, "the tracer's override is installed")
        container.tracer = nil
        let first = batches.values.first ?? []
        #expect(first.count == 5, "\(first)")
        let chain = (0...3).map { "subscript(fmaChain:)@\($0):built" }
        #expect(first == chain + ["fmaLeaf@4:built"])
        #expect(batches.values.count == 2, "the second batch is the traced fmaOther: \(batches.values)")
    }

    // MARK: - Waiters

    /// Many threads ask for a singleton while it is built; every one gets the instance the
    /// builder built, which is built once.
    @Test func manyThreadsWaitForOneConstruction() async {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "fma.gate")
        let builds = container.counter("fmaGated")
        let arrived = Arrivals()
        let got = Collected<FMAObject>()
        let finished = await finishesWithoutHangingOffThePool {
            let builder = onThread { container.fmaGated() }
            gate.entered.wait()
            let waiters = (0..<8).map { _ in
                onThread {
                    arrived.arrive()
                    return container.fmaGated()
                }
            }
            arrived.wait(for: 8)
            gate.open()
            got.append(builder())
            for waiter in waiters { got.append(waiter()) }
        }
        #expect(finished)
        #expect(got.values.count == 9)
        #expect(got.values.allSatisfy { $0 === got.values[0] })
        #expect(builds.count == 1)
        #expect(container.fmaGated() === got.values[0])
    }

    /// An override during a construction: the construction's instance goes to its caller,
    /// and is not kept; the next resolution gets the override.
    @Test func anOverrideDuringAConstructionIsNotLost() async {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "fma.gate")
        let fromConstruction = FMAWeak()
        let finished = await finishesWithoutHangingOffThePool {
            let builder = onThread { container.fmaGated() }
            gate.entered.wait()
            container.override(\.fmaGated) { FMAObject(60) }
            gate.open()
            let built = builder()
            fromConstruction.object = built
            #expect(built.tag == 11)
        }
        #expect(finished)
        #expect(fromConstruction.object == nil, "the instance built under the old registration is kept")
        #expect(container.fmaGated().tag == 60)
    }

    /// A reset of what the construction is built from, during the construction: the
    /// instance is handed out but not kept, the next resolution builds again.
    @Test func aResetOfADependencyDuringAConstructionDropsIt() async {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "fma.gate")
        let builds = container.counter("fmaGated")
        container.override(\.fmaLeaf) { FMAObject(5) }
        let finished = await finishesWithoutHangingOffThePool {
            let builder = onThread { container.fmaGated() }
            gate.entered.wait()
            container.reset(\.fmaLeaf)
            gate.open()
            #expect(builder().tag == 11, "the construction read the leaf after the reset")
        }
        #expect(finished)
        container.removeValue(forKey: "fma.gate")
        #expect(container.fmaGated().tag == 11)
        #expect(builds.count <= 2)
        container.override(\.fmaLeaf) { FMAObject(7) }
        #expect(container.fmaGated().tag == 17, "an override of a dependency drops the singleton built from it")
    }

    // MARK: - Releases that use the container

    /// A built value that uses the container when released (reset, override, reset all):
    /// nothing is released under a lock.
    @Test func releasedValuesMayUseTheContainer() async {
        let container = DependencyContainer()
        let releases = Counter()
        container.setValue(releases, forKey: "fma.releases")
        let finished = await finishesWithoutHangingOffThePool {
            _ = container.fmaReleasedUser()
            container.reset(\.fmaReleasedUser)
            _ = container.fmaReleasedUser()
            container.override(\.fmaReleasedUser) { [unowned container] in
                FMAUsesContainerWhenReleased(container, releases: releases)
            }
            _ = container.fmaReleasedUser()
            container.reset()
        }
        #expect(finished)
        #expect(releases.count == 3)
    }

    /// A construction replaces its own override while it runs: the resolution is then the
    /// last holder of the override it ran, and releases it at the end, with the captured
    /// object, whose deinit uses the container. It must not deadlock, and the instance
    /// built from the replaced override must not be kept.
    @Test func anOverrideReleasedByTheResolutionThatRanIt() async {
        let container = DependencyContainer()
        let releases = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            do {
                let captured = FMAUsesContainerWhenReleased(container, releases: releases)
                container.override(\.fmaSelfReplacing) { [unowned container] in
                    withExtendedLifetime(captured) {}
                    container.override(\.fmaSelfReplacing) { FMAObject(71) }
                    return FMAObject(70)
                }
            }
            #expect(container.fmaSelfReplacing().tag == 70)
        }
        #expect(finished)
        #expect(releases.count == 1, "the replaced override is released once the resolution ends")
        #expect(container.fmaSelfReplacing().tag == 71)
    }

    // MARK: - Families

    /// An override of the whole family while one argument's construction is in flight:
    /// that construction's instance is not kept.
    @Test func aFamilyOverrideDuringAConstruction() async {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "fma.gate")
        _ = container.fmaFamily(1)
        let finished = await finishesWithoutHangingOffThePool {
            let builder = onThread { container.fmaFamily(-1) }
            gate.entered.wait()
            container.override(\.fmaFamily) { n in FMAObject(1000 + n) }
            gate.open()
            #expect(builder().tag == -1)
        }
        #expect(finished)
        #expect(container.fmaFamily(-1).tag == 999)
        #expect(container.fmaFamily(1).tag == 1001)
        container.override(\.fmaFamily[2]) { FMAObject(2222) }
        #expect(container.fmaFamily(2).tag == 2222, "one argument's override wins over the family's")
        #expect(container.fmaFamily(1).tag == 1001)
        container.reset(\.fmaFamily[2])
        #expect(container.fmaFamily(2).tag == 1002)
        container.reset(\.fmaFamily)
        #expect(container.fmaFamily(2).tag == 2)
    }

    /// Thousands of arguments: an override of one drops that one, of the family all.
    @Test func thousandsOfArguments() {
        let container = DependencyContainer()
        let count = 3_000
        let first = (0..<count).map { container.fmaFamily($0) }
        #expect((0..<count).allSatisfy { container.fmaFamily($0) === first[$0] })
        container.override(\.fmaFamily[17]) { FMAObject(-17) }
        #expect(container.fmaFamily(17).tag == -17)
        #expect((0..<count).filter { $0 != 17 }.allSatisfy { container.fmaFamily($0) === first[$0] },
            "an override of one argument drops others")
        container.override(\.fmaFamily) { n in FMAObject(n + 1) }
        #expect(container.fmaFamily(17).tag == -17)
        #expect((0..<count).filter { $0 != 17 }.allSatisfy { container.fmaFamily($0).tag == $0 + 1 })
        container.reset()
        #expect((0..<count).allSatisfy { container.fmaFamily($0).tag == $0 && container.fmaFamily($0) !== first[$0] })
    }

    // MARK: - Deep chains, children

    /// A chain hundreds deep of singletons and factories: an override of the leaf (one
    /// key with dependents) drops every singleton above it.
    @Test func aDeepChainFollowsAnOverrideOfItsLeaf() async {
        let container = DependencyContainer()
        let depth = 600
        let leafBuilds = container.counter("fmaLeaf")
        let finished = await finishesWithoutHangingOffThePool {
            #expect(container[fmaChain: depth]() == depth + 1)
            container.override(\.fmaLeaf) { FMAObject(1000) }
            #expect(container[fmaChain: depth]() == depth + 1000)
            container.override(\.[fmaChain: depth / 2]) { -1 }
            #expect(container[fmaChain: depth]() == depth / 2 - 1)
            container.reset(\.[fmaChain: depth / 2])
            #expect(container[fmaChain: depth]() == depth + 1000)
            container.reset(\.fmaLeaf)
            #expect(container[fmaChain: depth]() == depth + 1)
        }
        #expect(finished)
        #expect(leafBuilds.count == 2)
    }

    /// A change in a parent reaches what its children and grandchildren built from it;
    /// a child's own override survives its parent's change.
    @Test func aParentsOverrideReachesItsChildren() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let grandchild = DependencyContainer(parent: child)
        let sibling = DependencyContainer(parent: parent)
        sibling.override(\.fmaLeaf) { FMAObject(3) }
        #expect(child.fmaFromLeaf().tag == 101)
        #expect(grandchild.fmaFromLeaf().tag == 101)
        #expect(sibling.fmaFromLeaf().tag == 103)
        parent.override(\.fmaLeaf) { FMAObject(2) }
        #expect(child.fmaFromLeaf().tag == 102)
        #expect(grandchild.fmaFromLeaf().tag == 102)
        #expect(sibling.fmaFromLeaf().tag == 103, "the parent's change replaced the child's own override")
        #expect(parent.fmaFromLeaf().tag == 102)
        parent.reset(\.fmaLeaf)
        #expect(grandchild.fmaFromLeaf().tag == 101)
        #expect(parent.fmaFromLeaf().tag == 101)
    }

    /// A parent's override while its child builds from it: the child's instance from the
    /// old value is not kept.
    @Test func aParentsOverrideWhileItsChildBuilds() async {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let gate = ConstructionGate()
        child.setValue(gate, forKey: "fma.gate")
        let finished = await finishesWithoutHangingOffThePool {
            let builder = onThread { child.fmaGated() }
            gate.entered.wait()
            parent.override(\.fmaGated) { FMAObject(80) }
            gate.open()
            #expect(builder().tag == 11)
        }
        #expect(finished)
        #expect(child.fmaGated().tag == 80, "the child keeps what it built before its parent's override")
    }
}
