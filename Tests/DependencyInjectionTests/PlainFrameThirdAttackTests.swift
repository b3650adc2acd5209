import Foundation
import Testing
@testable import DependencyInjection

// Third round of attacks on plain factories' frames (`PlainFrame`, `ThreadFrames`): graph
// instances under chains across the 64-frame blocks, cycles through singletons at the block
// boundaries, made objects read by tasks after their thread ended, immediate tasks, tracers
// that resolve, properties' containers, arguments' lifetimes, stress. Everything is `PF3`.

// MARK: - Fixtures

/// Code a fixture runs at a point the test chooses (a deinit, a tracer).
final class PF3Hook: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

/// A graph instance, with a hook its deinit runs.
final class PF3Unit: @unchecked Sendable {
    private let hook: PF3Hook?
    init(hook: PF3Hook?) { self.hook = hook }
    deinit { hook?.run() }
}

/// The graph instances one outermost factory saw at three places of its chain.
struct PF3GraphSeen: @unchecked Sendable {
    let top: PF3Unit
    let deep: PF3Unit
    let again: PF3Unit
    var isOneInstance: Bool { top === deep && deep === again }
}

/// A key that makes each singleton of a family its own, built once per test step.
struct PF3Key: Hashable, Sendable {
    let id: Int
    let depth: Int
}

/// An object whose `@Dependency` resolves from the container that built it.
final class PF3Tagged: @unchecked Sendable {
    @Dependency(\.pf3Tag) var tag
}

/// Holds a container without keeping it.
final class PF3WeakBox: @unchecked Sendable {
    private let lock = NSLock()
    private weak var object: AnyObject?
    init(_ object: AnyObject? = nil) { self.object = object }
    func set(_ object: AnyObject?) { lock.withLock { self.object = object } }
    var value: AnyObject? { lock.withLock { object } }
}

/// A family argument that does not live in the factory's closure: only the provider's key
/// holds it. It says whether it was released while its own factory ran.
final class PF3LoneArgument: Hashable, @unchecked Sendable {
    let id: Int
    /// Every argument's releases, and this one's.
    let released: Counter
    let mine = Counter()
    init(id: Int, released: Counter) { (self.id, self.released) = (id, released) }
    deinit {
        mine.increment()
        released.increment()
    }
    static func == (lhs: PF3LoneArgument, rhs: PF3LoneArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }  // every id in one bucket
}

/// What a parameterized factory saw of its own frame's key while it ran.
struct PF3ArgumentSeen: Sendable {
    /// Whether this argument, and each nested one, was alive all through its factory.
    let alive: Bool
    let frameArgumentID: Int?
}

/// A family argument whose deinit resolves: a chain across blocks, a property, a graph instance.
final class PF3ResolvingArgument: Hashable, @unchecked Sendable {
    let id: Int
    let container: DependencyContainer
    let log: Collected<String>
    init(id: Int, container: DependencyContainer, log: Collected<String>) {
        (self.id, self.container, self.log) = (id, container, log)
    }
    deinit {
        let count = container[pf3Count: 130]()
        let tagged = container.pf3TaggedMaker()
        let unit = container[pf3GraphTop: 70]()
        log.append("\(id):\(count):\(tagged.tag):\(unit.isOneInstance)")
    }
    static func == (lhs: PF3ResolvingArgument, rhs: PF3ResolvingArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// A family argument whose `==` (run by the cycle check, against the frames filed in its
/// bucket, before its own frame is filed) resolves members of its own family, its own
/// key among them, a bounded number of times.
struct PF3ReentrantEquality: Hashable, @unchecked Sendable {
    let id: Int
    let container: DependencyContainer
    let budget: Counter
    static func == (lhs: Self, rhs: Self) -> Bool {
        if lhs.budget.count < 40 {
            lhs.budget.increment()
            // Its own key: not building yet (its frame is filed after the check), so no cycle.
            _ = lhs.container[pf3ReentrantEquality: lhs]()
            _ = lhs.container[pf3ReentrantEquality: Self(id: lhs.id + 1000, container: lhs.container, budget: lhs.budget)]()
            _ = lhs.container[pf3Count: 65]()
        }
        return lhs.id == rhs.id
    }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }  // every id in one bucket
}

/// A singleton whose deinit resolves from its container, on the thread that drops it.
final class PF3DroppedSingleton: @unchecked Sendable {
    let container: DependencyContainer
    let log: Collected<String>
    init(container: DependencyContainer, log: Collected<String>) { (self.container, self.log) = (container, log) }
    deinit {
        let tagged = PF3Tagged()
        log.append("\(container[pf3Count: 70]()):\(ThreadFrames.slot.plainDepth):\(tagged.$tag.container === container)")
    }
}

/// An object whose property, read in its construction, asks (64 factories up) for the
/// registration that built it: a cycle through a property.
final class PF3PropertyInCycle: @unchecked Sendable {
    @Dependency(\.[pf3PropertyAbove: 64]) var above
    init() { _ = above }
}

/// One link of a cycle: the cycle's shape and this link's place in it.
struct PF3Cycle: Hashable, Sendable, Codable {
    /// Plain factories between the entry and the singleton.
    let below: Int
    /// Plain factories between the singleton and the closing request.
    let above: Int
    /// Whether the closing request asks for the singleton again (else for the entry).
    let closesOnSingleton: Bool
}

struct PF3CycleStep: Hashable, Sendable {
    let cycle: PF3Cycle
    let n: Int
}

/// What a task, started inside a singleton built under a chain of plain factories, saw of
/// the chain it inherited, after the chain and its thread ended.
struct PF3ChainSeen: Sendable {
    let frames: Int
    let anyActive: Bool
    let names: [String]
    let arguments: [Int]
    let countInTask: Int
    let sameChainInTask: Int
    let taggedInTask: String
}

final class PF3Spawn: @unchecked Sendable {
    let task: Task<PF3ChainSeen, Never>
    let outermostMade: PF3WeakBox
    init(task: Task<PF3ChainSeen, Never>, outermostMade: PF3WeakBox) { (self.task, self.outermostMade) = (task, outermostMade) }
}

/// What an immediate task, started inside a plain factory, saw.
struct PF3ImmediateSeen: Sendable {
    let sawAFrame: Bool
    let depthBefore: Int
    let valueInside: Int
    let depthAfter: Int
    let valueAfterResume: Int
    let tagAfterResume: String
}

extension DependencyContainer {
    var pf3Tag: Provider<String> { factory { self.getValue(forKey: "pf3.tag") ?? "untagged" } }
    var pf3Leaf: Provider<Int> { factory { 1 } }
    var pf3TaggedMaker: Provider<PF3Tagged> {
        factory {
            let tagged = PF3Tagged()
            _ = tagged.tag
            return tagged
        }
    }
    var pf3Unit: Provider<PF3Unit> { graph { PF3Unit(hook: self.getValue(forKey: "pf3.hook")) } }

