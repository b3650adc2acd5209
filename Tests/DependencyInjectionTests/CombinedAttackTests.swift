import DependencyInjection
import Foundation
import Testing

// Attacks that combine deinits, tracers, spawned tasks, helpers, many arguments, parent/child
// changes, cancelled async constructions.

/// An object that runs `onDeinit` when it goes.
final class ComboObj: @unchecked Sendable {
    let tag: String
    let inner: AnyObject?
    private let onDeinit: (@Sendable () -> Void)?
    init(_ tag: String, inner: AnyObject? = nil, onDeinit: (@Sendable () -> Void)? = nil) {
        (self.tag, self.inner, self.onDeinit) = (tag, inner, onDeinit)
    }
    deinit { onDeinit?() }
}

/// Actions keyed by a string, run (once) by deinits.
final class ComboHooks: @unchecked Sendable {
    static let shared = ComboHooks()
    private let lock = NSLock()
    private var actions: [String: @Sendable () -> Void] = [:]
    private var counts: [String: Int] = [:]
    func set(_ key: String, _ action: @escaping @Sendable () -> Void) {
        lock.withLock { actions[key] = action }
    }
    func run(_ key: String) {
        let action = lock.withLock { () -> (@Sendable () -> Void)? in
            counts[key, default: 0] += 1
            return actions.removeValue(forKey: key)
        }
        action?()
    }
    func count(_ key: String) -> Int { lock.withLock { counts[key, default: 0] } }
}

final class ComboWeak: @unchecked Sendable {
    private let lock = NSLock()
    private var refs: [() -> AnyObject?] = []
    func watch(_ object: AnyObject) { lock.withLock { refs.append({ [weak object] in object }) } }
    var alive: Int { lock.withLock { refs.filter { $0() != nil }.count } }
    var total: Int { lock.withLock { refs.count } }
}

/// A class-backed argument whose lifetime a test watches.
final class ComboArg: Hashable, @unchecked Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
    static func == (lhs: ComboArg, rhs: ComboArg) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

final class ComboInjected: @unchecked Sendable {
    @Dependency(\.comboPlainLeaf) var leaf
}

extension DependencyContainer {
    var comboID: String { getValue(forKey: "combo.id") ?? "none" }

    var comboPlainLeaf: Provider<ComboObj> { singleton { ComboObj("plainLeaf") } }

    /// A leaf whose deinit runs the hook "<id>.leaf".
    var comboLeaf: Provider<ComboObj> {
        singleton {
            let id = self.comboID
            return ComboObj("leaf", onDeinit: { ComboHooks.shared.run(id + ".leaf") })
        }
    }
    var comboScopedLeaf: Provider<ComboObj> {
        scoped {
            let id = self.comboID
            return ComboObj("scopedLeaf", onDeinit: { ComboHooks.shared.run(id + ".leaf") })
        }
    }

    /// A singleton that holds a child container which built its own leaf.
    var comboHolder: Provider<ComboObj> {
        singleton {
            let child = DependencyContainer(parent: self)
            _ = child.comboLeaf()
            return ComboObj("holder", inner: child)
        }
    }
    /// A singleton that holds a scope container which built its own scoped leaf.
    var comboScopeHolder: Provider<ComboObj> {
        singleton {
            let scope = DependencyContainer(scopeOf: self)
            _ = scope.comboScopedLeaf()
            return ComboObj("scopeHolder", inner: scope)
        }
    }

    var comboDecorated: Provider<ComboObj> { singleton { ComboObj("decorated") } }
    var comboShared: Provider<ComboObj> {
        shared {
            let id = self.comboID
            return ComboObj("shared", onDeinit: { ComboHooks.shared.run(id + ".shared") })
        }
    }

    subscript(comboItem arg: ComboArg) -> Provider<ComboObj> { singleton(arg) { ComboObj("item") } }
    subscript(comboSharedItem arg: ComboArg) -> Provider<ComboObj> { shared(arg) { ComboObj("shared") } }
    subscript(comboFactoryItem arg: ComboArg) -> Provider<ComboObj> { factory(arg) { ComboObj("factory") } }
    subscript(comboGraphItem arg: ComboArg) -> Provider<ComboObj> { graph(arg) { ComboObj("graph") } }
    subscript(comboDependent arg: ComboArg) -> Provider<ComboObj> {
        singleton(arg) { ComboObj("dependent", inner: self[comboFactoryItem: arg]()) }
    }
    subscript(comboGraphUser arg: ComboArg) -> Provider<ComboObj> {
        factory(arg) { ComboObj("graphUser", inner: self[comboGraphItem: arg]()) }
    }
    var comboFamily: ProviderFamily<ComboArg, ComboObj> { singleton { (arg: ComboArg) in ComboObj("family") } }
    var comboSharedFamily: ProviderFamily<ComboArg, ComboObj> { shared { (arg: ComboArg) in ComboObj("sharedFamily") } }
}

