#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A non-recursive mutual-exclusion lock that works on every supported OS.
///
/// `Mutex` from the Synchronization module needs iOS 18 / macOS 15, newer than this
/// package's floor, so the lock wraps the platform primitive directly. The primitive is
/// allocated once and never moved: passing a stored C lock by `&` is undefined behaviour.
@usableFromInline
final class Lock: @unchecked Sendable {
    #if canImport(Darwin)
    private let primitive: os_unfair_lock_t
    #else
    private let primitive: UnsafeMutablePointer<pthread_mutex_t>
    #endif

    @usableFromInline
    init() {
        #if canImport(Darwin)
        primitive = .allocate(capacity: 1)
        primitive.initialize(to: os_unfair_lock())
        #else
        primitive = .allocate(capacity: 1)
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
        primitive.deallocate()
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

    /// Runs `body` while holding the lock. Never call user code from `body`.
    @inlinable
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