    subscript(pf3Count n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? self.pf3Leaf() - 1 : 1 + self[pf3Count: n - 1]() }
    }

    // Graph instances under one outermost factory.
    subscript(pf3GraphChain n: Int) -> Provider<PF3Unit> {
        factory(n) { n == 0 ? self.pf3Unit() : self[pf3GraphChain: n - 1]() }
    }
    subscript(pf3GraphTop n: Int) -> Provider<PF3GraphSeen> {
        factory(n) {
            let top = self.pf3Unit()
            let deep = self[pf3GraphChain: n]()
            return PF3GraphSeen(top: top, deep: deep, again: self.pf3Unit())
        }
    }
    /// The deepest factory asks first: the objects for the whole chain are made then.
    subscript(pf3GraphDeepFirst n: Int) -> Provider<PF3GraphSeen> {
        factory(n) {
            let deep = self[pf3GraphChain: n]()
            let top = self.pf3Unit()
            return PF3GraphSeen(top: top, deep: deep, again: self[pf3GraphChain: n / 2]())
        }
    }
    /// A singleton in the middle of the chain: the graph instance is still the outermost factory's.
    subscript(pf3GraphSingleton key: PF3Key) -> Provider<PF3Unit> {
        singleton(key) { self[pf3GraphChain: key.depth]() }
    }
    subscript(pf3GraphAcross key: PF3Key) -> Provider<PF3GraphSeen> {
        factory(key) {
            let top = self.pf3Unit()
            let deep = self[pf3GraphBelowSingleton: key]()
            return PF3GraphSeen(top: top, deep: deep, again: self.pf3Unit())
        }
    }
    subscript(pf3GraphBelowSingleton key: PF3Key) -> Provider<PF3Unit> {
        factory(key) {
            key.depth == 0
                ? self[pf3GraphSingleton: PF3Key(id: key.id, depth: 66)]()
                : self[pf3GraphBelowSingleton: PF3Key(id: key.id, depth: key.depth - 1)]()
        }
    }

    // Cycles through a singleton.
    subscript(pf3CycleEntry cycle: PF3Cycle) -> Provider<Int> {
        factory(cycle) { self[pf3CycleBelow: PF3CycleStep(cycle: cycle, n: cycle.below)]() }
    }
    subscript(pf3CycleBelow step: PF3CycleStep) -> Provider<Int> {
        factory(step) {
            step.n == 0
                ? self[pf3CycleSingleton: step.cycle]()
                : self[pf3CycleBelow: PF3CycleStep(cycle: step.cycle, n: step.n - 1)]()
        }
    }
    subscript(pf3CycleSingleton cycle: PF3Cycle) -> Provider<Int> {
        singleton(cycle) { self[pf3CycleAbove: PF3CycleStep(cycle: cycle, n: cycle.above)]() }
    }
    subscript(pf3CycleAbove step: PF3CycleStep) -> Provider<Int> {
        factory(step) {
            if step.n > 0 { return self[pf3CycleAbove: PF3CycleStep(cycle: step.cycle, n: step.n - 1)]() }
            return step.cycle.closesOnSingleton ? self[pf3CycleSingleton: step.cycle]() : self[pf3CycleEntry: step.cycle]()
        }
    }

