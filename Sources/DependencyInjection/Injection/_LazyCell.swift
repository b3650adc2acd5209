/// The published value of one `@Dependency` property: a lazy reference, set under its
/// owner's lock and read without any lock.
///
/// Reading a resolved property is the hot path of the whole package. The resolved value
/// sits in an immutable ``Box`` whose address is published with an atomic exchange and
/// read with an acquiring load, so a reader sees either nothing or a whole box. The cell
/// owns two words: the published box (retained), and an unretained pointer back to the
/// storage that owns the cell, so that the wrapper's getter reaches the slow path from the
/// slot alone without retaining anything on the fast path.
///
/// ```swift
/// if let client = _LazyCell.value(in: slot, as: HTTPClient.self) { return client }
/// ```
@usableFromInline
final class _LazyCell {
    /// The published box; the word after it points back to the owner.
    @usableFromInline let slot: UnsafeMutablePointer<AnyBox?>

    init() {
        let words = UnsafeMutableRawPointer.allocate(
            byteCount: 2 * MemoryLayout<UnsafeRawPointer>.stride,
            alignment: MemoryLayout<UnsafeRawPointer>.alignment)
        slot = words.bindMemory(to: AnyBox?.self, capacity: 1)
        slot.initialize(to: nil)
    }

    deinit {
        slot.deinitialize(count: 1)
        UnsafeMutableRawPointer(slot).deallocate()
    }

    /// Points the slot back at `owner`, which keeps this cell alive.
    func attach(to owner: AnyObject) {
        UnsafeMutableRawPointer(slot).storeBytes(
            of: Unmanaged.passUnretained(owner).toOpaque(),
            toByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
    }

    /// The published value, if any: one acquiring load, no lock, no reference counting.
    @inlinable
    static func value<Value>(in slot: UnsafeMutablePointer<AnyBox?>, as type: Value.Type) -> Value? {
        guard let box = _stdlib_atomicAcquiringLoadARCRef(object: slot) else { return nil }
        return box._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Box<Value>.self).value }
    }

    /// The value in a box that this property published.
    @inlinable
    static func unbox<Value>(_ box: AnyBox, as type: Value.Type) -> Value {
        unsafeDowncast(box, to: Box<Value>.self).value
    }

    /// Runs `body` with the owner the slot points back to.
    static func withOwner<Owner: AnyObject, Result>(
        of slot: UnsafeMutablePointer<AnyBox?>, as type: Owner.Type, _ body: (Owner) -> Result
    ) -> Result {
        let owner = UnsafeMutableRawPointer(slot).load(
            fromByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
        return Unmanaged<Owner>.fromOpaque(owner)._withUnsafeGuaranteedRef(body)
    }

    /// The published box, read with an acquiring load.
    var published: AnyBox? { _stdlib_atomicAcquiringLoadARCRef(object: slot)?.takeUnretainedValue() }

    /// Publishes `box`; call under the owner's lock.
    ///
    /// - Returns: The box it replaced, which the owner must keep (not release) for as long
    ///   as it lives: a reader that loaded it before the exchange may still be reading it.
    func exchange(_ box: AnyBox?) -> AnyBox? {
        let word = UnsafeMutableRawPointer(slot).assumingMemoryBound(to: UnsafeRawPointer?.self)
        var expected = word.pointee
        let desired = box.map { UnsafeRawPointer(Unmanaged.passRetained($0).toOpaque()) }
        let swapped = _stdlib_atomicCompareExchangeStrongPtr(object: word, expected: &expected, desired: desired)
        precondition(swapped, "the published value changed outside the lock")
        return expected.map { Unmanaged<AnyBox>.fromOpaque($0).takeRetainedValue() }
    }
}
