import Foundation
import Testing
import _DependencyInjectionShims
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Attacks on a container that keeps its lock and state in its own object, listed by its
// parent by address and held by a change only while the change reaches it: the change then
// may hold a child's last reference, and release it itself. With the chain of nested
// children ending on the change's thread, the `deinit`s of a chain failed on a 512 KiB stack
// from 3,000 deep, before a child's parent came to be released one after another
// (``ParentReference``).

/// Where a test keeps a container whose last reference it drops later.
final class ISABox: @unchecked Sendable {
    // @unchecked: set, then dropped, by one thread at a time.
    var container: DependencyContainer?
    init(_ container: DependencyContainer?) { self.container = container }
}

/// Runs an action when it goes, records the thread it went on.
final class ISADeinitProbe: @unchecked Sendable {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}

final class ISAValue: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

extension DependencyContainer {
    var isaLeaf: Provider<ISAValue> { singleton { ISAValue("leaf") } }
    var isaOther: Provider<ISAValue> { singleton { ISAValue("other") } }
    /// A singleton built from `isaLeaf`, whose deinit runs the action stored as
    /// "isa.action" in the container that built it.
    var isaProbe: Provider<ISADeinitProbe> {
        singleton {
            _ = self.isaLeaf()
            let action: (@Sendable () -> Void)? = self.getValue(forKey: "isa.action")
            return ISADeinitProbe(action ?? {})
        }
    }
    /// The same, built from nothing a change touches.
    var isaIndependentProbe: Provider<ISADeinitProbe> {
        singleton {
            let action: (@Sendable () -> Void)? = self.getValue(forKey: "isa.action")
            return ISADeinitProbe(action ?? {})
        }
    }
}

/// The change a test makes on the parent while the child's lock is held.
enum ISAChange: String, CaseIterable, Sendable {
    case overrideUnrelated, overrideUsed, reset, tracer, resetKey

    func apply(to parent: DependencyContainer) {
        switch self {
        case .overrideUnrelated: parent.override(\.isaOther) { ISAValue("other2") }
        case .overrideUsed: parent.override(\.isaLeaf) { ISAValue("leaf2") }
        case .reset: parent.reset()
        case .tracer: parent.tracer = ResolutionTracer { _ in }
        case .resetKey: parent.reset(\.isaLeaf)
        }
    }
}

/// Whether `thread` ran a `deinit`: the thread's number.
final class ISAThreadRecord: @unchecked Sendable {
    private let lock = NSLock()
    private var threads: [String] = []
    func note() {
        let name = Thread.current.threadDictionary["isa.thread"] as? String ?? "other"
        lock.withLock { threads.append(name) }
    }
    var values: [String] { lock.withLock { threads } }
}

/// Holds `child`'s lock, lets `change` run on a thread of its own until it holds the child
/// (its count goes up), drops the test's reference, then unlocks: the change's reference is
/// the child's last. Returns what the change's thread was called.
func isaDropWhileChangeHolds(
    _ box: ISABox, stackSize: Int = 1 << 20, change: @escaping @Sendable () -> Void
) -> Bool {
    let child = box.container!
    let address = Unmanaged.passUnretained(child).toOpaque()
    // Reached by address, without holding the child: the test lets go of the child while
    // it holds the lock, and the change blocked there then holds the last reference.
    let lock = ContainerLock(child)
    let baseline = _di_retain_count(address)
    lock.lock()
    let finished = DispatchSemaphore(value: 0)
    let thread = Thread {
        Thread.current.threadDictionary["isa.thread"] = "change"
        change()
        finished.signal()
    }
    thread.name = "change"
    thread.stackSize = stackSize
    thread.start()
    // The change takes its reference under the parent's lock, then waits for the child's.
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(hangLimitSeconds) * 1_000_000_000
    var held = false
    while DispatchTime.now().uptimeNanoseconds < deadline {
        if _di_retain_count(address) > baseline { held = true; break }
        sched_yield()
    }
    _ = consume child
    box.container = nil
    lock.unlock()
    guard held else { return false }
    return finished.wait(timeout: .now() + .seconds(hangLimitSeconds)) == .success
}

/// Lets `change` on `parent` hold `child`'s last reference (``isaDropWhileChangeHolds(_:stackSize:change:)``),
/// off the cooperative pool: whether the child is gone when the change returns, with no hang.
func isaChange(_ change: ISAChange, on parent: DependencyContainer, releases child: consuming DependencyContainer) async -> Bool {
    let gone = Held(copy child)
    let box = ISABox(consume child)
    let ok = await finishesWithoutHangingOffThePool {
        #expect(isaDropWhileChangeHolds(box) { change.apply(to: parent) }, "the change hung")
    }
    #expect(ok, "hung")
    return gone.object == nil
}

