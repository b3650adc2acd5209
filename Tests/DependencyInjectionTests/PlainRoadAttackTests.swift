import Foundation
import Testing
@testable import DependencyInjection

// Attacks on the plain factory road as 6187224 left it (`beginPlainFactory`): the cycle
// check that runs only when the key's bucket holds a frame or the thread's frames started
// in a bound one; an owner that is one word; the walk of the ancestors' overrides and
// decorations behind `replacesAny`. Everything here is `PRA`/`pra`.

// MARK: - Fixtures

/// A family argument whose hash is the same for every id: every member of a family keyed
/// by it is filed in one bucket of its thread, in one container.
struct PRASameBucket: Hashable, Sendable {
    let id: Int
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

/// Where each member of `praHop` goes next, by container and argument. Filled before
/// anything resolves, only read afterwards.
final class PRAHopPlan: @unchecked Sendable {
    struct Stop: Hashable {
        let container: ObjectIdentifier
        let argument: Int
    }
    var next: [Stop: (DependencyContainer, Int)] = [:]
}

/// Counts the levels of a registration that resolves itself again from an immediate task,
/// and what each level's task got.
final class PRALevels: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    let seen = Collected<Int>()
    init() {}
    func next() -> Int { lock.withLock { defer { count += 1 }; return count } }
}

/// An object whose property, read in its initializer, asks for the factory two levels out.
final class PRAPropertyHolder: @unchecked Sendable {
    @Dependency(\.praPropertyOuter) var outer
    init() { _ = outer }
}

/// Whether a task-local value marks the task that a singleton spawned.
enum PRASpawned {
    @TaskLocal static var inside = false
}

extension DependencyContainer {
    // Cycles and chains whose frames all share one bucket.

    /// A ring of `pra.ring.size` members (5 by default), all in one bucket: member i asks for
    /// member i+1, the last for member 0.
    subscript(praRing member: PRASameBucket) -> Provider<Int> {
        factory(member, name: "praRing") {
            let size: Int = self.getValue(forKey: "pra.ring.size") ?? 5
            return 1 + self[praRing: PRASameBucket(id: (member.id + 1) % size)]()
        }
    }

    /// A line of members, all in one bucket, down to member 0: no cycle.
    subscript(praLine member: PRASameBucket) -> Provider<Int> {
        factory(member, name: "praLine") {
            member.id == 0 ? 0 : 1 + self[praLine: PRASameBucket(id: member.id - 1)]()
        }
    }

    /// One stop of a walk across containers that `pra.plan` lays out.
    subscript(praHop argument: Int) -> Provider<Int> {
        factory(argument, name: "praHop") {
            let plan: PRAHopPlan = self.getValue(forKey: "pra.plan")!
            guard let hop = plan.next[.init(container: ObjectIdentifier(self), argument: argument)] else { return 0 }
            return 1 + hop.0[praHop: hop.1]()
        }
    }

    /// The same registration in the container stored under `pra.next`, if any.
    var praBounce: Provider<Int> {
        factory {
            guard let next: DependencyContainer = self.getValue(forKey: "pra.next") else { return 0 }
            return 1 + next.praBounce()
        }
    }

    // Cycles through other kinds of frames.

    var praLeft: Provider<Int> { factory { self.praRight() + 1 } }
    var praRight: Provider<Int> { factory { self.praLeft() + 1 } }

    /// An async factory, which runs in its caller's task in a frame bound as a task-local
    /// value: the plain factories it resolves start inside that bound frame.
    var praAsyncAroundACycle: AsyncProvider<Int> { factory { self.praLeft() } }

    var praPropertyOuter: Provider<Int> { factory { self.praPropertyMiddle() + 1 } }
    var praPropertyMiddle: Provider<Int> { factory { _ = PRAPropertyHolder(); return 1 } }

