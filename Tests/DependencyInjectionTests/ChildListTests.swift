import Foundation
import Testing
import _DependencyInjectionShims
@testable import DependencyInjection

/// A container's children: each in a slot it keeps for its life, removed in any order,
/// the live ones listed exactly, and no more slots than the most children alive at once.
@Suite struct ChildListTests {
    /// Containers to file (their own lists keep no parent), and their entries.
    private func children(_ count: Int) -> [DependencyContainer] {
        (0..<count).map { _ in DependencyContainer(isMocked: true) }
    }

    private func entry(_ child: DependencyContainer) -> ChildList.Entry {
        ChildList.Entry(child, isScope: false)
    }

    private func ids(_ list: ChildList) -> Set<ObjectIdentifier> {
        Set(list.live.map { ObjectIdentifier($0.container) })
    }

    @Test func childrenRemovedInAnyOrderLeaveExactlyTheOthers() {
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2], [2, 0, 3, 1], [0, 3, 1, 2]] {
            let all = children(4)
            var list = ChildList()
            let slots = all.map { list.add(entry($0)) }
            #expect(Set(slots).count == 4)
            var left = Set(all.map { ObjectIdentifier($0) })
            for index in order {
                let removed = list.remove(at: slots[index])
                #expect(removed?.refers(to: all[index]) == true)
                left.remove(ObjectIdentifier(all[index]))
                #expect(ids(list) == left, "after removing \(index) of \(order)")
                #expect(list.count == left.count)
            }
            #expect(list.isEmpty)
        }
    }

    @Test func aFreedSlotIsReusedAndTheOthersKeepTheirs() {
        let all = children(5)
        var list = ChildList()
        var slots = all.prefix(3).map { list.add(entry($0)) }
        #expect(list.remove(at: slots[1]) != nil)
        slots[1] = list.add(entry(all[3]))
        #expect(slots[1] == 1, "the freed slot is reused")
        #expect(list.remove(at: slots[0]) != nil)
        #expect(list.remove(at: slots[2]) != nil)
        #expect(ids(list) == [ObjectIdentifier(all[3])])
        let last = list.add(entry(all[4]))
        #expect(Set([slots[1], last]).count == 2)
        #expect(list.remove(at: slots[1]) != nil)
        #expect(ids(list) == [ObjectIdentifier(all[4])])
        #expect(list.remove(at: last) != nil)
        #expect(list.isEmpty)
    }

    @Test func removingAFreeSlotAgainRemovesNothing() {
        let all = children(2)
        var list = ChildList()
        let first = list.add(entry(all[0]))
        _ = list.add(entry(all[1]))
        #expect(list.remove(at: first) != nil)
        #expect(list.remove(at: first) == nil)
        #expect(list.count == 1)
    }

    /// The list does not keep its children, and lists a child only while it is alive: one
    /// whose `deinit` has begun, and waits for the parent's lock to remove its entry, is
    /// left out. Listed children are held until the caller lets go.
    @Test func aChildWhoseDeinitHasBegunIsNotListed() {
        let parent = DependencyContainer(isMocked: true)
        let staying = DependencyContainer(parent: parent)
        let box = CLTChildBox(DependencyContainer(parent: parent))
        let address = Unmanaged.passUnretained(box.child!).toOpaque()
        weak let leaving = box.child
        // The child's last reference goes on another thread, whose `deinit` then waits for
        // the lock held here: its entry is still in the list, its count already at zero.
        // What the list gives is released after the lock, as every caller does.
        var dropped: (() -> Void)?
        let (entries, listed) = parent.withStateLock { state in
            dropped = onThread { box.child = nil }
            while !_di_is_deallocating(address) { sched_yield() }
            return (state.children.count, state.children.live)
        }
        #expect(entries == 2, "the entry waits for the lock to go")
        dropped?()
        #expect(listed.map { ObjectIdentifier($0.container) } == [ObjectIdentifier(staying)])
        #expect(leaving == nil)
        #expect(parent.withStateLock { $0.children.count } == 1)
    }

    /// A listed child is held by the list the caller took, not by the parent.
    @Test func aListedChildIsHeldByTheListNotTheParent() {
        let parent = DependencyContainer(isMocked: true)
        var child: DependencyContainer? = DependencyContainer(parent: parent)
        weak let gone = child
        var listed = parent.withStateLock { $0.liveChildren }
        child = nil
        #expect(gone != nil, "the list taken holds the child")
        listed.removeAll()
        #expect(gone == nil, "the parent does not")
        #expect(parent.withStateLock { $0.children.count } == 0)
    }

    /// Thousands of worlds made and dropped one after another, or a hundred at a time,
    /// leave the parent's list no longer than the most alive at once.
    @Test func slotsNeverOutnumberTheMostChildrenAliveAtOnce() {
        let parent = DependencyContainer(isMocked: true)
        for _ in 0..<2_000 {
            _ = DependencyContainer(parent: parent)
        }
        #expect(parent.withStateLock { $0.children.slotCount } <= 1)
        for _ in 0..<20 {
            var alive = (0..<100).map { _ in DependencyContainer(parent: parent) }
            #expect(parent.withStateLock { $0.children.count } == 100)
            // Dropped from the middle first, then the rest.
            alive.removeSubrange(30..<70)
            #expect(parent.withStateLock { $0.children.count } == 60)
            alive.removeAll()
        }
        #expect(parent.withStateLock { ($0.children.count, $0.children.slotCount) } == (0, 0))
    }

    /// A burst of children dropped in an order that leaves empty slots behind the last
    /// one: once the last child is gone, the parent keeps no slots for changes to scan.
    @Test func theLastChildOfABurstLeavesNoSlots() {
        let parent = DependencyContainer(isMocked: true)
        var burst = (0..<500).map { _ in DependencyContainer(parent: parent) }
        for index in stride(from: 0, to: 500, by: 2) { burst[index] = DependencyContainer() }
        #expect(parent.withStateLock { ($0.children.count, $0.children.slotCount) } == (250, 500))
        burst.removeAll()
        #expect(parent.withStateLock { ($0.children.count, $0.children.slotCount) } == (0, 0))
        let next = DependencyContainer(parent: parent)
        #expect(parent.withStateLock { $0.children.slotCount } == 1)
        withExtendedLifetime(next) {}
    }
}

/// Where a test keeps the child whose last reference another thread drops.
private final class CLTChildBox: @unchecked Sendable {
    // @unchecked: set here, then dropped on the other thread, never at once.
    var child: DependencyContainer?
    init(_ child: DependencyContainer) { self.child = child }
}
