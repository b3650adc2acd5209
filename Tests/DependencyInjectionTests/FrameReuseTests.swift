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
    let context = Unmanaged.passRetained(ThreadWork { result.value = body() }).toOpaque()
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let status = pthread_create(&thread, nil, { context in
        #if canImport(Darwin)
        Unmanaged<ThreadWork>.fromOpaque(context).takeRetainedValue().body()
        #else
        Unmanaged<ThreadWork>.fromOpaque(context!).takeRetainedValue().body()
        #endif
        return nil
    }, context)
    precondition(status == 0, "pthread_create failed with \(status)")
    #if canImport(Darwin)
    pthread_join(thread!, nil)
    #else
    pthread_join(thread, nil)
    #endif
    return result.value!
}

/// Written by the thread, read after joining it.
private final class ThreadResult<Value>: @unchecked Sendable {
    var value: Value?
}

private final class ThreadWork {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

/// A plain factory's frame is reused by the next construction on its thread, unless
/// another owner may have seen it, and what it referred to is let go when it ends.
@Suite struct FrameReuseTests {
    @Test func aThreadReusesTheFrameOfAFactoryThatEnded() async {
        let (first, spares, second, sparesAfter) = await onAThreadThatEnds {
            let container = DependencyContainer()
            let first = container.frameSeen()
            let spares = ThreadFrames.slot.spareCount
            return (first.frame, spares, container.frameSeen().frame, ThreadFrames.slot.spareCount)
        }
        #expect(spares == 1 && sparesAfter == 1)
        #expect(first != nil && first == second)
    }

    @Test func aChainKeepsAtMostTheSpareCapacityAndEveryLevelIsRight() async {
        let (values, spares) = await onAThreadThatEnds {
            let container = DependencyContainer()
            return ([container[countdown: 40](), container[countdown: 40]()], ThreadFrames.slot.spareCount)
        }
        #expect(values == [40, 40])
        #expect(spares == ThreadFrames.spareCapacity)
    }

    @Test func framesKeptForReuseGoWithTheirThread() async {
        final class WeakFrame: @unchecked Sendable { weak var frame: Frame? }
        let kept = WeakFrame()
        let found = await onAThreadThatEnds {
            _ = DependencyContainer()[countdown: 3]()
            guard let spare = ThreadFrames.slot.takeSpare() else { return false }
            kept.frame = spare
            ThreadFrames.slot.keepSpare(spare)
            return true
        }
        let released = kept.frame == nil
        #expect(found, "the thread kept no frame")
        #expect(released, "the ended thread still holds the frames it kept")
    }

    @Test func theArgumentOfAParameterizedFactoryIsReleasedWhenItsResolutionEnds() async {
        let releases = Counter()
        let (spares, released) = await onAThreadThatEnds {
            let container = DependencyContainer()
            for id in 0..<3 { _ = container[frameSeenFor: CountedArgument(id: id, releases: releases)]() }
            return (ThreadFrames.slot.spareCount, releases.count)
        }
        #expect(spares == 1)
        #expect(released == 3, "a frame kept for reuse still holds an argument")
    }

    @Test func aFrameUnderAFrameBoundForTasksIsNeverReused() async {
        let (spares, afterSingleton, afterFactory) = await onAThreadThatEnds {
            let container = DependencyContainer()
            _ = container.frameSeen()
            let spares = ThreadFrames.slot.spareCount
            // The singleton's frame is bound as a task-local value, so that a task its
            // construction starts sees the chain, down to this factory's frame: however
            // the construction ends, the factory's frame may have been read elsewhere.
            _ = container.seenUnderASingleton()
            let afterSingleton = ThreadFrames.slot.spareCount
            _ = container.frameSeen()
            return (spares, afterSingleton, ThreadFrames.slot.spareCount)
        }
        #expect(spares == 1)
        #expect(afterSingleton == 0, "a frame other owners may have seen went back to the spares")
        #expect(afterFactory == 1)
    }

    @Test func aFrameATaskMayHaveReadIsNotReused() async {
        let (spares, afterSingleton, afterFactories, readers) = await onAThreadThatEnds {
            let container = DependencyContainer()
            _ = container.frameSeen()
            let spares = ThreadFrames.slot.spareCount
            // The singleton's frame is bound for the task it starts, which may read the
            // chain down to the frame of the factory that asked for it.
            let first = container.readerUnderASingleton().reader
            let afterSingleton = ThreadFrames.slot.spareCount
            // A factory's frame is not bound: the task it starts sees none of the chain,
            // and both factories' frames go back.
            let second = container.readerUnderAFactory().reader
            return (spares, afterSingleton, ThreadFrames.slot.spareCount, [first, second])
        }
        #expect(spares == 1)
        #expect(afterSingleton == 0, "a frame another owner saw went back to the spares")
        #expect(afterFactories == 2)
        for reader in readers { await reader.value }
    }

    @Test func reusedFramesStillFindCyclesAndServeTheirOwnContainer() async {
        let results = await onAThreadThatEnds {
            let one = DependencyContainer()
            let other = DependencyContainer()
            return (0..<50).map { _ in one[countdown: 5]() == 5 && other.frameSeen().frame != nil }
        }
        #expect(results.allSatisfy { $0 })
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through reused frames")
            let container = DependencyContainer()
            for _ in 0..<10 { _ = container[countdown: 10]() }
            _ = container[echo: 1]()
        }
        let chain = CycleChain(result)
        #expect(chain?.namesEachRegistrationOnce == true, "\(standardError(of: result))")
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
