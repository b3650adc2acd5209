import DependencyInjection
import Foundation
import Testing

// MARK: - Fixtures

/// A counter shared by fixtures, read by the tests.
final class EdgeCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    init() {}
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// A plain instance the attacks build and watch.
final class EdgePlainItem: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

/// A weak slot for an instance, to check that it was released.
final class EdgeWeakSlot: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: AnyObject?
    init() {}
    func hold(_ object: AnyObject) { lock.withLock { stored = object } }
    var isEmpty: Bool { lock.withLock { stored == nil } }
}

/// An instance whose deinit resets the container that kept it, then resolves from it.
final class EdgeResettingOnDeinit: @unchecked Sendable {
    weak var container: DependencyContainer?
    let deinits: EdgeCounter
    init(container: DependencyContainer, deinits: EdgeCounter) {
        self.container = container
        self.deinits = deinits
    }
    deinit {
        deinits.increment()
        guard let container else { return }
        container.reset()
        _ = container.edgePlainSingleton()
    }
}

/// An instance whose deinit overrides the registration that built it, in its container.
final class EdgeOverridingOnDeinit: @unchecked Sendable {
    weak var container: DependencyContainer?
    init(container: DependencyContainer) { self.container = container }
    deinit {
        guard let container else { return }
        container.override(\.edgePlainSingleton) { EdgePlainItem("from deinit") }
        _ = container.edgePlainSingleton()
        let child = DependencyContainer(parent: container)
        _ = child.edgePlainSingleton()
    }
}

/// A member of a linked family that resolves from its container inside its closure.
final class EdgeLinkedFamilyHolder: @unchecked Sendable {
    @Dependency(\.edgeLinkedFamily) var items: ProviderFamily<Int, EdgePlainItem>
    init() {}
}

/// Something built from what a linked call returned.
final class EdgeLinkedUser: Sendable {
    let item: EdgePlainItem
    init(_ item: EdgePlainItem) { self.item = item }
}

/// An app singleton that reads a dependency lazily, after it is built.
final class EdgeLazyReader: @unchecked Sendable {
    @Dependency(\.edgeClockName) var clockName: String
    init() {}
}

/// A class argument, and a subclass of it, compared by identifier.
class EdgeBaseArgument: Hashable, @unchecked Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: EdgeBaseArgument, rhs: EdgeBaseArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
final class EdgeDerivedArgument: EdgeBaseArgument, @unchecked Sendable {}

extension DependencyContainer {
    var edgePlainSingleton: Provider<EdgePlainItem> { singleton { EdgePlainItem("registered") } }

    var edgeResettingSingleton: Provider<EdgeResettingOnDeinit> {
        singleton {
            EdgeResettingOnDeinit(container: self, deinits: self.getValue(forKey: "edge-deinits")!)
        }
    }
    var edgeOverridingSingleton: Provider<EdgeOverridingOnDeinit> {
        singleton { EdgeOverridingOnDeinit(container: self) }
    }

    var edgeConfig: Provider<String> { factory { "config" } }
    /// A family whose member's closure resolves `edgeConfig`.
    var edgeLinkedFamily: ProviderFamily<Int, EdgePlainItem> {
        singleton { n in EdgePlainItem("\(self.edgeConfig()) \(n)") }
    }
    var edgeLinkedFamilyHolder: Provider<EdgeLinkedFamilyHolder> { singleton { EdgeLinkedFamilyHolder() } }
    /// A factory whose construction calls the kept holder's linked family.
    var edgeLinkedUser: Provider<EdgeLinkedUser> {
        factory { EdgeLinkedUser(self.edgeLinkedFamilyHolder().items(5)) }
    }

    var edgeClockName: String { getValue(forKey: "edge-clock") ?? "app clock" }
    var edgeLazyReader: Provider<EdgeLazyReader> { singleton { EdgeLazyReader() } }

    var edgeClassArgumentFamily: ProviderFamily<EdgeBaseArgument, EdgePlainItem> {
        singleton { argument in EdgePlainItem("\(argument.id)") }
    }
    var edgeManyArgumentsFamily: ProviderFamily<Int, EdgePlainItem> {
        singleton { n in EdgePlainItem("\(n)") }
    }

