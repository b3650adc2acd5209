import DependencyInjection
import Foundation
import Testing

// Everyday resolutions find the construction in progress through a per-thread slot, and
// plain factories take a lean road. These tests pin what users rely on across that road:
// which container an object built anywhere takes, which container it holds weakly, which
// overrides and decorations apply, what counts as a cycle, and what `main` is.

/// An object that records which container its property resolves from, without resolving.
final class EngineProbe: @unchecked Sendable {
    @Dependency(\.engineTag) var tag
    init() {}
}

/// Releases an object whose `deinit` resolves from the container, inside a construction.
final class ResolvesOnDeinit: @unchecked Sendable {
    let container: DependencyContainer
    let seen: Collected<String>
    init(container: DependencyContainer, seen: Collected<String>) { (self.container, self.seen) = (container, seen) }
    deinit { seen.append(container.engineTagged()) }
}

extension DependencyContainer {
    var engineTag: String? { getValue(forKey: "engine.tag") }
    /// A factory that reports the container it was built in.
    var engineTagged: Provider<String> { factory { self.engineTag ?? "untagged" } }
    var engineProbe: Provider<EngineProbe> { factory { EngineProbe() } }
    var engineSingletonProbe: Provider<EngineProbe> { singleton { EngineProbe() } }

    /// A factory resolved inside a singleton, that creates an `EngineProbe` taking this
    /// container in a task it starts, and waits for it: the probe is created while the
    /// singleton is still built.
    var probeFromATaskInAFactory: Provider<Handoff<EngineProbe>> {
        factory {
            let handoff = Handoff<EngineProbe>()
            let created = DispatchSemaphore(value: 0)
            Task {
                handoff.put(DependencyContainer.withMain(self) { EngineProbe() })
                created.signal()
            }
            created.wait()
            return handoff
        }
    }
    var singletonAroundTheFactory: Provider<Handoff<EngineProbe>> { singleton { self.probeFromATaskInAFactory() } }

    /// A factory whose first construction starts a task that resolves this very factory,
    /// and waits for it.
    var selfSpawningFactory: Provider<Int> {
        factory {
            let calls: Counter = self.getValue(forKey: "engine.calls")!
            calls.increment()
            guard calls.count == 1 else { return 2 }
            let inner = DispatchSemaphore(value: 0)
            let result = Collected<Int>()
            Task {
                result.append(self.selfSpawningFactory())
                inner.signal()
            }
            inner.wait()
            return 1 + result.values[0]
        }
    }

    /// Resolves `engineTagged` and creates an `EngineProbe` through `queue.sync`, inside
    /// its own construction.
    var throughQueueSync: Provider<(String, EngineProbe)> {
        factory {
            DispatchQueue(label: "engine.queue").sync { (self.engineTagged(), self.engineProbe()) }
        }
    }

    /// Resolves this very factory again on a thread of its own, and waits for it.
    var onAnotherThread: Provider<String> {
        factory {
            let calls: Counter = self.getValue(forKey: "engine.calls")!
            calls.increment()
            guard calls.count == 1 else { return "inner:" + self.engineTagged() }
            let done = DispatchSemaphore(value: 0)
            let result = Collected<(String, DependencyContainer?)>()
            Thread {
                let probe = self.engineProbe()
                result.append((self.onAnotherThread(), probe.$tag.container))
                done.signal()
            }.start()
            done.wait()
            let (inner, container) = result.values[0]
            return "outer(\(inner), \(container === self))"
        }
    }

    /// Resolves `engineTagged` through `DispatchQueue.global().sync` inside its construction.
    var throughGlobalSync: Provider<String> {
        factory { DispatchQueue.global().sync { self.engineTagged() } }
    }

    /// Releases an object whose `deinit` resolves from this container, while it builds.
    var releasesInside: Provider<Int> {
        factory {
            let seen: Collected<String> = self.getValue(forKey: "engine.seen")!
            var object: ResolvesOnDeinit? = ResolvesOnDeinit(container: self, seen: seen)
            withExtendedLifetime(object) {}
            object = nil
            return seen.values.count
        }
    }