    // A task started by a singleton built at the bottom of a chain of plain factories.
    subscript(pf3SpawnChain key: PF3Key) -> Provider<PF3Spawn> {
        factory(key.depth) {
            key.depth == 0 ? self[pf3Spawner: key]() : self[pf3SpawnChain: PF3Key(id: key.id, depth: key.depth - 1)]()
        }
    }
    subscript(pf3Spawner key: PF3Key) -> Provider<PF3Spawn> {
        singleton(key) {
            let gate: AsyncLatch = self.getValue(forKey: "pf3.gate")!
            let outermostMade = PF3WeakBox()
            // The outermost plain frame's object, made now (the singleton's frame is its child).
            var frame = Frame.current
            while let parent = frame?.parent { frame = parent }
            outermostMade.set(frame)
            // The task holds the chain the singleton is built in, and reads it after the chain
            // and its thread ended. It is taken here, not in the task: waiting here for the
            // task to start would wait for a thread of the cooperative pool, which other tests
            // may hold for as long as their hang guards allow.
            let inherited = Frame.current
            let task = Task { () -> PF3ChainSeen in
                await gate.wait()
                var (frames, anyActive, names, arguments) = (0, false, [String](), [Int]())
                var current = inherited
                while let frame = current {
                    frames += 1
                    anyActive = anyActive || frame.isActive
                    names.append(frame.site.nameText)
                    if let argument = frame.key.argument?.value as? Int { arguments.append(argument) }
                    current = frame.parent
                }
                return PF3ChainSeen(
                    frames: frames, anyActive: anyActive, names: names, arguments: arguments,
                    countInTask: self[pf3Count: 70](),
                    sameChainInTask: self[pf3Count: 3](),
                    taggedInTask: self.pf3TaggedMaker().tag)
            }
            return PF3Spawn(task: task, outermostMade: outermostMade)
        }
    }

