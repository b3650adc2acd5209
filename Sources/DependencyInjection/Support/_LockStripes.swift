/// A fixed set of locks shared by many small objects, each object always taking the same
/// one, picked by its address.
///
/// An object that needs a lock only for rare, short sections (a `@Dependency` property
/// between its creation and its first read) would otherwise pay for a lock of its own: 96
/// bytes on Linux in every instance. A stripe is still one lock per state, as every state
/// in this package has: an object takes only its own stripe, runs no user code and releases nothing while holding it, and takes no other
/// stripe meanwhile, so two objects sharing a stripe only ever wait a moment for each
/// other.
///
/// ```swift
/// _LockStripes.lock(for: self).withLock { _ in generation &+= 1 }
/// ```
enum _LockStripes {
    /// 2⁶, the six bits the hash below keeps; enough that unrelated objects rarely meet.
    private static let count = 64
    private static let locks: [_Locked<_Elsewhere>] = (0..<count).map { _ in _Locked(_Elsewhere()) }

    /// The lock of `object`, the same for as long as it lives.
    static func lock(for object: AnyObject) -> _Locked<_Elsewhere> {
        locks[stripe(of: UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()))]
    }

    /// The stripe of an object at `address`, in `0..<64`.
    static func stripe(of address: UInt) -> Int {
        // Objects of one kind sit a fixed distance apart, often a multiple of 64 bytes, so
        // a few address bits taken as they are would put them on a few stripes. MurmurHash3's
        // 64-bit finaliser lets every address bit move the six bits kept: 64 objects spaced
        // evenly, at any multiple of 16 bytes up to 8 KiB, land on at least half the stripes.
        var bits = UInt64(address >> 4)  // heap objects are 16-byte aligned
        bits ^= bits >> 33
        bits &*= 0xFF51_AFD7_ED55_8CCD
        bits ^= bits >> 33
        bits &*= 0xC4CE_B9FE_1A85_EC53
        bits ^= bits >> 33
        return Int(truncatingIfNeeded: bits >> 58)
    }
}
