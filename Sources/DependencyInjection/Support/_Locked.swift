#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The platform's lock primitive: a `_AtomicMutex` on Linux (a state word that an
/// uncontended lock and unlock change with one atomic operation each, and a mutex and
/// condition on which only contended lockers sleep; a `pthread_mutex_t` costs some 65
/// instructions per round-trip even when no other thread wants it, the word half of that,
/// on every resolution), `os_unfair_lock` on Apple platforms, a `pthread_mutex_t` elsewhere.
#if canImport(Darwin)
@usableFromInline typealias _LockPrimitive = os_unfair_lock
#elseif canImport(Glibc)
@usableFromInline typealias _LockPrimitive = _AtomicMutex
#else
@usableFromInline typealias _LockPrimitive = pthread_mutex_t
#endif

/// An object whose first two stored properties are a lock and the state it guards, and
/// what every such object does with them: a ``_Locked`` value, or a container, which keeps
/// its state in its own object (``DependencyContainer/state``) so that a new container is
/// one allocation.
///
/// `Mutex` from the Synchronization module would do the same, but it needs iOS 18 /
/// macOS 15, newer than this package's floor, so the platform primitive is kept here. A C
/// lock must not move and must not be passed by `&` (which may hand over a temporary
/// copy), so it is a stored property of an object, whose memory never moves, and is
/// reached by address, like the state beside it. Reaching the state through a pointer
/// also skips the dynamic exclusivity checks of a class's stored `var`: the lock already
/// makes every access exclusive.
///
/// ```swift
/// let counter = _Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
///
/// > Important: Never run user code, and never release anything a user made, inside
/// > `withLock`: a `deinit` is user code and may take the same lock. Hand such values to
/// > ``withLock(releasingAfter:)``, which releases them after unlocking.
@usableFromInline
protocol _LockedMemory {
    /// What the lock guards.
    associatedtype State
    /// The first stored property of the object that keeps the lock and the state, in
    /// this order: an object's layout is its stored properties' declaration order, which
    /// ``stateOffset`` relies on. The caller keeps the object alive while it uses the
    /// lock or the state.
    var lockedMemory: UnsafeMutableRawPointer { get }
}

extension _LockedMemory {
    /// Where the state starts, from the object's first stored property: after the lock,
    /// at the state's alignment.
    @inlinable
    static var stateOffset: Int {
        let alignment = MemoryLayout<State>.alignment
        return (MemoryLayout<_LockPrimitive>.size + alignment - 1) / alignment * alignment
    }

    /// Checks that `State` can sit after the lock, and prepares the lock where the
    /// platform needs that: call it once, from the object's initializer, after storing
    /// both properties.
    func prepareLock() {
        // The offset counts from the stored properties, which start 16 bytes into the
        // object: a state aligned more strictly than that would sit elsewhere.
        precondition(MemoryLayout<State>.alignment <= 16, "a lock's state must be aligned to at most 16 bytes")
        precondition(MemoryLayout<State>.size > 0, "a lock's state needs at least one byte: use _Locked<_Elsewhere>")
        #if !canImport(Darwin) && !canImport(Glibc)
        let status = pthread_mutex_init(primitive, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        #endif
    }

    /// Ends the lock where the platform needs that: call it from the object's `deinit`.
    func endLock() {
        #if !canImport(Darwin) && !canImport(Glibc)
        pthread_mutex_destroy(primitive)
        #endif
    }

    /// The state, in the object's memory.
    @inlinable
    var state: UnsafeMutablePointer<State> {
        (lockedMemory + Self.stateOffset).assumingMemoryBound(to: State.self)
    }

    /// The lock, the object's first stored property.
    @inlinable
    var primitive: UnsafeMutablePointer<_LockPrimitive> {
        lockedMemory.assumingMemoryBound(to: _LockPrimitive.self)
    }

    @inlinable @inline(__always)
    func lock() {
        #if canImport(Darwin)
        os_unfair_lock_lock(primitive)
        #elseif canImport(Glibc)
        _AtomicMutex.lock(primitive)
        #else
        pthread_mutex_lock(primitive)
        #endif
    }

    @inlinable @inline(__always)
    func unlock() {
        #if canImport(Darwin)
        os_unfair_lock_unlock(primitive)
        #elseif canImport(Glibc)
        _AtomicMutex.unlock(primitive)
        #else
        pthread_mutex_unlock(primitive)
        #endif
    }

    @inlinable
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body(&state.pointee)
    }

    /// Runs `body` while holding the lock, and releases what it moved into `released`
    /// only after unlocking.
    ///
    /// This is the one way the package takes things out of a locked state: replaced
    /// values, dropped instances, overrides, child references. Releasing one may run a
    /// `deinit` that uses a container, and so takes this very lock.
    @inlinable
    func withLock<Result>(releasingAfter body: (inout State, inout Released) throws -> Result) rethrows -> Result {
        var released = Released()
        let result = try withLock { try body(&$0, &released) }
        withExtendedLifetime(released) {}
        return result
    }
}

/// A value and the lock that guards it, inside this one object.
///
/// Every mutable state in the package but a container's lives in one of these: a
/// construction in flight, the process-wide `main`, the package's tables. One object,
/// one allocation: a lock kept in memory of its own cost a second `malloc` and `free`.
///
/// ```swift
/// let counter = _Locked(0)
/// counter.withLock { $0 += 1 }
/// ```
@usableFromInline
final class _Locked<State>: _LockedMemory, @unchecked Sendable {
    // @unchecked: the state is only touched while the lock is held.

    // The two stored properties, in this order (``_LockedMemory``). Neither is touched
    // as a property after `init`: only through ``primitive`` and ``state``.
    private var storedPrimitive: _LockPrimitive
    private var storedState: State

    @usableFromInline
    init(_ initial: State) {
        storedPrimitive = _LockPrimitive()
        storedState = initial
        prepareLock()
    }

    #if !canImport(Darwin) && !canImport(Glibc)
    deinit {
        endLock()
    }
    #endif

    @inlinable
    var lockedMemory: UnsafeMutableRawPointer {
        _getUnsafePointerToStoredProperties(self)
    }
}

/// The state of a lock that guards memory kept elsewhere (the fields of the objects that
/// share a stripe, a static): one byte that nothing reads.
///
/// A zero-size state, `Void`, would sit one past the end of the lock's object, where the
/// allocator may have placed another object. Every holder's access to it would then touch
/// that other object's memory, and ThreadSanitizer reports holders of two different locks
/// as racing there.
///
/// ```swift
/// let lock = _Locked(_Elsewhere())
/// lock.withLock { _ in sharedCount += 1 }
/// ```
struct _Elsewhere {
    private var unused: UInt8 = 0
}

extension _Locked {
    /// Replaces the state, releasing the old one after unlocking.
    func replace(with new: State) {
        withLock(releasingAfter: { state, released in
            released.append(state)
            state = new
        })
    }
}
