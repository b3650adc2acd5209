import Foundation
import Testing

@testable import DependencyInjection

// Attacks on how a container keeps its children: each child sits in a numbered slot of its
// parent's `ChildList` for its life, its `deinit` takes the slot back under the parent's
// lock, and a freed slot goes to the next child. A change in the parent (override, reset,
// decoration, tracer, shutdown) must reach every live child, whatever slots came and went
// meanwhile; a child that went away must leave nothing of itself in its parent.
// And attacks on `Decorated.isOpen`, which tells by its class whether an entry a child
// found still lacks what builds the instance.

// MARK: - The app under test

/// The app's configuration; a test's parent container overrides its version.
final class CSAConfig: Sendable {
    let version: Int
    init(version: Int) { self.version = version }
}

/// An app-wide service built from the configuration.
final class CSAService: Sendable {
    let config: CSAConfig
    init(config: CSAConfig) { self.config = config }
}

/// What one request (a scope) builds from the configuration.
final class CSARequestLog: Sendable {
    let config: CSAConfig
    init(config: CSAConfig) { self.config = config }
}

/// A greeting that decorations wrap: `text` names the chain, innermost last.
protocol CSAGreeting: AnyObject, Sendable {
    var text: String { get }
}

final class CSAPlainGreeting: CSAGreeting {
    let text: String
    init(text: String) { self.text = text }
}

final class CSAWrappedGreeting: CSAGreeting {
    let text: String
    init(tag: String, around inner: any CSAGreeting) { text = "\(tag)(\(inner.text))" }
}

/// Something a container keeps whose `deinit` drops containers: a sibling or a child of
/// the container that built it, and runs an action.
final class CSAContainerHolder: Sendable {
    let held: [DependencyContainer]
    let onDeinit: (@Sendable () -> Void)?
    init(held: [DependencyContainer], onDeinit: (@Sendable () -> Void)? = nil) {
        self.held = held
        self.onDeinit = onDeinit
    }
    deinit { onDeinit?() }
}

extension DependencyContainer {
    var csaConfig: Provider<CSAConfig> { singleton { CSAConfig(version: 0) } }
    var csaService: Provider<CSAService> { singleton { CSAService(config: self.csaConfig()) } }
    var csaRequestLog: Provider<CSARequestLog> { scoped { CSARequestLog(config: self.csaConfig()) } }
    var csaGreeting: Provider<any CSAGreeting> { factory { CSAPlainGreeting(text: "reg") } }
    var csaCachedGreeting: Provider<any CSAGreeting> { singleton { CSAPlainGreeting(text: "reg") } }
    /// What a test stores under `"csa.holder"` to be dropped with this container's singleton.
    var csaHolder: Provider<CSAContainerHolder?> {
        singleton { (self.getValue(forKey: "csa.holder") as CSAHolderMaker?)?.make(self) }
    }
}

/// A service built from the configuration whose `deinit` runs the hook its container
/// stores under `"csa.hook"`: what a change that drops it runs while it is under way.
final class CSAHookedService: Sendable {
    let config: CSAConfig
    let hook: DeinitHook?
    init(config: CSAConfig, hook: DeinitHook?) { (self.config, self.hook) = (config, hook) }
    deinit { hook?.fire() }
}

extension DependencyContainer {
    var csaHookedService: Provider<CSAHookedService> {
        singleton { CSAHookedService(config: self.csaConfig(), hook: self.getValue(forKey: "csa.hook")) }
    }
}

/// Containers a hook hands over between threads and rounds.
final class CSAContainerBox: @unchecked Sendable {
    // @unchecked: `stored` is only touched while holding `lock`.
    private let lock = NSLock()
    private var stored: [DependencyContainer] = []
    func put(_ container: DependencyContainer) { lock.withLock { stored.append(container) } }
    func takeAll() -> [DependencyContainer] { lock.withLock { defer { stored = [] }; return stored } }
}

/// Makes a container's `csaHolder` from the container that builds it.
final class CSAHolderMaker: Sendable {
    let make: @Sendable (DependencyContainer) -> CSAContainerHolder
    init(_ make: @escaping @Sendable (DependencyContainer) -> CSAContainerHolder) { self.make = make }
}


