@testable import DependencyInjection
import Foundation
import Testing

// A `@Dependency` property's first read of what its container keeps looks without the
// storage's lock: it marks the storage's word "looked at" and uses the container the word
// holds without a reference of its own. Whatever changes the state meanwhile (a switch of
// container, a reset, a set, another reader taking the frame) hands the read a reference,
// which the read lets go when its look ends. These pin that: the container lives while a
// read looks at it, goes when the look ends, and every reader sees the value the property
// keeps, with threads released together.

// MARK: - Fixtures

final class LFLNode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

/// A ``ConstructionGate`` that holds only the first getter that enters it.
final class LFLFirstEntryGate: @unchecked Sendable {
    // @unchecked: `used` is only touched while holding `lock`.
    let gate = ConstructionGate()
    private let lock = NSLock()
    private var used = false
    init() {}

    func enterAndWaitTheFirstTime() {
        let first = lock.withLock { () -> Bool in
            defer { used = true }
            return !used
        }
        if first { gate.enterAndWait() }
    }
}

extension DependencyContainer {
    /// A singleton whose getter, when the container stores a gate under "lfl.gate", waits
    /// in it the first time: a look at this container is held there until the test opens
    /// the gate.
    var lflGated: Provider<LFLNode> {
        (getValue(forKey: "lfl.gate") as LFLFirstEntryGate?)?.enterAndWaitTheFirstTime()
        return singleton { LFLNode("gated") }
    }

    /// A singleton whose deinit notes, in the `Collected<Bool>` stored under "lfl.marks",
    /// whether its thread was then in a look.
    var lflMarkWatcher: Provider<LFLMarkWatcher> {
        singleton { LFLMarkWatcher(self.getValue(forKey: "lfl.marks") ?? Collected()) }
    }

    /// A plain singleton, for the races.
    var lflRaced: Provider<LFLNode> {
        singleton { LFLNode("raced") }
    }
}

final class LFLMarkWatcher: Sendable {
    let marks: Collected<Bool>
    init(_ marks: Collected<Bool>) { self.marks = marks }
    deinit { marks.append(ThreadFrames.isReadingUnframed) }
}

final class LFLGatedHolder: @unchecked Sendable {
    @Dependency(\.lflGated) var node
    init() {}
}

final class LFLRacedHolder: @unchecked Sendable {
    @Dependency(\.lflRaced) var node
    init() {}
}

@Suite struct LockFreeLookTests {
    /// An object resolving from a new container, which keeps its singleton already, and a
    /// weak reference to the container: the object's property holds the only strong one.
    private func holderOfAContainerOfItsOwn<Holder>(
        gate: LFLFirstEntryGate? = nil, _ make: () -> Holder, building build: (DependencyContainer) -> Void
    ) -> (Holder, Released) {
        let container = DependencyContainer()
        build(container)
        if let gate { container.setValue(gate, forKey: "lfl.gate") }
        return (DependencyContainer.withMain(container, make), Released(container))
    }

    /// Reads `holder`'s property on a thread of its own while another thread, once the
    /// read's look waits in `gate`, runs `change` and opens the gate: whether both ended,
    /// and what the read served.
    private func read(
        _ holder: LFLGatedHolder, whileItsLookWaitsIn gate: ConstructionGate, _ change: @escaping @Sendable () -> Void
    ) async -> (ended: Bool, read: [LFLNode]) {
        let read = Collected<LFLNode>()
        let ended = await concurrentlyOffThePool(threads: 2) { thread in
            if thread == 0 {
                read.append(holder.node)
                return
            }
            gate.entered.wait()
            change()
            gate.open()
        }
        return (ended, read.values)
    }

