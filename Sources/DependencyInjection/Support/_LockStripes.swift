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
    /// The locks, made once and never freed, kept unmanaged: taking one costs no reference
    /// count (two, about 40 instructions, when an array held them).
    // nonisolated(unsafe): written once, by the one-time initialization, and then only read.
    nonisolated(unsafe) private static let locks: UnsafePointer<Unmanaged<_Locked<_Elsewhere>>> = {
        let locks = UnsafeMutablePointer<Unmanaged<_Locked<_Elsewhere>>>.allocate(capacity: count)
        for index in 0..<count { (locks + index).initialize(to: .passRetained(_Locked(_Elsewhere()))) }
        return UnsafePointer(locks)
    }()

    /// The lock of `object`, the same for as long as it lives.
    static func lock(for object: AnyObject) -> _StripeLock {
        _StripeLock(lock: locks[stripe(of: UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()))])
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

/// One of ``_LockStripes``' locks, which live as long as the process: taken without a
/// reference count.
///
/// ```swift
/// _LockStripes.lock(for: self).withLock { _ in generation &+= 1 }
/// ```
struct _StripeLock {
    let lock: Unmanaged<_Locked<_Elsewhere>>

    /// Runs `body` holding the lock.
    func withLock<Result>(_ body: (inout _Elsewhere) throws -> Result) rethrows -> Result {
        try lock._withUnsafeGuaranteedRef { try $0.withLock(body) }
    }
}