/// Runs `round` thirty times behind the hang guard, on a thread off the pool, and expects
/// the deinit hook each round arms to have run once per round: `round` counts its hook's
/// runs on the counter it is handed.
func expectEveryRoundsHookToRun(_ round: @escaping @Sendable (Counter) -> Void) async {
    let ran = Counter()
    let ok = await finishesWithoutHangingOffThePool {
        for _ in 0..<30 { round(ran) }
    }
    #expect(ok)
    #expect(ran.count == 30)
}

enum ComboDrop: String, CaseIterable, Sendable {
    case reset, resetKey, override, shutdown, decorate
}

extension ComboDrop {
    /// Drops what `container` built of `keyPath` the way this case names.
    func drop(_ keyPath: KeyPath<DependencyContainer, Provider<ComboObj>>, in container: DependencyContainer) {
        switch self {
        case .reset: container.reset()
        case .resetKey: container.reset(keyPath)
        case .override: container.override(keyPath) { ComboObj("stubHolder") }
        case .shutdown: container.shutdown()
        case .decorate: container.decorate(keyPath) { $0 }
        }
    }
}

@Suite struct CombinedAttackTests {

    // MARK: - Deinits of a child container released by a parent's change

    /// A parent's singleton holds a child container; the child's own singleton's deinit
    /// resolves, overrides and resets the parent. The parent's change releases the holder,
    /// so the child and its leaf, outside every lock.
    @Test(arguments: ComboDrop.allCases)
    func aChildHeldByAParentSingletonIsReleasedByTheParentsChange(drop: ComboDrop) async {
        await expectEveryRoundsHookToRun { ran in
            let parent = DependencyContainer()
            let id = UUID().uuidString
            parent.setValue(id, forKey: "combo.id")
            ComboHooks.shared.set(id + ".leaf") { [weak parent] in
                guard let parent else { return }
                _ = parent.comboHolder()
                _ = parent.comboLeaf()
                parent.override(\.comboLeaf) { ComboObj("stubLeaf") }
                parent.reset(\.comboLeaf)
                parent.setValue(1, forKey: "combo.touched")
                ran.increment()
            }
            _ = parent.comboHolder()
            drop.drop(\.comboHolder, in: parent)
            // The hook rebuilt a holder (with a new leaf): drop that one too.
            parent.reset()
        }
    }

    /// The same with a scope container held by the parent's singleton.
    @Test(arguments: ComboDrop.allCases)
    func aScopeHeldByAnAppSingletonIsReleasedByTheAppsChange(drop: ComboDrop) async {
        await expectEveryRoundsHookToRun { ran in
            let app = DependencyContainer()
            let id = UUID().uuidString
            app.setValue(id, forKey: "combo.id")
            ComboHooks.shared.set(id + ".leaf") { [weak app] in
                guard let app else { return }
                _ = app.comboScopeHolder()
                let scope = DependencyContainer(scopeOf: app)
                _ = scope.comboLeaf()
                app.override(\.comboLeaf) { ComboObj("stubLeaf") }
                ran.increment()
            }
            _ = app.comboScopeHolder()
            drop.drop(\.comboScopeHolder, in: app)
            app.reset()
        }
    }

    // MARK: - Decorations, stored values

    /// A decoration's closure captures an object whose deinit resolves, decorates and
    /// resets the container: released by reset(key) and by reset().
    @Test(arguments: [false, true])
    func aDecorationReleasedByResetRunsItsCapturesDeinitOutsideTheLock(whole: Bool) async {
        await expectEveryRoundsHookToRun { ran in
            let container = DependencyContainer()
            let key = UUID().uuidString
            ComboHooks.shared.set(key) { [weak container] in
                guard let container else { return }
                _ = container.comboDecorated()
                container.decorate(\.comboDecorated) { $0 }
                container.reset(\.comboDecorated)
                ran.increment()
            }
            let captured = ComboObj("capture", onDeinit: { ComboHooks.shared.run(key) })
            container.decorate(\.comboDecorated) { [captured] value in
                _ = captured
                return value
            }
            _ = container.comboDecorated()
            if whole { container.reset() } else { container.reset(\.comboDecorated) }
        }
    }

