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
/// The first two singletons a container keeps sit in the table itself (``firstKey`` and
/// ``firstBox``, ``secondKey`` and ``secondBox``) until a third one comes, which makes the
/// storage and moves them there: a test's world usually keeps one and a request's scope
/// two (its handler and the user it installed), and a storage of their own cost each of
/// them an allocation, its eight empty slots and its release, about 500 instructions. A
/// lookup looks at those two only in a table without storage, so a container that keeps
/// many pays for them once, when its storage is made.
///
/// Only touched while holding the owning container's lock. What it hands back (a removed
/// box, a replaced one, everything at once) the caller releases after unlocking.
///
/// ```swift
/// var table = _SingletonTable()
/// _ = table.insert(Box(client), for: key)      // kept in the table itself
/// _ = table.insert(Box(database), for: other)  // the storage is made now
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

        /// Files `box` for `key`, which this storage does not hold, retaining it, and moves
        /// the key here, leaving the placeholder in its place: for the entries a table kept
        /// in itself, moved here when it makes its storage. Moved, not copied, so that the
        /// table keeps no copy of the key's argument.
        func file(_ box: AnyObject, movingKeyFrom key: inout RegistrationKey) {
            var slot = key.slot(mask: mask)
            while boxes[slot] != nil { slot = (slot &+ 1) & mask }
            withUnsafeMutablePointer(to: &key) { key in
                (keys + slot).moveInitialize(from: key, count: 1)
                key.initialize(to: _SingletonTable.noKey)
            }
            boxes[slot] = .passRetained(box)
            count += 1
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

    /// The key of ``firstBox``; a placeholder no registration has while that is `nil`.
    @usableFromInline var firstKey = Self.noKey
    /// The box kept for ``firstKey``, held here while no ``storage`` exists, and `nil`
    /// whenever one does: a key is never in both. Filled before ``secondBox``.
    var firstBox: AnyObject? {
        didSet { first = firstBox.map(Unmanaged.passUnretained) }
    }
    /// ``firstBox``, copied here so that a lookup touches no reference count, as
    /// ``keys`` and ``boxes`` are.
    @usableFromInline var first: Unmanaged<AnyObject>?
    /// The key of ``secondBox``, as ``firstKey`` is of ``firstBox``.
    @usableFromInline var secondKey = Self.noKey
    /// The box kept for ``secondKey``, on the terms of ``firstBox``.
    var secondBox: AnyObject? {
        didSet { second = secondBox.map(Unmanaged.passUnretained) }
    }
    /// ``secondBox``, copied as ``first`` is.
    @usableFromInline var second: Unmanaged<AnyObject>?

    /// The key of an empty slot: no registration is declared on line 0.
    @usableFromInline static var noKey: RegistrationKey {
        RegistrationKey(file: "", position: 0, type: ObjectIdentifier(Never.self))
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
    @inlinable @inline(__always)
    func value<Value>(for key: RegistrationKey, as type: Value.Type) -> Value? {
        guard keys != nil else {
            guard let kept = keptInTable(key) else { return nil }
            return kept._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Box<Value>.self).value }
        }
        guard let index = index(of: key) else { return nil }
        return boxes.unsafelyUnwrapped[index].unsafelyUnwrapped._withUnsafeGuaranteedRef {
            unsafeDowncast($0, to: Box<Value>.self).value
        }
    }

    /// The box kept for `key` in the table itself, if any: in a table without storage.
    @inlinable @inline(__always)
    func keptInTable(_ key: RegistrationKey) -> Unmanaged<AnyObject>? {
        if let first, firstKey == key { return first }
        if let second, secondKey == key { return second }
        return nil
    }

    /// The slot of ``storage`` holding `key`, if any.
    ///
    /// Always inlined, and the probe given the buffers alone: a call given the whole table
    /// (with the entries it keeps in itself, some 200 bytes) was handed a copy of it.
    @inlinable @inline(__always)
    func index(of key: RegistrationKey) -> Int? {
        guard let keys, let boxes else { return nil }
        return Self.probe(for: key, keys: keys, boxes: boxes, mask: mask)
    }

    /// The slot holding `key` in the buffers of a storage of `mask + 1` slots, if any.
    @inlinable
    static func probe(
        for key: RegistrationKey, keys: UnsafeMutablePointer<RegistrationKey>,
        boxes: UnsafeMutablePointer<Unmanaged<AnyObject>?>, mask: Int
    ) -> Int? {
        var index = key.slot(mask: mask)
        while boxes[index] != nil {
            if keys[index] == key { return index }
            index = (index &+ 1) & mask
        }
        return nil
    }

    /// Whether no singleton is kept.
    var isEmpty: Bool { firstBox == nil && secondBox == nil && (storage?.count ?? 0) == 0 }

    /// Every key with a cached instance.
    var cachedKeys: [RegistrationKey] {
        var found: [RegistrationKey] = []
        if firstBox != nil { found.append(firstKey) }
        if secondBox != nil { found.append(secondKey) }
        guard let keys, let boxes, mask >= 0 else { return found }
        for index in 0...mask where boxes[index] != nil { found.append(keys[index]) }
        return found
    }

    /// The box stored for `key`, retained.
    @inlinable @inline(__always)
    func box(for key: RegistrationKey) -> AnyObject? {
        guard keys != nil else { return keptInTable(key)?.takeUnretainedValue() }
        return index(of: key).map { boxes.unsafelyUnwrapped[$0].unsafelyUnwrapped.takeUnretainedValue() }
    }

    /// Stores `box` for `key`: in the table itself while it keeps at most one other, else
    /// in the storage, made on the first insertion that needs it.
    ///
    /// - Returns: The box it replaced, or a storage outgrown, for release after unlocking.
    mutating func insert(_ box: AnyObject, for key: RegistrationKey) -> AnyObject? {
        var outgrown: AnyObject?
        if storage == nil {
            if let replaced = replaceKeptInTable(key, with: box) { return replaced }
            if firstBox == nil {
                (firstKey, firstBox) = (key, box)
                return nil
            }
            if secondBox == nil {
                (secondKey, secondBox) = (key, box)
                return nil
            }
            outgrown = grow()
        } else if (storage!.count + 1) * 4 > (storage!.mask + 1) * 3 {
            outgrown = grow()
        }
        // Through the copies of the storage's buffers, as a lookup: a reference to the
        // storage, taken from the table, was a retain and a release per insertion.
        let (keys, boxes, mask) = (self.keys.unsafelyUnwrapped, self.boxes.unsafelyUnwrapped, self.mask)
        var index = key.slot(mask: mask)
        while let existing = boxes[index] {
            if keys[index] == key {
                boxes[index] = .passRetained(box)
                return existing.takeRetainedValue()
            }
            index = (index &+ 1) & mask
        }
        (keys + index).initialize(to: key)
        boxes[index] = .passRetained(box)
        storage.unsafelyUnwrapped.count += 1
        return outgrown
    }

    /// In a table without storage: puts `box` in the place of the box the table keeps in
    /// itself for `key`, and returns that box, if there is one.
    private mutating func replaceKeptInTable(_ key: RegistrationKey, with box: AnyObject) -> AnyObject? {
        if let kept = firstBox, firstKey == key {
            firstBox = box
            return kept
        }
        if let kept = secondBox, secondKey == key {
            secondBox = box
            return kept
        }
        return nil
    }

    /// Removes the entry for `key`, if any, handing its box to `released`, which releases
    /// it after unlocking; in the storage, shifts the entries after it back so that every
    /// key stays reachable from its home slot.
    ///
    /// The entry's key goes too, and its argument to `released` with the box: the table's
    /// copy may be the argument's last reference, which must not go under the lock. An
    /// entry the table keeps in itself leaves the placeholder in its place: a key kept
    /// after its entry kept the argument alive, and released it under the lock at the
    /// next insertion.
    mutating func remove(_ key: RegistrationKey, into released: inout Released) {
        guard storage != nil else {
            if firstBox != nil, firstKey == key {
                released.keep(firstBox)
                released.keep(firstKey.argument)
                (firstKey, firstBox) = (Self.noKey, nil)
            } else if secondBox != nil, secondKey == key {
                released.keep(secondBox)
                released.keep(secondKey.argument)
                (secondKey, secondBox) = (Self.noKey, nil)
            }
            return
        }
        removeFromStorage(key, into: &released)
    }

    /// Removes the entry for `key` from the storage, if any.
    private mutating func removeFromStorage(_ key: RegistrationKey, into released: inout Released) {
        guard let storage, var hole = index(of: key) else { return }
        released.keep(storage.boxes[hole].unsafelyUnwrapped.takeRetainedValue())
        released.keep(storage.keys[hole].argument)
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
    }

    /// Empties the table, handing every box to `released`, which releases them after
    /// unlocking: those kept in the table itself, and the storage, which releases the rest
    /// when it goes.
    mutating func removeAll(into released: inout Released) {
        released.keep(firstBox)
        released.keep(firstKey.argument)
        released.keep(secondBox)
        released.keep(secondKey.argument)
        released.keep(storage)
        self = .init()
    }

    /// Moves every entry to a storage twice as large, or, in a table without one, the
    /// entries kept in the table itself to a new storage.
    ///
    /// The keys are distinct, so each entry goes to the first free slot from its home
    /// without a comparison, and moves with its reference: no box is retained or released.
    ///
    /// - Returns: The old storage, emptied, for release after unlocking.
    private mutating func grow() -> AnyObject? {
        let old = storage
        let grown = Storage.make(capacity: Swift.max(8, ((old?.mask ?? -1) + 1) * 2))
        if let kept = firstBox {
            grown.file(kept, movingKeyFrom: &firstKey)
            firstBox = nil
        }
        if let kept = secondBox {
            grown.file(kept, movingKeyFrom: &secondKey)
            secondBox = nil
        }
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