    /// A singleton whose construction waits for a task it starts; the task resolves a cycle
    /// of plain factories, its frames starting in the singleton's (another owner's).
    var praSpawnsACycle: Provider<Int> {
        singleton {
            runningATaskAndWaiting { _ = self.praLeft() }
            return 0
        }
    }

    /// A factory that the thread is building when the singleton under it starts a task,
    /// which resolves this factory again: another owner, not a cycle.
    var praSpawnLine: Provider<Int> {
        factory { PRASpawned.inside ? 7 : self.praSpawnsTheLine() }
    }
    var praSpawnsTheLine: Provider<Int> {
        singleton {
            let got = Collected<Int>()
            runningATaskAndWaiting { PRASpawned.$inside.withValue(true) { got.append(self.praSpawnLine()) } }
            return got.values.first ?? -1
        }
    }

    /// Resolves itself again from an immediate task, three levels deep: each level runs on
    /// the same thread as another owner, so none is a cycle.
    var praImmediateSelf: Provider<Int> {
        factory {
            let levels: PRALevels = self.getValue(forKey: "pra.levels")!
            let level = levels.next()
            if level < 3, #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { levels.seen.append(self.praImmediateSelf()) }
            }
            return level
        }
    }

    // One call site forwarded to an async and a sync registration (a helper that forwards
    // `fileID`, `line` and `column` to both): one key, so one registration to the engine.

    var praSharedAsync: AsyncProvider<Int> {
        factory(name: "praSharedAsync", fileID: "PRA/Shared.swift", line: 1, column: 1) { self.praSharedVia() }
    }
    var praSharedVia: Provider<Int> { factory { self.praSharedFactory() } }
    var praSharedFactory: Provider<Int> {
        factory(name: "praSharedFactory", fileID: "PRA/Shared.swift", line: 1, column: 1) { 0 }
    }
    var praSharedAsyncOverSingleton: AsyncProvider<Int> {
        factory(name: "praSharedAsync", fileID: "PRA/Shared.swift", line: 2, column: 1) { self.praSharedViaSingleton() }
    }
    var praSharedViaSingleton: Provider<Int> { factory { self.praSharedSingleton() } }
    var praSharedSingleton: Provider<Int> {
        singleton(name: "praSharedSingleton", fileID: "PRA/Shared.swift", line: 2, column: 1) { 0 }
    }

    // Overrides, decorations and tracers of ancestors.

    var praLeaf: Provider<Int> { factory { 1 } }
    /// The leaf under a plain frame of its own thread.
    var praTop: Provider<Int> { factory { self.praLeaf() } }

    var praFamily: ProviderFamily<Int, Int> { factory { (n: Int) in n } }
    /// The family's member `n`, resolved under a plain frame of the child's.
    subscript(praFamilyUnder n: Int) -> Provider<Int> { factory(n) { self.praFamily(n) } }

    var praMidInner: Provider<Int> { factory { 1 } }
    /// Decorates, overrides and resets `praMidInner` in the grandparent stored under
    /// `pra.grand` while it runs, resolving the inner one after each change.
    var praMidOuter: Provider<[Int]> {
        factory {
            let grand: DependencyContainer = self.getValue(forKey: "pra.grand")!
            var seen = [self.praMidInner()]
            grand.decorate(\.praMidInner) { $0 + 10 }
            seen.append(self.praMidInner())
            grand.override(\.praMidInner) { 5 }
            seen.append(self.praMidInner())
            grand.reset(\.praMidInner)
            seen.append(self.praMidInner())
            return seen
        }
    }

    var praTraceInner: Provider<Int> { factory { 1 } }
    /// Installs a tracer on the grandparent stored under `pra.grand` while it runs, and
    /// resolves the inner factory before and after.
    var praTraceOuter: Provider<Int> {
        factory {
            let grand: DependencyContainer = self.getValue(forKey: "pra.grand")!
            let tracer: ResolutionTracer = self.getValue(forKey: "pra.tracer")!
            let before = self.praTraceInner()
            grand.tracer = tracer
            return before + self.praTraceInner()
        }
    }
}

