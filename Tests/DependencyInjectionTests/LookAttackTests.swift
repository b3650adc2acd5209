@testable import DependencyInjection
import Foundation
import Testing

// Attacks on the lock-free look of a `@Dependency` property's first read (d776f27): the
// read marks the storage's word "looked at" without the lock, uses the container without
// a reference, runs the registration's getter (user code), and ends the look under the
// lock; a change meanwhile hands the read a reference (`PropertyState.lookersContainer`).
// The box a first read serves comes without a reference of the reader's.
//
// The getter's user code here changes the same property during its own look (switch,
// reset, set, re-read), makes objects, starts tasks; `deinit`s run when a container goes
// at the end of a look; threads look, switch, reset, set and read in constructions
// together; and readers use served boxes while the property is replaced under them.

// MARK: - Fixtures

final class LAKNode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
    /// Touches the object's memory: a freed node reads garbage or faults under a sanitizer.
    var isIntact: Bool { tag.hasPrefix("lak.") }
}

/// A weak reference, settable after the fact, for fixtures that must not keep objects.
final class LAKWeak<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: set once before any thread reads it.
    weak var object: Object?
    init(_ object: Object? = nil) { self.object = object }
}

/// An action a registration's getter runs on its first entry only, noting whether the
/// getter ran in a look (a first read without a frame).
final class LAKHook: @unchecked Sendable {
    // @unchecked: `action` is only touched while holding `lock`.
    private let lock = NSLock()
    private var action: ((DependencyContainer) -> Void)?
    let inLook = Collected<Bool>()
    init(_ action: @escaping (DependencyContainer) -> Void) { self.action = action }

    func fire(_ container: DependencyContainer) {
        let action = lock.withLock { () -> ((DependencyContainer) -> Void)? in
            defer { self.action = nil }
            return self.action
        }
        guard let action else { return }
        inLook.append(ThreadFrames.isReadingUnframed)
        action(container)
    }
}

/// Runs an action in a `deinit`.
final class LAKDeinitAction: @unchecked Sendable {
    // @unchecked: set before the object that runs it goes.
    var action: () -> Void = {}
    init() {}
}

final class LAKDeinitRunner: Sendable {
    let action: LAKDeinitAction
    init(_ action: LAKDeinitAction) { self.action = action }
    deinit { action.action() }
}

extension DependencyContainer {
    /// A singleton whose getter fires the stored "lak.hook" the first time.
    var lakHooked: Provider<LAKNode> {
        (getValue(forKey: "lak.hook") as LAKHook?)?.fire(self)
        return singleton { LAKNode("lak.hooked") }
    }

    /// A singleton whose getter spins for the stored "lak.spin" rounds: a wide look.
    var lakSlow: Provider<LAKNode> {
        lakSpin(getValue(forKey: "lak.spin") ?? 0)
        return singleton { LAKNode("lak.slow") }
    }

    /// A plain singleton.
    var lakPlain: Provider<LAKNode> {
        singleton { LAKNode("lak.plain") }
    }

    /// A singleton whose getter waits, when the container stores a gate, the first time.
    var lakGated: Provider<LAKNode> {
        (getValue(forKey: "lak.gate") as LFLFirstEntryGate?)?.enterAndWaitTheFirstTime()
        return singleton { LAKNode("lak.gated") }
    }

    /// A singleton that runs the stored "lak.deinit" when it goes.
    var lakDeinitRunner: Provider<LAKDeinitRunner> {
        singleton { LAKDeinitRunner(self.getValue(forKey: "lak.deinit") ?? LAKDeinitAction()) }
    }

    /// One singleton per argument.
    var lakFamily: ProviderFamily<Int, LAKNode> {
        singleton { (n: Int) in LAKNode("lak.family.\(n)") }
    }

    /// A singleton whose construction makes an object with a property: the object's
    /// property holds this container weakly.
    var lakWeakOwner: Provider<LAKWeakOwner> {
        singleton { LAKWeakOwner() }
    }

    /// A singleton whose construction blocks in the stored "lak.construction" gate and
    /// then reads the stored holder's property: a read in a frame.
    var lakReadingConstruction: Provider<LAKNode> {
        singleton {
            (self.getValue(forKey: "lak.construction") as ConstructionGate?)?.enterAndWait()
            let holder = (self.getValue(forKey: "lak.holder") as LAKWeak<LAKPlainHolder>?)?.object
            return LAKNode("lak.reader of \(holder?.node.tag ?? "none")")
        }
    }
}

final class LAKHookedHolder: @unchecked Sendable {
    @Dependency(\.lakHooked) var node
    init() {}
}

