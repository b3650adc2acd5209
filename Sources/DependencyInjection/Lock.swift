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
/// package's floor, so the lock wraps the platform primitive directly. The primitive lives
/// in the lock object's own allocation (a `ManagedBuffer` element), so creating a lock is a
/// single allocation, and it never moves: a stored C lock must not be passed by `&`.
@usableFromInline
final class Lock: @unchecked Sendable {
    #if canImport(Darwin)
    typealias Primitive = os_unfair_lock
    #else
    typealias Primitive = pthread_mutex_t
    #endif

    private final class Storage: ManagedBuffer<Void, Primitive> {
        deinit {
            #if !canImport(Darwin)
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
            #endif
            _ = withUnsafeMutablePointerToElements { $0.deinitialize(count: 1) }
        }
    }

    private let storage: Storage
    private let primitive: UnsafeMutablePointer<Primitive>

    @usableFromInline
    init() {
        let buffer = Storage.create(minimumCapacity: 1) { _ in () }
        storage = unsafeDowncast(buffer, to: Storage.self)
        primitive = storage.withUnsafeMutablePointerToElements { $0 }
        #if canImport(Darwin)
        primitive.initialize(to: os_unfair_lock())
        #else
        primitive.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(primitive, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
        #endif
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