/// Makes a chain of nested children of a root, keeps only the innermost, drops the rest
/// innermost-out, and lets a change at the root hold the innermost's last reference on a
/// thread with 512 KiB of stack: its release ends the whole chain there
/// (``ParentReference``).
func isaNestedChainReleasedByAChange(tracer: Bool) {
    let root = DependencyContainer()
    let depth = 20_000
    var chain = [root]
    for _ in 0..<depth { chain.append(DependencyContainer(parent: chain.last!)) }
    let box = ISABox(chain.removeLast())
    // Dropped innermost-out: each release leaves one container.
    while chain.count > 1 { chain.removeLast() }
    let ok = isaDropWhileChangeHolds(box, stackSize: 512 << 10) {
        if tracer { root.tracer = ResolutionTracer { _ in } } else { root.override(\.isaOther) { ISAValue("o") } }
    }
    precondition(ok)
    precondition(root.withStateLock { $0.children.count } == 0)
}

@Suite struct InlineStateAttackTests {
    /// A change holds a child's last reference: the child's singleton's deinit, run where
    /// the change lets go, resolves from the parent, overrides it, sets its tracer, makes
    /// and drops another child, resets a sibling and resolves from it. No hang, the child
    /// and its singleton are freed by the time the change returns.
    @Test(arguments: ISAChange.allCases)
    func aChangeReleasingAChildsLastReferenceRunsItsDeinitOutsideEveryLock(_ change: ISAChange) async {
        let parent = DependencyContainer()
        let sibling = DependencyContainer(parent: parent)
        _ = sibling.isaProbe()
        let record = ISAThreadRecord()
        let used = Collected<String>()
        let child = DependencyContainer(parent: parent)
        child.setValue({ @Sendable in
            record.note()
            used.append(parent.isaLeaf().name)
            parent.override(\.isaOther) { ISAValue("from deinit") }
            parent.tracer = nil
            let fresh = DependencyContainer(parent: parent)
            used.append(fresh.isaOther().name)
            sibling.reset()
            used.append(sibling.isaLeaf().name)
            _ = DependencyContainer(scopeOf: parent).isaLeaf()
        } as @Sendable () -> Void, forKey: "isa.action")
        _ = child.isaIndependentProbe()
        _ = child.isaProbe()
        #expect(await isaChange(change, on: parent, releases: consume child), "the child outlived the change that held it")
        #expect(record.values.count == 2, "each singleton's deinit ran once")
        #expect(record.values.allSatisfy { $0 == "change" }, "ran on \(record.values)")
        #expect(used.values.count == 6)
        #expect(parent.withStateLock { $0.children.count } == 1, "only the sibling is listed")
        withExtendedLifetime(sibling) {}
    }

