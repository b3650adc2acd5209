import Foundation
import Testing
import _DependencyInjectionShims
@testable import DependencyInjection

// Attacks on a child's reference to its parent (``ParentReference``): released after the
// child's state, and, when it is the parent's last, one container after another through a
// per-thread list.

/// Failures and deinits seen by probes, from any thread.
final class PRARecord: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    private var deinits = 0
    func fail(_ what: String) { lock.withLock { if failures.count < 20 { failures.append(what) } } }
    func ranDeinit() { lock.withLock { deinits += 1 } }
    var failed: [String] { lock.withLock { failures } }
    var deinitCount: Int { lock.withLock { deinits } }
}

/// An instance kept by a container, holding that container's parent and the root weakly:
/// its deinit checks both are alive, resolves from them, and reads `parent` of the parent.
final class PRAProbe: @unchecked Sendable {
    weak var parent: DependencyContainer?
    weak var root: DependencyContainer?
    let depth: Int
    let record: PRARecord
    let extra: (@Sendable () -> Void)?
    init(parent: DependencyContainer?, root: DependencyContainer?, depth: Int, record: PRARecord,
         extra: (@Sendable () -> Void)?) {
        self.parent = parent
        self.root = root
        self.depth = depth
        self.record = record
        self.extra = extra
    }
    deinit {
        record.ranDeinit()
        guard let parent else { record.fail("depth \(depth): parent gone"); return }
        guard let root else { record.fail("depth \(depth): root gone"); return }
        if parent.praName().isEmpty { record.fail("depth \(depth): empty name") }
        let value: Int? = parent.getValue(forKey: "pra.depth")
        if value != depth - 1 { record.fail("depth \(depth): parent value \(String(describing: value))") }
        if depth > 1, parent.parent == nil { record.fail("depth \(depth): parent's parent nil") }
        _ = root.praName()
        extra?()
    }
}

extension DependencyContainer {
    var praName: Provider<String> { factory { "n" } }
    var praRecord: PRARecord? { getValue(forKey: "pra.record") }
    /// Kept by a world (a singleton) or by a scope (scoped).
    var praWorldProbe: Provider<PRAProbe> {
        singleton {
            PRAProbe(parent: self.parent, root: self.getValue(forKey: "pra.root").map { (h: Held<DependencyContainer>) in h.object } ?? nil,
                     depth: self.getValue(forKey: "pra.depth") ?? -1, record: self.praRecord!,
                     extra: self.getValue(forKey: "pra.extra.\(self.getValue(forKey: "pra.depth") ?? -1)"))
        }
    }
    var praScopeProbe: Provider<PRAProbe> {
        scoped {
            PRAProbe(parent: self.parent, root: self.getValue(forKey: "pra.root").map { (h: Held<DependencyContainer>) in h.object } ?? nil,
                     depth: self.getValue(forKey: "pra.depth") ?? -1, record: self.praRecord!,
                     extra: self.getValue(forKey: "pra.extra.\(self.getValue(forKey: "pra.depth") ?? -1)"))
        }
    }
}

extension ISAChange: Codable {}

enum PRAShape: String, CaseIterable, Sendable, Codable {
    case worlds, scopes, mixed
    func isScope(_ depth: Int) -> Bool {
        switch self {
        case .worlds: false
        case .scopes: true
        case .mixed: depth % 2 == 0
        }
    }
}

/// A chain of `depth` nested children of `root` of `shape`, each with a probe: the innermost.
/// The root keeps depth 0; every link sets its own depth (values are looked up through
/// parents, so each link must set its own).
func praChain(_ shape: PRAShape, depth: Int, root: DependencyContainer, record: PRARecord, probes: Bool = true,
              extra: ((Int) -> (@Sendable () -> Void)?)? = nil) -> DependencyContainer {
    root.setValue(0, forKey: "pra.depth")
    root.setValue(record, forKey: "pra.record")
    root.setValue(Held(root), forKey: "pra.root")
    var current = root
    for level in 1...depth {
        let next = shape.isScope(level) ? DependencyContainer(scopeOf: current) : DependencyContainer(parent: current)
        next.setValue(level, forKey: "pra.depth")
        if let action = extra?(level) { next.setValue(action, forKey: "pra.extra.\(level)") }
        if probes {
            if shape.isScope(level) { _ = next.praScopeProbe() } else { _ = next.praWorldProbe() }
        }
        current = next
    }
    return current
}

final class PRAWeak: @unchecked Sendable {
    weak var object: DependencyContainer?
}

/// Notes levels 2 and 3 of a 6 deep chain, from its innermost.
func praFill(_ two: PRAWeak, _ three: PRAWeak, from six: DependencyContainer) {
    three.object = six.parent!.parent!.parent!
    two.object = three.object!.parent!
}

