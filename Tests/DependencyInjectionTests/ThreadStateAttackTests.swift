import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What the engine reads of its thread through its C target (the thread's slot in a
// thread-local variable, the owner's identity, the count of frames bound as task-local
// values), attacked where those reads change: at thread exit, after the package's own
// destructor freed the slot; on many threads ending at once; and in a task that runs on the
// thread of a construction it did not start.

/// An object that records which container its property resolves from, without resolving.
final class TSAProbe: @unchecked Sendable {
    @Dependency(\.tsaTag) var tag
    init() {}
}

extension DependencyContainer {
    var tsaTag: String? { getValue(forKey: "tsa.tag") }

    /// Counts down through itself: each argument is its own plain factory.
    subscript(tsaCount n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? 0 : 1 + self[tsaCount: n - 1]() }
    }

    /// A singleton built through a chain of 70 plain factories (two blocks of the thread's
    /// stack of plain frames), holding a probe created inside it, and counting its builds.
    var tsaSingletonProbe: Provider<TSAProbe> {
        singleton {
            (self.getValue(forKey: "tsa.builds") as Counter?)?.increment()
            // Held until every thread of a round is about to ask, so that the others wait
            // for this construction (most of the time: they may come just after it ends).
            if let arrivals: Arrivals = self.getValue(forKey: "tsa.arrivals") { arrivals.wait(for: 8) }
            precondition(self[tsaCount: 70]() == 70)
            return TSAProbe()
        }
    }

    /// A singleton whose construction starts a task with `Task.immediate`: the task runs on
    /// this thread, as another owner, and creates a probe resolving from this container.
    var tsaImmediateProbe: Provider<TSAProbe?> {
        singleton {
            let made = Collected<TSAProbe>()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { made.append(DependencyContainer.withMain(self) { TSAProbe() }) }
            }
            return made.values.first
        }
    }

    /// A cycle through a singleton and a factory.
    var tsaCycleSingleton: Provider<Int> { singleton { self.tsaCycleFactory() + 1 } }
    var tsaCycleFactory: Provider<Int> { factory { self[tsaCount: 3]() + self.tsaCycleSingleton() } }
}

/// Work a thread runs in a thread-specific destructor when it exits, after the package's
/// own destructor has freed the thread's slot (destructors run in key order on Linux, and
/// this key is made after the thread's first construction, so after the package's key).
private final class TSAExitWork {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { context in
            #if canImport(Darwin)
            Unmanaged<TSAExitWork>.fromOpaque(context).takeRetainedValue().body()
            #else
            Unmanaged<TSAExitWork>.fromOpaque(context!).takeRetainedValue().body()
            #endif
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    /// Has the calling thread run `body` when it exits. Resolve something on the thread
    /// first, so that the package's key exists before this one.
    static func atExit(_ body: @escaping () -> Void) {
        pthread_setspecific(key, Unmanaged.passRetained(TSAExitWork(body)).toOpaque())
    }
}

/// A container held weakly, by closures that must not keep it alive.
private final class TSAWeak: @unchecked Sendable {
    // @unchecked: set once, before any thread reads it.
    weak var value: DependencyContainer?
    init(_ value: DependencyContainer) { self.value = value }
}

/// Whether this thread has no construction filed in its slot, if it has a slot.
private var tsaSlotIsEmpty: Bool {
    ThreadFrames.existingSlot.map { $0.innermostWord == nil && $0.plainDepth == 0 } ?? true
}

@Suite struct TSAThreadStateAttackTests {
    // MARK: - Thread exit

    /// A singleton built in an exit destructor, after the package freed the thread's slot:
    /// it is built once, through two blocks of plain frames, and the object it creates
    /// resolves from its container and holds it weakly (the container keeps the object).
    @Test func aSingletonBuiltAtThreadExitGivesItsObjectItsContainerWeakly() async {
        let builds = Counter()
        let seen = Collected<String>()
        let released = Liveness()
        do {
            let container = DependencyContainer()
            container.setValue("exit", forKey: "tsa.tag")
            container.setValue(builds, forKey: "tsa.builds")
            released.watch(container)
            // Only the test holds the container: the thread and its destructor hold it weakly.
            let weakly = TSAWeak(container)
            await onAThreadThatEnds { () -> Void in
                _ = weakly.value?[tsaCount: 2]()
                TSAExitWork.atExit {
                    guard let container = weakly.value else { return seen.append("container gone") }
                    let probe = container.tsaSingletonProbe()
                    seen.append("container:\(probe.$tag.container === container)")
                    seen.append("tag:\(probe.tag ?? "nil")")
                    seen.append("same:\(container.tsaSingletonProbe() === probe)")
                    seen.append("empty:\(tsaSlotIsEmpty)")
                }
            }
            #expect(released.isAlive)
        }
        #expect(seen.values == ["container:true", "tag:exit", "same:true", "empty:true"])
        #expect(builds.count == 1)
        // The container keeps the probe; the probe must hold the container weakly.
        #expect(!released.isAlive, "the probe built at thread exit holds its container strongly")
    }