    @Test(arguments: [false, true])
    func storedValuesRemovedRunTheirDeinitOutsideTheLock(all: Bool) async {
        await expectEveryRoundsHookToRun { ran in
            let container = DependencyContainer()
            let key = UUID().uuidString
            ComboHooks.shared.set(key) { [weak container] in
                guard let container else { return }
                container.setValue(2, forKey: "other")
                let _: Int? = container.getValue(forKey: "other")
                container.removeAll()
                _ = container.comboLeaf()
                ran.increment()
            }
            container.setValue(ComboObj("stored", onDeinit: { ComboHooks.shared.run(key) }), forKey: "obj")
            if all { container.removeAll() } else { container.removeValue(forKey: "obj") }
        }
    }

    // MARK: - Shared instances

    /// A shared instance's deinit resolves the same shared provider, while other threads
    /// resolve and drop it.
    @Test func aSharedInstanceWhoseDeinitResolvesItselfWhileOthersResolveIt() async {
        let container = DependencyContainer()
        let id = UUID().uuidString
        container.setValue(id, forKey: "combo.id")
        let hookRuns = Counter()
        let stop = Counter()
        let kept = Collected<ComboObj>()
        @Sendable func arm() {
            ComboHooks.shared.set(id + ".shared") { [weak container] in
                hookRuns.increment()
                guard let container, stop.count == 0 else { return }
                arm()
                // Kept, so that its own deinit does not recurse here.
                let again = container.comboShared()
                precondition(again.tag == "shared")
                kept.append(again)
            }
        }
        arm()
        let ok = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<2000 {
                let s = container.comboShared()
                precondition(s.tag == "shared")
                if index == 0, round % 50 == 0 { _ = kept.takeAll() }
            }
        }
        stop.increment()
        _ = kept.takeAll()
        #expect(ok)
    }

    // MARK: - Many arguments: nothing piles up

    @Test func singletonsOfThreeThousandArgumentsGoWithReset() {
        let container = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<3000 {
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(container[comboItem: arg]())
        }
        #expect(instances.alive == 3000)
        container.reset()
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
    }

    @Test func perArgumentOverridesResetOneByOneLeaveNothing() {
        let container = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<3000 {
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(container[comboItem: arg]())
            container.override(\.[comboItem: arg]) { ComboObj("stub") }
            let stub = container[comboItem: arg]()
            #expect(stub.tag == "stub")
            instances.watch(stub)
            container.reset(\.[comboItem: arg])
        }
        // The registration's instances were dropped by the overrides; the overrides' by the resets.
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
    }

    @Test func factoriesAndGraphsOfThreeThousandArgumentsKeepNothing() {
        let container = DependencyContainer()
        let args = ComboWeak()
        for i in 0..<3000 {
            let arg = ComboArg(i)
            args.watch(arg)
            _ = container[comboFactoryItem: arg]()
            _ = container[comboGraphUser: arg]()
            _ = container[comboGraphItem: arg]()
        }
        #expect(args.alive == 0)
    }

    @Test func sharedInstancesOfThreeThousandArgumentsLeaveNoArgumentBehind() {
        let container = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<3000 {
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(container[comboSharedItem: arg]())
            instances.watch(container.comboSharedFamily(arg))
        }
        #expect(instances.alive == 0)
        // Resolving one more lets a container prune what it keeps for dead instances.
        _ = container[comboSharedItem: ComboArg(-1)]()
        _ = container.comboSharedFamily(ComboArg(-1))
        #expect(args.alive == 0)
    }

    @Test func aFamilyOverrideDropsEveryArgumentsInstanceAndArgument() {
        let container = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<3000 {
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(container.comboFamily(arg))
        }
        container.override(\.comboFamily) { _ in ComboObj("stub") }
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
        container.reset(\.comboFamily)
        #expect(args.alive == 0)
    }

    @Test func dependentsBuiltFromArgumentFactoriesGoWithTheirOverride() {
        let container = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<2000 {
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(container[comboDependent: arg]())
            // Overriding the factory of this argument drops the dependent built from it.
            container.override(\.[comboFactoryItem: arg]) { ComboObj("stubFactory") }
            let rebuilt = container[comboDependent: arg]()
            #expect((rebuilt.inner as? ComboObj)?.tag == "stubFactory")
            instances.watch(rebuilt)
        }
        // Documented (Scopes.md, "Arguments are recorded together"): an override of one
        // argument rebuilds a singleton built from any argument, so only the last survives.
        container.reset()
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
    }

    @Test func aChildThatResolvedThreeThousandArgumentsLeavesNothingInTheParent() {
        let parent = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak(), children = ComboWeak()
        do {
            let child = DependencyContainer(parent: parent)
            let scope = DependencyContainer(scopeOf: parent)
            children.watch(child)
            children.watch(scope)
            for i in 0..<3000 {
                let arg = ComboArg(i)
                args.watch(arg)
                instances.watch(child[comboItem: arg]())
                instances.watch(child.comboFamily(arg))
                instances.watch(child[comboDependent: arg]())
                _ = scope[comboFactoryItem: arg]()
            }
        }
        #expect(children.alive == 0)
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
        // The scope resolved app-wide nothing here (factories only).
    }

    @Test func aScopesArgumentSingletonsLiveInTheAppAndGoWithItsReset() {
        let app = DependencyContainer()
        let args = ComboWeak(), instances = ComboWeak()
        for i in 0..<2000 {
            let scope = DependencyContainer(scopeOf: app)
            let arg = ComboArg(i)
            args.watch(arg)
            instances.watch(scope[comboDependent: arg]())
        }
        #expect(instances.alive == 2000)
        app.reset()
        #expect(instances.alive == 0)
        #expect(args.alive == 0)
    }
}