/// Busy work of `rounds` steps, kept by the optimizer: widens a window without sleeping.
@inline(never) @_optimize(none)
func lakSpin(_ rounds: Int) {
    var (x, i) = (0, 0)
    while i < rounds {
        x = x &* 31 &+ i
        i &+= 1
    }
    _ = x
}

final class LAKSlowHolder: @unchecked Sendable {
    @Dependency(\.lakSlow) var node
    init() {}
}

final class LAKPlainHolder: @unchecked Sendable {
    @Dependency(\.lakPlain) var node
    init() {}
}

final class LAKGatedHolder: @unchecked Sendable {
    @Dependency(\.lakGated) var node
    init() {}
}

final class LAKFamilyHolder: @unchecked Sendable {
    @Dependency var node: LAKNode
    init(_ n: Int) { _node = Dependency(\.lakFamily[n]) }
}

final class LAKWeakOwner: @unchecked Sendable {
    @Dependency(\.lakPlain) var node
    init() {}
}

/// An object made with `container` as `main`, and a weak reference to the container: the
/// object's property holds the only strong one once the caller's goes.
private func lakHolder<Holder>(
    _ make: () -> Holder, building build: (DependencyContainer) -> Void = { _ in }
) -> (Holder, Released) {
    let container = DependencyContainer()
    build(container)
    return (DependencyContainer.withMain(container, make), Released(container))
}

/// Makes the declarations' hint say "found it kept", so that the next first read looks.
private func lakWarmUp() {
    let container = DependencyContainer()
    _ = container.lakHooked()
    _ = container.lakPlain()
    _ = container.lakGated()
    DependencyContainer.withMain(container) {
        _ = LAKHookedHolder().node
        _ = LAKPlainHolder().node
        _ = LAKGatedHolder().node
        _ = LAKHookedHolder().node
        _ = LAKPlainHolder().node
        _ = LAKGatedHolder().node
    }
}

// MARK: - The getter changes its own property during its look

@Suite(.serialized) struct LookAttackTests {
    /// Reads a fresh object's property, whose container keeps the instance already, with
    /// `action` run by the getter, in its look, the first time; off the pool.
    private func readHooked(
        _ action: @escaping @Sendable (LAKHookedHolder, DependencyContainer, Released) -> Void
    ) async -> (holder: LAKHookedHolder, read: LAKNode?, old: Released, inLook: [Bool], oldNode: LAKNode)? {
        lakWarmUp()
        let holderRef = LAKWeak<LAKHookedHolder>()
        let releasedRef = LAKWeak<Released>()
        var hookKept: LAKHook?
        var oldNodeKept: LAKNode?
        let (holder, old) = lakHolder(LAKHookedHolder.init) { container in
            oldNodeKept = container.lakHooked()
            let hook = LAKHook { me in action(holderRef.object!, me, releasedRef.object!) }
            container.setValue(hook, forKey: "lak.hook")
            hookKept = hook
        }
        holderRef.object = holder
        releasedRef.object = old
        let read = Collected<LAKNode>()
        let ended = await finishesWithoutHangingOffThePool { read.append(holder.node) }
        guard ended, let hook = hookKept, let oldNode = oldNodeKept else {
            Issue.record("the read hung")
            return nil
        }
        return (holder, read.values.first, old, hook.inLook.values, oldNode)
    }

    @Test func aGetterThatSwitchesItsOwnPropertyKeepsUsingItsContainerUntilTheLookEnds() async {
        let other = DependencyContainer()
        let otherNode = other.lakHooked()
        let alive = Collected<Bool>()
        guard
            let r = await readHooked({ holder, me, old in
                holder.$node.container = other
                // Now only the reference handed to the look keeps `me`.
                alive.append(old.object != nil)
                _ = me.lakPlain()
                alive.append(old.object != nil)
            })
        else { return }
        #expect(r.inLook == [true], "the getter did not run in a look")
        #expect(alive.values == [true, true], "the container went while its look ran")
        #expect(r.read === otherNode)
        #expect(r.holder.node === otherNode)
        #expect(r.old.object == nil, "the container switched away from outlived the look")
    }

    @Test func aGetterThatSwitchesItsOwnPropertyTwiceAndBack() async {
        let a = DependencyContainer()
        let aNode = a.lakHooked()
        guard
            let r = await readHooked({ holder, me, _ in
                holder.$node.container = a
                holder.$node.container = DependencyContainer()
                holder.$node.container = me
                holder.$node.container = a
            })
        else { return }
        #expect(r.inLook == [true])
        #expect(r.read === aNode)
        #expect(r.old.object == nil)
    }