    /// A change holds the innermost of a chain of nested children whose owner dropped it
    /// innermost-out (so that no release recurses through the chain): the change's
    /// release is then the last of every container of the chain, one `deinit` inside the
    /// next, on the change's thread (512 KiB of stack, as `ChildStateAttackTests` gives
    /// the thread that overrides at the root of 2,000 nested children).
    @Test func anOverrideHoldingTheInnermostOfANestedChainOnASmallStack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            isaNestedChainReleasedByAChange(tracer: false)
        }
        if let result, result.exitStatus != .exitCode(0) {
            print(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(2000))
        }
    }

    @Test func aTracerHoldingTheInnermostOfANestedChainOnASmallStack() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            isaNestedChainReleasedByAChange(tracer: true)
        }
        if let result, result.exitStatus != .exitCode(0) {
            print(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(2000))
        }
    }

    /// The same with no test hook: a thread of 512 KiB overrides the root of chains of
    /// 10,000 nested children over and over, while their owner drops each chain
    /// innermost-out. Whenever the override holds one of the chain as its owner lets go,
    /// its release is the last of that container and of every one above it.
    @Test func overridesAtTheRootWhileChainsGoInnermostOut() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("overrides at the root of chains that go")
            let root = DependencyContainer()
            let stop = Flag()
            let done = DispatchSemaphore(value: 0)
            let changer = Thread {
                var n = 0
                while !stop.isSet {
                    n += 1
                    let name = "o\(n)"
                    root.override(\.isaOther) { ISAValue(name) }
                }
                done.signal()
            }
            changer.stackSize = 512 << 10
            changer.start()
            for _ in 0..<30 {
                var chain = [root]
                for _ in 0..<10_000 { chain.append(DependencyContainer(parent: chain.last!)) }
                while chain.count > 1 { chain.removeLast() }
            }
            stop.set()
            done.wait()
        }
    }

    /// Worlds, scopes and scopes of scopes made, used and dropped on some threads, while
    /// others override and reset the parent and set its tracer: nothing hangs, every
    /// container and instance is freed, the parent lists no child, and a world made after
    /// the last change serves it.
    @Test func childrenGoWhileTheParentChanges() async {
        let parent = DependencyContainer()
        let kept = Collected<Held<DependencyContainer>>()
        let instances = Collected<Held<ISADeinitProbe>>()
        let deinits = Counter()
        parent.setValue({ @Sendable in
            deinits.increment()
            _ = parent.isaLeaf()
        } as @Sendable () -> Void, forKey: "isa.action")
        let rounds = 400
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for round in 0..<rounds {
                switch thread {
                case 0:
                    let world = DependencyContainer(parent: parent)
                    instances.append(Held(world.isaProbe()))
                    kept.append(Held(world))
                case 1:
                    let scope = DependencyContainer(scopeOf: parent)
                    let inner = DependencyContainer(scopeOf: scope)
                    inner.override(\.isaLeaf) { ISAValue("inner") }
                    instances.append(Held(inner.isaProbe()))
                    kept.append(Held(scope))
                    kept.append(Held(inner))
                case 2:
                    if round % 3 == 0 { parent.reset() } else { parent.override(\.isaLeaf) { ISAValue("leaf\(round)") } }
                    parent.setValue({ @Sendable in
                        deinits.increment()
                        _ = parent.isaLeaf()
                    } as @Sendable () -> Void, forKey: "isa.action")
                default:
                    parent.tracer = round % 2 == 0 ? ResolutionTracer { _ in } : nil
                }
            }
        }, "hung")
        parent.tracer = nil
        #expect(kept.values.allSatisfy { $0.object == nil }, "a child outlived every change")
        #expect(instances.values.allSatisfy { $0.object == nil }, "an instance outlived its world")
        #expect(parent.withStateLock { $0.children.count } == 0)
        parent.override(\.isaLeaf) { ISAValue("last") }
        #expect(DependencyContainer(parent: parent).isaLeaf().name == "last")
    }

    /// Children made and dropped at once (no use between), while the parent changes: a
    /// change may list a child whose initializer has not yet noted its slot, and hold its
    /// last reference. Under ThreadSanitizer: no race on the slot.
    @Test func childrenMadeAndDroppedAtOnceWhileTheParentChanges() async {
        let parent = DependencyContainer()
        _ = parent.isaLeaf()
        #expect(await concurrentlyOffThePool(threads: 3) { thread in
            for round in 0..<3_000 {
                switch thread {
                case 0: _ = DependencyContainer(parent: parent)
                case 1: _ = DependencyContainer(scopeOf: parent)
                default:
                    if round % 2 == 0 { parent.tracer = round % 4 == 0 ? ResolutionTracer { _ in } : nil }
                    else { parent.override(\.isaOther) { ISAValue("o") } }
                }
            }
        }, "hung")
        parent.tracer = nil
        #expect(parent.withStateLock { $0.children.count } == 0)
    }

    /// A child made in a deinit that a change's release runs, and dropped there, and a
    /// child dropped there whose own deinit drops another: all freed when the change
    /// returns, and the parent lists only what is alive.
    @Test(arguments: ISAChange.allCases)
    func childrenMadeAndDroppedInADeinitTheChangeRuns(_ change: ISAChange) async {
        let parent = DependencyContainer()
        let made = Collected<Held<DependencyContainer>>()
        let second = ISABox(DependencyContainer(parent: parent))
        made.append(Held(second.container!))
        second.container!.setValue({ @Sendable in
            let inner = DependencyContainer(scopeOf: parent)
            _ = inner.isaLeaf()
            made.append(Held(inner))
        } as @Sendable () -> Void, forKey: "isa.action")
        _ = second.container!.isaIndependentProbe()
        let child = DependencyContainer(parent: parent)
        child.setValue({ @Sendable in
            let fresh = DependencyContainer(parent: parent)
            made.append(Held(fresh))
            _ = fresh.isaIndependentProbe()
            // The other child's last reference: its deinit runs here, inside this one.
            second.container = nil
            change.apply(to: parent)
        } as @Sendable () -> Void, forKey: "isa.action")
        _ = child.isaIndependentProbe()
        #expect(await isaChange(change, on: parent, releases: consume child), "the child outlived the change that held it")
        #expect(made.values.count == 3)
        #expect(made.values.allSatisfy { $0.object == nil }, "a child made or dropped in the deinit lives")
        #expect(parent.withStateLock { $0.children.count } == 0)
    }
}

extension InlineStateAttackTests {
    /// The innermost of 100,000 nested children, dropped last, alone, on a thread of 512 KiB:
    /// the whole chain ends there, one `deinit` after another, where each ended inside the
    /// next and overflowed the stack.
    @Test func theInnermostOfAHundredThousandNestedChildrenGoesOnASmallStack() async {
        await #expect(processExitsWith: .success) {
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                let root = DependencyContainer()
                let box = ISABox(root)
                for _ in 0..<100_000 { box.container = DependencyContainer(parent: box.container!) }
                box.container = nil
                precondition(root.withStateLock { $0.children.count } == 0)
                done.signal()
            }
            thread.stackSize = 512 << 10
            thread.start()
            done.wait()
        }
    }

    /// Control: the same chain, dropped the same way on the same small stack, no change.
    @Test func controlTheChainDroppedInnermostOutWithoutAChange() async {
        await #expect(processExitsWith: .success) {
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                let root = DependencyContainer()
                var chain = [root]
                for _ in 0..<3_000 { chain.append(DependencyContainer(parent: chain.last!)) }
                while chain.count > 1 { chain.removeLast() }
                precondition(root.withStateLock { $0.children.count } == 0)
                done.signal()
            }
            thread.stackSize = 512 << 10
            thread.start()
            done.wait()
        }
    }
}