// MARK: - Async constructions cancelled, spawned tasks, parent/child races, tracers

struct ComboError: Error {}

final class ComboAsyncProbe: @unchecked Sendable {
    let started = AsyncLatch()
    let proceed = AsyncLatch()
    let runs = Counter()
    let sawCancel = Counter()
    let throwFirst = Counter()
}

final class ComboSyncProbe: @unchecked Sendable {
    let taskResolved = DispatchSemaphore(value: 0)
    let node = Collected<ComboObj>()
}

extension DependencyContainer {
    var comboSlowAsync: AsyncProvider<ComboObj> {
        singleton {
            let probe: ComboAsyncProbe? = self.getValue(forKey: "combo.async")
            probe?.runs.increment()
            probe?.started.open()
            await probe?.proceed.wait()
            if Task.isCancelled { probe?.sawCancel.increment() }
            if let probe, probe.throwFirst.count > 0, probe.runs.count == 1 { throw ComboError() }
            return ComboObj("async")
        }
    }
    var comboAsyncDependent: AsyncProvider<ComboObj> {
        singleton { ComboObj("asyncDependent", inner: try await self.comboSlowAsync()) }
    }
    var comboAsyncScoped: AsyncProvider<ComboObj> {
        scoped { ComboObj("asyncScoped", inner: try await self.comboSlowAsync()) }
    }

    var comboSpawner: Provider<ComboObj> {
        singleton {
            let handoff: Handoff<ComboInjected>? = self.getValue(forKey: "combo.spawn")
            Task { handoff?.put(ComboInjected()) }
            return ComboObj("spawner")
        }
    }
    var comboAsyncSpawner: AsyncProvider<ComboObj> {
        singleton {
            let handoff: Handoff<ComboInjected>? = self.getValue(forKey: "combo.spawn")
            Task { handoff?.put(ComboInjected()) }
            return ComboObj("asyncSpawner")
        }
    }

    var comboGraphNode: Provider<ComboObj> { graph { ComboObj("node") } }
    /// Resolves a graph node, starts a task that resolves one too, and waits (blocking)
    /// until that task has resolved it.
    var comboGraphSpawnerFactory: Provider<ComboObj> {
        factory {
            let probe: ComboSyncProbe = self.getValue(forKey: "combo.graph")!
            let mine = self.comboGraphNode()
            Task {
                probe.node.append(self.comboGraphNode())
                probe.taskResolved.signal()
            }
            probe.taskResolved.wait()
            return ComboObj("graphSpawner", inner: mine)
        }
    }
    var comboGraphSpawnerSingleton: Provider<ComboObj> {
        singleton {
            let probe: ComboSyncProbe = self.getValue(forKey: "combo.graph")!
            let mine = self.comboGraphNode()
            Task {
                probe.node.append(self.comboGraphNode())
                probe.taskResolved.signal()
            }
            probe.taskResolved.wait()
            return ComboObj("graphSpawner", inner: mine)
        }
    }