/// The parent's children, read under its lock: how many are alive and how many slots.
func csaChildCounts(of parent: DependencyContainer) -> (alive: Int, slots: Int) {
    parent.withStateLock { ($0.children.count, $0.children.slotCount) }
}

/// The version of the configuration `container` serves, through what it caches: its
/// service (a singleton) and, in a scope, its request log.
func csaVersionsSeen(in container: DependencyContainer) -> [Int] {
    var versions = [container.csaService().config.version, container.csaConfig().version]
    if container.isScope { versions.append(container.csaRequestLog().config.version) }
    return versions
}

// MARK: - Tests

@Suite struct CSAChildSlotAttackTests {
    // MARK: Parent and children changing at once

    /// Pins: while three threads make and drop worlds and scopes of a parent (slots freed
    /// and reused all the time) and another reads long-lived children, every override the
    /// parent's thread installs reaches every long-lived child before `override` returns:
    /// no child serves an instance built from an earlier version.
    @Test func everyLiveChildSeesEachOverrideWhileOthersComeAndGo() async {
        let parent = DependencyContainer()
        let keepers = (0..<24).map { index in
            index.isMultiple(of: 2) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
        }
        for keeper in keepers { _ = csaVersionsSeen(in: keeper) }
        let stale = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 5) { index in
            for round in 1...600 {
                switch index {
                case 0:
                    parent.override(\.csaConfig) { CSAConfig(version: round) }
                    for (number, keeper) in keepers.enumerated() {
                        let seen = csaVersionsSeen(in: keeper)
                        if seen.contains(where: { $0 != round }) { stale.append("round \(round), keeper \(number): \(seen)") }
                    }
                case 1:
                    // Keeps the long-lived children's caches busy while the parent changes.
                    for keeper in keepers { _ = csaVersionsSeen(in: keeper) }
                default:
                    // Three children at once, the middle one dropped first: its slot is
                    // freed below the newest and reused by the next child.
                    var made = (0..<3).map { number in
                        (number + index).isMultiple(of: 2)
                            ? DependencyContainer(scopeOf: parent) : DependencyContainer(parent: parent)
                    }
                    for child in made { _ = csaVersionsSeen(in: child) }
                    made.remove(at: 1)
                    made.append(DependencyContainer(parent: parent))
                    _ = csaVersionsSeen(in: made[2])
                    made.swapAt(0, 1)
                    made.removeAll()
                }
            }
        }
        #expect(finished, "making and dropping children while the parent changes deadlocked")
        #expect(stale.values.isEmpty, "\(stale.values.prefix(5))")
        #expect(csaChildCounts(of: parent).alive == keepers.count)
        parent.override(\.csaConfig) { CSAConfig(version: -1) }
        for keeper in keepers { #expect(csaVersionsSeen(in: keeper).allSatisfy { $0 == -1 }) }
    }