    @Test func aGetterThatResetsItsOwnPropertyAndReadsItAgain() async {
        let nested = Collected<LAKNode>()
        guard
            let r = await readHooked({ holder, _, _ in
                holder.$node.reset()
                nested.append(holder.node)
                holder.$node.reset()
            })
        else { return }
        #expect(r.inLook == [true])
        #expect(nested.values.count == 1 && nested.values.allSatisfy { $0 === r.oldNode })
        #expect(r.read === r.oldNode)
        #expect(r.holder.node === r.oldNode)
        #expect(r.old.object != nil, "the property's own container went")
        #expect(r.holder.$node.container === r.old.object)
    }

    @Test func aGetterThatSetsItsOwnProperty() async {
        let set = LAKNode("lak.set")
        guard let r = await readHooked({ holder, _, _ in holder.node = set }) else { return }
        #expect(r.inLook == [true])
        #expect(r.read === set, "the read served \(r.read?.tag ?? "nil"), not the value set meanwhile")
        #expect(r.holder.node === set)
    }

    @Test func aGetterThatReadsItsOwnPropertyAgain() async {
        let nested = Collected<LAKNode>()
        guard let r = await readHooked({ holder, _, _ in nested.append(holder.node) }) else { return }
        #expect(r.inLook == [true])
        #expect(nested.values.count == 1 && nested.values.allSatisfy { $0 === r.oldNode })
        #expect(r.read === r.oldNode)
    }

    @Test func aGetterThatSwitchesAndThenReadsItsOwnPropertyAgain() async {
        let other = DependencyContainer()
        let nested = Collected<LAKNode>()
        guard
            let r = await readHooked({ holder, _, _ in
                holder.$node.container = other
                nested.append(holder.node)  // builds other's singleton, inside the look
            })
        else { return }
        #expect(r.inLook == [true])
        #expect(nested.values.count == 1)
        #expect(r.read === nested.values.first)
        #expect(r.read === other.lakHooked())
        #expect(r.old.object == nil)
    }

    /// The getter makes an object (which resolves from the looked-at container), reads its
    /// property, and switches the property being looked at away: the new object keeps the
    /// container, which it resolves from.
    @Test func aGetterThatMakesAnObjectAndSwitchesItsOwnPropertyAway() async {
        let other = DependencyContainer()
        let made = Collected<LAKPlainHolder>()
        let madeFrom = Collected<Bool>()
        guard
            let r = await readHooked({ holder, me, _ in
                let object = LAKPlainHolder()
                madeFrom.append(object.$node.container === me)
                _ = object.node
                holder.$node.container = other
                made.append(object)
            })
        else { return }
        #expect(r.inLook == [true])
        #expect(madeFrom.values == [true])
        #expect(r.read === other.lakHooked())
        #expect(r.old.object != nil, "the object made in the look resolves from the container")
        _ = made.takeAll()
        #expect(r.old.object == nil, "the container outlived the object made in the look")
    }

