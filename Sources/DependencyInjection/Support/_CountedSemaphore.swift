#if !canImport(Darwin) && canImport(Glibc)
import Glibc
import Synchronization

/// The lock of a ``_Locked`` on Linux: a count of the threads that hold or want the lock,
/// changed atomically, and a semaphore on which all but the holder sleep.
///
/// A lock that no other thread wants (nearly every lock here: each is held for a few
/// loads and stores) costs one atomic add to take and one atomic subtract to give back,
/// about 28 instructions for the round-trip with its calls, where `pthread_mutex_lock`
/// and `pthread_mutex_unlock` cost about 65. Only a thread that finds the lock taken
/// sleeps on the semaphore, and only an unlock that sees someone waiting posts it; each
/// post wakes exactly one sleeper, which then holds the lock.
///
/// The count is an `Int` reached through a pointer as an `Atomic<Int>`, whose layout is
/// the integer's: the value lives inside the ``_Locked`` object, which never moves. The
/// semaphore too is reached only by address, never copied once initialized.
///
/// Happens-before, as ThreadSanitizer checks it: an uncontended lock's add reads the
/// subtract of the unlock before it (both are acquiring and releasing); a contended
/// lock returns from `sem_wait` after the `sem_post` of the unlock that handed it over.
///
/// ```swift
/// let lock = UnsafeMutablePointer<_CountedSemaphore>.allocate(capacity: 1)
/// lock.initialize(to: _CountedSemaphore())
/// _CountedSemaphore.initialize(lock)
/// _CountedSemaphore.lock(lock)
/// // … a few loads and stores …
/// _CountedSemaphore.unlock(lock)
/// _CountedSemaphore.destroy(lock)
/// ```
struct _CountedSemaphore {
    /// How many threads hold the lock or wait for it: 0 when it is free.
    private var count = 0
    /// Where waiting threads sleep; posted once per thread handed the lock.
    private var sleepers = sem_t()

    /// Prepares the semaphore of a lock at its final address.
    static func initialize(_ lock: UnsafeMutablePointer<Self>) {
        let status = sem_init(sleepers(of: lock), 0, 0)
        precondition(status == 0, "sem_init failed with errno \(errno)")
    }

    /// Releases what the semaphore holds; the lock must be free.
    static func destroy(_ lock: UnsafeMutablePointer<Self>) {
        sem_destroy(sleepers(of: lock))
    }

    /// Takes the lock, sleeping until it is handed over if another thread holds it.
    static func lock(_ lock: UnsafeMutablePointer<Self>) {
        guard count(of: lock).pointee.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue > 0 else { return }
        // A signal may interrupt the wait; the lock is handed over only by a post.
        while sem_wait(sleepers(of: lock)) != 0 {}
    }

    /// Gives the lock back, handing it to one sleeping thread if any waits.
    static func unlock(_ lock: UnsafeMutablePointer<Self>) {
        guard count(of: lock).pointee.wrappingSubtract(1, ordering: .acquiringAndReleasing).oldValue > 1 else { return }
        sem_post(sleepers(of: lock))
    }

    private static func count(of lock: UnsafeMutablePointer<Self>) -> UnsafeMutablePointer<Atomic<Int>> {
        UnsafeMutableRawPointer(lock).assumingMemoryBound(to: Atomic<Int>.self)
    }

    private static func sleepers(of lock: UnsafeMutablePointer<Self>) -> UnsafeMutablePointer<sem_t> {
        (UnsafeMutableRawPointer(lock) + MemoryLayout<Int>.stride).assumingMemoryBound(to: sem_t.self)
    }
}
#endif