    /// The property is switched to another container while a read looks at its first
    /// container, and the test lets go of that container: the read still uses it, so it
    /// lives until the look ends, and goes then, after the read's mark: what it kept is
    /// released on a thread in no look. The read then serves the new container's instance.
    /// Were the switch to release the container under the read, it would go while the
    /// read's getter runs on it, marked.
    @Test func aContainerSwitchedAwayWhileAReadLooksAtItLivesUntilTheLookEnds() async {
        let entry = LFLFirstEntryGate()
        let gate = entry.gate
        let other = DependencyContainer()
        let marks = Collected<Bool>()
        let (holder, old) = holderOfAContainerOfItsOwn(gate: entry, LFLGatedHolder.init) {
            $0.setValue(marks, forKey: "lfl.marks")
            _ = $0.lflMarkWatcher()
            _ = $0.lflGated()
        }
        let aliveWhileLooked = Collected<Bool>()
        let (ended, read) = await read(holder, whileItsLookWaitsIn: gate) {
            holder.$node.container = other
            aliveWhileLooked.append(old.object != nil)
        }
        #expect(ended)
        #expect(aliveWhileLooked.values == [true], "the container went while a read looked at it")
        #expect(old.object == nil, "the container outlived the look that it was switched away from")
        #expect(marks.values == [false], "what the container kept was released during the look")
        #expect(read.count == 1 && read.allSatisfy { $0 === other.lflGated() })
        #expect(holder.node === other.lflGated())
    }

    /// A reset while a read looks: the read does not publish what it found in the state
    /// before the reset, but resolves again, and the container, which the property still
    /// resolves from, stays the one object.
    @Test func aResetWhileAReadLooksLeavesTheContainerToTheProperty() async {
        let entry = LFLFirstEntryGate()
        let gate = entry.gate
        let (holder, container) = holderOfAContainerOfItsOwn(gate: entry, LFLGatedHolder.init) { _ = $0.lflGated() }
        let (ended, read) = await read(holder, whileItsLookWaitsIn: gate) { holder.$node.reset() }
        #expect(ended)
        #expect(container.object != nil, "the property's own container went")
        guard let kept = container.object as? DependencyContainer else { return }
        #expect(read.count == 1 && read.allSatisfy { $0 === kept.lflGated() })
        #expect(holder.$node.container === kept)
    }

    /// Rounds of threads released together on one new object: readers, a thread that
    /// switches the property to another container, one that resets it. Every read serves
    /// the first container's instance or the other's; once all have ended the property
    /// serves the other's, and the first container, which the object no longer resolves
    /// from, is gone while the object lives: no read kept a reference it was handed.
    @Test func readsRacingASwitchAndAResetServeOneOfTheContainersAndLeakNone() async {
        let other = DependencyContainer()
        let otherNode = other.lflRaced()
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            for round in 0..<150 {
                let (holder, old) = holderOfAContainerOfItsOwn(LFLRacedHolder.init) { _ = $0.lflRaced() }
                let oldNode = (old.object as? DependencyContainer)?.lflRaced()
                onThreadsReleasedTogetherAndJoined(5) { thread in
                    switch thread {
                    case 3: holder.$node.container = other
                    case 4: holder.$node.reset()
                    default:
                        let node = holder.node
                        if node !== oldNode && node !== otherNode { problems.append("round \(round): another instance") }
                    }
                }
                if holder.node !== otherNode { problems.append("round \(round): not the other container's instance") }
                if old.object != nil { problems.append("round \(round): the first container outlived the switch") }
                withExtendedLifetime(oldNode) {}
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
    }

    /// Threads released together read one new object's property: one of them looks, the
    /// others find the word looked at and take the property's frame, which hands the
    /// looking read its reference. Every reader sees one instance, and the container goes
    /// with the object.
    @Test func readersThatFindTheWordLookedAtShareOneInstanceAndLeakNoContainer() async {
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            for round in 0..<150 {
                let old: Released
                do {
                    let (holder, container) = holderOfAContainerOfItsOwn(LFLRacedHolder.init) { _ = $0.lflRaced() }
                    old = container
                    let nodes = Collected<LFLNode>()
                    onThreadsReleasedTogetherAndJoined(4) { _ in nodes.append(holder.node) }
                    if Set(nodes.values.map(ObjectIdentifier.init)).count != 1 {
                        problems.append("round \(round): more than one instance")
                    }
                }
                if old.object != nil { problems.append("round \(round): the container outlived its object") }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
    }
}
