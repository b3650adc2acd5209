#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value and the lock that guards it, in one allocation that this object owns.
///
/// Every mutable state in the package lives in one of these: a container's state, a
/// `@Dependency` property's state, the process-wide `main`. `Mutex` from the
/// Synchronization module would do the same, but it needs iOS 18 / macOS 15, newer than
/// this package's floor, so the platform primitive is kept here, beside the state, in
/// memory that never moves (a stored C lock must not be passed by `&`). The state is
/// reached through a pointer, which skips the dynamic exclusivity checks of a class's
/// stored `var`: the lock already makes every access exclusive.
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
final class _Locked<State>: @unchecked Sendable {
    // @unchecked: the state is only touched while the lock is held.
    #if canImport(Darwin)
    private typealias Primitive = os_unfair_lock
    #else
    private typealias Primitive = pthread_mutex_t
    #endif

    @usableFromInline let state: UnsafeMutablePointer<State>
    private let primitive: UnsafeMutablePointer<Primitive>
    private let memory: UnsafeMutableRawPointer

    /// A new lock guarding `initial`.
    @usableFromInline
    init(_ initial: State) {
        let offset = MemoryLayout<Primitive>.stride.roundedUp(to: MemoryLayout<State>.alignment)
        memory = .allocate(
            byteCount: offset + MemoryLayout<State>.stride,
            alignment: Swift.max(MemoryLayout<Primitive>.alignment, MemoryLayout<State>.alignment))
        primitive = memory.bindMemory(to: Primitive.self, capacity: 1)
        state = (memory + offset).bindMemory(to: State.self, capacity: 1)
        state.initialize(to: initial)
        #if canImport(Darwin)
        primitive.initialize(to: os_unfair_lock())
        #else
        primitive.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(primitive, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        #endif
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(primitive)
        #endif
        primitive.deinitialize(count: 1)
        state.deinitialize(count: 1)
        memory.deallocate()
    }

    @usableFromInline
    func lock() {
        #if canImport(Darwin)
        os_unfair_lock_lock(primitive)
        #else
        pthread_mutex_lock(primitive)
        #endif
    }

    @usableFromInline
    func unlock() {
        #if canImport(Darwin)
        os_unfair_lock_unlock(primitive)
        #else
        pthread_mutex_unlock(primitive)
        #endif
    }

    /// Runs `body` with the state while holding the lock.
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
    func withLock<Result>(releasingAfter body: (inout State, inout [Any]) throws -> Result) rethrows -> Result {
        var released: [Any] = []
        let result = try withLock { try body(&$0, &released) }
        withExtendedLifetime(released) {}
        return result
    }
}

extension Int {
    fileprivate func roundedUp(to alignment: Int) -> Int { (self + alignment - 1) / alignment * alignment }
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