    /// Pins: a reset, a one-key reset and a decoration of the parent, racing with children
    /// made and dropped, reach every long-lived child: after each, the children serve what
    /// the parent serves.
    @Test func resetsAndDecorationsReachEveryLiveChildWhileSlotsAreReused() async {
        let parent = DependencyContainer()
        let keepers = (0..<16).map { index in
            index.isMultiple(of: 2) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
        }
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for round in 1...200 {
                if index == 0 {
                    parent.override(\.csaConfig) { CSAConfig(version: round) }
                    parent.decorate(\.csaCachedGreeting) { CSAWrappedGreeting(tag: "d\(round)", around: $0) }
                    for keeper in keepers where keeper.csaCachedGreeting().text != "d\(round)(reg)" {
                        wrong.append("round \(round) decorated: \(keeper.csaCachedGreeting().text)")
                    }
                    if round.isMultiple(of: 2) { parent.reset() } else { parent.reset(\.csaConfig); parent.reset(\.csaCachedGreeting) }
                    for keeper in keepers {
                        if keeper.csaCachedGreeting().text != "reg" { wrong.append("round \(round) reset: \(keeper.csaCachedGreeting().text)") }
                        if csaVersionsSeen(in: keeper).contains(where: { $0 != 0 }) { wrong.append("round \(round) reset: \(csaVersionsSeen(in: keeper))") }
                    }
                    continue
                }
                var made: [DependencyContainer] = []
                for number in 0..<4 {
                    let child = number.isMultiple(of: 2) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
                    _ = child.csaCachedGreeting()
                    _ = csaVersionsSeen(in: child)
                    made.append(child)
                }
                // Dropped oldest first: every removal but the last frees a slot below the newest.
                while !made.isEmpty { made.removeFirst() }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
    }

    /// Pins: tracers set on the parent while children come and go reach every child alive
    /// when the setter returns, and those made afterwards; a tracer replaced is freed.
    @Test func tracersSetWhileChildrenComeAndGoReachEveryLiveChild() async {
        let parent = DependencyContainer()
        let keepers = (0..<16).map { index in
            index.isMultiple(of: 3) ? DependencyContainer(scopeOf: parent) : DependencyContainer(parent: parent)
        }
        let replaced = Collected<Released>()
        let missing = Collected<Int>()
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<300 {
                if index == 0 {
                    let tracer = ResolutionTracer { _ in }
                    replaced.append(Released(tracer))
                    parent.tracer = tracer
                    if keepers.contains(where: { $0.tracer !== tracer }) { missing.append(round) }
                    continue
                }
                var made = (0..<3).map { _ in DependencyContainer(parent: parent) }
                _ = made[1].csaService()
                made.remove(at: index % 3)
                made.append(DependencyContainer(scopeOf: parent))
                _ = made.last?.csaRequestLog()
            }
        }
        #expect(finished)
        #expect(missing.values.isEmpty, "rounds whose tracer missed a live child: \(missing.values.prefix(5))")
        let last = ResolutionTracer { _ in }
        parent.tracer = last
        #expect(keepers.allSatisfy { $0.tracer === last })
        #expect(DependencyContainer(parent: parent).tracer === last)
        parent.tracer = nil
        #expect(replaced.values.allSatisfy { $0.object == nil }, "a replaced tracer is alive")
    }

