/// The built singletons of one container: an open-addressing hash table read on every
/// cached resolution.
///
/// `Dictionary` works here but spends most of a cached resolution probing generically and
/// retaining its buffers. This table keeps keys and boxes in two arrays inside the one
/// allocation of a ``Storage`` object, with linear probing and a power-of-two capacity, so
/// a hit is a cheap hash, a key comparison and a load, with no reference counting. A
/// removal shifts the entries after it back (no tombstones, no rebuild), so dropping n
/// singletons costs O(n).
///
/// Only touched while holding the owning container's lock. What it hands back (a removed
/// box, a replaced one, the whole storage) the caller releases after unlocking.
///
/// ```swift
/// var table = _SingletonTable()
/// _ = table.insert(Box(client), for: key)
/// let cached = table.value(for: key, as: HTTPClient.self)
/// ```
@usableFromInline
struct _SingletonTable {
    /// Where the buffers are and how full they are: the header of ``Storage``.
    @usableFromInline
    struct Header {
        /// Keys; initialized exactly where `boxes` is non-nil.
        @usableFromInline let keys: UnsafeMutablePointer<RegistrationKey>
        /// Retained boxes, `nil` for an empty slot.
        @usableFromInline let boxes: UnsafeMutablePointer<Unmanaged<AnyObject>?>
        @usableFromInline let mask: Int
        @usableFromInline var count = 0
    }

    /// The buffers, in the storage object's own allocation; they free themselves,
    /// releasing every box, when the storage goes.
    ///
    /// The boxes come first, then the keys, in the elements that follow the header: one
    /// allocation for the object and both buffers. A buffer of its own cost every
    /// container that keeps a singleton (a test world, a request's scope) a second
    /// `malloc` and `free`. The keys start right after the boxes, at a multiple of a box's
    /// stride, which is alignment enough for a key.
    @usableFromInline
    final class Storage: ManagedBuffer<Header, Unmanaged<AnyObject>?> {
        /// A storage of `capacity` slots, a power of two, all empty.
        static func make(capacity: Int) -> Storage {
            assert(MemoryLayout<RegistrationKey>.alignment <= MemoryLayout<Unmanaged<AnyObject>?>.stride)
            let wordsPerKey = MemoryLayout<RegistrationKey>.stride / MemoryLayout<Unmanaged<AnyObject>?>.stride
            assert(wordsPerKey * MemoryLayout<Unmanaged<AnyObject>?>.stride == MemoryLayout<RegistrationKey>.stride)
            let made = create(minimumCapacity: capacity * (1 + wordsPerKey)) { made in
                made.withUnsafeMutablePointerToElements { elements in
                    elements.initialize(repeating: nil, count: capacity)
                    let keys = UnsafeMutableRawPointer(elements + capacity).bindMemory(
                        to: RegistrationKey.self, capacity: capacity)
                    return Header(keys: keys, boxes: elements, mask: capacity - 1)
                }
            }
            return unsafeDowncast(made, to: Storage.self)
        }

        // Through the header's address, not `header`: that is a stored property of the
        // class, and every access to it would be checked for exclusivity at run time.
        @usableFromInline var keys: UnsafeMutablePointer<RegistrationKey> {
            withUnsafeMutablePointerToHeader { $0.pointee.keys }
        }
        @usableFromInline var boxes: UnsafeMutablePointer<Unmanaged<AnyObject>?> {
            withUnsafeMutablePointerToHeader { $0.pointee.boxes }
        }
        @usableFromInline var mask: Int { withUnsafeMutablePointerToHeader { $0.pointee.mask } }
        /// Only touched under the owning container's lock.
        @usableFromInline var count: Int {
            get { withUnsafeMutablePointerToHeader { $0.pointee.count } }
            set { withUnsafeMutablePointerToHeader { $0.pointee.count = newValue } }
        }

        deinit {
            let (keys, boxes) = (self.keys, self.boxes)
            for index in 0...mask {
                if let box = boxes[index] {
                    box.release()
                    (keys + index).deinitialize(count: 1)
                }
            }
        }
    }

    /// Owns the buffers below.
    @usableFromInline var storage: Storage? {
        didSet { (keys, boxes, mask) = (storage?.keys, storage?.boxes, storage?.mask ?? -1) }
    }
    /// The storage's buffers, copied here so that a lookup touches no reference count.
    @usableFromInline var keys: UnsafeMutablePointer<RegistrationKey>?
    @usableFromInline var boxes: UnsafeMutablePointer<Unmanaged<AnyObject>?>?
    @usableFromInline var mask = -1

