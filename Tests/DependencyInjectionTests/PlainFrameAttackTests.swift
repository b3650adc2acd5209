import Foundation
import Testing
@testable import DependencyInjection

// Attacks on plain factories' frames: user code that runs while a frame ends
// or is compared, arguments, properties, waiters, cycles across threads, threads ending.

final class ReentrantGraphThing: @unchecked Sendable {
    let container: DependencyContainer
    let log: Collected<Int>
    init(container: DependencyContainer, log: Collected<Int>) { (self.container, self.log) = (container, log) }
    deinit {
        // Runs inside the ending of the outermost frame (its graph instances go at its end).
        log.append(container[countdown: 30]())
        log.append(container.attackPlainLeaf())
    }
}

/// An argument whose `==` resolves from the container: it runs inside the cycle check.
struct ResolvingEqualityArgument: Hashable, @unchecked Sendable {
    let id: Int
    let container: DependencyContainer
    static func == (lhs: Self, rhs: Self) -> Bool {
        _ = lhs.container[countdown: 18]()
        _ = lhs.container.attackPlainLeaf()
        return lhs.id == rhs.id
    }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }  // every id in one bucket
}

/// An argument whose deinit resolves factories (with arguments of its own kind) from the container.
final class ReentrantArgument: Hashable, @unchecked Sendable {
    let id: Int
    let depth: Int
    let container: DependencyContainer
    let releases: Counter
    init(id: Int, depth: Int, container: DependencyContainer, releases: Counter) {
        (self.id, self.depth, self.container, self.releases) = (id, depth, container, releases)
    }
    deinit {
        releases.increment()
        _ = container[countdown: 20]()
        if depth > 0 {
            _ = container[reentrantArgument: ReentrantArgument(
                id: id &* 31 &+ depth, depth: depth - 1, container: container, releases: releases)]()
        }
    }
    static func == (lhs: ReentrantArgument, rhs: ReentrantArgument) -> Bool { lhs.id == rhs.id && lhs.depth == rhs.depth }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// An object whose @Dependency resolves from the container that built it.
final class BuiltWithProperty: @unchecked Sendable {
    @Dependency(\.containerTag) var tag
}

extension DependencyContainer {
    var attackPlainLeaf: Provider<Int> { factory { 1 } }
    var containerTag: Provider<String> { factory { self.getValue(forKey: "tag") ?? "none" } }
    var builtWithProperty: Provider<BuiltWithProperty> { factory { BuiltWithProperty() } }
    subscript(propertyUnder n: Int) -> Provider<BuiltWithProperty> {
        factory(n) { n == 0 ? BuiltWithProperty() : self[propertyUnder: n - 1]() }
    }
    var builtWithPropertyDeep: Provider<BuiltWithProperty> { factory { _ = self[countdown: 3](); return self.builtWithProperty() } }

    var reentrantGraph: Provider<ReentrantGraphThing> {
        graph { ReentrantGraphThing(container: self, log: self.getValue(forKey: "log")!) }
    }
    /// The outermost factory, whose frame keeps the graph instance.
    subscript(graphOuter n: Int) -> Provider<Int> {
        factory(n) {
            _ = self.reentrantGraph()
            return n == 0 ? 0 : 1 + self[graphOuter: n - 1]()
        }
    }

    subscript(resolvingEquality argument: ResolvingEqualityArgument) -> Provider<Int> {
        factory(argument) { argument.id == 0 ? 0 : 1 + self[resolvingEquality: ResolvingEqualityArgument(
            id: argument.id - 1, container: self)]() }
    }
    subscript(reentrantArgument argument: ReentrantArgument) -> Provider<Int> { factory(argument) { 0 } }

    // Two threads, each in a singleton under a factory, each waiting in a factory for the
    // other's singleton: a cycle the wait graph reports through both threads' factories.
    var wgOuterA: Provider<Node> { factory { _ = self[countdown: 20](); return self.wgS() } }
    var wgOuterB: Provider<Node> { factory { _ = self[countdown: 20](); return self.wgT() } }
    var wgS: Provider<Node> {
        singleton {
            _ = self[countdown: 20]()
            (self.getValue(forKey: "rendezvous") as Rendezvous?)?.arrive()
            return self.wgInnerA()
        }
    }
    var wgT: Provider<Node> {
        singleton {
            _ = self[countdown: 20]()
            (self.getValue(forKey: "rendezvous") as Rendezvous?)?.arrive()
            return self.wgInnerB()
        }
    }
    /// A singleton long to build, asked for by threads inside two factories each.
    subscript(slowSingleton n: Int) -> Provider<Int> {
        singleton(n) {
            var total = 0
            for _ in 0..<30 { total += self[countdown: 12]() }
            return total
        }
    }
    subscript(waiterOuter n: Int) -> Provider<Int> { factory(n) { self[waiterInner: n]() } }
    subscript(waiterInner n: Int) -> Provider<Int> {
        factory(n) { self[countdown: 3]() + self[slowSingleton: n]() + self[countdown: 3]() }
    }