    var comboLeafUser: Provider<ComboObj> { singleton { ComboObj("leafUser", inner: self.comboLeaf()) } }
    var comboLeafFactoryUser: Provider<ComboObj> { factory { ComboObj("leafFactoryUser", inner: self.comboLeafUser()) } }
}

extension CombinedAttackTests {
    // MARK: Cancelled async constructions

    @Test func theOnlyWaiterCancelledLeavesTheConstructionRunningAndBuiltOnce() async throws {
        let container = DependencyContainer()
        let probe = ComboAsyncProbe()
        container.setValue(probe, forKey: "combo.async")
        let waiter = Task { try await container.comboSlowAsync() }
        await probe.started.wait()
        waiter.cancel()
        let stopped = await endsWithoutHanging {
            let result = await waiter.result
            if case .success = result { Issue.record("the cancelled waiter got a value before the construction ended") }
            if case .failure(let error) = result, !(error is CancellationError) {
                Issue.record("the cancelled waiter threw \(error), not CancellationError")
            }
        }
        #expect(stopped, "the cancelled waiter kept waiting")
        probe.proceed.open()
        let value = try await container.comboSlowAsync()
        let again = try await container.comboSlowAsync()
        #expect(value === again)
        #expect(probe.runs.count == 1)
        #expect(probe.sawCancel.count == 0, "the construction saw the waiter's cancellation")
    }

    @Test func aCancelledWaiterOfADependentLeavesBothConstructionsRunning() async throws {
        let container = DependencyContainer()
        let probe = ComboAsyncProbe()
        container.setValue(probe, forKey: "combo.async")
        let waiter = Task { try await container.comboAsyncDependent() }
        await probe.started.wait()
        waiter.cancel()
        let stopped = await endsWithoutHanging { _ = await waiter.result }
        #expect(stopped)
        probe.proceed.open()
        let dependent = try await container.comboAsyncDependent()
        let inner = try await container.comboSlowAsync()
        #expect(dependent.inner === inner)
        #expect(probe.runs.count == 1)
        #expect(probe.sawCancel.count == 0)
    }

    @Test func anOverrideWhileACancelledConstructionRunsIsServedAfterwards() async throws {
        let container = DependencyContainer()
        let probe = ComboAsyncProbe()
        container.setValue(probe, forKey: "combo.async")
        let waiter = Task { try await container.comboAsyncDependent() }
        await probe.started.wait()
        waiter.cancel()
        _ = await waiter.result
        container.override(\.comboSlowAsync) { ComboObj("stub") }
        probe.proceed.open()
        let inner = try await container.comboSlowAsync()
        let dependent = try await container.comboAsyncDependent()
        #expect(inner.tag == "stub")
        #expect((dependent.inner as? ComboObj)?.tag == "stub")
    }

    @Test func aCancelledWaiterThenAThrowingConstructionIsRetried() async throws {
        let container = DependencyContainer()
        let probe = ComboAsyncProbe()
        probe.throwFirst.increment()
        container.setValue(probe, forKey: "combo.async")
        let waiter = Task { try await container.comboSlowAsync() }
        let other = Task { try await container.comboSlowAsync() }
        await probe.started.wait()
        waiter.cancel()
        _ = await waiter.result
        probe.proceed.open()
        let otherResult = await other.result
        if case .success = otherResult { Issue.record("the other waiter did not see the throw") }
        let value = try await container.comboSlowAsync()
        #expect(value.tag == "async")
        #expect(probe.runs.count == 2)
    }

    @Test func manyWaitersHalfCancelledTheRestShareOneInstance() async throws {
        for _ in 0..<20 {
            let container = DependencyContainer()
            let probe = ComboAsyncProbe()
            container.setValue(probe, forKey: "combo.async")
            var tasks: [Task<ComboObj, any Error>] = []
            for _ in 0..<16 { tasks.append(Task { try await container.comboAsyncDependent() }) }
            await probe.started.wait()
            for (i, t) in tasks.enumerated() where i % 2 == 0 { t.cancel() }
            probe.proceed.open()
            var got: [ComboObj] = []
            for (i, t) in tasks.enumerated() {
                switch await t.result {
                case .success(let v): got.append(v)
                case .failure(let e):
                    if i % 2 == 1 { Issue.record("an uncancelled waiter failed: \(e)") }
                }
            }
            let final = try await container.comboAsyncDependent()
            #expect(got.allSatisfy { $0 === final })
            #expect(probe.runs.count == 1)
        }
    }

