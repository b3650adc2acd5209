/// A fixed set of locks shared by many small objects, each object always taking the same
/// one, picked by its address.
///
/// An object that needs a lock only for rare, short sections (a `@Dependency` property
/// between its creation and its first read) would otherwise pay for a lock of its own: 40
/// bytes and a `pthread_mutex_init` on Linux, in every instance. A stripe is still one
/// lock per state, as every state in this package has: an object takes only its own
/// stripe, runs no user code and releases nothing while holding it, and takes no other
/// stripe meanwhile, so two objects sharing a stripe only ever wait a moment for each
/// other.
///
/// ```swift
/// _LockStripes.lock(for: self).withLock { _ in generation &+= 1 }
/// ```
enum _LockStripes {
    /// A power of two, for the mask below; enough that unrelated objects rarely meet.
    private static let count = 64
    private static let locks: [_Locked<Void>] = (0..<count).map { _ in _Locked(()) }

    /// The lock of `object`, the same for as long as it lives.
    static func lock(for object: AnyObject) -> _Locked<Void> {
        let address = UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque())
        // Heap objects are 16-byte aligned: the low bits carry no information.
        return locks[Int((address >> 4) & UInt(count - 1))]
    }
}