    /// A construction that sets its own container's tracer, then resolves.
    var edgeTracerSettingConstruction: Provider<EdgePlainItem> {
        factory {
            let tracer: ResolutionTracer = self.getValue(forKey: "edge-tracer")!
            self.tracer = tracer
            return EdgePlainItem(self.edgeConfig())
        }
    }
    /// A construction that removes its container's tracer, then resolves.
    var edgeTracerClearingConstruction: Provider<EdgePlainItem> {
        factory {
            self.tracer = nil
            return EdgePlainItem(self.edgeConfig())
        }
    }
    var edgeTracedOuter: Provider<EdgeLinkedUser> {
        factory { EdgeLinkedUser(self.edgeTracerClearingConstruction()) }
    }
}

/// A scoped instance whose deinit opens a new scope of the app and resolves in it.
final class EdgeScopeOpeningOnDeinit: @unchecked Sendable {
    let app: DependencyContainer
    let resolvedInDeinit: Collected<String>
    init(app: DependencyContainer, resolvedInDeinit: Collected<String>) {
        self.app = app
        self.resolvedInDeinit = resolvedInDeinit
    }
    deinit {
        let next = DependencyContainer(scopeOf: app)
        resolvedInDeinit.append(next.edgePlainSingleton().label)
        // Bounded: the opener built here opens one more scope when it goes, up to three.
        if resolvedInDeinit.values.count < 3 { _ = next.edgeScopedOpener() }
    }
}

/// An object an app creates, whose `@Dependency` takes its container when created.
final class EdgeMainTakingModel: @unchecked Sendable {
    @Dependency(\.edgeClockName) var clockName: String
    init() {}
}

extension DependencyContainer {
    var edgeTeardownCounted: Provider<EdgePlainItem> {
        singleton { EdgePlainItem("counted") }.onShutdown { _ in
            let counter: EdgeCounter? = self.getValue(forKey: "edge-teardowns")
            counter?.increment()
        }
    }
    /// A singleton whose teardown shuts its container down again and resolves.
    var edgeReentrantTeardown: Provider<EdgePlainItem> {
        singleton { EdgePlainItem("reentrant") }.onShutdown { _ in
            self.shutdown()
            _ = self.edgeTeardownCounted()
        }
    }
    var edgeScopedOpener: Provider<EdgeScopeOpeningOnDeinit> {
        scoped {
            EdgeScopeOpeningOnDeinit(
                app: self.getValue(forKey: "edge-app")!, resolvedInDeinit: self.getValue(forKey: "edge-log")!)
        }
    }
    /// A construction that creates a model inside `withMain` of another container.
    var edgeModelBuiltUnderWithMain: Provider<EdgeMainTakingModel> {
        factory {
            let other: DependencyContainer = self.getValue(forKey: "edge-other")!
            return DependencyContainer.withMain(other) { EdgeMainTakingModel() }
        }
    }
}

@Suite struct EngineEdgeTeardownAndScopeAttackTests {
    /// `shutdown()` runs each teardown exactly once: a teardown that shuts the container
    /// down again, and resolves a singleton with a teardown, does not run one twice.
    @Test func aTeardownThatShutsDownAgainRunsEachTeardownOnce() async {
        let teardowns = EdgeCounter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue(teardowns, forKey: "edge-teardowns")
            _ = container.edgeTeardownCounted()
            _ = container.edgeReentrantTeardown()
            container.shutdown()
        }
        #expect(finished)
        // The nested shutdown runs the counted singleton's teardown, which the outer one
        // then does not run again; the copy rebuilt inside the reentrant teardown waits
        // for the next shutdown.
        #expect(teardowns.value == 1, "\(teardowns.value)")
    }

    /// A scoped instance released with its request scope opens a new scope in its deinit:
    /// no hang, and the new scope shares the app singleton.
    @Test func aScopedDeinitThatOpensAnotherScope() async {
        let log = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            app.setValue(app, forKey: "edge-app")
            app.setValue(log, forKey: "edge-log")
            let appItem = app.edgePlainSingleton()
            do {
                let request = DependencyContainer(scopeOf: app)
                _ = request.edgeScopedOpener()
            }
            #expect(log.values == ["registered", "registered", "registered"])
            #expect(appItem === app.edgePlainSingleton())
            app.removeAll()
        }
        #expect(finished)
    }

    /// A construction that creates an object inside `withMain(other)`: the docs say the
    /// object takes the container building it, before the task-local main.
    @Test func theBuildingContainerWinsOverWithMainInsideAConstruction() {
        let app = DependencyContainer()
        app.setValue("app clock", forKey: "edge-clock")
        let other = DependencyContainer()
        other.setValue("other clock", forKey: "edge-clock")
        app.setValue(other, forKey: "edge-other")
        let model = app.edgeModelBuiltUnderWithMain()
        #expect(model.clockName == "app clock")
    }
}

