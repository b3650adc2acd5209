import _DependencyInjectionShims

/// The children of one container, each in a numbered slot the child keeps for its life:
/// what a change in the container reaches, and what each child's `deinit` leaves.
///
/// A child is found by its slot, not hashed into a table: registering and removing a
/// child (every test's world, every request's scope) then costs a store and a load where
/// a table's insertion and removal cost about 400 instructions. A removed child's slot
/// is reused by the next child, so the list is as long as the most children alive at once
/// since the container last had none.
///
/// The list does not keep its children (each holds its parent): an entry is the child's
/// address, and ``live`` gives only the children whose `deinit` has not begun, each with
/// a reference of its own. A child's state lives in the child's object, so a change
/// reaches a child only while holding it.
///
/// ```swift
/// var children = ChildList()
/// let slot = children.add(.init(child, isScope: false))
/// children.live                    // [the child], held
/// let removed = children.remove(at: slot)   // released after unlocking
/// ```
struct ChildList {
    /// What the list keeps of a child.
    ///
    /// The child's address, with no count of any kind: the child removes its entry in its
    /// `deinit`, under its parent's lock, the lock under which the list is read, so an
    /// entry read there is a child whose memory is still there. An `unowned` reference
    /// would say the same with two atomic operations more per child, and a weak one would
    /// give every child a side table.
    struct Entry {
        /// The child's object, not kept.
        let address: UnsafeMutableRawPointer
        /// Whether the child is a scope, which shares its parent's instances.
        let isScope: Bool

        init(_ child: DependencyContainer, isScope: Bool) {
            self.address = Unmanaged.passUnretained(child).toOpaque()
            self.isScope = isScope
        }

        /// The child, held, unless its `deinit` has begun. Only under the parent's lock.
        var child: DependencyContainer? {
            guard let retained = _di_try_retain(address) else { return nil }
            return Unmanaged<DependencyContainer>.fromOpaque(retained).takeRetainedValue()
        }

        /// Whether this is the entry of `container`.
        func refers(to container: DependencyContainer) -> Bool {
            address == Unmanaged.passUnretained(container).toOpaque()
        }
    }

    /// Each slot's child, `nil` once it was removed.
    private var slots: [Entry?] = []
    /// The empty slots, the next to reuse last.
    private var free: [Int] = []

    /// How many children are alive.
    var count: Int { slots.count - free.count }

    var isEmpty: Bool { count == 0 }

    /// How many slots the list has, alive or free: never more than the most children
    /// alive at once since the last time there was none.
    var slotCount: Int { slots.count }

    /// Files `child`, and returns its slot, which ``remove(at:)`` takes.
    ///
    /// Consuming: a new container's record moves into the list, where a borrowed one was
    /// retained here and released by the caller, about 40 instructions per container.
    mutating func add(_ child: consuming Entry) -> Int {
        // Asked before taking one: `popLast()` on the empty list, the usual case, is a
        // mutation, which checks that the list's buffer is not shared.
        if free.isEmpty {
            slots.append(child)
            return slots.count - 1
        }
        let slot = free.removeLast()
        slots[slot] = child
        return slot
    }

    /// Removes the child in `slot`, and returns it for the caller to release after
    /// unlocking.
    ///
    /// The child is moved out of its slot, not copied: a copy retained its state here and
    /// released the slot's reference, about 40 instructions per container.
    mutating func remove(at slot: Int) -> Entry? {
        guard slots[slot] != nil else { return nil }
        let child: Entry?
        if slot == slots.count - 1 {
            // The newest child, as a test's world or a request's scope usually is: its
            // slot goes, and every slot left is still below the count.
            child = slots.removeLast()
        } else {
            child = slots[slot].take()
            free.append(slot)
        }
        if count == 0 && !slots.isEmpty {
            // The last child of a burst left: later changes need not scan its empty slots.
            slots.removeAll(keepingCapacity: true)
            free.removeAll(keepingCapacity: true)
        }
        return child
    }

    /// The children alive, in no particular order, each held: only under the parent's lock
    /// (``Entry``), and released after it.
    var live: [ContainerState.Child] {
        guard !isEmpty else { return [] }
        return slots.compactMap { entry in
            entry?.child.map { ContainerState.Child(container: $0, isScope: entry!.isScope) }
        }
    }
}
