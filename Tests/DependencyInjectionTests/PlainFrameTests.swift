import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A parameterized factory's argument that counts its own release.
final class CountedArgument: Hashable, Sendable {
    let id: Int
    private let releases: Counter
    init(id: Int, releases: Counter) { (self.id, self.releases) = (id, releases) }
    deinit { releases.increment() }
    static func == (lhs: CountedArgument, rhs: CountedArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What a factory saw of the construction it ran in.
struct FrameSeen: Sendable {
    let frame: ObjectIdentifier?
}

/// An instance whose construction starts a task that creates an object with a
/// `@Dependency`: the task inherits, and reads, the frames the construction runs in.
final class SpawnsAReader: Sendable {
    let reader: Task<Void, Never>
    init() { reader = Task { withExtendedLifetime(HolderOfFrameSeen()) {} } }
}

final class HolderOfFrameSeen {
    @Dependency(\.frameSeen) var seen
}

extension DependencyContainer {
    var frameSeen: Provider<FrameSeen> { factory { FrameSeen(frame: Frame.current.map(ObjectIdentifier.init)) } }
    var frameSeenOnce: Provider<FrameSeen> { singleton { FrameSeen(frame: nil) } }
    /// A factory that builds a singleton, whose frame is bound for the tasks it may start.
    var seenUnderASingleton: Provider<FrameSeen> {
        factory {
            _ = self.frameSeenOnce()
            return FrameSeen(frame: Frame.current.map(ObjectIdentifier.init))
        }
    }
    var spawnsAReader: Provider<SpawnsAReader> { factory { SpawnsAReader() } }
    var cachedSpawnsAReader: Provider<SpawnsAReader> { singleton { SpawnsAReader() } }
    /// A factory that builds a singleton, whose construction starts a task.
    var readerUnderASingleton: Provider<SpawnsAReader> { factory { self.cachedSpawnsAReader() } }
    /// A factory that builds another factory, whose construction starts a task.
    var readerUnderAFactory: Provider<SpawnsAReader> { factory { self.spawnsAReader() } }
    subscript(frameSeenFor argument: CountedArgument) -> Provider<FrameSeen> {
        factory(argument) { FrameSeen(frame: Frame.current.map(ObjectIdentifier.init)) }
    }
}

/// Runs `body` on a new thread and waits until the thread has ended, its thread-specific
/// data destroyed; returns what `body` returned. Expectations are checked by the caller:
/// a thread outside the test's task cannot name the test. The waiting is done on a thread
/// of its own, so that no thread of the cooperative pool is blocked.
func onAThreadThatEnds<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withCheckedContinuation { done in
        Thread { done.resume(returning: joiningAThreadThatRuns(body)) }.start()
    }
}

private func joiningAThreadThatRuns<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
    let result = ThreadResult<Result>()
    joiningThreadsThatRun(1) { _ in result.value = body() }
    return result.value!
}

/// Written by the thread, read after joining it.
private final class ThreadResult<Value>: @unchecked Sendable {
    var value: Value?
}

/// What a factory saw of its own frame: whether the thread's slot keeps it as a plain
/// frame, and the object made for it when asked.
struct PlainFrameSeen: @unchecked Sendable {
    let isPlainInSlot: Bool
    let object: Frame?
    let sameObjectAgain: Bool
}

extension DependencyContainer {
    var plainFrameSeen: Provider<PlainFrameSeen> {
        factory {
            let slot = ThreadFrames.slot
            let isPlain = slot.innermostWord.map { ThreadFrames.plain($0) != nil } ?? false
            let object = Frame.current
            return PlainFrameSeen(isPlainInSlot: isPlain, object: object, sameObjectAgain: Frame.current === object)
        }
    }
    /// A factory whose frame no one asks for: it only counts the thread's plain frames.
    var plainFramesNow: Provider<Int> { factory { ThreadFrames.slot.plainDepth } }
}

/// A plain factory's frame is a few words in its thread's slot: an object is made for it
/// only when something asks for one, it ends with the factory, and nothing it names is
/// held past the factory.
@Suite struct PlainFrameTests {
    @Test func aFactoryRunsInAPlainFrameThatGoesWhenItEnds() async {
        let (inside, nested, after, innermostAfter) = await onAThreadThatEnds {
            let container = DependencyContainer()
            let inside = container.plainFramesNow()
            let nested = container[countdown: 3]()
            return (inside, nested, ThreadFrames.slot.plainDepth, ThreadFrames.slot.innermostWord == nil)
        }
        #expect(inside == 1)
        #expect(nested == 3)
        #expect(after == 0 && innermostAfter, "a plain frame outlived its factory")
    }