private func eventLines(_ events: [ResolutionEvent]) -> [String] { events.map { "\($0.name) \($0.depth)" } }

// MARK: - Tests

@Suite struct EngineEdgeAttackTests {
    /// A user relies on `reset()` releasing instances outside its locks, so a deinit may use
    /// the container: here the deinit resets the container again and resolves from it.
    @Test func aDeinitThatResetsAndResolvesDuringResetNeitherHangsNorCrashes() async {
        let deinits = EdgeCounter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue(deinits, forKey: "edge-deinits")
            _ = container.edgeResettingSingleton()
            container.reset()
            _ = container.edgePlainSingleton()
        }
        #expect(finished)
        #expect(deinits.value == 1)
    }

    /// An override drops the old instance after its locks: a deinit that overrides the
    /// same registration again, resolves it, and makes a child must not hang.
    @Test func aDeinitThatOverridesWhenReleasedByAnOverride() async {
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            _ = container.edgeOverridingSingleton()
            container.override(\.edgeOverridingSingleton) { EdgeOverridingOnDeinit(container: container) }
            #expect(container.edgePlainSingleton().label == "from deinit")
        }
        #expect(finished)
    }

    /// A linked family member that resolves inside its closure, called in a traced
    /// construction: the member at depth 1 and what its closure resolved below it, at 2.
    @Test func aLinkedMembersOwnResolutionsNestBelowIt() {
        let app = DependencyContainer()
        let holder = app.edgeLinkedFamilyHolder()
        _ = holder.items
        let batches = Collected<[String]>()
        app.tracer = ResolutionTracer { batches.append(eventLines($0)) }
        _ = app.edgeLinkedUser()
        _ = app.edgeLinkedUser()
        app.tracer = nil
        #expect(batches.values.count == 2, "\(batches.values)")
        #expect(
            batches.values.first == ["edgeLinkedUser 0", "edgeLinkedFamilyHolder 1", "edgeLinkedFamily 1", "edgeConfig 2"],
            "\(batches.values)")
        #expect(
            batches.values.last == ["edgeLinkedUser 0", "edgeLinkedFamilyHolder 1", "edgeLinkedFamily 1"],
            "\(batches.values)")
    }

    /// A construction that turns tracing on for its container: nothing of it is delivered
    /// (it began untraced), and the next resolution is a batch of its own at depth 0.
    @Test func aConstructionThatTurnsTracingOnDeliversCleanBatchesAfterwards() async {
        let batches = Collected<[String]>()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue(ResolutionTracer { batches.append(eventLines($0)) }, forKey: "edge-tracer")
            _ = container.edgeTracerSettingConstruction()
            _ = container.edgeConfig()
            container.tracer = nil
        }
        #expect(finished)
        #expect(batches.values == [["edgeConfig 0"]], "\(batches.values)")
    }

    /// A construction that turns tracing off in the middle: no hang, and the tracer hears
    /// of what began while it was set, once; later resolutions are untraced.
    @Test func aConstructionThatTurnsTracingOffMidway() async {
        let batches = Collected<[ResolutionEvent]>()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.tracer = ResolutionTracer { batches.append($0) }
            _ = container.edgeTracedOuter()
            _ = container.edgeConfig()
        }
        #expect(finished)
        // What began while the tracer was set is delivered; what the construction resolved
        // after clearing it, and everything after, is not traced.
        #expect(
            batches.values.map { $0.map { "\($0.name) \($0.depth)" } }
                == [["edgeTracedOuter 0", "edgeTracerClearingConstruction 1"]], "\(batches.values)")
    }

    /// An app singleton built because a scope asked first reads its `@Dependency` lazily:
    /// it must read the app's value, not the scope's override ("a cached instance never
    /// keeps the container of whoever resolved it first").
    @Test func anAppSingletonFirstAskedByAScopeReadsTheAppLater() {
        let app = DependencyContainer()
        app.setValue("app clock", forKey: "edge-clock")
        let request = DependencyContainer(scopeOf: app)
        request.setValue("request clock", forKey: "edge-clock")
        let reader = request.edgeLazyReader()
        #expect(reader === app.edgeLazyReader())
        #expect(reader.clockName == "app clock")
    }

    /// A family over a class takes a subclass instance as its declared type: an equal
    /// base and derived argument are one argument, and an override of one reaches the other.
    @Test func aClassFamilyTakesASubclassArgumentAsItsDeclaredType() {
        let container = DependencyContainer()
        let base = EdgeBaseArgument(id: 4)
        let derived = EdgeDerivedArgument(id: 4)
        #expect(container.edgeClassArgumentFamily(base) === container.edgeClassArgumentFamily(derived))
        container.override(\.edgeClassArgumentFamily[derived]) { EdgePlainItem("stub") }
        #expect(container.edgeClassArgumentFamily(base).label == "stub")
    }

    /// Thousands of arguments: each served its own instance, the same on a second pass,
    /// and all released by `reset(\.family)`.
    @Test func thousandsOfArgumentsAreKeptAndReleasedByAFamilyReset() {
        let container = DependencyContainer()
        let slots = (0..<5_000).map { _ in EdgeWeakSlot() }
        var firstPass: [ObjectIdentifier] = []
        for n in 0..<5_000 {
            let item = container.edgeManyArgumentsFamily(n)
            slots[n].hold(item)
            firstPass.append(ObjectIdentifier(item))
        }
        var same = true
        for n in 0..<5_000 where ObjectIdentifier(container.edgeManyArgumentsFamily(n)) != firstPass[n] { same = false }
        #expect(same)
        container.reset(\.edgeManyArgumentsFamily)
        let allReleased = slots.allSatisfy { $0.isEmpty }
        #expect(allReleased)
    }

    /// Thousands of arguments from many threads at once: one instance per argument.
    @Test func thousandsOfArgumentsFromManyThreadsBuildOncePerArgument() async {
        let container = DependencyContainer()
        let seen = Collected<(Int, ObjectIdentifier)>()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            for n in 0..<2_000 {
                let argument = (n * 7 + thread * 13) % 2_000
                seen.append((argument, ObjectIdentifier(container.edgeManyArgumentsFamily(argument))))
            }
        }
        #expect(finished)
        var byArgument: [Int: Set<ObjectIdentifier>] = [:]
        for (argument, identity) in seen.values { byArgument[argument, default: []].insert(identity) }
        #expect(byArgument.count == 2_000)
        #expect(byArgument.values.allSatisfy { $0.count == 1 })
    }
}