    var wgInnerA: Provider<Node> { factory { _ = self[countdown: 7](); return self.wgT() } }
    var wgInnerB: Provider<Node> { factory { _ = self[countdown: 7](); return self.wgS() } }
}

@Suite struct PlainFrameAttackTests {
    /// Graph instances released at the end of the outermost factory resolve factories in
    /// their deinit, while that frame is being kept.
    @Test func deinitsRunAsAFrameEndsResolveFactoriesAndThePlainFramesStayBalanced() async {
        let log = Collected<Int>()
        let (values, plainLeft) = await onAThreadThatEnds {
            let container = DependencyContainer()
            container.setValue(log, forKey: "log")
            var values: [Int] = []
            for n in [0, 1, 5, 20, 3] { values.append(container[graphOuter: n]()) }
            return (values, ThreadFrames.slot.plainDepth)
        }
        #expect(values == [0, 1, 5, 20, 3])
        #expect(plainLeft == 0)
        #expect(log.values.count == 10 && log.values.allSatisfy { $0 == 30 || $0 == 1 })
    }

    /// An argument's `==` (run by the cycle check against frames of the same bucket)
    /// resolves factories itself, reusing frames in the middle of the check.
    @Test func anArgumentWhoseEqualityResolvesStillCountsDown() async {
        let value = await onAThreadThatEnds {
            let container = DependencyContainer()
            return container[resolvingEquality: ResolvingEqualityArgument(id: 12, container: container)]()
        }
        #expect(value == 12)
    }

    /// Arguments whose deinit resolves parameterized factories with new arguments.
    @Test func argumentsWhoseDeinitResolvesAreEachReleasedOnce() async {
        let releases = Counter()
        let plainLeft = await onAThreadThatEnds {
            let container = DependencyContainer()
            for id in 0..<50 {
                _ = container[reentrantArgument: ReentrantArgument(
                    id: id * 1000, depth: 3, container: container, releases: releases)]()
            }
            return ThreadFrames.slot.plainDepth
        }
        #expect(plainLeft == 0)
        #expect(releases.count == 50 * 4)
    }

    /// A deep chain of parameterized factories: every argument is released once.
    @Test func aDeepChainReleasesEveryArgument() async {
        let releases = Counter()
        let ok = await onAThreadThatEnds {
            let container = DependencyContainer()
            var ok = true
            for _ in 0..<3 { ok = ok && container[countdown: 3000]() == 3000 }
            for id in 0..<2000 { _ = container[frameSeenFor: CountedArgument(id: id, releases: releases)]() }
            return ok
        }
        #expect(ok)
        #expect(releases.count == 2000)
    }

    /// A property created in a factory resolves from the container that built its owner,
    /// whichever container the previous plain frame in that place served (one of them released).
    @Test func aPropertyCreatedOnAPlainFrameResolvesFromItsBuilder() async {
        let tags = await onAThreadThatEnds {
            var tags: [String] = []
            let kept = DependencyContainer()
            kept.setValue("kept", forKey: "tag")
            for round in 0..<20 {
                do {
                    let temporary = DependencyContainer()
                    temporary.setValue("temp\(round)", forKey: "tag")
                    let object = temporary.builtWithPropertyDeep()
                    tags.append(object.tag)
                }
                let object = kept.builtWithProperty()
                _ = kept[countdown: 4]()
                tags.append(object.tag)
            }
            return tags
        }
        #expect(tags == (0..<20).flatMap { ["temp\($0)", "kept"] })
    }

    /// A property created under thousands of plain frames, past many blocks: asking which
    /// container builds it makes an object for every one of them, and they all end.
    @Test func aPropertyCreatedUnderThousandsOfPlainFramesResolvesFromItsBuilder() async {
        let (tag, depthAfter) = await onAThreadThatEnds {
            let container = DependencyContainer()
            container.setValue("deep", forKey: "tag")
            let object = container[propertyUnder: 3_000]()
            return (object.tag, ThreadFrames.slot.plainDepth)
        }
        #expect(tag == "deep")
        #expect(depthAfter == 0)
    }

    /// A cycle across two threads, closed in factories that run in plain frames: the
    /// message names both threads' factories.
    @Test func aCycleAcrossThreadsThroughPlainFramesNamesEveryLink() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle across two threads through plain frames")
            let container = DependencyContainer()
            container.setValue(Rendezvous(), forKey: "rendezvous")
            let otherFinished = DispatchSemaphore(value: 0)
            Thread {
                for _ in 0..<5 { _ = container[countdown: 30]() }
                _ = container.wgOuterB()
                otherFinished.signal()
            }.start()
            for _ in 0..<5 { _ = container[countdown: 30]() }
            _ = container.wgOuterA()
            otherFinished.wait()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["wgS", "wgInnerA", "wgT", "wgInnerB", "wgS"]) == true, "\(standardError(of: result))")
    }

    /// Threads released together ask, inside two factories, for a singleton another of
    /// them builds: most wait, their innermost frames seen by the wait graph.
    @Test func waitersInsideFactoriesWhileTheirThreadsFileAndEndPlainFrames() async {
        let container = DependencyContainer()
        let values = Collected<Int>()
        for round in 0..<30 {
            #expect(await concurrentlyOffThePool(threads: 4) { _ in
                values.append(container[waiterOuter: round]())
                values.append(container[countdown: 20]())
            })
        }
        #expect(values.values.count == 240)
        #expect(values.values.allSatisfy { $0 == 366 || $0 == 20 })
    }

    /// Threads that end (each `concurrently` thread ends after its body) while others
    /// still resolve: their slots, with the stacks of plain frames, are freed at their end.
    @Test func threadsEndingWithTheirSlotsWhileOthersResolve() async {
        let container = DependencyContainer()
        let values = Collected<Int>()
        for _ in 0..<15 {
            #expect(await concurrentlyOffThePool(threads: 4) { thread in
                for _ in 0..<(thread + 1) * 5 { values.append(container[countdown: 17]()) }
            })
        }
        #expect(values.values.allSatisfy { $0 == 17 })
    }
}
