/// The built singletons of one container: an open-addressing hash table, read on every
/// cached resolution.
///
/// `Dictionary` works here but spends most of a cached resolution probing generically and
/// retaining its buffers. This table keeps keys and boxes in two raw buffers with linear
/// probing and a power-of-two capacity, so a hit is a cheap hash, one or two key
/// comparisons and a load, with no reference counting. Removals (overrides and resets,
/// which are rare) rebuild it.
///
/// Only touched while holding the owning container's lock. The owner calls
/// ``deallocate()`` once, from its `deinit`.
@usableFromInline
struct SingletonTable {
    /// Keys; initialized exactly where `boxes` is non-nil.
    @usableFromInline var keys: UnsafeMutablePointer<ProviderKey>?
    /// Retained boxes, `nil` for an empty slot.
    @usableFromInline var boxes: UnsafeMutablePointer<Unmanaged<AnyObject>?>?
    @usableFromInline var mask = -1
    @usableFromInline var count = 0

    init() {}

    /// The box stored for `key`, unretained: valid while the container's lock is held.
    @inlinable
    func box(for key: ProviderKey) -> Unmanaged<AnyObject>? {
        guard count > 0, let keys, let boxes else { return nil }
        var index = key._rawHashValue(seed: 0) & mask
        while let box = boxes[index] {
            if keys[index] == key { return box }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Stores `box` for `key`, replacing what was there.
    mutating func insert(_ box: AnyObject, for key: ProviderKey) {
        if (count + 1) * 4 > (mask + 1) * 3 { grow() }
        guard let keys, let boxes else { preconditionFailure("table not allocated") }
        var index = key._rawHashValue(seed: 0) & mask
        while let existing = boxes[index] {
            if keys[index] == key {
                existing.release()
                boxes[index] = .passRetained(box)
                return
            }
            index = (index &+ 1) & mask
        }
        (keys + index).initialize(to: key)
        boxes[index] = .passRetained(box)
        count += 1
    }

    /// Removes the entry for `key`, if any, and returns its box. The caller releases the
    /// box after unlocking: a release may run user code (a `deinit`).
    mutating func remove(_ key: ProviderKey) -> AnyObject? {
        guard box(for: key) != nil else { return nil }
        let all = entries
        removeAll()
        var removed: AnyObject?
        for entry in all {
            if entry.key == key { removed = entry.box } else { insert(entry.box, for: entry.key) }
        }
        return removed
    }

    /// Removes every entry and frees the buffers. Only call it when the boxes are also held
    /// elsewhere, or outside the container's lock.
    mutating func removeAll() {
        deallocate()
        self = SingletonTable()
    }

    /// Releases every box and frees the buffers.
    func deallocate() {
        guard let keys, let boxes else { return }
        for index in 0...mask {
            if let box = boxes[index] {
                box.release()
                (keys + index).deinitialize(count: 1)
            }
        }
        keys.deallocate()
        boxes.deallocate()
    }

    private var entries: [(key: ProviderKey, box: AnyObject)] {
        guard let keys, let boxes else { return [] }
        return (0...mask).compactMap { index in
            boxes[index].map { (keys[index], $0.takeUnretainedValue()) }
        }
    }

    private mutating func grow() {
        let old = entries
        let capacity = Swift.max(8, (mask + 1) * 2)  // a power of two
        removeAll()
        keys = .allocate(capacity: capacity)
        let newBoxes = UnsafeMutablePointer<Unmanaged<AnyObject>?>.allocate(capacity: capacity)
        newBoxes.initialize(repeating: nil, count: capacity)
        boxes = newBoxes
        mask = capacity - 1
        for entry in old { insert(entry.box, for: entry.key) }
    }
}