    @Test func aScopeDroppedWhileItsCancelledScopedConstructionRunsIsFreed() async throws {
        let app = DependencyContainer()
        let probe = ComboAsyncProbe()
        app.setValue(probe, forKey: "combo.async")
        let scopes = ComboWeak()
        do {
            let scope = DependencyContainer(scopeOf: app)
            scopes.watch(scope)
            let waiter = Task { try await scope.comboAsyncScoped() }
            await probe.started.wait()
            waiter.cancel()
            _ = await waiter.result
        }
        probe.proceed.open()
        _ = try await app.comboSlowAsync()
        let freed = await endsWithoutHanging {
            while scopes.alive > 0 { await Task.yield() }
        }
        #expect(freed, "the dropped scope stayed alive")
    }

    // MARK: Tasks a construction spawns

    @Test func anObjectCreatedInATaskASyncSingletonStartsTakesMainNotTheBuilder() async {
        let world = DependencyContainer()
        let builder = DependencyContainer()
        let handoff = Handoff<ComboInjected>()
        builder.setValue(handoff, forKey: "combo.spawn")
        DependencyContainer.withMain(world) { _ = builder.comboSpawner() }
        let object = await handoff.value()
        #expect(object.$leaf.container === world, "the spawned task's object took the building container")
        #expect(object.leaf === world.comboPlainLeaf())
    }

    @Test func anObjectCreatedInATaskAnAsyncSingletonStartsTakesMainNotTheBuilder() async throws {
        let world = DependencyContainer()
        let builder = DependencyContainer()
        let handoff = Handoff<ComboInjected>()
        builder.setValue(handoff, forKey: "combo.spawn")
        _ = try await DependencyContainer.withMain(world) { try await builder.comboAsyncSpawner() }
        let object = await handoff.value()
        #expect(object.$leaf.container !== builder, "the spawned task's object took the building container")
    }

    @Test(arguments: [false, true], [false, true])
    func aTaskAConstructionStartsGetsItsOwnGraphInstance(traced: Bool, singleton: Bool) async {
        let ok = await finishesWithoutHangingOffThePool {
            for _ in 0..<20 {
                let container = DependencyContainer()
                if traced { container.tracer = ResolutionTracer { _ in } }
                let probe = ComboSyncProbe()
                container.setValue(probe, forKey: "combo.graph")
                let built = singleton ? container.comboGraphSpawnerSingleton() : container.comboGraphSpawnerFactory()
                let fromTask = probe.node.values.first
                #expect(fromTask != nil)
                #expect(fromTask !== (built.inner as? ComboObj), "the task shared the construction's graph instance")
            }
        }
        #expect(ok)
    }

    // MARK: Parent and children changing at once

    @Test func parentOverridesResetsAndChildDropsRacingChildResolutions() async {
        let ok = await finishesWithoutHangingOffThePool {
            let parent = DependencyContainer()
            parent.setValue("race", forKey: "combo.id")
            let slot = _REChildSlot(DependencyContainer(parent: parent))
            for round in 0..<300 {
                onThreadsReleasedTogether(5) { index in
                    switch index {
                    case 0: parent.override(\.comboLeaf) { ComboObj("r\(round)") }
                    case 1: _ = slot.child.comboLeafFactoryUser()
                    case 2: slot.replace(DependencyContainer(parent: parent))
                    case 3: if round % 3 == 0 { parent.reset(\.comboLeaf) } else { _ = parent.comboLeafUser() }
                    default: _ = DependencyContainer(scopeOf: parent).comboLeafFactoryUser()
                    }
                }
                let child = slot.child
                let user = child.comboLeafUser()
                let leaf = child.comboLeaf()
                #expect(user.inner === leaf, "round \(round): the child served a user built from a stale leaf")
                #expect(leaf.tag == parent.comboLeaf().tag, "round \(round): the child's leaf is not the parent's current registration")
                let scope = DependencyContainer(scopeOf: parent)
                #expect(scope.comboLeafUser() === parent.comboLeafUser())
                #expect(parent.comboLeafUser().inner === parent.comboLeaf(), "round \(round): parent stale")
            }
        }
        #expect(ok)
    }