extension DependencyContainer {
    var edgeSharedFamily: ProviderFamily<Int, EdgePlainItem> {
        shared { n in EdgePlainItem("\(n)") }
    }
}

@Suite struct EngineEdgeConcurrencyAttackTests {
    /// Parallel tests each in their own world: every task's model, and a model made in a
    /// child task, reads its own container. (The global `main` is left alone: other tests
    /// run at the same time.)
    @Test func parallelWorldsEachSeeTheirOwnContainer() async {
        let mismatches = Collected<String>()
        await withTaskGroup(of: Void.self) { group in
            for world in 0..<50 {
                group.addTask {
                    let container = DependencyContainer(parent: .mocks)
                    container.setValue("clock \(world)", forKey: "edge-clock")
                    await DependencyContainer.withMain(container) {
                        let model = EdgeMainTakingModel()
                        await Task.yield()
                        if model.clockName != "clock \(world)" { mismatches.append("\(world): \(model.clockName)") }
                        let nested = await Task { EdgeMainTakingModel().clockName }.value
                        if nested != "clock \(world)" { mismatches.append("\(world) nested: \(nested)") }
                    }
                }
            }
        }
        #expect(mismatches.values.isEmpty, "\(mismatches.values)")
    }

    /// A shared family under load: members released and rebuilt on many threads while
    /// another thread resets the family; one live instance per argument at a time.
    @Test func aSharedFamilyReleasedAndResetUnderLoad() async {
        let container = DependencyContainer()
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            for round in 0..<300 {
                if thread == 0 {
                    if round % 10 == 0 { container.reset(\.edgeSharedFamily) }
                    continue
                }
                let argument = round % 17
                let first = container.edgeSharedFamily(argument)
                let second = container.edgeSharedFamily(argument)
                if first.label != "\(argument)" { wrong.append("label \(first.label) for \(argument)") }
                withExtendedLifetime(first) { _ = second }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values)")
    }
}