    // An immediate task started inside a plain factory, at the bottom of a chain.
    subscript(pf3ImmediateChain n: Int) -> Provider<Task<PF3ImmediateSeen, Never>?> {
        factory(n) { n == 0 ? self.pf3StartsImmediate() : self[pf3ImmediateChain: n - 1]() }
    }
    var pf3StartsImmediate: Provider<Task<PF3ImmediateSeen, Never>?> {
        factory {
            let gate: AsyncLatch = self.getValue(forKey: "pf3.gate")!
            let starts: Counter = self.getValue(forKey: "pf3.starts")!
            starts.increment()
            guard starts.count == 1 else { return nil }
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                return Task.immediate { () -> PF3ImmediateSeen in
                    let sawAFrame = Frame.current != nil
                    let before = ThreadFrames.slot.plainDepth
                    // The same registrations that run on this thread now: another owner's, not a cycle.
                    let inside = self[pf3ImmediateChain: 3]() == nil ? self[pf3Count: 66]() : -1
                    let after = ThreadFrames.slot.plainDepth
                    await gate.wait()
                    return PF3ImmediateSeen(
                        sawAFrame: sawAFrame, depthBefore: before, valueInside: inside, depthAfter: after,
                        valueAfterResume: self[pf3Count: 129](), tagAfterResume: self.pf3TaggedMaker().tag)
                }
            }
            return nil
        }
    }

    // Properties created at the bottom of chains that alternate between two containers.
    subscript(pf3Alternate n: Int) -> Provider<PF3Tagged> {
        factory(n) {
            if n == 0 { return PF3Tagged() }
            let other: PF3WeakBox = self.getValue(forKey: "pf3.other")!
            return (other.value as! DependencyContainer)[pf3Alternate: n - 1]()
        }
    }
    /// A singleton whose chain of this container's factories creates the property.
    subscript(pf3KeptTagged key: PF3Key) -> Provider<PF3Tagged> {
        singleton(key) { self[pf3SameContainer: key.depth]() }
    }
    subscript(pf3SameContainer n: Int) -> Provider<PF3Tagged> {
        factory(n) { n == 0 ? PF3Tagged() : self[pf3SameContainer: n - 1]() }
    }
    /// A singleton whose chain runs in another container's factories.
    subscript(pf3KeptAcross key: PF3Key) -> Provider<PF3Tagged> {
        singleton(key) {
            let other: PF3WeakBox = self.getValue(forKey: "pf3.other")!
            return (other.value as! DependencyContainer)[pf3SameContainer: key.depth]()
        }
    }

    // Arguments only the provider holds.
    subscript(pf3Lone argument: PF3LoneArgument) -> Provider<PF3ArgumentSeen> {
        // The closure captures the counters, not the argument.
        let (released, mine, id) = (argument.released, argument.mine, argument.id)
        return factory(argument) {
            var alive = mine.count == 0
            // Nested members of the same family, every argument in one bucket: the cycle check
            // compares this frame's argument with theirs; then the frame's object is made.
            if id > 0 { alive = self[pf3Lone: PF3LoneArgument(id: id - 1, released: released)]().alive && alive }
            let frameArgument = (Frame.current?.key.argument?.value as? PF3LoneArgument)?.id
            return PF3ArgumentSeen(alive: alive && mine.count == 0, frameArgumentID: frameArgument)
        }
    }
    subscript(pf3ResolvingArgument argument: PF3ResolvingArgument) -> Provider<PF3Spawn> {
        factory(argument) { self[pf3Spawner: PF3Key(id: argument.id, depth: -1)]() }
    }

    subscript(pf3PropertyEntry n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? self.pf3PropertyOwner().above : self[pf3PropertyEntry: n - 1]() }
    }
    var pf3PropertyOwner: Provider<PF3PropertyInCycle> { factory { PF3PropertyInCycle() } }
    subscript(pf3PropertyAbove n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? self[pf3PropertyEntry: 64]() : self[pf3PropertyAbove: n - 1]() }
    }

    subscript(pf3ReentrantEquality argument: PF3ReentrantEquality) -> Provider<Int> {
        factory(argument) {
            argument.id <= 0 || argument.id >= 1000
                ? 0
                : 1 + self[pf3ReentrantEquality: PF3ReentrantEquality(
                    id: argument.id - 1, container: argument.container, budget: argument.budget)]()
        }
    }

    var pf3DroppedSingleton: Provider<PF3DroppedSingleton> {
        singleton { PF3DroppedSingleton(container: self, log: self.getValue(forKey: "pf3.log")!) }
    }
    /// 65 factories deep, resets its own container: the singleton's deinit runs in there.
    subscript(pf3ResetsInside n: Int) -> Provider<Int> {
        factory(n) {
            guard n == 0 else { return self[pf3ResetsInside: n - 1]() }
            self.reset()
            return ThreadFrames.slot.plainDepth
        }
    }

    // Stress.
    subscript(pf3StressTop n: Int) -> Provider<Int> {
        factory(n) {
            let seen = self[pf3GraphTop: n]()
            let tagged = self.pf3TaggedMaker()
            // Two graph instances under one outermost factory, or a property that took another
            // container, show as a wrong value.
            guard seen.isOneInstance, tagged.$tag.container === self else { return -1 }
            return self[pf3Count: n]() + self.pf3Leaf() - 1
        }
    }
}

/// A tracer's batches, and what its callback resolved.
final class PF3TraceLog: @unchecked Sendable {
    let batches = Collected<[String]>()
    let resolved = Collected<String>()
}

// MARK: - Tests

@Suite struct PF3PlainFrameThirdAttackTests {
    // MARK: Graph instances

    /// One graph instance for everything one outermost factory builds, asked for at its top
    /// and at the bottom of a chain of plain factories whose depth crosses the 64-frame
    /// blocks; the next outermost factory gets another one; none outlives its factory.
    @Test func aGraphInstanceIsOnePerOutermostFactoryAtEveryDepthAcrossBlocks() async {
        let depths = [0, 1, 61, 62, 63, 64, 65, 126, 127, 128, 129, 200]
        let (results, left, liveAfter) = await onAThreadThatEnds { () -> ([String], Int, Bool) in
            let container = DependencyContainer()
            var results: [String] = []
            let watch = PF3WeakBox()
            for n in depths {
                let first = container[pf3GraphTop: n]()
                let second = container[pf3GraphTop: n]()
                let deepFirst = container[pf3GraphDeepFirst: n]()
                let across = container[pf3GraphAcross: PF3Key(id: n, depth: n)]()
                results.append(
                    "\(n):\(first.isOneInstance):\(second.isOneInstance):\(first.top !== second.top)"
                        + ":\(deepFirst.isOneInstance):\(deepFirst.top !== first.top):\(across.isOneInstance)")
                watch.set(container[pf3GraphDeepFirst: n]().top)
            }
            return (results, ThreadFrames.slot.plainDepth, watch.value != nil)
        }
        #expect(results == depths.map { "\($0):true:true:true:true:true:true" })
        #expect(left == 0)
        #expect(!liveAfter, "the outermost factory's object still holds its graph instance")
    }