/// The phases of the ancestors' changes, and how many readers resolved in each.
private final class PRAPhases: @unchecked Sendable {
    // @unchecked: every field is touched only while holding `condition`.
    private let condition = NSCondition()
    private var phase = 0
    private var readersIn: [Int: Int] = [:]

    var current: Int { condition.withLock { phase } }

    func advance() { condition.withLock { phase += 1; condition.broadcast() } }

    func resolved(in phase: Int) {
        condition.withLock {
            readersIn[phase, default: 0] += 1
            condition.broadcast()
        }
    }

    func waitForReaders(_ count: Int) {
        condition.lock()
        while readersIn[phase, default: 0] < count { condition.wait() }
        condition.unlock()
    }
}

/// The stops of a walk across two containers whose frames all land in one bucket: an
/// argument that lands there in both containers if one turns up early (the same key in
/// two containers; for some pairs of container addresses none can), then arguments of each
/// container in turn.
private func praPlanAWalk(_ first: DependencyContainer, _ second: DependencyContainer, stops: Int) -> [(DependencyContainer, Int)] {
    func bucket(_ container: DependencyContainer, _ argument: Int) -> Int {
        Frame.bucket(of: container[praHop: argument].key, in: ObjectIdentifier(container))
    }
    let target = bucket(first, 0)
    var (inFirst, inSecond, inBoth) = ([Int](), [Int](), [Int]())
    var argument = 1
    while inFirst.count < stops || inSecond.count < stops {
        let (a, b) = (bucket(first, argument) == target, bucket(second, argument) == target)
        if a && b { inBoth.append(argument) } else if a { inFirst.append(argument) } else if b { inSecond.append(argument) }
        argument += 1
    }
    var walk: [(DependencyContainer, Int)] = [(first, 0)]
    if let both = inBoth.first { walk += [(first, both), (second, both)] }
    var (nextFirst, nextSecond) = (0, 0)
    while walk.count < stops {
        if walk.count % 2 == 0 {
            walk.append((first, inFirst[nextFirst]))
            nextFirst += 1
        } else {
            walk.append((second, inSecond[nextSecond]))
            nextSecond += 1
        }
    }
    return walk
}

/// Lays `walk` out in a plan stored in both containers; closes it into a ring if asked.
private func praStore(_ walk: [(DependencyContainer, Int)], closing: Bool) {
    let plan = PRAHopPlan()
    for (index, stop) in walk.enumerated() {
        let next = index + 1 < walk.count ? walk[index + 1] : (closing ? walk[0] : nil)
        if let next { plan.next[.init(container: ObjectIdentifier(stop.0), argument: stop.1)] = next }
    }
    for container in Set(walk.map { ObjectIdentifier($0.0) }) {
        walk.first { ObjectIdentifier($0.0) == container }!.0.setValue(plan, forKey: "pra.plan")
    }
}

@Suite struct PRAPlainRoadAttackTests {
    // MARK: - Cycles whose frames share a bucket