@Suite struct EngineEdgeFamilyMemberAttackTests {
    /// `instanceIfBuilt` of one family member: nil before, the member after, nil for a
    /// shared member no one holds, and the member of its own argument only.
    @Test func instanceIfBuiltOfFamilyMembers() {
        let container = DependencyContainer()
        #expect(container.instanceIfBuilt(\.edgeManyArgumentsFamily[3]) == nil)
        let three = container.edgeManyArgumentsFamily(3)
        #expect(container.instanceIfBuilt(\.edgeManyArgumentsFamily[3]) === three)
        #expect(container.instanceIfBuilt(\.edgeManyArgumentsFamily[4]) == nil)
        do {
            let held = container.edgeSharedFamily(8)
            #expect(container.instanceIfBuilt(\.edgeSharedFamily[8]) === held)
        }
        #expect(container.instanceIfBuilt(\.edgeSharedFamily[8]) == nil)
    }

    /// An override of one argument in the parent reaches a child that already built that
    /// member, and not the child's other members.
    @Test func aParentOverrideOfOneArgumentReachesAChildThatBuiltIt() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let childSeven = child.edgeManyArgumentsFamily(7)
        let childEight = child.edgeManyArgumentsFamily(8)
        parent.override(\.edgeManyArgumentsFamily[7]) { EdgePlainItem("stub seven") }
        #expect(child.edgeManyArgumentsFamily(7).label == "stub seven")
        #expect(child.edgeManyArgumentsFamily(7) !== childSeven)
        #expect(child.edgeManyArgumentsFamily(8) === childEight)
        parent.reset(\.edgeManyArgumentsFamily)
        #expect(child.edgeManyArgumentsFamily(7).label == "7")
    }
}

@Suite struct EngineEdgeFamilyOverrideOrderAttackTests {
    /// "`override(\.x[arg])` overrides one argument and wins over the family's override":
    /// whichever is installed first, and a reset of the member's key path leaves the
    /// family's override in force.
    @Test func aMemberOverrideWinsInEitherOrderAndItsResetLeavesTheFamilyOverride() {
        let container = DependencyContainer()
        container.override(\.edgeManyArgumentsFamily[3]) { EdgePlainItem("member stub") }
        container.override(\.edgeManyArgumentsFamily) { n in EdgePlainItem("family stub \(n)") }
        #expect(container.edgeManyArgumentsFamily(3).label == "member stub")
        #expect(container.edgeManyArgumentsFamily(4).label == "family stub 4")
        container.reset(\.edgeManyArgumentsFamily[3])
        #expect(container.edgeManyArgumentsFamily(3).label == "family stub 3")
        #expect(container.edgeManyArgumentsFamily(4).label == "family stub 4")
        container.reset(\.edgeManyArgumentsFamily)
        #expect(container.edgeManyArgumentsFamily(3).label == "3")
    }

    /// A child's override of one member over a parent's override of the whole family.
    @Test func aChildsMemberOverrideOverAParentsFamilyOverride() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        child.override(\.edgeManyArgumentsFamily[5]) { EdgePlainItem("child member") }
        parent.override(\.edgeManyArgumentsFamily) { n in EdgePlainItem("parent family \(n)") }
        #expect(child.edgeManyArgumentsFamily(5).label == "child member")
        #expect(child.edgeManyArgumentsFamily(6).label == "parent family 6")
        #expect(parent.edgeManyArgumentsFamily(5).label == "parent family 5")
    }
}