    @Test func aScopesOwnOverrideWinsWhileTheAppChangesTheSameKey() async {
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            app.setValue("race2", forKey: "combo.id")
            for round in 0..<300 {
                let scope = DependencyContainer(scopeOf: app)
                scope.override(\.comboLeaf) { ComboObj("scope\(round)") }
                onThreadsReleasedTogether(3) { index in
                    switch index {
                    case 0: app.override(\.comboLeaf) { ComboObj("app\(round)") }
                    case 1: _ = scope.comboLeafUser()
                    default: _ = app.comboLeafUser()
                    }
                }
                let user = scope.comboLeafUser()
                #expect((user.inner as? ComboObj)?.tag == "scope\(round)", "round \(round): the scope's singleton was built from the app's leaf")
                #expect((app.comboLeafUser().inner as? ComboObj)?.tag == "app\(round)")
            }
        }
        #expect(ok)
    }

    // MARK: Tracers

    @Test func aTracerThatMakesScopesAndOverridesThemWhileThreadsResolve() async {
        let app = DependencyContainer()
        app.setValue("tracer", forKey: "combo.id")
        let calls = Counter()
        app.tracer = ResolutionTracer { [unowned app] events in
            calls.increment()
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.comboLeaf) { ComboObj("traced") }
            let user = scope.comboLeafUser()
            precondition((user.inner as? ComboObj)?.tag == "traced")
            _ = app.comboLeafUser()
            if calls.count % 7 == 0 { app.override(\.comboLeaf) { ComboObj("fromTracer") } }
            if calls.count % 11 == 0 { app.reset() }
        }
        let ok = await concurrentlyOffThePool(threads: 4) { index in
            for _ in 0..<300 {
                let child = DependencyContainer(parent: app)
                let user = child.comboLeafUser()
                precondition(user.inner != nil)
                _ = app.comboLeafFactoryUser()
                _ = DependencyContainer(scopeOf: app).comboLeafFactoryUser()
            }
        }
        #expect(ok)
        app.tracer = nil
        #expect(app.comboLeafUser().inner === app.comboLeaf())
    }
}

/// A child container that threads replace.
final class _REChildSlot: @unchecked Sendable {
    private let lock = NSLock()
    private var current: DependencyContainer
    init(_ child: DependencyContainer) { current = child }
    var child: DependencyContainer { lock.withLock { current } }
    func replace(_ child: DependencyContainer) {
        let old = lock.withLock { () -> DependencyContainer in
            let old = current
            current = child
            return old
        }
        withExtendedLifetime(old) {}
    }
}

// MARK: - Decorations racing resolutions, helpers

final class ComboWrapper: @unchecked Sendable {
    let wrapped: ComboObj
    let tag: String
    init(_ tag: String, _ wrapped: ComboObj) { (self.tag, self.wrapped) = (tag, wrapped) }
}

extension DependencyContainer {
    func comboCached<T: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation, _ make: @escaping () -> T
    ) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, isolation: isolation, make)
    }
    var comboHelped1: Provider<ComboObj> { comboCached { ComboObj("h1") } }
    var comboHelped2: Provider<ComboObj> { comboCached { ComboObj("h2", inner: self.comboHelped1()) } }
    var comboDecoBase: Provider<ComboObj> { singleton { ComboObj("base") } }
    var comboDecoUser: Provider<ComboObj> { singleton { ComboObj("decoUser", inner: self.comboDecoBase()) } }
    var comboDecoGraph: Provider<ComboObj> { graph { ComboObj("g") } }
    var comboDecoGraphPair: Provider<ComboObj> {
        factory { ComboObj("pair", inner: ComboObj("pairInner", inner: self.comboDecoGraph())) }
    }
}

extension CombinedAttackTests {
    @Test func aDecorationInstalledWhileThreadsBuildReachesEveryLaterResolution() async {
        let ok = await finishesWithoutHangingOffThePool {
            for round in 0..<300 {
                let parent = DependencyContainer()
                let child = DependencyContainer(parent: parent)
                let scope = DependencyContainer(scopeOf: parent)
                onThreadsReleasedTogether(4) { index in
                    switch index {
                    case 0: parent.decorate(\.comboDecoBase) { ComboObj("decorated", inner: $0) }
                    case 1: _ = parent.comboDecoUser()
                    case 2: _ = child.comboDecoUser()
                    default: _ = scope.comboDecoUser()
                    }
                }
                for (name, c) in [("parent", parent), ("child", child), ("scope", scope)] {
                    let base = c.comboDecoBase()
                    #expect(base.tag == "decorated", "round \(round): \(name) serves an undecorated base")
                    #expect((c.comboDecoUser().inner as? ComboObj)?.tag == "decorated", "round \(round): \(name) serves a user built from the undecorated base")
                }
            }
        }
        #expect(ok)
    }