    /// The getter starts a task that switches the property, reads it, and resets it, and
    /// waits for it: the task's changes hand the look its reference.
    @Test func aGetterThatWaitsForATaskThatChangesItsOwnProperty() async {
        let other = DependencyContainer()
        let inTask = Collected<LAKNode>()
        guard
            let r = await readHooked({ holder, _, old in
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    inTask.append(holder.node)  // the word is looked at: the frame's road
                    holder.$node.container = other
                    inTask.append(holder.node)
                    done.signal()
                }
                done.wait()
                inTask.append(LAKNode(old.object == nil ? "lak.gone" : "lak.alive"))
            })
        else { return }
        #expect(r.inLook == [true])
        #expect(inTask.values.map(\.tag) == ["lak.hooked", "lak.hooked", "lak.alive"])
        #expect(inTask.values.first === r.oldNode)
        #expect(r.read === other.lakHooked())
        #expect(r.old.object == nil)
    }

    /// Another thread reads the property while the getter waits, switches it twice,
    /// resets and sets it: the look, ended, serves what was set.
    @Test func aGetterThatWaitsForAThreadThatReadsSwitchesResetsAndSets() async {
        let set = LAKNode("lak.set")
        let seen = Collected<String>()
        guard
            let r = await readHooked({ holder, _, _ in
                let done = DispatchSemaphore(value: 0)
                Thread {
                    seen.append(holder.node.tag)
                    holder.$node.container = DependencyContainer()
                    holder.$node.reset()
                    seen.append(holder.node.tag)
                    holder.$node.container = DependencyContainer()
                    holder.node = set
                    done.signal()
                }.start()
                done.wait()
            })
        else { return }
        #expect(seen.values == ["lak.hooked", "lak.hooked"])
        #expect(r.read === set)
        #expect(r.old.object == nil)
    }

    /// The getter drops the last reference to the object being read but the reader's
    /// own (a temporary loaded from a shared variable): the object, its storage and the
    /// container the look uses must live until the read returns.
    @Test func aGetterThatDropsEveryOtherReferenceToTheObjectBeingRead() async {
        let keeper = LAKKeeper()
        let holderGone = Collected<Bool>()
        let weakHolder = LAKWeak<LAKHookedHolder>()
        let read = Collected<String>()
        lakWarmUp()
        let old: Released = {
            let (holder, old) = lakHolder(LAKHookedHolder.init) { container in
                _ = container.lakHooked()
                container.setValue(
                    LAKHook { _ in
                        keeper.take()
                        holderGone.append(weakHolder.object == nil)
                    }, forKey: "lak.hook")
            }
            keeper.put(holder)
            weakHolder.object = holder
            return old
        }()
        let ended = await finishesWithoutHangingOffThePool {
            read.append(keeper.holder!.node.tag)
            read.append(weakHolder.object == nil ? "gone" : "alive")
        }
        #expect(ended)
        #expect(holderGone.values == [false], "the object being read went during its read")
        #expect(read.values == ["lak.hooked", "gone"])
        #expect(old.object == nil)
    }

    // MARK: - deinits when a container goes at the end of a look

    /// The property is switched away in its look; the container then goes when the look
    /// ends, and a singleton it kept reads, in its `deinit`, the same property (now of the
    /// other container), switches it again, and reads it again.
    @Test func aDeinitRunAsTheLookedAtContainerGoesReadsAndSwitchesTheProperty() async {
        let other = DependencyContainer()
        let third = DependencyContainer()
        let otherNode = other.lakHooked()
        let thirdNode = third.lakHooked()
        let inDeinit = Collected<String>()
        let holderRef = LAKWeak<LAKHookedHolder>()
        lakWarmUp()
        var hookKept: LAKHook?
        let (holder, old) = lakHolder(LAKHookedHolder.init) { container in
            _ = container.lakHooked()
            let action = LAKDeinitAction()
            action.action = {
                guard let holder = holderRef.object else { return inDeinit.append("no holder") }
                inDeinit.append(ThreadFrames.isReadingUnframed ? "in a look" : "no look")
                inDeinit.append(holder.node === otherNode ? "other" : "another")
                holder.$node.container = third
                inDeinit.append(holder.node === thirdNode ? "third" : "another")
            }
            container.setValue(action, forKey: "lak.deinit")
            _ = container.lakDeinitRunner()
            let hook = LAKHook { _ in holderRef.object!.$node.container = other }
            container.setValue(hook, forKey: "lak.hook")
            hookKept = hook
        }
        holderRef.object = holder
        let read = Collected<LAKNode>()
        let ended = await finishesWithoutHangingOffThePool { read.append(holder.node) }
        #expect(ended)
        #expect(hookKept?.inLook.values == [true])
        #expect(old.object == nil)
        #expect(inDeinit.values == ["no look", "other", "third"])
        #expect(read.values.count == 1 && (read.values.first === otherNode || read.values.first === thirdNode))
        #expect(holder.node === thirdNode)
    }

    /// Same, and the `deinit` sets and resets the property and drops the other container.
    @Test func aDeinitRunAsTheLookedAtContainerGoesSetsAndResetsTheProperty() async {
        let set = LAKNode("lak.set")
        let holderRef = LAKWeak<LAKHookedHolder>()
        let otherRef = LAKWeak<DependencyContainer>()
        lakWarmUp()
        let (holder, old) = lakHolder(LAKHookedHolder.init) { container in
            _ = container.lakHooked()
            let action = LAKDeinitAction()
            action.action = {
                guard let holder = holderRef.object else { return }
                holder.$node.reset()
                holder.node = set
                _ = holder.node
                holder.$node.container = DependencyContainer()  // lets go of `other`
                holder.node = set
            }
            container.setValue(action, forKey: "lak.deinit")
            _ = container.lakDeinitRunner()
            container.setValue(
                LAKHook { _ in
                    let other = DependencyContainer()
                    otherRef.object = other
                    _ = other.lakHooked()
                    holderRef.object!.$node.container = other
                }, forKey: "lak.hook")
        }
        holderRef.object = holder
        let read = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool { read.append(holder.node.tag) }
        #expect(ended)
        #expect(old.object == nil)
        #expect(otherRef.object == nil, "the container switched to in the look, then away, leaked")
        #expect(read.values.count == 1 && read.values.allSatisfy { $0 == "lak.set" || $0 == "lak.hooked" })
        #expect(holder.node === set)
    }

    // MARK: - A look held in its getter while another thread changes the state

    /// Reads a fresh gated object's property on one thread while another, once the read's
    /// look waits in the getter, runs `change` and opens the gate.
    private func readGated(
        building build: @escaping (DependencyContainer) -> Void = { _ in },
        _ change: @escaping @Sendable (LAKGatedHolder, Released) -> Void
    ) async -> (holder: LAKGatedHolder, read: [LAKNode], old: Released, oldNode: LAKNode)? {
        lakWarmUp()
        let entry = LFLFirstEntryGate()
        var oldNodeKept: LAKNode?
        let (holder, old) = lakHolder(LAKGatedHolder.init) { container in
            oldNodeKept = container.lakGated()
            build(container)
            container.setValue(entry, forKey: "lak.gate")
        }
        let read = Collected<LAKNode>()
        let ended = await concurrentlyOffThePool(threads: 2) { thread in
            if thread == 0 {
                read.append(holder.node)
                return
            }
            entry.gate.entered.wait()
            #expect(ThreadFrames.isReadingUnframed == false)
            change(holder, old)
            entry.gate.open()
        }
        guard ended, let oldNode = oldNodeKept else {
            Issue.record("hung")
            return nil
        }
        return (holder, read.values, old, oldNode)
    }

    /// A read inside another singleton's construction (the frame's road) while a look waits.
    @Test func aReadInAConstructionWhileALookWaits() async {
        let fromConstruction = Collected<LAKNode>()
        guard
            let r = await readGated({ holder, old in
                guard let container = old.object as? DependencyContainer else { return }
                // The construction reads the gated property of `holder` in its frame.
                let made = DependencyContainer.withMain(container) { () -> LAKNode in
                    container.factory { holder.node }()
                }
                fromConstruction.append(made)
            })
        else { return }
        #expect(fromConstruction.values.count == 1 && fromConstruction.values.allSatisfy { $0 === r.oldNode })
        #expect(r.read.count == 1 && r.read.allSatisfy { $0 === r.oldNode })
        #expect(r.holder.node === r.oldNode)
    }

    /// A task started inside a construction (inheriting its frame) reads while a look waits.
    @Test func aTaskInheritingAConstructionsFrameReadsWhileALookWaits() async {
        let fromTask = Collected<LAKNode>()
        guard
            let r = await readGated({ holder, old in
                guard let container = old.object as? DependencyContainer else { return }
                let done = DispatchSemaphore(value: 0)
                _ = container.factory { () -> Int in
                    Task { fromTask.append(holder.node); done.signal() }
                    return 0
                }()
                done.wait()
            })
        else { return }
        #expect(fromTask.values.count == 1 && fromTask.values.allSatisfy { $0 === r.oldNode })
        #expect(r.read.count == 1 && r.read.allSatisfy { $0 === r.oldNode })
    }

    /// While a look waits: switch to a container that is dropped by a second switch, reset,
    /// set twice; the look serves the last set, and no container but the last leaks.
    @Test func manyChangesWhileALookWaits() async {
        let last = LAKNode("lak.last")
        let middle = LAKWeak<DependencyContainer>()
        guard
            let r = await readGated({ holder, _ in
                let m = DependencyContainer()
                middle.object = m
                holder.$node.container = m
                holder.$node.container = DependencyContainer()
                holder.$node.reset()
                holder.node = LAKNode("lak.first")
                holder.node = last
            })
        else { return }
        #expect(r.read.count == 1 && r.read.allSatisfy { $0 === last })
        #expect(middle.object == nil)
        #expect(r.old.object == nil)
    }

    /// A container whose look waits is shut down, and the property switched away: the
    /// instance the look finds goes with the box it found, outside the lock.
    @Test func aShutdownAndSwitchWhileALookWaits() async {
        let other = DependencyContainer()
        let otherNode = other.lakGated()
        guard
            let r = await readGated({ holder, old in
                (old.object as? DependencyContainer)?.shutdown()
                holder.$node.container = other
            })
        else { return }
        #expect(r.read.count == 1 && r.read.allSatisfy { $0 === otherNode })
        #expect(r.old.object == nil)
    }

    // MARK: - Races, many rounds

    /// Threads released together on one new object: readers, a switcher, a resetter, a
    /// setter, a reader inside a construction (frame's road), and a shutdown of the first
    /// container. Every read serves one of the values; afterwards every container, box and
    /// set value is freed with the object.
    @Test func readersSwitchersResettersSettersAndConstructionsRaceWithoutLeaks() async {
        lakWarmUp()
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            for round in 0..<120 {
                let otherRef: Released
                let oldRef: Released
                let setRef: Released
                let nodesRef = Collected<Released>()
                do {
                    let other = DependencyContainer()
                    let otherNode = other.lakPlain()
                    otherRef = Released(other)
                    let (holder, old) = lakHolder(LAKPlainHolder.init) { _ = $0.lakPlain() }
                    oldRef = old
                    let oldContainer = old.object as? DependencyContainer
                    let oldNode = oldContainer?.lakPlain()
                    nodesRef.append(Released(oldNode!))
                    oldContainer?.setValue(LAKWeak(holder), forKey: "lak.holder")
                    let set = LAKNode("lak.set")
                    setRef = Released(set)
                    let valid: [LAKNode] = [oldNode!, otherNode, set]
                    onThreadsReleasedTogetherAndJoined(7) { thread in
                        switch thread {
                        case 0: holder.$node.container = other
                        case 1: holder.$node.reset()
                        case 2: holder.node = set
                        case 3:
                            if let oldContainer {
                                let made = oldContainer.lakReadingConstruction()
                                if !made.isIntact { problems.append("round \(round): construction read garbage") }
                            }
                        case 4: oldContainer?.shutdown()
                        default:
                            let node = holder.node
                            if !node.isIntact || !valid.contains(where: { $0 === node }) && node.tag != "lak.plain" {
                                problems.append("round \(round): read \(node.tag)")
                            }
                        }
                    }
                    let final = holder.node
                    if !final.isIntact { problems.append("round \(round): final read garbage") }
                    withExtendedLifetime(oldContainer) {}
                }
                if oldRef.object != nil { problems.append("round \(round): the first container leaked") }
                if otherRef.object != nil { problems.append("round \(round): the other container leaked") }
                if setRef.object != nil { problems.append("round \(round): the value set leaked") }
                if nodesRef.values.contains(where: { $0.object != nil }) {
                    problems.append("round \(round): the first container's node leaked")
                }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(8))")
    }

    /// One object's property replaced over and over (set, reset, switched between two
    /// containers) while other threads read it and use what they read: every box a read
    /// serves must stay alive while the reader uses it.
    @Test func servedBoxesOutliveReplacementsWhileReadersUseThem() async {
        let a = DependencyContainer()
        let b = DependencyContainer()
        _ = a.lakPlain()
        _ = b.lakPlain()
        let holder = DependencyContainer.withMain(a) { LAKPlainHolder() }
        let broken = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(6) { thread in
                for i in 0..<3_000 {
                    switch thread {
                    case 0: holder.node = LAKNode("lak.set.\(i)")
                    case 1: holder.$node.reset()
                    case 2: holder.$node.container = i.isMultiple(of: 2) ? a : b
                    default:
                        let node = holder.node
                        if !node.isIntact { broken.append(node.tag) }
                    }
                }
            }
        }
        #expect(ended)
        #expect(broken.values.isEmpty, "\(broken.values.prefix(5))")
    }

    /// Fresh objects per round, read by threads released together, some through a family
    /// key path (kept key path), some plain, while the containers are switched: the
    /// reads share one instance per container and nothing outlives the objects.
    @Test func familyAndPlainPropertiesLookedAtTogetherLeakNothing() async {
        lakWarmUp()
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            for round in 0..<100 {
                let refs = Collected<Released>()
                do {
                    let container = DependencyContainer()
                    let other = DependencyContainer()
                    refs.append(Released(container))
                    refs.append(Released(other))
                    let expected = container.lakFamily(round)
                    let otherExpected = other.lakFamily(round)
                    _ = container.lakPlain()
                    let family = DependencyContainer.withMain(container) { LAKFamilyHolder(round) }
                    let plain = DependencyContainer.withMain(container) { LAKPlainHolder() }
                    onThreadsReleasedTogetherAndJoined(5) { thread in
                        switch thread {
                        case 0:
                            family.$node.container = other
                            plain.$node.container = other
                        default:
                            let node = family.node
                            if node !== expected && node !== otherExpected {
                                problems.append("round \(round): family read \(node.tag)")
                            }
                            if !plain.node.isIntact { problems.append("round \(round): plain read garbage") }
                        }
                    }
                    if family.node !== otherExpected { problems.append("round \(round): not switched") }
                }
                if refs.values.contains(where: { $0.object != nil }) {
                    problems.append("round \(round): a container leaked")
                }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(8))")
    }

    /// A property whose container is held weakly (its object made inside a singleton's
    /// construction) read by threads together with a switch and a reset, many rounds;
    /// the container goes with its singleton.
    @Test func weaklyHeldContainersRaceWithoutLeaks() async {
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            for round in 0..<100 {
                let ref: Released
                let otherRef: Released
                do {
                    let container = DependencyContainer()
                    ref = Released(container)
                    let other = DependencyContainer()
                    otherRef = Released(other)
                    let owner = container.lakWeakOwner()
                    let node = container.lakPlain()
                    let otherNode = other.lakPlain()
                    onThreadsReleasedTogetherAndJoined(4) { thread in
                        switch thread {
                        case 0: owner.$node.container = other
                        case 1: owner.$node.reset()
                        default:
                            let read = owner.node
                            if read !== node && read !== otherNode { problems.append("round \(round): \(read.tag)") }
                        }
                    }
                }
                if ref.object != nil { problems.append("round \(round): the container leaked") }
                if otherRef.object != nil { problems.append("round \(round): the other container leaked") }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(8))")
    }

    /// Reads of temporary objects (`Holder().node`): the box a first read serves has no
    /// reference of the reader's, and the temporary may go right after the read.
    @Test func readsOfTemporaryObjectsServeIntactValues() async {
        let container = DependencyContainer()
        _ = container.lakPlain()
        lakWarmUp()
        let broken = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(4) { _ in
                for _ in 0..<5_000 {
                    let tag = DependencyContainer.withMain(container) { LAKPlainHolder() }.node.tag
                    if tag != "lak.plain" { broken.append(tag) }
                    let node = LAKChosenHolder(container).node
                    if !node.isIntact { broken.append(node.tag) }
                }
            }
        }
        #expect(ended)
        #expect(broken.values.isEmpty, "\(broken.values.prefix(5))")
    }

    /// Two threads meet at a barrier on each of thousands of fresh objects: one reads (a
    /// look, the object being fresh), the other switches, resets, sets, or reads in a
    /// construction (the frame's road) at the same moment. The first container must go with
    /// the object, and every read serve a live value of the choices.
    @Test func aLookAgainstEachChangeThousandsOfTimes() async {
        lakWarmUp()
        let other = DependencyContainer()
        let otherNode = other.lakPlain()
        let problems = Collected<String>()
        let slot = LAKSlot()
        let barrier = LAKBarrier(parties: 2)
        let rounds = 6_000
        let ended = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(2) { thread in
                for round in 0..<rounds {
                    if thread == 0 {
                        let container = DependencyContainer()
                        let node = container.lakPlain()
                        let holder = DependencyContainer.withMain(container) { LAKPlainHolder() }
                        container.setValue(LAKWeak(holder), forKey: "lak.holder")
                        let set = LAKNode("lak.set")
                        slot.put(holder, node, set, Released(container), Released(set))
                    }
                    barrier.arrive()
                    do {
                    let (holder, node, set, _, _) = slot.take()
                    if thread == 0 {
                        let read = holder.node
                        if read !== node && read !== otherNode && read !== set {
                            problems.append("round \(round): read \(read.isIntact ? read.tag : "garbage")")
                        }
                    } else {
                        switch round % 5 {
                        case 0: holder.$node.container = other
                        case 1: holder.$node.reset()
                        case 2: holder.node = set
                        case 3:
                            let made = holder.$node.container.lakReadingConstruction()
                            if !made.isIntact { problems.append("round \(round): construction garbage") }
                        default: _ = holder.node
                        }
                    }
                    }
                    barrier.arrive()
                    if thread == 0 {
                        let (_, _, _, container, setRef) = slot.clear()
                        if container.object != nil { problems.append("round \(round): container leaked (\(round % 5))") }
                        if setRef.object != nil { problems.append("round \(round): set value leaked") }
                    }
                    barrier.arrive()
                }
            }
        }
        #expect(ended)
        let found = problems.values
        #expect(found.isEmpty, "\(found.count): \(found.prefix(8))")
    }

    /// As above, with a getter that spins, so that the change lands inside the look, and
    /// the changing thread spinning a varying while first, so that it lands all along it.
    @Test func aWideLookAgainstEachChangeThousandsOfTimes() async {
        let warm = DependencyContainer()
        _ = warm.lakSlow()
        DependencyContainer.withMain(warm) { _ = LAKSlowHolder().node; _ = LAKSlowHolder().node }
        let other = DependencyContainer()
        let otherNode = other.lakSlow()
        let problems = Collected<String>()
        let slot = LAKSlowSlot()
        let barrier = LAKBarrier(parties: 2)
        let ended = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(2) { thread in
                for round in 0..<8_000 {
                    if thread == 0 {
                        let container = DependencyContainer()
                        container.setValue(20_000, forKey: "lak.spin")
                        let node = container.lakSlow()
                        let holder = DependencyContainer.withMain(container) { LAKSlowHolder() }
                        let set = LAKNode("lak.set")
                        slot.put(holder, node, set, Released(container), Released(set))
                    }
                    barrier.arrive()
                    do {
                        let (holder, node, set) = slot.take()
                        if thread == 0 {
                            let read = holder.node
                            // Case 4 may serve the passing container's own instance.
                            let passing = round % 6 == 4 && read.isIntact && read.tag == "lak.slow"
                            if read !== node && read !== otherNode && read !== set && !passing {
                                problems.append("round \(round): read \(read.isIntact ? read.tag : "garbage")")
                            }
                        } else {
                            lakSpin((round / 6) % 50 * 500)
                            switch round % 6 {
                            case 0: holder.$node.container = other
                            case 1: holder.$node.reset()
                            case 2: holder.node = set
                            case 3: _ = holder.node
                            case 4:
                                holder.$node.container = DependencyContainer()
                                holder.$node.container = other
                            default:
                                let container = holder.$node.container
                                _ = container.factory { holder.node }()
                            }
                        }
                    }
                    barrier.arrive()
                    if thread == 0 {
                        let (container, setRef) = slot.clear()
                        if container.object != nil { problems.append("round \(round): container leaked (\(round % 6))") }
                        if setRef.object != nil { problems.append("round \(round): set value leaked") }
                    }
                    barrier.arrive()
                }
            }
        }
        #expect(ended)
        let found = problems.values
        #expect(found.isEmpty, "\(found.count): \(found.prefix(8))")
    }
}