    init() {}

    /// The cached value for `key`. The key includes the value type, so the box is known
    /// to be a `Box<Value>` and no dynamic cast is needed.
    @inlinable
    func value<Value>(for key: RegistrationKey, as type: Value.Type) -> Value? {
        guard let index = index(of: key) else { return nil }
        return boxes.unsafelyUnwrapped[index].unsafelyUnwrapped._withUnsafeGuaranteedRef {
            unsafeDowncast($0, to: Box<Value>.self).value
        }
    }

    /// The slot holding `key`, if any.
    @inlinable
    func index(of key: RegistrationKey) -> Int? {
        guard let keys, let boxes else { return nil }
        var index = key.slot(mask: mask)
        while boxes[index] != nil {
            if keys[index] == key { return index }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Whether no singleton is kept.
    var isEmpty: Bool { (storage?.count ?? 0) == 0 }

    /// Every key with a cached instance.
    var cachedKeys: [RegistrationKey] {
        guard let keys, let boxes, mask >= 0 else { return [] }
        return (0...mask).compactMap { boxes[$0] == nil ? nil : keys[$0] }
    }

    /// The box stored for `key`, retained.
    @inlinable
    func box(for key: RegistrationKey) -> AnyObject? {
        index(of: key).map { boxes.unsafelyUnwrapped[$0].unsafelyUnwrapped.takeUnretainedValue() }
    }

    /// Stores `box` for `key`.
    ///
    /// - Returns: The box it replaced, or a storage outgrown, for release after unlocking.
    mutating func insert(_ box: AnyObject, for key: RegistrationKey) -> AnyObject? {
        var outgrown: AnyObject?
        if storage == nil || (storage!.count + 1) * 4 > (storage!.mask + 1) * 3 {
            outgrown = grow()
        }
        let storage = self.storage!
        var index = key.slot(mask: storage.mask)
        while let existing = storage.boxes[index] {
            if storage.keys[index] == key {
                storage.boxes[index] = .passRetained(box)
                return existing.takeRetainedValue()
            }
            index = (index &+ 1) & storage.mask
        }
        (storage.keys + index).initialize(to: key)
        storage.boxes[index] = .passRetained(box)
        storage.count += 1
        return outgrown
    }

    /// Removes the entry for `key`, if any, and shifts the entries after it back so that
    /// every key stays reachable from its home slot.
    ///
    /// - Returns: The removed box, for release after unlocking.
    mutating func remove(_ key: RegistrationKey) -> AnyObject? {
        guard let storage, var hole = index(of: key) else { return nil }
        let removed = storage.boxes[hole].unsafelyUnwrapped.takeRetainedValue()
        (storage.keys + hole).deinitialize(count: 1)
        storage.boxes[hole] = nil
        storage.count -= 1
        var next = hole
        while true {
            next = (next &+ 1) & storage.mask
            guard storage.boxes[next] != nil else { break }
            let home = storage.keys[next].slot(mask: storage.mask)
            // An entry whose home lies cyclically in (hole, next] is still reachable.
            let reachable = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if reachable { continue }
            (storage.keys + hole).moveInitialize(from: storage.keys + next, count: 1)
            storage.boxes[hole] = storage.boxes[next]
            storage.boxes[next] = nil
            hole = next
        }
        return removed
    }

    /// Moves every entry to a storage twice as large.
    ///
    /// The keys are distinct, so each entry goes to the first free slot from its home
    /// without a comparison, and moves with its reference: no box is retained or released.
    ///
    /// - Returns: The old storage, emptied, for release after unlocking.
    private mutating func grow() -> AnyObject? {
        let old = storage
        let grown = Storage.make(capacity: Swift.max(8, ((old?.mask ?? -1) + 1) * 2))
        if let old {
            for index in 0..<(old.mask + 1) {
                guard let box = old.boxes[index] else { continue }
                var slot = old.keys[index].slot(mask: grown.mask)
                while grown.boxes[slot] != nil { slot = (slot &+ 1) & grown.mask }
                (grown.keys + slot).moveInitialize(from: old.keys + index, count: 1)
                grown.boxes[slot] = box
                old.boxes[index] = nil
            }
            (grown.count, old.count) = (old.count, 0)
        }
        storage = grown
        return old
    }
}