    /// Threads released together end at once; the exit destructor of each builds, after
    /// the package freed its slot, the same singleton of one container: one build, one
    /// instance, no cycle reported for a thread that waits for another's construction, and
    /// every slot left empty.
    @Test func threadsEndingAtOnceBuildOneSingletonInTheirExitDestructors() async {
        let builds = Collected<Int>()
        let probes = Collected<[ObjectIdentifier]>()
        let empty = Collected<Bool>()
        let counts = Collected<Int>()
        #expect(await finishesWithoutHangingOffThePool {
            for _ in 0..<4 {
                let container = DependencyContainer()
                let (built, arrivals, seen) = (Counter(), Arrivals(), Collected<ObjectIdentifier>())
                container.setValue(built, forKey: "tsa.builds")
                container.setValue(arrivals, forKey: "tsa.arrivals")
                onThreadsReleasedTogetherAndJoined(8) { index in
                    counts.append(container[tsaCount: 10 + index]())
                    TSAExitWork.atExit {
                        arrivals.arrive()
                        seen.append(ObjectIdentifier(container.tsaSingletonProbe()))
                        counts.append(container[tsaCount: 65 + index]())
                        empty.append(tsaSlotIsEmpty)
                    }
                }
                builds.append(built.count)
                probes.append(seen.values)
            }
        })
        #expect(builds.values == [1, 1, 1, 1])
        #expect(probes.values.map(\.count) == [8, 8, 8, 8])
        #expect(probes.values.allSatisfy { Set($0).count == 1 }, "threads of one round got different instances")
        #expect(empty.values.count == 32 && empty.values.allSatisfy { $0 })
        let expected = (0..<4).flatMap { _ in (0..<8).flatMap { [10 + $0, 65 + $0] } }
        #expect(counts.values.sorted() == expected.sorted())
    }

    /// A cycle resolved in an exit destructor, after the package freed the thread's slot,
    /// stops with its chain, as anywhere else.
    @Test func aCycleResolvedAtThreadExitStopsWithItsChain() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("tsaCycleAtExit")
            let container = DependencyContainer()
            let thread = Thread {
                _ = container[tsaCount: 2]()
                TSAExitWork.atExit { _ = container.tsaCycleSingleton() }
            }
            thread.start()
            DispatchSemaphore(value: 0).wait()
        })
        #expect(cycle?.names == ["tsaCycleSingleton", "tsaCycleFactory", "tsaCycleSingleton"], "\(cycle?.description ?? "")")
    }

    // MARK: - The count of bound frames

    /// Threads released together each build a singleton of their own container, whose
    /// construction starts an immediate task: another owner on the same thread, which sees
    /// the construction only through the task-local chain (the count of bound frames rises
    /// and falls on every thread meanwhile). The probe the task creates must hold its
    /// container weakly, since the singleton keeps it.
    @Test func immediateTasksInSingletonsOnManyThreadsSeeTheConstructionTheyRunIn() async {
        let released = Collected<Liveness>()
        let results = Collected<String>()
        #expect(await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<20 {
                let container = DependencyContainer()
                container.setValue("t\(index)r\(round)", forKey: "tsa.tag")
                let liveness = Liveness()
                liveness.watch(container)
                released.append(liveness)
                let probe = container.tsaImmediateProbe()
                if probe?.$tag.container !== container || probe?.tag != "t\(index)r\(round)" {
                    results.append("t\(index)r\(round): the immediate task's probe took another container")
                }
            }
        })
        #expect(results.values.isEmpty, "\(results.values.prefix(3))")
        #expect(released.values.count == 160)
        let leaked = released.values.filter(\.isAlive).count
        #expect(leaked == 0, "\(leaked) containers kept alive by a probe an immediate task created in their singleton")
    }
}