    // A cycle that goes factory -> singleton -> the same factory.
    var cycleFactory: Provider<Int> { factory { self.cycleSingleton() + 1 } }
    var cycleSingleton: Provider<Int> { singleton { self.cycleFactory() } }

    /// An async factory whose body resolves two sync factories that ask for each other.
    var asyncAroundACycle: AsyncProvider<Int> { factory { self.pingFactory() } }
    var pingFactory: Provider<Int> { factory { self.pongFactory() } }
    var pongFactory: Provider<Int> { factory { self.pingFactory() } }

    /// A chain of factories, one registration per argument, that asks for `closingAt` again
    /// after `last`.
    subscript(engineChain n: Int) -> Provider<Int> {
        factory(n) {
            let (last, closing): (Int, Int?) = (self.getValue(forKey: "engine.last")!, self.getValue(forKey: "engine.closing"))
            if n == last { return closing.map { self[engineChain: $0]() } ?? n }
            return self[engineChain: n + 1]()
        }
    }

    /// A factory whose first construction starts an immediate task (run on this thread
    /// before `Task.immediate` returns) that resolves this very factory again.
    var immediateReentry: Provider<Int> {
        factory {
            let calls: Counter = self.getValue(forKey: "engine.calls")!
            calls.increment()
            guard calls.count == 1 else { return 2 }
            let inner = Collected<Int>()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { inner.append(self.immediateReentry()) }
            }
            // The immediate task ran to its end on this thread: it never suspends.
            precondition(inner.values == [2], "the immediate task did not run synchronously")
            return 1 + inner.values[0]
        }
    }

    /// A factory that, in an immediate task, has another container build an `EngineProbe`.
    var probeFromAnImmediateTask: Provider<EngineProbe?> {
        factory {
            let other: DependencyContainer = self.getValue(forKey: "engine.other")!
            let built = Collected<EngineProbe>()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { built.append(other.engineProbe()) }
            }
            return built.values.first
        }
    }

    /// A factory that starts a task resolving `engineTagged`, and waits for it.
    var tracedSpawningFactory: Provider<Int> { factory { self.tagInAWaitedTask() } }
    /// The same, as a singleton.
    var tracedSpawningSingleton: Provider<Int> { singleton { self.tagInAWaitedTask() } }

    /// Starts a task that resolves `engineTagged`, and waits for it.
    func tagInAWaitedTask() -> Int {
        runningATaskAndWaiting { _ = self.engineTagged() }
        return 0
    }

    /// A graph registration, and a factory that resolves it twice through two factories.
    var engineUnit: Provider<UnitOfWork> { graph { UnitOfWork() } }
    var engineUnitHolder: Provider<UnitOfWork> { factory { self.engineUnit() } }
    var engineUnitPair: Provider<(UnitOfWork, UnitOfWork, UnitOfWork)> {
        factory { (self.engineUnitHolder(), self.engineUnitHolder(), self.engineUnit()) }
    }

    /// App-wide, built by the app container even when a scope asks first: the factory it
    /// resolves through `self` runs in the app container too.
    var appWideTag: Provider<String> { singleton { "app-wide(" + self.engineTagged() + ")" } }
}

@Suite struct EngineSpeedAttackTests {
    private func tagged(_ tag: String, parent: DependencyContainer? = nil) -> DependencyContainer {
        let container = parent.map { DependencyContainer(parent: $0) } ?? DependencyContainer()
        container.setValue(tag, forKey: "engine.tag")
        return container
    }

    // MARK: - Which container an object takes, and how it holds it