    /// Pins: shutting the parent down (with a teardown that uses the parent and makes a
    /// child of it) and overriding it, while children are made, used and dropped, neither
    /// crashes nor deadlocks, and a child made afterwards still sees the parent's override.
    @Test func shutdownsRacingWithChildrenComingAndGoing() async {
        let parent = DependencyContainer()
        let torn = Counter()
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<300 {
                switch index {
                case 0:
                    parent.shutdown()
                case 1:
                    parent.override(\.csaConfig) { CSAConfig(version: round) }
                    _ = parent.csaTornDown()
                default:
                    let child = round.isMultiple(of: 2) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
                    child.setValue(torn, forKey: "csa.torn")
                    _ = child.csaTornDown()
                    _ = csaVersionsSeen(in: child)
                    if round.isMultiple(of: 5) { child.shutdown() }
                }
            }
        }
        #expect(finished)
        parent.override(\.csaConfig) { CSAConfig(version: 1_000) }
        #expect(csaVersionsSeen(in: DependencyContainer(scopeOf: parent)).allSatisfy { $0 == 1_000 })
        #expect(csaChildCounts(of: parent).alive == 0)
    }

    /// Pins: while the parent's override is on its way to its children, a dropped
    /// instance's `deinit` drops a sibling (freeing its slot), makes a child that takes the
    /// freed slot, and makes and drops another (the newest slot popped): when `override`
    /// returns, every child alive (the new one too) serves the new version, and the
    /// dropped sibling is freed with what it built.
    @Test(arguments: [0, 1, 2])
    func aSlotFreedAndReusedWhileTheParentSpreadsAChange(layout: Int) {
        let parent = DependencyContainer()
        let made = CSAContainerBox()
        for round in 1...100 {
            // The dropped sibling's slot is below, between or above the others'.
            // (The hooked child is a world: a scope would leave its singleton to the parent.)
            var hookedOrNil: DependencyContainer?
            var dropped: DependencyContainer?
            var otherOrNil: DependencyContainer?
            for position in 0..<3 {
                if position == layout {
                    dropped = DependencyContainer(scopeOf: parent)
                } else if hookedOrNil == nil {
                    hookedOrNil = DependencyContainer(parent: parent)
                } else {
                    otherOrNil = DependencyContainer(scopeOf: parent)
                }
            }
            let (hooked, other) = (hookedOrNil!, otherOrNil!)
            let hook = DeinitHook()
            hooked.setValue(hook, forKey: "csa.hook")
            _ = hooked.csaHookedService()
            for child in [dropped!, other] { _ = csaVersionsSeen(in: child) }
            let droppedService = Held(dropped!.csaService())
            let droppedChild = Held(dropped!)
            let handOff = CSAContainerBox()
            handOff.put(dropped!)
            dropped = nil
            hook.set {
                _ = handOff.takeAll()  // the sibling goes: its slot is freed
                let taker = DependencyContainer(parent: parent)  // takes the freed slot
                _ = csaVersionsSeen(in: taker)
                made.put(taker)
                _ = DependencyContainer(scopeOf: parent).csaRequestLog()  // the newest, popped
            }
            parent.override(\.csaConfig) { CSAConfig(version: round) }
            let takers = made.takeAll()
            #expect(takers.count == 1, "layout \(layout), round \(round): the hook did not run")
            for child in [hooked, other] + takers where csaVersionsSeen(in: child).contains(where: { $0 != round }) {
                Issue.record("layout \(layout), round \(round): a child serves \(csaVersionsSeen(in: child))")
            }
            #expect(hooked.csaHookedService().config.version == round)
            #expect(droppedChild.object == nil && droppedService.object == nil)
            #expect(csaChildCounts(of: parent).alive == 2 + takers.count)
        }
    }

    // MARK: Many children, random orders

    /// Pins: with hundreds of worlds and scopes made and dropped in random orders (slots
    /// freed anywhere and reused), the parent lists exactly the live children, has no more
    /// slots than the most alive at once, reaches every live one with an override, and
    /// keeps nothing a dropped child built.
    @Test(arguments: [UInt64(1), 7, 42, 2_026])
    func childrenDroppedAndMadeInRandomOrdersAreListedExactly(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let parent = DependencyContainer()
        var alive: [DependencyContainer] = []
        var droppedServices: [Held<CSAService>] = []
        var droppedChildren: [Held<DependencyContainer>] = []
        var mostAlive = 0
        var version = 0
        for step in 0..<3_000 {
            let makes = alive.isEmpty || Int.random(in: 0..<100, using: &random) < (step < 1_500 ? 60 : 40)
            if makes {
                let child = Bool.random(using: &random) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
                _ = csaVersionsSeen(in: child)
                alive.append(child)
                mostAlive = max(mostAlive, alive.count)
            } else {
                let child = alive.remove(at: Int.random(in: 0..<alive.count, using: &random))
                if !child.isScope { droppedServices.append(Held(child.csaService())) }
                droppedChildren.append(Held(child))
            }
            if step.isMultiple(of: 250) {
                version += 1
                parent.override(\.csaConfig) { [version] in CSAConfig(version: version) }
                for child in alive where csaVersionsSeen(in: child).contains(where: { $0 != version }) {
                    Issue.record("seed \(seed), step \(step): a live child serves \(csaVersionsSeen(in: child)), not \(version)")
                }
            }
            let counts = csaChildCounts(of: parent)
            if counts.alive != alive.count || counts.slots > mostAlive {
                Issue.record("seed \(seed), step \(step): \(counts) with \(alive.count) alive, at most \(mostAlive)")
                return
            }
        }
        #expect(droppedChildren.allSatisfy { $0.object == nil }, "a dropped child is alive")
        #expect(droppedServices.allSatisfy { $0.object == nil }, "a dropped world's singleton is alive")
        // Every child the parent lists is a live child, and every live child is listed.
        // The list taken holds the children until it goes, at the end of the expression.
        let kept = Set(parent.withStateLock { $0.liveChildren }.map { ObjectIdentifier($0.container) })
        let listedExactly = kept == Set(alive.map { ObjectIdentifier($0) })
        #expect(listedExactly, "the parent lists \(kept.count) children for \(alive.count) live children")
        alive.shuffle(using: &random)
        alive.removeAll()
        #expect(csaChildCounts(of: parent).alive == 0)
    }

    /// Pins: three thousand children alive at once, dropped in a random order, leave the
    /// parent with none and no more slots than that; a burst after them reuses the slots.
    @Test func threeThousandChildrenDroppedInARandomOrderLeaveNone() {
        var random = SeededGenerator(seed: 99)
        let parent = DependencyContainer(isMocked: true)
        var alive = (0..<3_000).map { _ in DependencyContainer(parent: parent) }
        for child in alive.prefix(100) { _ = child.csaService() }
        #expect(csaChildCounts(of: parent) == (3_000, 3_000))
        alive.shuffle(using: &random)
        while alive.count > 1 { alive.removeLast() }
        parent.override(\.csaConfig) { CSAConfig(version: 5) }
        #expect(alive[0].csaService().config.version == 5)
        alive.removeAll()
        #expect(csaChildCounts(of: parent).alive == 0)
        let burst = (0..<3_000).map { _ in DependencyContainer(scopeOf: parent) }
        #expect(csaChildCounts(of: parent) == (3_000, 3_000), "a burst as large as the first needs no new slot")
        parent.override(\.csaConfig) { CSAConfig(version: 6) }
        #expect(burst.allSatisfy { $0.csaRequestLog().config.version == 6 })
    }

    /// Pins: a tree of worlds and scopes three deep, its members dropped in random orders
    /// (a grandchild before or after its parent, which it keeps alive), keeps every
    /// container's list exact, and the root's change reaches every live grandchild.
    @Test(arguments: [UInt64(3), 11, 64])
    func grandchildrenDroppedBeforeAndAfterTheirParentsSeeTheRootsChanges(seed: UInt64) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            var random = SeededGenerator(seed: seed)
            let root = DependencyContainer()
            var children: [DependencyContainer] = []
            var grandchildren: [DependencyContainer] = []
            var heldChildren: [Held<DependencyContainer>] = []
            for number in 0..<30 {
                let child = number.isMultiple(of: 2) ? DependencyContainer(parent: root) : DependencyContainer(scopeOf: root)
                children.append(child)
                heldChildren.append(Held(child))
                for inner in 0..<8 {
                    let grandchild = inner.isMultiple(of: 3) ? DependencyContainer(parent: child) : DependencyContainer(scopeOf: child)
                    _ = csaVersionsSeen(in: grandchild)
                    grandchildren.append(grandchild)
                }
            }
            for round in 1...6 {
                for _ in 0..<(children.count / 3) where !children.isEmpty {
                    children.remove(at: Int.random(in: 0..<children.count, using: &random))
                }
                for _ in 0..<(grandchildren.count / 3) where !grandchildren.isEmpty {
                    grandchildren.remove(at: Int.random(in: 0..<grandchildren.count, using: &random))
                }
                // New grandchildren under surviving children, in freed slots.
                for child in children.shuffled(using: &random).prefix(5) {
                    let grandchild = DependencyContainer(scopeOf: child)
                    _ = csaVersionsSeen(in: grandchild)
                    grandchildren.append(grandchild)
                }
                root.override(\.csaConfig) { CSAConfig(version: round) }
                for grandchild in grandchildren where csaVersionsSeen(in: grandchild).contains(where: { $0 != round }) {
                    findings.check(false, "seed \(seed), round \(round): a grandchild serves \(csaVersionsSeen(in: grandchild))")
                }
                // A child is alive while it is kept or one of its grandchildren is.
                let aliveChildren = heldChildren.compactMap(\.object)
                findings.check(
                    csaChildCounts(of: root).alive == aliveChildren.count,
                    "seed \(seed), round \(round): the root counts \(csaChildCounts(of: root).alive) live children, not \(aliveChildren.count)")
                for child in aliveChildren {
                    let own = grandchildren.filter { $0.parent === child }.count
                    findings.check(
                        csaChildCounts(of: child).alive == own,
                        "seed \(seed), round \(round): a child counts \(csaChildCounts(of: child).alive) live children, not \(own)")
                }
            }
            grandchildren.shuffle(using: &random)
            grandchildren.removeAll()
            children.removeAll()
            findings.check(heldChildren.allSatisfy { $0.object == nil }, "seed \(seed): a dropped child is alive")
            findings.check(csaChildCounts(of: root).alive == 0, "seed \(seed): the root still counts live children")
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    // MARK: Deinits that use the parent or the child

    /// Pins: what a child cached, holding a sibling (another child of the same parent) and
    /// a child of its own, and whose `deinit` makes and drops a child of the parent, is
    /// released without any lock held when the parent's override, reset or decoration
    /// drops it, when the child is dropped, and when the parent shuts down: every one of
    /// those deinits takes the parent's or the child's lock.
    @Test func cachedInstancesThatDropChildrenAreReleasedOutsideEveryLock() async {
        let parent = DependencyContainer()
        let deinits = Counter()
        let maker = CSAHolderMaker { container in
            // A sibling (a child of the builder's parent) and a child of the sibling: the
            // holder never keeps its builder, which would keep itself.
            let sibling = DependencyContainer(parent: container.parent ?? container)
            _ = sibling.csaService()
            let nephew = DependencyContainer(scopeOf: sibling)
            _ = nephew.csaRequestLog()
            let parentOfBuilder = container.parent
            return CSAContainerHolder(held: [sibling, nephew]) { [weak container] in
                deinits.increment()
                // Uses the parent and, while it lives, the builder: each takes a slot in it.
                if let parentOfBuilder { _ = DependencyContainer(parent: parentOfBuilder).csaService() }
                if let container { _ = DependencyContainer(scopeOf: container).csaRequestLog() }
            }
        }
        parent.setValue(maker, forKey: "csa.holder")
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<200 {
                if index == 0 {
                    switch round % 4 {
                    case 0: parent.override(\.csaHolder) { nil }
                    case 1: parent.reset()
                    case 2: parent.decorate(\.csaHolder) { $0 }
                    default: parent.shutdown()
                    }
                    continue
                }
                let child = index == 1 ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
                _ = child.csaHolder()
                _ = csaVersionsSeen(in: child)
            }
        }
        #expect(finished, "a deinit that uses the parent or the child deadlocked")
        #expect(deinits.count > 0)
        parent.reset()
        #expect(csaChildCounts(of: parent).alive == 0, "children kept by dropped instances are alive")
    }

    /// Pins: a child kept by its parent (a stored value, a singleton, a tracer) is released
    /// after the parent's lock when the parent lets go of it: its `deinit` takes the
    /// parent's lock to leave its slot.
    @Test func childrenKeptByTheirParentAreReleasedAfterItsLock() async {
        let kept = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<50 {
                let parent = DependencyContainer()
                var children = (0..<4).map { _ in DependencyContainer(parent: parent) }
                parent.setValue(children[1], forKey: "csa.child")
                parent.setValue(CSAContainerHolder(held: [children[2]]), forKey: "csa.children")
                parent.tracer = { (tracerChild: DependencyContainer) in ResolutionTracer { _ in _ = tracerChild } }(children[3])
                parent.setValue(
                    CSAHolderMaker { builder in CSAContainerHolder(held: [DependencyContainer(scopeOf: builder)]) },
                    forKey: "csa.holder")
                _ = parent.csaHolder()
                let held = children.map(Held.init)
                children.removeAll()
                switch round % 3 {
                case 0:
                    parent.removeValue(forKey: "csa.child")
                    parent.setValue(0, forKey: "csa.children")
                case 1: parent.removeAll()
                default: parent.setValue(1, forKey: "csa.child"); parent.removeValue(forKey: "csa.children")
                }
                parent.tracer = nil
                parent.reset()
                if held.contains(where: { $0.object != nil }) || csaChildCounts(of: parent).alive != 0 { kept.append(round) }
            }
        }
        #expect(finished, "a child released under its parent's lock deadlocked")
        #expect(kept.values.isEmpty, "rounds that kept a child: \(kept.values)")
    }

    // MARK: Children dropped from odd places

    /// Pins: children made and dropped inside a construction (of the parent and of a
    /// child), by a task, and by a tracer, racing with overrides, leave their slots and
    /// never stop a change reaching the others.
    @Test func childrenDroppedInsideConstructionsTracersAndTasks() async {
        let parent = DependencyContainer()
        parent.setValue(
            CSAHolderMaker { container in
                // Made and dropped while `container` builds: a world of the builder, and a
                // scope of its parent (a sibling), both dropped before the build ends.
                _ = DependencyContainer(parent: container).csaService()
                if let up = container.parent { _ = DependencyContainer(scopeOf: up).csaRequestLog() }
                return CSAContainerHolder(held: [])
            }, forKey: "csa.holder")
        parent.tracer = ResolutionTracer { _ in
            _ = DependencyContainer(parent: parent)
        }
        let keeper = DependencyContainer(scopeOf: parent)
        let stale = Collected<String>()
        let finished = await endsWithoutHanging {
            await withTaskGroup(of: Void.self) { group in
                let start = AsyncBarrier(parties: 9)
                group.addTask {
                    await start.arrive()
                    for round in 1...150 {
                        parent.override(\.csaConfig) { CSAConfig(version: round) }
                        let seen = csaVersionsSeen(in: keeper)
                        if seen.contains(where: { $0 != round }) { stale.append("round \(round): \(seen)") }
                    }
                }
                for _ in 0..<8 {
                    group.addTask {
                        await start.arrive()
                        for round in 0..<60 {
                            let child = round.isMultiple(of: 2) ? DependencyContainer(parent: parent) : DependencyContainer(scopeOf: parent)
                            _ = child.csaHolder()
                            parent.reset(\.csaHolder)
                            _ = parent.csaHolder()
                            await Task.yield()
                            _ = csaVersionsSeen(in: child)
                        }
                    }
                }
            }
        }
        #expect(finished)
        parent.tracer = nil
        #expect(stale.values.isEmpty, "\(stale.values.prefix(5))")
        #expect(csaChildCounts(of: parent).alive == 1)
    }

    // MARK: Open decorations across parents and children

    /// Pins, for each way of stacking overrides and decorations over a grandparent, a
    /// parent and a child, what the child builds and how the tracer reports it: the nearest
    /// override wins, the decorations of every container up to and including the one that
    /// overrides wrap it, outermost first.
    @Test func decorationsAndOverridesStackedAcrossParentAndChild() {
        struct Case {
            let name: String
            let grandparent: [String]
            let parent: [String]
            let child: [String]
            let text: String
            let outcome: ResolutionEvent.Outcome
        }
        // "o" overrides, any other tag decorates, in the order installed.
        let cases = [
            Case(name: "decorated child, nothing above", grandparent: [], parent: [], child: ["c"], text: "c(reg)", outcome: .built),
            Case(name: "decorated child over an overriding grandparent", grandparent: ["o"], parent: [], child: ["c"], text: "c(o@g)", outcome: .builtFromOverride),
            Case(name: "decorated parent over an overriding grandparent", grandparent: ["o"], parent: ["p"], child: [], text: "p(o@g)", outcome: .builtFromOverride),
            Case(name: "parent overrides and decorates; all decorate", grandparent: ["g"], parent: ["o", "p"], child: ["c"], text: "c(p(o@p))", outcome: .builtFromOverride),
            Case(name: "parent decorates, then overrides", grandparent: ["g"], parent: ["p", "o"], child: ["c1", "c2"], text: "c2(c1(p(o@p)))", outcome: .builtFromOverride),
            Case(name: "child overrides under decorations", grandparent: ["g"], parent: ["p"], child: ["o"], text: "o@c", outcome: .builtFromOverride),
            Case(name: "child overrides, then decorates", grandparent: ["o", "g"], parent: ["p"], child: ["o", "c"], text: "c(o@c)", outcome: .builtFromOverride),
            Case(name: "everything decorates", grandparent: ["g1", "g2"], parent: ["p"], child: ["c"], text: "c(p(g2(g1(reg))))", outcome: .built),
            Case(name: "only the grandparent decorates", grandparent: ["g"], parent: [], child: [], text: "g(reg)", outcome: .built),
        ]
        for scopes in [false, true] {
            for item in cases {
                let grandparent = DependencyContainer()
                let parent = scopes ? DependencyContainer(scopeOf: grandparent) : DependencyContainer(parent: grandparent)
                let child = scopes ? DependencyContainer(scopeOf: parent) : DependencyContainer(parent: parent)
                for (container, tags, at) in [(grandparent, item.grandparent, "g"), (parent, item.parent, "p"), (child, item.child, "c")] {
                    for tag in tags {
                        if tag == "o" {
                            container.override(\.csaGreeting) { CSAPlainGreeting(text: "o@\(at)") }
                            container.override(\.csaCachedGreeting) { CSAPlainGreeting(text: "o@\(at)") }
                        } else {
                            container.decorate(\.csaGreeting) { CSAWrappedGreeting(tag: tag, around: $0) }
                            container.decorate(\.csaCachedGreeting) { CSAWrappedGreeting(tag: tag, around: $0) }
                        }
                    }
                }
                let outcomes = Collected<ResolutionEvent.Outcome>()
                grandparent.tracer = ResolutionTracer { events in
                    for event in events where event.depth == 0 { outcomes.append(event.outcome) }
                }
                let label = "\(item.name)\(scopes ? " (scopes)" : "")"
                #expect(child.csaGreeting().text == item.text, "\(label)")
                #expect(child.csaCachedGreeting().text == item.text, "\(label), singleton")
                #expect(child.csaCachedGreeting().text == item.text, "\(label), cached")
                grandparent.tracer = nil
                #expect(outcomes.values == [item.outcome, item.outcome, .cached], "\(label)")
            }
        }
    }

    /// Pins: decorations and overrides installed and removed on the parent while worlds
    /// of it are made, decorated, used and dropped: after each change returns, the
    /// long-lived children serve exactly the parent's chain under their own decoration.
    @Test func decorationsInstalledAndRemovedWhileChildrenComeAndGo() async {
        let parent = DependencyContainer()
        let keepers = (0..<8).map { _ in DependencyContainer(parent: parent) }
        for keeper in keepers { keeper.decorate(\.csaCachedGreeting) { CSAWrappedGreeting(tag: "k", around: $0) } }
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<200 {
                if index == 0 {
                    let expected: String
                    switch round % 4 {
                    case 0:
                        parent.decorate(\.csaCachedGreeting) { CSAWrappedGreeting(tag: "p\(round)", around: $0) }
                        expected = "k(p\(round)(reg))"
                    case 1:
                        parent.override(\.csaCachedGreeting) { CSAPlainGreeting(text: "o\(round)") }
                        expected = "k(p\(round - 1)(o\(round)))"
                    case 2:
                        parent.reset(\.csaCachedGreeting)
                        expected = "k(reg)"
                    default:
                        parent.override(\.csaCachedGreeting) { CSAPlainGreeting(text: "o\(round)") }
                        expected = "k(o\(round))"
                    }
                    for keeper in keepers where keeper.csaCachedGreeting().text != expected {
                        wrong.append("round \(round): \(keeper.csaCachedGreeting().text), not \(expected)")
                    }
                    if round % 4 == 3 { parent.reset(\.csaCachedGreeting) }
                    continue
                }
                let child = DependencyContainer(parent: parent)
                if round.isMultiple(of: 2) { child.decorate(\.csaCachedGreeting) { CSAWrappedGreeting(tag: "x", around: $0) } }
                if round.isMultiple(of: 3) { child.override(\.csaCachedGreeting) { CSAPlainGreeting(text: "own") } }
                let text = child.csaCachedGreeting().text
                if round.isMultiple(of: 3) && text != (round.isMultiple(of: 2) ? "x(own)" : "own") {
                    wrong.append("a child's own override served \(text)")
                }
                _ = keepers[round % keepers.count].csaCachedGreeting()
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
    }
}

extension DependencyContainer {
    /// A singleton with a teardown that uses its container and makes a child of it.
    var csaTornDown: Provider<CSAService> {
        singleton { CSAService(config: self.csaConfig()) }
            .onShutdown { [self] _ in
                (self.getValue(forKey: "csa.torn") as Counter?)?.increment()
                _ = DependencyContainer(parent: self).csaService()
            }
    }
}