    /// Graph instances released as the outermost factory ends resolve chains across blocks,
    /// create properties and graph instances of their own, on the same thread: the slot is
    /// back to empty before they run, and stays balanced.
    @Test func graphInstancesReleasedAsTheOutermostFactoryEndsResolveAcrossBlocks() async {
        let log = Collected<String>()
        let (values, left, innermostLeft) = await onAThreadThatEnds { () -> ([Int], Int, Bool) in
            let container = DependencyContainer()
            let weakContainer = PF3WeakBox(container)
            let depthInDeinit = Collected<Int>()
            let inside = Counter()
            container.setValue(PF3Hook {
                guard let container = weakContainer.value as? DependencyContainer else { return }
                depthInDeinit.append(ThreadFrames.slot.plainDepth)
                // The graph instances the hook itself makes run it again: once.
                guard inside.count % 2 == 0 else { return }
                inside.increment()
                defer { inside.increment() }
                let count = container[pf3Count: 140]()
                let tagged = PF3Tagged()
                // Created outside any construction: not from the factory that just ended.
                let fromEnded = tagged.$tag.container === container
                let unit = container[pf3GraphDeepFirst: 65]()
                log.append("\(count):\(fromEnded):\(unit.isOneInstance)")
            }, forKey: "pf3.hook")
            var values: [Int] = []
            for n in [0, 63, 64, 65, 129] { values.append(container[pf3GraphTop: n]().isOneInstance ? n : -1) }
            container.removeValue(forKey: "pf3.hook")
            return (values + depthInDeinit.values, ThreadFrames.slot.plainDepth, ThreadFrames.slot.innermostWord == nil)
        }
        // Each outermost factory's instance goes at its end, when no plain frame is left; so
        // do those the hook's own outermost factories made.
        #expect(values == [0, 63, 64, 65, 129] + Array(repeating: 0, count: 10))
        #expect(left == 0 && innermostLeft)
        #expect(log.values == Array(repeating: "140:false:true", count: 5), "\(log.values)")
    }

    // MARK: Cycles through singletons at the block boundaries