    /// Five members of one family, all in one bucket, in a ring: the check walks past the
    /// four other members filed there and names the whole ring, from the member asked for.
    @Test func aRingOfMembersInOneBucketStopsWithTheWholeRing() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praRing")
            _ = DependencyContainer()[praRing: PRASameBucket(id: 0)]()
        })
        #expect(cycle?.names == Array(repeating: "praRing", count: 6), "\(cycle?.description ?? "nil")")
        #expect(cycle?.locatesEveryLink(in: "DependencyInjectionTests") == true)
    }

    /// A ring of 150 members of one bucket crosses the blocks of plain frames: the check
    /// still finds the first member, at the bottom of the bucket's chain.
    @Test func aRingAcrossBlocksInOneBucketStopsWithTheWholeRing() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praRing 150")
            let container = DependencyContainer()
            container.setValue(150, forKey: "pra.ring.size")
            _ = container[praRing: PRASameBucket(id: 0)]()
        })
        #expect(cycle?.names.count == 151, "\(cycle?.description.prefix(200) ?? "nil")")
        #expect(cycle.map { Set($0.names) == ["praRing"] } == true)
    }

    /// A line of 200 members in one bucket is no cycle: every member compares unequal.
    @Test func aLineOfMembersInOneBucketIsNoCycle() {
        #expect(DependencyContainer()[praLine: PRASameBucket(id: 200)]() == 200)
    }

    /// A walk through two containers whose 150 frames all land in one bucket, starting with
    /// the same key in both containers when one lands there in both: no cycle, since the
    /// containers differ.
    @Test func theSameKeyInTwoContainersInOneBucketIsNoCycle() {
        // For some pairs of addresses no argument lands in the bucket in both containers:
        // a few second containers are tried (and kept alive) for a pair where one does.
        let first = DependencyContainer()
        var seconds: [DependencyContainer] = []
        var walk: [(DependencyContainer, Int)] = []
        repeat {
            seconds.append(DependencyContainer())
            walk = praPlanAWalk(first, seconds.last!, stops: 150)
        } while walk[1].1 != walk[2].1 && seconds.count < 8
        #expect(walk.count == 150)
        let buckets = Set(walk.map { Frame.bucket(of: $0.0[praHop: $0.1].key, in: ObjectIdentifier($0.0)) })
        #expect(buckets.count == 1, "the walk's frames land in \(buckets.count) buckets")
        praStore(walk, closing: false)
        #expect(first[praHop: 0]() == 149)
    }

    /// The same walk closed into a ring: the last stop asks for the first, which is
    /// building in its container, under 149 frames of the same bucket.
    @Test func aRingThroughTwoContainersInOneBucketStopsWithTheWholeRing() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praHop ring")
            let (first, second) = (DependencyContainer(), DependencyContainer())
            praStore(praPlanAWalk(first, second, stops: 150), closing: true)
            _ = first[praHop: 0]()
        })
        #expect(cycle?.names.count == 151, "\(cycle?.description.prefix(200) ?? "nil")")
        #expect(cycle.map { Set($0.names) == ["praHop"] } == true)
    }

    /// The same registration through three containers is no cycle; two containers that ask
    /// each other for it are one, reported from the first.
    @Test func theSameRegistrationThroughOtherContainersIsNoCycleUntilItComesBack() async {
        let (a, b, c) = (DependencyContainer(), DependencyContainer(), DependencyContainer())
        a.setValue(b, forKey: "pra.next")
        b.setValue(c, forKey: "pra.next")
        #expect(a.praBounce() == 2)
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praBounce")
            let (a, b) = (DependencyContainer(), DependencyContainer())
            a.setValue(b, forKey: "pra.next")
            b.setValue(a, forKey: "pra.next")
            _ = a.praBounce()
        })
        #expect(cycle?.names == ["praBounce", "praBounce", "praBounce"], "\(cycle?.description ?? "nil")")
    }

    // MARK: - Cycles through other frames

    /// Plain factories inside an async factory start inside its bound frame (the thread's
    /// base): a cycle among them still stops, named from its first factory.
    @Test func aCycleOfFactoriesInsideAnAsyncFactoryStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praAsyncAroundACycle")
            _ = try? await DependencyContainer().praAsyncAroundACycle()
        })
        #expect(cycle?.isCycle(["praLeft", "praRight", "praLeft"]) == true, "\(cycle?.description ?? "nil")")
    }

    /// A task that a singleton starts has its frames start in the singleton's (another
    /// owner's): a cycle of factories in the task stops, without the singleton in its chain.
    @Test func aCycleOfFactoriesInATaskASingletonStartedStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praSpawnsACycle")
            let container = DependencyContainer()
            await withCheckedContinuation { done in
                Thread {
                    _ = container.praSpawnsACycle()
                    done.resume()
                }.start()
            }
        })
        #expect(cycle?.isCycle(["praLeft", "praRight", "praLeft"]) == true, "\(cycle?.description ?? "nil")")
    }

    /// A task that a singleton starts resolves the factory that the singleton's thread is
    /// building under it: another owner, so no cycle, and it gets its own instance.
    ///
    /// In a process of its own: the singleton waits for its task, which needs a thread of the
    /// cooperative pool, and the rest of the suite may hold the pool for long under
    /// ThreadSanitizer.
    @Test func aTaskASingletonStartedResolvesTheFactoryAroundItWithoutACycle() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("praSpawnLine")
            let value = await withCheckedContinuation { done in
                Thread { done.resume(returning: DependencyContainer().praSpawnLine()) }.start()
            }
            if value != 7 { exit(1) }
        }
    }

    /// A factory whose object reads its property in its initializer, asking for the factory
    /// two levels out: the chain runs through the property's first read.
    @Test func aCycleClosedByAPropertysFirstReadStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praPropertyOuter")
            _ = DependencyContainer().praPropertyOuter()
        })
        let names = cycle?.names ?? []
        #expect(names.count == 4, "\(cycle?.description ?? "nil")")
        #expect(Array(names.prefix(2)) == ["praPropertyOuter", "praPropertyMiddle"])
        #expect(names.dropFirst(2).first?.hasPrefix("@Dependency") == true)
        #expect(names.last == "praPropertyOuter")
    }

    /// A plain factory two levels inside an async factory whose key it shares: the only
    /// frame it can match is the bound one its thread's frames started in (the slot's
    /// base), not one filed in its bucket. It stops, as a singleton in its place does on
    /// the whole road.
    @Test func aFactoryUnderAnAsyncFactoryOfItsOwnKeyStopsAsTheWholeRoadDoes() async {
        let plain = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praSharedAsync")
            _ = try? await DependencyContainer().praSharedAsync()
        })
        #expect(plain?.names == ["praSharedAsync", "praSharedVia", "praSharedFactory"], "\(plain?.description ?? "nil")")
        let whole = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("praSharedAsyncOverSingleton")
            _ = try? await DependencyContainer().praSharedAsyncOverSingleton()
        })
        #expect(whole?.names == ["praSharedAsync", "praSharedViaSingleton", "praSharedSingleton"], "\(whole?.description ?? "nil")")
    }

    // MARK: - Owners

    /// A factory that resolves itself again from an immediate task, three levels deep, from
    /// a thread outside any task and from a task: each level is another owner on the same
    /// thread, so none is a cycle, and each level's task gets the next level's value.
    @Test(arguments: [false, true]) func aFactoryResolvedAgainFromAnImmediateTaskIsNoCycle(inATask: Bool) async {
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else { return }
        let levels = PRALevels()
        let container = DependencyContainer()
        container.setValue(levels, forKey: "pra.levels")
        let outer: Int
        if inATask {
            outer = await Task { container.praImmediateSelf() }.value
        } else {
            outer = await onAThreadThatEnds { container.praImmediateSelf() }
        }
        #expect(outer == 0)
        #expect(levels.seen.values == [3, 2, 1])
    }

    /// A thread, a task running on it and no one are three owners; a thread is one owner
    /// while it runs.
    @Test func aThreadAndTheTaskRunningOnItAreTwoOwners() async {
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else { return }
        let owners = await onAThreadThatEnds { () -> [Owner] in
            let inside = Collected<Owner>()
            let thread = Owner.current
            Task.immediate { inside.append(Owner.current) }
            return [thread, inside.values.first ?? .nobody, Owner.current]
        }
        #expect(owners[0] == owners[2])
        #expect(owners[1] != .nobody && owners[0] != .nobody)
        #expect(owners[0] != owners[1])
    }

    // MARK: - Ancestors' overrides and decorations

    /// Children of one parent and grandparent resolve a factory on threads released
    /// together, while the grandparent and the parent decorate, override and reset it: a
    /// resolution that starts after a change has returned sees that change or a later one.
    @Test func ancestorsChangesReachChildrenResolvingOnOtherThreads() async {
        // The leaf's value in each phase, after the change that starts it.
        let values = [1, 1001, 1100, 2200, 2, 14, 7]
        let readers = 4
        let wrong = Collected<String>()
        for round in 0..<6 {
            let grand = DependencyContainer()
            let parent = DependencyContainer(parent: grand)
            let children = (0..<readers).map { _ in DependencyContainer(parent: parent) }
            let phases = PRAPhases()
            let changes: [@Sendable () -> Void] = [
                { grand.decorate(\.praLeaf) { $0 + 1000 } },
                { grand.override(\.praLeaf) { 100 } },
                { parent.decorate(\.praLeaf) { $0 * 2 } },
                { grand.reset(\.praLeaf) },
                { grand.override(\.praLeaf) { 7 } },
                { parent.reset() },
            ]
            #expect(await concurrentlyOffThePool(threads: readers + 1) { index in
                guard index < readers else {
                    for change in changes {
                        phases.waitForReaders(readers)
                        change()
                        phases.advance()
                    }
                    return
                }
                let child = children[index]
                var noted = -1
                while true {
                    let phase = phases.current
                    let value = index % 2 == 0 ? child.praTop() : child.praLeaf()
                    if !values[phase...].contains(value) {
                        wrong.append("round \(round), reader \(index): \(value) after phase \(phase) began")
                    }
                    if phase != noted {
                        phases.resolved(in: phase)
                        noted = phase
                    }
                    if phase == values.count - 1 { return }
                }
            })
        }
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
    }

    /// A factory changes its grandparent's decoration and override of another factory while
    /// it runs, and resolves that factory from its own container after each change.
    @Test func changesOfAGrandparentMidChainReachTheNextFactory() {
        let grand = DependencyContainer()
        let child = DependencyContainer(parent: DependencyContainer(parent: grand))
        child.setValue(grand, forKey: "pra.grand")
        #expect(child.praMidOuter() == [1, 11, 15, 1])
    }

    /// A family override in the grandparent and an argument's override in the parent reach
    /// the grandchild's plain members, on their own and under a plain frame, until reset.
    @Test func familyOverridesOfAncestorsReachAGrandchildsMembers() {
        let grand = DependencyContainer()
        let parent = DependencyContainer(parent: grand)
        let child = DependencyContainer(parent: parent)
        func seen() -> [Int] { [1, 2, 3].flatMap { [child.praFamily($0), child[praFamilyUnder: $0]()] } }
        #expect(seen() == [1, 1, 2, 2, 3, 3])
        grand.override(\.praFamily) { $0 * 100 }
        #expect(seen() == [100, 100, 200, 200, 300, 300])
        parent.override(\.praFamily[2]) { -2 }
        #expect(seen() == [100, 100, -2, -2, 300, 300])
        grand.reset(\.praFamily)
        #expect(seen() == [1, 1, -2, -2, 3, 3])
        parent.reset()
        #expect(seen() == [1, 1, 2, 2, 3, 3])
    }

    /// A factory installs a tracer on its grandparent while it runs: what it resolves
    /// afterwards is inside a construction that began untraced, so not traced (as
    /// documented), but the next resolution from the child is, on the whole road.
    @Test func aTracerInstalledMidChainTracesTheNextResolution() {
        let grand = DependencyContainer()
        let child = DependencyContainer(parent: DependencyContainer(parent: grand))
        let events = Collected<String>()
        child.setValue(grand, forKey: "pra.grand")
        child.setValue(ResolutionTracer { batch in for event in batch { events.append(event.name) } }, forKey: "pra.tracer")
        #expect(child.praTraceOuter() == 2)
        #expect(events.values.isEmpty)
        #expect(child.praTraceInner() == 1)
        grand.tracer = nil
        #expect(child.praTraceInner() == 1)
        #expect(events.values == ["praTraceInner"])
    }
}