    @Test func anObjectCreatedByATaskOfAFactoryInsideASingletonHoldsTheContainerWeakly() async {
        let released = Liveness()
        let tookTheContainer = Collected<Bool>()
        #expect(await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            released.watch(container)
            let handoff = container.singletonAroundTheFactory()
            let probe = Collected<EngineProbe>()
            let got = DispatchSemaphore(value: 0)
            Task {
                probe.append(await handoff.value())
                got.signal()
            }
            got.wait()
            tookTheContainer.append(probe.values.first?.$tag.container === container)
        })
        #expect(tookTheContainer.values == [true])
        // The singleton keeps the probe: the probe must not keep the container.
        #expect(!released.isAlive)
    }

    @Test func aSingletonsPropertyHoldsItsContainerWeaklyAndTheContainerIsFreed() {
        weak var released: DependencyContainer?
        do {
            let container = tagged("singleton")
            released = container
            let probe = container.engineSingletonProbe()
            #expect(probe.$tag.container === container)
            #expect(probe.tag == "singleton")
        }
        #expect(released == nil)
    }

    @Test func aFactorysPropertyHoldsItsContainerStrongly() {
        weak var released: DependencyContainer?
        var probe: EngineProbe?
        do {
            let container = tagged("factory")
            released = container
            probe = container.engineProbe()
        }
        #expect(released != nil)
        #expect(probe?.tag == "factory")
    }

    @Test func queueSyncInsideAConstructionKeepsTheBuildingContainer() {
        let container = tagged("queue")
        let (tag, probe) = container.throughQueueSync()
        #expect(tag == "queue")
        #expect(probe.$tag.container === container)
    }

    @Test func globalSyncInsideAFactoryResolvesInTheRightContainer() {
        let parent = tagged("parent")
        let child = tagged("child", parent: parent)
        #expect(child.throughGlobalSync() == "child")
        #expect(parent.throughGlobalSync() == "parent")
    }

    @Test func aFactoryResolvingItselfOnAnotherThreadIsNotACycle() async {
        let container = tagged("threaded")
        container.setValue(Counter(), forKey: "engine.calls")
        let result = Collected<String>()
        #expect(await finishesWithoutHangingOffThePool { result.append(container.onAnotherThread()) })
        // The probe is built by the container's factory on the other thread: it takes it.
        #expect(result.values == ["outer(inner:threaded, true)"])
    }

    @Test func aFactorySpawningATaskThatResolvesTheSameFactoryIsNotACycle() async {
        let container = tagged("spawn")
        container.setValue(Counter(), forKey: "engine.calls")
        let result = Collected<Int>()
        #expect(await finishesWithoutHangingOffThePool { result.append(container.selfSpawningFactory()) })
        #expect(result.values == [3])
    }

    @Test func aDeinitInsideAFactoryResolvesFromTheContainer() {
        let container = tagged("deinit")
        container.setValue(Collected<String>(), forKey: "engine.seen")
        #expect(container.releasesInside() == 1)
        #expect((container.getValue(forKey: "engine.seen") as Collected<String>?)?.values == ["deinit"])
    }

    // MARK: - Overrides, decorations, tracers and scopes reach the lean road

    @Test func anOverrideInstalledInAGrandparentAfterTheChildWasMadeApplies() {
        let root = tagged("root")
        let middle = DependencyContainer(parent: root)
        let leaf = DependencyContainer(parent: middle)
        leaf.setValue("leaf", forKey: "engine.tag")
        #expect(leaf.engineTagged() == "leaf")
        root.override(\.engineTagged) { "overridden at root" }
        #expect(leaf.engineTagged() == "overridden at root")
        middle.override(\.engineTagged) { "overridden in middle" }
        #expect(leaf.engineTagged() == "overridden in middle")
        middle.reset(\.engineTagged)
        #expect(leaf.engineTagged() == "overridden at root")
        root.reset(\.engineTagged)
        #expect(leaf.engineTagged() == "leaf")
    }

    @Test func aDecorationOnAParentWrapsTheChildsFactory() {
        let parent = tagged("parent")
        let child = tagged("child", parent: parent)
        #expect(child.engineTagged() == "child")
        parent.decorate(\.engineTagged) { "decorated(\($0))" }
        #expect(child.engineTagged() == "decorated(child)")
        #expect(parent.engineTagged() == "decorated(parent)")
    }

    @Test func aTracerSetOnAChildAfterTheParentResolvedSeesTheChildsFactories() {
        let parent = tagged("parent")
        let child = tagged("child", parent: parent)
        #expect(parent.engineTagged() == "parent")
        #expect(child.engineTagged() == "child")
        let events = Collected<ResolutionEvent>()
        child.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
        #expect(child.engineTagged() == "child")
        #expect(parent.engineTagged() == "parent")
        #expect(events.values.map(\.scope) == [.factory])
        child.tracer = nil
        #expect(child.engineTagged() == "child")
        #expect(events.values.count == 1)
    }

    @Test func anOverrideRacingFactoryResolutionsIsSeenByEveryLaterOne() async {
        let parent = tagged("parent")
        let children = (0..<4).map { tagged("child \($0)", parent: parent) }
        let overridden = Arrivals()
        let threadsEnded = await concurrentlyOffThePool(threads: 6) { index in
            if index == 0 {
                parent.override(\.engineTagged) { "overridden" }
                overridden.arrive()
            } else if index == 1 {
                parent.decorate(\.engineProbe) { $0 }
                overridden.arrive()
            } else {
                let child = children[index - 2]
                for _ in 0..<200 {
                    let tag = child.engineTagged()
                    #expect(tag == "overridden" || tag == "child \(index - 2)")
                    #expect(child.engineProbe().$tag.container === child)
                }
                overridden.wait(for: 2)
                #expect(child.engineTagged() == "overridden")
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
    }

    @Test func aFactoryInAScopeBuildsInTheScope() {
        let app = tagged("app")
        let scope = DependencyContainer(scopeOf: app)
        scope.setValue("scope", forKey: "engine.tag")
        #expect(scope.engineTagged() == "scope")
        #expect(scope.engineProbe().$tag.container === scope)
        // An app-wide singleton the scope asks for is built by the app container, and the
        // factory it resolves through `self` reads the app container's values.
        #expect(scope.appWideTag() == "app-wide(app)")
        #expect(app.appWideTag() == "app-wide(app)")
    }

    @Test func aGraphRegistrationIsSharedByOneOutermostPlainFactoryResolution() {
        let container = DependencyContainer()
        let (first, second, direct) = container.engineUnitPair()
        #expect(first === second)
        #expect(first === direct)
        let (again, _, _) = container.engineUnitPair()
        #expect(again !== first)
        // Two top-level plain factory resolutions do not share one.
        #expect(container.engineUnitHolder() !== container.engineUnitHolder())
    }

    @Test func aLongChainOfArgumentFactoriesWithoutARepeatIsNotACycle() {
        let container = DependencyContainer()
        container.setValue(1500, forKey: "engine.last")
        let result = Collected<Int>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            result.append(container[engineChain: 0]())
            done.signal()
        }
        thread.stackSize = 64 << 20
        thread.start()
        done.wait()
        #expect(result.values == [1500])
    }

    // MARK: - Another owner running on the thread of a construction

    // `Task.immediate` runs a new task on the calling thread, inside the construction in
    // progress. That task is another owner: the thread's frames are not its own, so
    // resolving the same factory there is not a cycle.
    @Test
    func anImmediateTaskInsideAFactoryResolvingTheSameFactoryIsNotACycle() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("immediateReentry")
            let container = DependencyContainer()
            container.setValue(Counter(), forKey: "engine.calls")
            precondition(container.immediateReentry() == 3)
        }
    }

    // The object an immediate task has `other` build takes `other`: the immediate task's
    // construction has its own owner, though it runs on the thread of another one.
    @Test
    func anObjectBuiltInAnImmediateTaskInsideAFactoryTakesTheContainerThatBuiltIt() {
        let container = tagged("outer")
        let other = tagged("other")
        container.setValue(other, forKey: "engine.other")
        let probe = container.probeFromAnImmediateTask()
        #expect(probe != nil)
        #expect(probe?.$tag.container === other)
        #expect(probe?.tag == "other")
    }

    // MARK: - Tracing what a task started by a construction resolves

    /// The batches `resolve` delivers to a tracer of `container`, resolved on a thread of
    /// its own (the construction waits for a task it starts).
    private func batches(
        of container: DependencyContainer, _ resolve: @escaping @Sendable (DependencyContainer) -> Void
    ) async -> [[String]] {
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name)@\($0.depth)" }) }
        #expect(await finishesWithoutHangingOffThePool { resolve(container) })
        return batches.values
    }

    @Test func aTaskStartedByATracedSingletonAddsItsResolutionsToTheSingletonsBatch() async {
        let batches = await batches(of: tagged("traced")) { _ = $0.tracedSpawningSingleton() }
        #expect(batches == [["tracedSpawningSingleton@0", "engineTagged@1"]])
    }

    // The tracer documents that every nested resolution, "on this owner, or in a task a
    // construction starts", adds its event to the outermost resolution's batch: a traced
    // factory's frame is bound as a task-local value, so a task it starts sees its batch.
    @Test func aTaskStartedByATracedFactoryAddsItsResolutionsToTheFactorysBatch() async {
        let batches = await batches(of: tagged("traced")) { _ = $0.tracedSpawningFactory() }
        #expect(batches == [["tracedSpawningFactory@0", "engineTagged@1"]])
    }

    // MARK: - Cycles

    @Test func aCycleThroughAFactoryASingletonAndTheSameFactoryStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("cycleFactory")
            _ = DependencyContainer().cycleFactory()
        })
        #expect(cycle?.names == ["cycleFactory", "cycleSingleton", "cycleFactory"], "\(cycle?.description ?? "")")
    }

    @Test func aCycleOfSyncFactoriesInsideAnAsyncFactoryStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("asyncAroundACycle")
            _ = try? await DependencyContainer().asyncAroundACycle()
        })
        #expect(cycle?.names == ["pingFactory", "pongFactory", "pingFactory"], "\(cycle?.description ?? "")")
    }

    @Test func aCycleAmongThousandsOfArgumentFactoriesStopsWithExactlyTheCycle() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("engineChain")
            let container = DependencyContainer()
            container.setValue(1999, forKey: "engine.last")
            container.setValue(700, forKey: "engine.closing")
            let thread = Thread { _ = container[engineChain: 0]() }
            thread.stackSize = 64 << 20
            thread.start()
            DispatchSemaphore(value: 0).wait()
        })
        // From the first construction of 700 to its second: 1300 registrations, then 700.
        #expect(cycle?.links.count == 1301)
    }

    // MARK: - main

    @Test func withMainInsideATaskCreatedBeforeAnyWithMainApplies() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("withMain")
            let chosen = DependencyContainer()
            let global = DependencyContainer.main
            let started = Task { () -> Bool in
                let inside = DependencyContainer.withMain(chosen) { DependencyContainer.main === chosen }
                let insideAsync = await DependencyContainer.withMain(chosen) {
                    await Task.yield()
                    return DependencyContainer.main === chosen
                }
                return inside && insideAsync && DependencyContainer.main === global
            }
            let sawChosen = await started.value
            precondition(sawChosen)
            // A task made inside withMain keeps its container after the call returns.
            let inherited = DependencyContainer.withMain(chosen) { Task { DependencyContainer.main } }
            let inheritedMain = await inherited.value
            precondition(inheritedMain === chosen)
            precondition(DependencyContainer.main === global)
        }
    }

    @Test func switchingMainWhileThreadsReadItHandsOutOneOfTheContainers() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("main switching")
            let first = DependencyContainer()
            let second = DependencyContainer()
            first.setValue("first", forKey: "engine.tag")
            second.setValue("second", forKey: "engine.tag")
            DependencyContainer.main = first
            let threadsEnded = await concurrentlyOffThePool(threads: 4) { index in
                for round in 0..<300 {
                    if index == 0 {
                        DependencyContainer.main = round.isMultiple(of: 2) ? second : first
                    } else {
                        let main = DependencyContainer.main
                        precondition(main === first || main === second)
                        let probe = EngineProbe()
                        precondition(probe.$tag.container === first || probe.$tag.container === second)
                    }
                }
            }
            precondition(threadsEnded, "the threads did not end before the hang limit")
            DependencyContainer.main = second
            precondition(EngineProbe().tag == "second")
        }
    }
}