    /// A cycle from a plain factory, down a chain of plain factories, through a singleton
    /// and up another chain back to the factory (or to the singleton), with the chains'
    /// ends on either side of the 64-frame blocks: every link is named once, in order.
    @Test(arguments: [
        PF3Cycle(below: 62, above: 0, closesOnSingleton: false),
        PF3Cycle(below: 63, above: 1, closesOnSingleton: false),
        PF3Cycle(below: 64, above: 63, closesOnSingleton: false),
        PF3Cycle(below: 1, above: 128, closesOnSingleton: false),
        PF3Cycle(below: 128, above: 129, closesOnSingleton: true),
        PF3Cycle(below: 63, above: 64, closesOnSingleton: true),
    ])
    func aCycleThroughASingletonAcrossBlocksNamesEveryLinkOnce(cycle: PF3Cycle) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [cycle] in
            endProcessIfHung("a cycle through a singleton across blocks")
            let container = DependencyContainer()
            _ = container[pf3Count: 200]()
            _ = container[pf3CycleEntry: cycle]()
        }
        let chain = CycleChain(result)
        let entry = "subscript(pf3CycleEntry:)"
        let below = "subscript(pf3CycleBelow:)"
        let singleton = "subscript(pf3CycleSingleton:)"
        let above = "subscript(pf3CycleAbove:)"
        let expected: [String] =
            cycle.closesOnSingleton
            ? [singleton] + Array(repeating: above, count: cycle.above + 1) + [singleton]
            : [entry] + Array(repeating: below, count: cycle.below + 1) + [singleton]
                + Array(repeating: above, count: cycle.above + 1) + [entry]
        #expect(chain?.names == expected, "\(standardError(of: result).prefix(600))")
        #expect(chain?.locatesEveryLink(in: "DependencyInjectionTests/PlainFrameThirdAttackTests.swift") == true)
        #expect(chain.map { $0.links.dropLast().allSatisfy { $0.location != nil } && $0.links.last?.location == nil } == true)
    }

    /// A cycle through a property read in a construction, 64 plain factories on either
    /// side: every link is named once, the property among them.
    @Test func aCycleThroughAPropertyBetweenTwoBlocksOfPlainFramesNamesEveryLinkOnce() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a property across blocks")
            _ = DependencyContainer()[pf3PropertyEntry: 64]()
        }
        let chain = CycleChain(result)
        let expected =
            ["subscript(pf3PropertyEntry:)"] + Array(repeating: "subscript(pf3PropertyEntry:)", count: 64)
            + ["pf3PropertyOwner", "@Dependency in PF3PropertyInCycle"]
            + Array(repeating: "subscript(pf3PropertyAbove:)", count: 65) + ["subscript(pf3PropertyEntry:)"]
        #expect(chain?.names == expected, "\(standardError(of: result).prefix(600))")
        #expect(chain.map { $0.links.dropLast().allSatisfy { $0.location != nil } && $0.links.last?.location == nil } == true)
    }

    // MARK: Tasks and the objects made for plain frames

    /// A task started by a singleton built at the bottom of 70 plain factories inherits the
    /// chain: after the factories and their thread ended (its slot and blocks freed), it
    /// reads every frame, each ended, each with its own argument; what it resolves is its
    /// own, and the objects go when it lets go of them.
    @Test func aTaskReadsTheObjectsOfAChainAcrossBlocksAfterItsThreadEnded() async {
        let gate = AsyncLatch()
        let container = DependencyContainer()
        container.setValue(gate, forKey: "pf3.gate")
        container.setValue("spawned", forKey: "pf3.tag")
        let made: PF3WeakBox
        let seen: PF3ChainSeen
        do {
            let spawn = await onAThreadThatEnds { container[pf3SpawnChain: PF3Key(id: 1, depth: 70)]() }
            made = spawn.outermostMade
            #expect(made.value != nil, "the task's chain lost the outermost factory's object")
            gate.open()
            seen = await spawn.task.value
        }
        #expect(seen.frames == 72)
        #expect(!seen.anyActive)
        #expect(seen.names.first == "subscript(pf3Spawner:)")
        #expect(seen.names.dropFirst().allSatisfy { $0 == "subscript(pf3SpawnChain:)" })
        #expect(seen.arguments == Array(0...70))
        #expect(seen.countInTask == 70 && seen.sameChainInTask == 3)
        #expect(seen.taggedInTask == "spawned")
        // The task has ended, and the singleton that held it is dropped.
        container.reset()
        #expect(await endsWithoutHanging {
            while made.value != nil { await Task.yield() }
        }, "the objects made for the plain frames leak")
    }

    /// A task started with `Task.immediate` inside a plain factory 65 deep runs on the
    /// factory's thread: it sees no frame of the factory's, its own resolutions (of the same
    /// registrations) are neither cycles nor filed among the thread's plain frames, and
    /// after it resumes elsewhere it resolves as anyone does.
    @Test func anImmediateTaskInsideADeepPlainFactoryIsAnotherOwner() async {
        let gate = AsyncLatch()
        let container = DependencyContainer()
        container.setValue(gate, forKey: "pf3.gate")
        container.setValue("immediate", forKey: "pf3.tag")
        container.setValue(Counter(), forKey: "pf3.starts")
        let (task, left) = await onAThreadThatEnds { (container[pf3ImmediateChain: 65](), ThreadFrames.slot.plainDepth) }
        #expect(left == 0)
        gate.open()
        guard let seen = await task?.value else { return }
        #expect(!seen.sawAFrame)
        #expect(seen.depthBefore == 67 && seen.depthAfter == 67, "the immediate task's frames went into the thread's slot")
        #expect(seen.valueInside == 66)
        #expect(seen.valueAfterResume == 129 && seen.tagAfterResume == "immediate")
    }

    // MARK: Tracers

    /// A tracer whose callback resolves: deep chains of plain factories of another
    /// container, of its own container (untraced while delivering), and properties.
    @Test func aTracerThatResolvesDeepChainsFromItsCallback() async {
        let log = PF3TraceLog()
        let (values, left) = await onAThreadThatEnds { () -> ([Int], Int) in
            let traced = DependencyContainer()
            let plain = DependencyContainer()
            plain.setValue("plain", forKey: "pf3.tag")
            traced.tracer = ResolutionTracer { events in
                log.batches.append(events.map { "\($0.name)@\($0.depth)" })
                let count = plain[pf3Count: 130]() + traced[pf3Count: 65]()
                log.resolved.append("\(count):\(plain.pf3TaggedMaker().tag):\(plain[pf3GraphTop: 64]().isOneInstance)")
            }
            var values: [Int] = []
            for n in [2, 64] {
                // Plain factories of `plain` on both sides of the traced resolution.
                values.append(plain[pf3Count: 65]())
                values.append(traced[pf3Count: n]())
                values.append(plain[pf3Count: 65]())
            }
            traced.tracer = nil
            values.append(traced[pf3Count: 100]())
            return (values, ThreadFrames.slot.plainDepth)
        }
        #expect(values == [65, 2, 65, 65, 64, 65, 100])
        #expect(left == 0)
        #expect(log.batches.values.map(\.count) == [2 + 2, 64 + 2], "\(log.batches.values.map(\.count))")
        #expect(log.resolved.values == ["195:plain:true", "195:plain:true"])
    }

    // MARK: Properties' containers

    /// A property created at the bottom of a chain alternating between two containers,
    /// 63 to 129 deep, resolves from the container of the innermost factory, and holds it
    /// strongly (nothing keeps the object it belongs to).
    @Test func aPropertyAtTheBottomOfAnAlternatingChainTakesTheInnermostContainerStrongly() async {
        let results = await onAThreadThatEnds { () -> [String] in
            var results: [String] = []
            for n in [63, 64, 65, 128, 129] {
                let tagged: PF3Tagged
                let watchOdd = PF3WeakBox()
                do {
                    let even = DependencyContainer()
                    let odd = DependencyContainer()
                    even.setValue("even", forKey: "pf3.tag")
                    odd.setValue("odd", forKey: "pf3.tag")
                    even.setValue(PF3WeakBox(odd), forKey: "pf3.other")
                    odd.setValue(PF3WeakBox(even), forKey: "pf3.other")
                    watchOdd.set(odd)
                    tagged = even[pf3Alternate: n]()
                }
                // n steps from `even`: the innermost factory is odd's when n is odd.
                results.append("\(n):\(tagged.tag):\(watchOdd.value != nil)")
            }
            return results
        }
        #expect(results == ["63:odd:true", "64:even:false", "65:odd:true", "128:even:false", "129:odd:true"])
    }

    /// A property created under a singleton, through 65 to 129 plain factories of the
    /// singleton's container, holds that container weakly (the container keeps the object);
    /// through another container's factories, it holds that one strongly.
    @Test func aPropertyUnderASingletonHoldsItsContainerWeaklyOnlyWhenThatContainerKeepsIt() async {
        let results = await onAThreadThatEnds { () -> [String] in
            var results: [String] = []
            for n in [0, 63, 64, 65, 129] {
                let sameGone = PF3WeakBox()
                let acrossKept: PF3Tagged
                let otherGone = PF3WeakBox()
                do {
                    let keeper = DependencyContainer()
                    keeper.setValue("keeper", forKey: "pf3.tag")
                    let tagged = keeper[pf3KeptTagged: PF3Key(id: n, depth: n)]()
                    _ = tagged.tag
                    sameGone.set(keeper)
                }
                do {
                    let keeper = DependencyContainer()
                    let other = DependencyContainer()
                    other.setValue("other", forKey: "pf3.tag")
                    keeper.setValue(PF3WeakBox(other), forKey: "pf3.other")
                    acrossKept = keeper[pf3KeptAcross: PF3Key(id: n, depth: n)]()
                    otherGone.set(other)
                }
                results.append("\(n):\(sameGone.value == nil):\(otherGone.value != nil):\(acrossKept.tag)")
            }
            return results
        }
        #expect(results == [0, 63, 64, 65, 129].map { "\($0):true:true:other" })
    }

    // MARK: Arguments

    /// An argument held only by its provider (not captured by the factory's closure) lives
    /// as long as its factory runs: created inline, stored and called later, wrapped by a
    /// helper, reached through a key path; with 300 members of one family nested, every
    /// argument in one bucket, so that the cycle check compares live arguments.
    @Test func anArgumentOnlyItsProviderHoldsLivesWhileItsFactoryRuns() async {
        let released = Counter()
        let (seen, left) = await onAThreadThatEnds { () -> ([PF3ArgumentSeen], Int) in
            let container = DependencyContainer()
            var seen: [PF3ArgumentSeen] = []
            // Inline.
            seen.append(container[pf3Lone: PF3LoneArgument(id: 300, released: released)]())
            // Stored, the argument's last other reference gone, called later.
            var stored: [Provider<PF3ArgumentSeen>] = []
            for id in 0..<5 { stored.append(container[pf3Lone: PF3LoneArgument(id: id * 20, released: released)]) }
            for provider in stored { seen.append(provider()) }
            stored.removeAll()
            // Through a helper that builds the provider and calls it.
            func resolve<Value>(_ make: () -> Provider<Value>) -> Value { make()() }
            seen.append(resolve { container[pf3Lone: PF3LoneArgument(id: 65, released: released)] })
            // Through a key path whose subscript argument builds the key.
            let path = \DependencyContainer.[pf3Lone: PF3LoneArgument(id: 64, released: released)]
            seen.append(container[keyPath: path]())
            return (seen, ThreadFrames.slot.plainDepth)
        }
        #expect(seen.allSatisfy { $0.alive }, "an argument went while its factory ran")
        #expect(seen.map(\.frameArgumentID) == [300, 0, 20, 40, 60, 80, 65, 64])
        // 301 + (1 + 21 + 41 + 61 + 81) + 66 + 64 nested arguments, all released; the key
        // path's own argument lives with the key path, gone too.
        #expect(released.count == 301 + 205 + 66 + 65)
        #expect(left == 0)
    }

    /// An argument whose deinit resolves (chains across blocks, a property, graph instances),
    /// released last by a task's inherited chain, after its factory and its thread ended.
    @Test func anArgumentReleasedByATasksChainResolvesFromItsDeinit() async {
        let log = Collected<String>()
        let gate = AsyncLatch()
        let container = DependencyContainer()
        container.setValue(gate, forKey: "pf3.gate")
        container.setValue("argument", forKey: "pf3.tag")
        do {
            let spawn = await onAThreadThatEnds {
                container[pf3ResolvingArgument: PF3ResolvingArgument(id: 7, container: container, log: log)]()
            }
            #expect(log.values.isEmpty, "the argument went while the task's chain names it")
            gate.open()
            _ = await spawn.task.value
        }
        container.reset()
        #expect(await endsWithoutHanging { while log.values.isEmpty { await Task.yield() } })
        #expect(log.values == ["7:130:argument:true"])
    }

    /// An argument's `==`, run by the cycle check while it walks the frames of one bucket,
    /// resolves members of the same family in that bucket, its own key among them: the
    /// walk goes on over frames filed and left meanwhile, and finds no cycle.
    @Test func anEqualityThatResolvesItsOwnFamilyInTheSameBucketDuringTheCheck() async {
        let (value, left, budget) = await onAThreadThatEnds { () -> (Int, Int, Int) in
            let container = DependencyContainer()
            let budget = Counter()
            let value = container[pf3ReentrantEquality: PF3ReentrantEquality(id: 70, container: container, budget: budget)]()
            return (value, ThreadFrames.slot.plainDepth, budget.count)
        }
        #expect(value == 70)
        #expect(left == 0)
        #expect(budget == 40)
    }

    /// A container reset inside its own factory, 66 plain frames deep: the singleton it
    /// drops resolves from its deinit on that thread, inside that factory.
    @Test func aSingletonDroppedInsideADeepFactoryResolvesFromItsDeinit() async {
        let log = Collected<String>()
        let (depth, left) = await onAThreadThatEnds { () -> (Int, Int) in
            let container = DependencyContainer()
            container.setValue(log, forKey: "pf3.log")
            _ = container.pf3DroppedSingleton()
            let depth = container[pf3ResetsInside: 65]()
            return (depth, ThreadFrames.slot.plainDepth)
        }
        #expect(depth == 66 && left == 0)
        // The deinit runs inside the factory that reset: a property it creates takes that
        // factory's container.
        #expect(log.values == ["70:66:true"])
    }

    // MARK: Stress

    /// Threads released together resolve chains across blocks with graph instances and
    /// properties, singletons others wait for, and tasks that read their chains, while
    /// another thread overrides and resets the parent and the child container; every
    /// round's threads end, their slots freed, while the next round's start.
    @Test func threadsResolvingAcrossBlocksWhileContainersChangeAndThreadsEnd() async {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let gate = AsyncLatch()
        child.setValue(gate, forKey: "pf3.gate")
        let values = Collected<Int>()
        let readers = Collected<Task<PF3ChainSeen, Never>>()
        for round in 0..<6 {
            let finished = await concurrentlyOffThePool(threads: 4) { thread in
                if thread == 3 {
                    for step in 0..<40 {
                        switch step % 4 {
                        case 0: parent.override(\.pf3Leaf) { 1 }
                        case 1: child.override(\.pf3Leaf) { 1 }
                        case 2: parent.reset()
                        default: child.reset()
                        }
                    }
                    return
                }
                for step in 0..<4 {
                    let n = [63, 64, 65, 129][(thread + step) % 4]
                    values.append(child[pf3StressTop: n]())
                    values.append(child[pf3GraphTop: n / 2]().isOneInstance ? n / 2 : -1)
                    let spawn = child[pf3SpawnChain: PF3Key(id: round * 100 + step, depth: 66)]()
                    readers.append(spawn.task)
                }
            }
            #expect(finished)
        }
        gate.open()
        var expected: [Int] = []
        for _ in 0..<6 {
            for thread in 0..<3 {
                for step in 0..<4 {
                    let n = [63, 64, 65, 129][(thread + step) % 4]
                    expected += [n, n / 2]
                }
            }
        }
        #expect(values.values.sorted() == expected.sorted())
        for reader in readers.values {
            let seen = await reader.value
            #expect(seen.frames == 68 && !seen.anyActive && seen.countInTask == 70)
        }
    }

    /// Many short-lived threads, each with a chain across three blocks whose objects are
    /// made, and a task that outlives the thread holding them.
    @Test func manyShortLivedThreadsLeaveTasksHoldingTheirChains() async {
        let container = DependencyContainer()
        let gate = AsyncLatch()
        container.setValue(gate, forKey: "pf3.gate")
        let readers = Collected<Task<PF3ChainSeen, Never>>()
        let left = Collected<Int>()
        for round in 0..<10 {
            #expect(await concurrentlyOffThePool(threads: 8) { thread in
                let id = round * 8 + thread
                readers.append(container[pf3SpawnChain: PF3Key(id: id, depth: 130 + thread)]().task)
                left.append(ThreadFrames.slot.plainDepth)
            })
        }
        #expect(left.values.count == 80 && left.values.allSatisfy { $0 == 0 })
        gate.open()
        var frames: [Int] = []
        for reader in readers.values { frames.append(await reader.value.frames) }
        #expect(frames.sorted() == (0..<10).flatMap { _ in (0..<8).map { 132 + $0 } }.sorted())
    }
}