final class LAKChosenHolder: @unchecked Sendable {
    @Dependency var node: LAKNode
    init(_ container: DependencyContainer) { _node = Dependency(\.lakPlain, container: container) }
}

/// What the barrier test's threads share for a round.
final class LAKSlot: @unchecked Sendable {
    // @unchecked: only touched while holding `lock`.
    private let lock = NSLock()
    private var holder: LAKPlainHolder?
    private var node: LAKNode?
    private var set: LAKNode?
    private var container: Released?
    private var setRef: Released?
    init() {}

    func put(_ holder: LAKPlainHolder, _ node: LAKNode, _ set: LAKNode, _ container: Released, _ setRef: Released) {
        lock.withLock { (self.holder, self.node, self.set, self.container, self.setRef) = (holder, node, set, container, setRef) }
    }

    func take() -> (LAKPlainHolder, LAKNode, LAKNode, Released, Released) {
        lock.withLock { (holder!, node!, set!, container!, setRef!) }
    }

    /// Drops the round's objects (outside the lock) and returns the weak references.
    func clear() -> (Void, Void, Void, Released, Released) {
        let dropped = lock.withLock { () -> (LAKPlainHolder?, LAKNode?, LAKNode?) in
            defer { (holder, node, set) = (nil, nil, nil) }
            return (holder, node, set)
        }
        withExtendedLifetime(dropped) {}
        return lock.withLock { ((), (), (), container!, setRef!) }
    }
}

