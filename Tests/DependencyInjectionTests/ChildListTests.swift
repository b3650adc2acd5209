import Testing
@testable import DependencyInjection

/// A container's children: each in a slot it keeps for its life, removed in any order,
/// the live ones listed exactly, and no more slots than the most children alive at once.
@Suite struct ChildListTests {
    private func children(_ count: Int) -> [ContainerState.Child] {
        (0..<count).map { _ in ContainerState.Child(state: _Locked(ContainerState()), isScope: false) }
    }

    private func ids(_ list: ChildList) -> Set<ObjectIdentifier> {
        Set(list.live.map { ObjectIdentifier($0.state) })
    }

    @Test func childrenRemovedInAnyOrderLeaveExactlyTheOthers() {
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2], [2, 0, 3, 1], [0, 3, 1, 2]] {
            let all = children(4)
            var list = ChildList()
            let slots = all.map { list.add($0) }
            #expect(Set(slots).count == 4)
            var left = Set(all.map { ObjectIdentifier($0.state) })
            for index in order {
                let removed = list.remove(at: slots[index])
                #expect(removed.map { ObjectIdentifier($0.state) } == ObjectIdentifier(all[index].state))
                left.remove(ObjectIdentifier(all[index].state))
                #expect(ids(list) == left, "after removing \(index) of \(order)")
                #expect(list.count == left.count)
            }
            #expect(list.isEmpty)
        }
    }

    @Test func aFreedSlotIsReusedAndTheOthersKeepTheirs() {
        let all = children(5)
        var list = ChildList()
        var slots = all.prefix(3).map { list.add($0) }
        #expect(list.remove(at: slots[1]) != nil)
        slots[1] = list.add(all[3])
        #expect(slots[1] == 1, "the freed slot is reused")
        #expect(list.remove(at: slots[0]) != nil)
        #expect(list.remove(at: slots[2]) != nil)
        #expect(ids(list) == [ObjectIdentifier(all[3].state)])
        let last = list.add(all[4])
        #expect(Set([slots[1], last]).count == 2)
        #expect(list.remove(at: slots[1]) != nil)
        #expect(ids(list) == [ObjectIdentifier(all[4].state)])
        #expect(list.remove(at: last) != nil)
        #expect(list.isEmpty)
    }

    @Test func removingAFreeSlotAgainRemovesNothing() {
        let all = children(2)
        var list = ChildList()
        let first = list.add(all[0])
        _ = list.add(all[1])
        #expect(list.remove(at: first) != nil)
        #expect(list.remove(at: first) == nil)
        #expect(list.count == 1)
    }

    /// Thousands of worlds made and dropped one after another, or a hundred at a time,
    /// leave the parent's list no longer than the most alive at once.
    @Test func slotsNeverOutnumberTheMostChildrenAliveAtOnce() {
        let parent = DependencyContainer(isMocked: true)
        for _ in 0..<2_000 {
            _ = DependencyContainer(parent: parent)
        }
        #expect(parent.state.withLock { $0.children.slotCount } <= 1)
        for _ in 0..<20 {
            var alive = (0..<100).map { _ in DependencyContainer(parent: parent) }
            #expect(parent.state.withLock { $0.children.count } == 100)
            // Dropped from the middle first, then the rest.
            alive.removeSubrange(30..<70)
            #expect(parent.state.withLock { $0.children.count } == 60)
            alive.removeAll()
        }
        #expect(parent.state.withLock { ($0.children.count, $0.children.slotCount) } == (0, 0))
    }

    /// A burst of children dropped in an order that leaves empty slots behind the last
    /// one: once the last child is gone, the parent keeps no slots for changes to scan.
    @Test func theLastChildOfABurstLeavesNoSlots() {
        let parent = DependencyContainer(isMocked: true)
        var burst = (0..<500).map { _ in DependencyContainer(parent: parent) }
        for index in stride(from: 0, to: 500, by: 2) { burst[index] = DependencyContainer() }
        #expect(parent.state.withLock { ($0.children.count, $0.children.slotCount) } == (250, 500))
        burst.removeAll()
        #expect(parent.state.withLock { ($0.children.count, $0.children.slotCount) } == (0, 0))
        let next = DependencyContainer(parent: parent)
        #expect(parent.state.withLock { $0.children.slotCount } == 1)
        withExtendedLifetime(next) {}
    }
}