    @Test func askingForTheFrameMakesOneObjectThatEndsWithTheFactory() async {
        final class WeakFrame: @unchecked Sendable { weak var frame: Frame? }
        let kept = WeakFrame()
        let (isPlain, made, sameAgain, activeAfter) = await onAThreadThatEnds {
            let seen = DependencyContainer().plainFrameSeen()
            kept.frame = seen.object
            return (seen.isPlainInSlot, seen.object != nil, seen.sameObjectAgain, seen.object?.isActive)
        }
        #expect(isPlain)
        #expect(made && sameAgain, "each ask made another object")
        #expect(activeAfter == false, "the object outlived its factory as an active frame")
        #expect(kept.frame == nil, "the slot still holds the object made for an ended factory")
    }

    @Test func aChainDeeperThanABlockOfPlainFramesGoesOnInAnother() async {
        let (values, after) = await onAThreadThatEnds {
            let container = DependencyContainer()
            let depth = ThreadFrames.plainBlockCapacity * 3
            return ([container[countdown: depth](), container[countdown: 5]()], ThreadFrames.slot.plainDepth)
        }
        #expect(values == [ThreadFrames.plainBlockCapacity * 3, 5])
        #expect(after == 0)
    }

    @Test func theArgumentOfAParameterizedFactoryIsReleasedWhenItsResolutionEnds() async {
        let releases = Counter()
        let released = await onAThreadThatEnds {
            let container = DependencyContainer()
            for id in 0..<3 { _ = container[frameSeenFor: CountedArgument(id: id, releases: releases)]() }
            return releases.count
        }
        #expect(released == 3, "a frame still holds an argument")
    }

    @Test func aFrameObjectATaskReadsStaysValidAfterItsFactoryEnds() async {
        let readers = await onAThreadThatEnds {
            let container = DependencyContainer()
            // The singleton's frame is bound for the task it starts, and its parent is the
            // object made for the factory's plain frame: the task may read it after both end.
            let first = container.readerUnderASingleton().reader
            // A factory's frame is not bound: the task it starts sees none of the chain.
            let second = container.readerUnderAFactory().reader
            return [first, second]
        }
        for reader in readers { await reader.value }
    }

    @Test func aFactoryUnderASingletonSeesTheSingletonsFrame() async {
        let (seen, after) = await onAThreadThatEnds {
            let container = DependencyContainer()
            return (container.seenUnderASingleton().frame, ThreadFrames.slot.plainDepth)
        }
        #expect(seen != nil)
        #expect(after == 0)
    }

    @Test func plainFramesFindCyclesAndServeTheirOwnContainer() async {
        let results = await onAThreadThatEnds {
            let one = DependencyContainer()
            let other = DependencyContainer()
            return (0..<50).map { _ in one[countdown: 5]() == 5 && other.frameSeen().frame != nil }
        }
        #expect(results.allSatisfy { $0 })
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through plain frames")
            let container = DependencyContainer()
            for _ in 0..<10 { _ = container[countdown: 10]() }
            _ = container[echo: 1]()
        }
        let chain = CycleChain(result)
        #expect(chain?.namesEachRegistrationOnce == true, "\(standardError(of: result))")
    }

    @Test func aCycleBeyondTheFirstBlockOfPlainFramesIsFound() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle past the plain frames")
            let container = DependencyContainer()
            _ = container[deepEcho: ThreadFrames.plainBlockCapacity + 10]()
        }
        let chain = CycleChain(result)
        #expect(chain?.names.count == 2 && chain?.namesEachRegistrationOnce == true, "\(standardError(of: result))")
    }

    @Test func threadsResolvingFactoriesThatStartTasksReadingTheirFramesDoNotRace() async {
        let container = DependencyContainer()
        let readers = Collected<Task<Void, Never>>()
        let values = Collected<Int>()
        let finished = await concurrentlyOffThePool(threads: 6) { _ in
            for round in 0..<60 {
                values.append(container[countdown: 4]())
                readers.append(container.readerUnderASingleton().reader)
                if round % 3 == 0 { readers.append(container.readerUnderAFactory().reader) }
                if round % 5 == 0 { container.reset() }
            }
        }
        #expect(finished)
        #expect(values.values.count == 360 && values.values.allSatisfy { $0 == 4 })
        for reader in readers.values { await reader.value }
    }
}

extension DependencyContainer {
    /// `n` factories deep, then a factory that asks for itself.
    subscript(deepEcho n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? self[echo: 0]() : self[deepEcho: n - 1]() }
    }
}