/// A reusable barrier for a fixed number of threads.
final class LAKBarrier: @unchecked Sendable {
    // @unchecked: only touched while holding `condition`.
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var generation = 0
    init(parties: Int) { self.parties = parties }

    func arrive() {
        condition.lock()
        let mine = generation
        arrived += 1
        if arrived == parties {
            arrived = 0
            generation += 1
            condition.broadcast()
        } else {
            while generation == mine { condition.wait() }
        }
        condition.unlock()
    }
}

/// What the wide barrier test's threads share for a round.
final class LAKSlowSlot: @unchecked Sendable {
    // @unchecked: only touched while holding `lock`.
    private let lock = NSLock()
    private var objects: (LAKSlowHolder, LAKNode, LAKNode)?
    private var refs: (Released, Released)?
    init() {}

    func put(_ holder: LAKSlowHolder, _ node: LAKNode, _ set: LAKNode, _ container: Released, _ setRef: Released) {
        lock.withLock { (objects, refs) = ((holder, node, set), (container, setRef)) }
    }

    func take() -> (LAKSlowHolder, LAKNode, LAKNode) { lock.withLock { objects! } }

    /// Drops the round's objects (outside the lock) and returns the weak references.
    func clear() -> (Released, Released) {
        let dropped = lock.withLock { () -> (LAKSlowHolder, LAKNode, LAKNode)? in
            defer { objects = nil }
            return objects
        }
        withExtendedLifetime(dropped) {}
        return lock.withLock { refs! }
    }
}

/// Holds an object another thread's getter lets go of.
final class LAKKeeper: @unchecked Sendable {
    // @unchecked: only touched while holding `lock`.
    private let lock = NSLock()
    private var stored: LAKHookedHolder?
    init() {}
    var holder: LAKHookedHolder? { lock.withLock { stored } }
    func put(_ holder: LAKHookedHolder) { lock.withLock { stored = holder } }
    /// Lets go of the object, outside the lock.
    func take() {
        let taken = lock.withLock { () -> LAKHookedHolder? in
            defer { stored = nil }
            return stored
        }
        withExtendedLifetime(taken) {}
    }
}