/// Runs `body` on a thread of `stackSize`, waits for it.
func praOnThread(stackSize: Int, _ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
}

@Suite struct ParentReleaseAttackTests {
    /// Every link of a chain of worlds, scopes, or both, keeps an instance whose deinit
    /// reads its container's parent (held weakly), resolves from it and from the root, and
    /// reads the parent's `parent`: dropped at the innermost on a 512 KiB thread, every
    /// deinit runs and sees its ancestors.
    @Test(arguments: PRAShape.allCases)
    func instancesOfEveryLinkSeeTheirAncestors(_ shape: PRAShape) async {
        let record = PRARecord()
        let root = DependencyContainer()
        let box = ISABox(praChain(shape, depth: 2_000, root: root, record: record))
        let held = Held(box.container!)
        #expect(await finishesWithoutHangingOffThePool {
            praOnThread(stackSize: 512 << 10) { box.container = nil }
        })
        #expect(held.object == nil)
        #expect(record.failed == [], "\(record.failed)")
        #expect(record.deinitCount == 2_000)
        #expect(root.withStateLock { $0.children.count } == 0)
    }

    /// A chain's teardown starts another's: an instance in a middle link of chain A drops
    /// the innermost of chain B (its only reference). Chain B should be freed, every one of
    /// its instances' deinits run, by the time that drop returns; its innermost is, and the
    /// rest goes before A's teardown ends (a known issue).
    @Test func aChainDroppedInsideAnotherChainsTeardownIsFreedWhereItIsDropped() async {
        let record = PRARecord()
        let rootB = DependencyContainer()
        let boxB = ISABox(praChain(.worlds, depth: 3, root: rootB, record: record))
        let heldB = Held(boxB.container!)
        let heldMidB = Held(boxB.container!.parent!)
        let seen = Collected<String>()
        let rootA = DependencyContainer()
        let boxA = ISABox(praChain(.worlds, depth: 3, root: rootA, record: record, extra: { level in
            guard level == 2 else { return nil }
            return { @Sendable in
                let before = record.deinitCount
                boxB.container = nil
                seen.append("innermost gone: \(heldB.object == nil)")
                seen.append("middle gone: \(heldMidB.object == nil)")
                seen.append("B deinits ran: \(record.deinitCount - before)")
            }
        }))
        boxA.container = nil
        // Known issue: chain B's release of its parents joins the release under way on this
        // thread, which goes on with them after A's next link; they are gone by the time
        // `boxA.container = nil` returns, not where B is dropped (CHANGELOG, Known issues).
        withKnownIssue("a chain dropped inside another chain's teardown ends with it, not where it is dropped") {
            #expect(seen.values == ["innermost gone: true", "middle gone: true", "B deinits ran: 3"])
        }
        #expect(seen.values.first == "innermost gone: true")
        #expect(record.failed == [], "\(record.failed)")
        #expect(heldMidB.object == nil)
        #expect(rootB.withStateLock { $0.children.count } == 0)
    }

    /// The same nested, on a small stack and deep: every link of chain A (1,000) drops a
    /// chain of its own (3 deep) in an instance's deinit. Everything ends, every probe sees
    /// its ancestors, nothing leaks.
    @Test func everyLinkDropsAChainOfItsOwn() async {
        let record = PRARecord()
        let rootB = DependencyContainer()
        let kept = Collected<Held<DependencyContainer>>()
        let rootA = DependencyContainer()
        let boxes = (0...1_000).map { _ in ISABox(nil) }
        for box in boxes {
            box.container = praChain(.mixed, depth: 3, root: DependencyContainer(parent: rootB), record: record)
            kept.append(Held(box.container!))
            kept.append(Held(box.container!.parent!.parent!.parent!))
        }
        let boxA = ISABox(praChain(.mixed, depth: 1_000, root: rootA, record: record, extra: { level in
            let box = boxes[level]
            return { @Sendable in box.container = nil }
        }))
        #expect(await finishesWithoutHangingOffThePool {
            praOnThread(stackSize: 512 << 10) { boxA.container = nil }
        })
        #expect(record.failed == [], "\(record.failed)")
        #expect(record.deinitCount == 1_000 + 3 * 1_000)
        #expect(kept.values.dropFirst(2).allSatisfy { $0.object == nil })
        #expect(rootB.withStateLock { $0.children.count } == 1)  // boxes[0] only
        #expect(rootA.withStateLock { $0.children.count } == 0)
    }

    /// An instance's deinit in a middle link makes new children of its parent's parent
    /// (and of its parent), keeps one, drops the other: the chain still ends, the kept
    /// child's ancestors stay, and go with it.
    @Test func aDeinitMakesChildrenOfTheDyingParentsParent() async {
        let record = PRARecord()
        let root = DependencyContainer()
        let madeKept = ISABox(nil)
        let made = Collected<Held<DependencyContainer>>()
        let two = PRAWeak(), three = PRAWeak()
        let box = ISABox(praChain(.mixed, depth: 6, root: root, record: record, extra: { level in
            guard level == 4 else { return nil }
            return { @Sendable in
                guard let g = two.object, let p = three.object else { record.fail("ancestors gone"); return }
                let keptChild = DependencyContainer(parent: g)
                keptChild.setValue(3, forKey: "pra.depth")
                _ = keptChild.praWorldProbe()
                madeKept.container = keptChild
                made.append(Held(keptChild))
                let dropped = DependencyContainer(scopeOf: p)
                dropped.setValue(4, forKey: "pra.depth")
                _ = dropped.praScopeProbe()
                made.append(Held(dropped))
            }
        }))
        praFill(two, three, from: box.container!)
        box.container = nil
        #expect(record.failed == [], "\(record.failed)")
        #expect(three.object == nil, "level 3 outlived the chain")
        #expect(two.object != nil, "level 2 went while a child made in a deinit keeps it")
        #expect(made.values.count == 2)
        #expect(made.values.last?.object == nil)
        #expect(two.object.map { c in c.withStateLock { $0.children.count } } == 1)
        madeKept.container = nil
        #expect(two.object == nil)
        #expect(made.values.allSatisfy { $0.object == nil })
        #expect(record.failed == [], "\(record.failed)")
        #expect(record.deinitCount == 8)
        #expect(root.withStateLock { $0.children.count } == 0)
    }

    /// Two threads drop the only two children of a parent at the top of a 20,000 deep
    /// chain, released together behind a barrier, on 512 KiB stacks, many times: both see
    /// the parent's count at 2, or one sees 1; either way the chain ends, once, with no
    /// overflow, leak or hang.
    @Test func twoThreadsDropSiblingsOfAChainsInnermost() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("siblings")
            let root = DependencyContainer()
            for _ in 0..<10 {
                let record = PRARecord()
                let inner = praChain(.mixed, depth: 2_000, root: DependencyContainer(parent: root), record: record, probes: false)
                let boxes = [ISABox(DependencyContainer(parent: inner)), ISABox(DependencyContainer(scopeOf: inner))]
                let heldInner = Held(inner)
                _ = consume inner
                let arrivals = Arrivals()
                let done = DispatchSemaphore(value: 0)
                for index in 0..<2 {
                    let thread = Thread {
                        arrivals.arrive()
                        arrivals.wait(for: 2)
                        boxes[index].container = nil
                        done.signal()
                    }
                    thread.stackSize = 512 << 10
                    thread.start()
                }
                done.wait()
                done.wait()
                precondition(heldInner.object == nil, "leak")
                precondition(root.withStateLock { $0.children.count } == 0)
            }
        }
    }

    /// Tasks and threads that each hold a child of a chain's innermost (or the innermost)
    /// end while the test drops the chain, released together: the last one to let go ends
    /// the chain, every probe sees its ancestors, nothing leaks.
    @Test func tasksAndThreadsHoldingTheInnermostEndWithTheChain() async {
        for _ in 0..<5 {
            let record = PRARecord()
            let root = DependencyContainer()
            let box = ISABox(praChain(.mixed, depth: 2_000, root: root, record: record))
            let held = Held(box.container!)
            let gate = AsyncLatch()
            let arrivals = Arrivals()
            var tasks: [Task<Void, Never>] = []
            for index in 0..<4 {
                let child = index % 2 == 0 ? DependencyContainer(parent: box.container!) : DependencyContainer(scopeOf: box.container!)
                child.setValue(2_001, forKey: "pra.depth")
                tasks.append(Task.detached { [child] in
                    await gate.wait()
                    if index % 2 == 0 { _ = child.praWorldProbe() } else { _ = child.praScopeProbe() }
                })
            }
            let threadBox = ISABox(DependencyContainer(parent: box.container!))
            threadBox.container!.setValue(2_001, forKey: "pra.depth")
            _ = threadBox.container!.praWorldProbe()
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                arrivals.arrive()
                arrivals.wait(for: 2)
                threadBox.container = nil
                done.signal()
            }
            thread.stackSize = 512 << 10
            thread.start()
            gate.open()
            arrivals.arrive()
            arrivals.wait(for: 2)
            box.container = nil
            for task in tasks { await task.value }
            tasks = []
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                Thread { done.wait(); c.resume() }.start()
            }
            #expect(await eventually { held.object == nil })
            #expect(record.failed == [], "\(record.failed)")
            #expect(record.deinitCount == 2_005)
            #expect(root.withStateLock { $0.children.count } == 0)
        }
    }
}