    @Test func aHelperForwardingItsSiteKeepsDecorationsAndOverridesApart() {
        let container = DependencyContainer()
        container.decorate(\.comboHelped1) { ComboObj("deco1", inner: $0) }
        let two = container.comboHelped2()
        #expect(two.tag == "h2")
        #expect((two.inner as? ComboObj)?.tag == "deco1")
        container.override(\.comboHelped2) { ComboObj("stub2") }
        #expect(container.comboHelped1().tag == "deco1")
        #expect(container.comboHelped2().tag == "stub2")
        container.reset(\.comboHelped1)
        #expect(container.comboHelped1().tag == "h1")
        #expect(container.comboHelped2().tag == "stub2")
    }

    @Test func aDecoratedSingletonWhoseInnerDeinitDecoratesAgainIsDroppedOutsideTheLock() async {
        await expectEveryRoundsHookToRun { ran in
            let container = DependencyContainer()
            let id = UUID().uuidString
            container.setValue(id, forKey: "combo.id")
            ComboHooks.shared.set(id + ".leaf") { [weak container] in
                guard let container else { return }
                container.decorate(\.comboLeaf) { ComboObj("deco2", inner: $0) }
                _ = container.comboLeafUser()
                ran.increment()
            }
            container.decorate(\.comboLeaf) { ComboObj("deco1", inner: $0) }
            _ = container.comboLeafUser()
            container.override(\.comboLeaf) { ComboObj("stub") }
            let user = container.comboLeafUser()
            #expect((user.inner as? ComboObj)?.tag == "deco2")
            #expect(((user.inner as? ComboObj)?.inner as? ComboObj)?.tag == "deco1")
        }
    }

    @Test func aDecoratedGraphInstanceIsSharedWithinOneResolution() {
        let container = DependencyContainer()
        let count = Counter()
        container.decorate(\.comboDecoGraph) { count.increment(); return ComboObj("decoG", inner: $0) }
        let pair = container.comboDecoGraphPair()
        let g = ((pair.inner as? ComboObj)?.inner as? ComboObj)
        #expect(g?.tag == "decoG")
        #expect(count.count == 1)
    }
}

extension CombinedAttackTests {
    /// "its children created later inherit it, and existing ones adopt it": a tracer set
    /// while children and grandchildren are being made reaches every one of them.
    @Test func aTracerSetWhileChildrenAreMadeReachesEveryChild() async {
        let ok = await finishesWithoutHangingOffThePool {
            let root = DependencyContainer()
            let middle = DependencyContainer(parent: root)
            for round in 0..<400 {
                let tracer = ResolutionTracer { _ in }
                let made = Collected<DependencyContainer>()
                onThreadsReleasedTogether(4) { index in
                    switch index {
                    case 0: root.tracer = tracer
                    case 1: made.append(DependencyContainer(parent: root))
                    case 2: made.append(DependencyContainer(scopeOf: middle))
                    default: made.append(DependencyContainer(parent: middle))
                    }
                }
                #expect(middle.tracer === tracer, "round \(round): the existing child missed the tracer")
                for child in made.values {
                    #expect(child.tracer === tracer, "round \(round): a child made meanwhile missed the tracer")
                }
            }
        }
        #expect(ok)
    }

    /// A tracer whose callback resolves a singleton that another thread is building from
    /// the traced resolution's own dependencies.
    @Test func aTracerResolvingWhatAnotherThreadBuildsDoesNotHangOrCycle() async {
        let ok = await finishesWithoutHangingOffThePool {
            for _ in 0..<100 {
                let container = DependencyContainer()
                container.setValue("trace2", forKey: "combo.id")
                container.tracer = ResolutionTracer { [unowned container] _ in
                    _ = container.comboLeafUser()
                    _ = container.comboDecoUser()
                }
                onThreadsReleasedTogether(3) { index in
                    switch index {
                    case 0: _ = container.comboLeafFactoryUser()
                    case 1: _ = container.comboDecoUser()
                    default: container.override(\.comboLeaf) { ComboObj("o") }
                    }
                }
                #expect(container.comboLeafUser().inner === container.comboLeaf())
                container.tracer = nil
            }
        }
        #expect(ok)
    }
}
