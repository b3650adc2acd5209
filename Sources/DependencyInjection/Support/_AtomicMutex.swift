#if !canImport(Darwin) && canImport(Glibc)
import Glibc
public import Synchronization

/// The lock of a ``_Locked`` on Linux: a state word changed atomically, with a
/// `pthread_mutex_t` and a `pthread_cond_t` on which only contended lockers sleep.
///
/// A lock that no other thread wants (nearly every lock here: each is held for a few
/// loads and stores) costs one compare-and-exchange to take and one exchange to give
/// back, about 30 instructions for the round-trip with its calls, where
/// `pthread_mutex_lock` and `pthread_mutex_unlock` cost about 65.
///
/// The word is 0 when the lock is free, 1 when it is held and no one sleeps, and 2 when
/// it is held and someone may sleep. This is the classic three-state futex mutex, with
/// the futex's wait and wake built from the mutex and condition: a waiter checks the
/// word and sleeps while holding the mutex, and an unlock changes the word before it
/// takes the mutex to wake the sleepers, so no wake-up is lost. A running thread may take
/// a lock that has just come free before a woken sleeper does, so under contention the
/// lock does not stall while the sleeper is scheduled; the sleeper then marks the word 2
/// again and sleeps until the next unlock wakes it.
///
/// The word is an `Int` reached through a pointer as an `Atomic<Int>`, whose layout is
/// the integer's. The whole lock lives inside the ``_Locked`` object, which never moves,
/// and is reached only by address, never copied once initialized.
///
/// Happens-before, as ThreadSanitizer checks it: every lock reads the word with an
/// acquiring operation that reads the releasing exchange of the unlock before it.
///
/// ```swift
/// let lock = UnsafeMutablePointer<_AtomicMutex>.allocate(capacity: 1)
/// lock.initialize(to: _AtomicMutex())
/// _AtomicMutex.lock(lock)
/// // … a few loads and stores …
/// _AtomicMutex.unlock(lock)
/// ```
@usableFromInline
struct _AtomicMutex {
    /// 0: free; 1: held, no sleeper; 2: held, maybe sleepers.
    private var word = 0
    /// Guards the check-then-sleep of a waiter against the wake-up of an unlock.
    private var parking = pthread_mutex_t()
    /// Where contended lockers sleep.
    private var sleepers = pthread_cond_t()

    @usableFromInline static var free: Int { 0 }
    @usableFromInline static var held: Int { 1 }
    @usableFromInline static var contended: Int { 2 }

    // Nothing prepares the mutex and condition, and nothing ends them: glibc's
    // `PTHREAD_MUTEX_INITIALIZER` and `PTHREAD_COND_INITIALIZER` are all zero bytes, which
    // is how `init` leaves them, and glibc's `pthread_mutex_destroy` and
    // `pthread_cond_destroy` free nothing (they mark the objects unusable, and the
    // condition's waits for waiters still inside `pthread_cond_wait`). A lock goes with the
    // object that holds it (a `_Locked`, a container), after the last thread that slept here let go of that
    // object, so no waiter is left. Ending them cost every container, and every
    // construction another thread waited for, about 45 instructions.

    /// Takes the lock, sleeping while another thread holds it.
    @inlinable
    static func lock(_ lock: UnsafeMutablePointer<Self>) {
        if word(of: lock).pointee.compareExchange(expected: free, desired: held, ordering: .acquiringAndReleasing).exchanged {
            return
        }
        lockContended(lock)
    }

    /// The rest of ``lock(_:)`` when the lock is held by another thread: compiled once,
    /// here, while the uncontended path is inlined where the lock is taken.
    @usableFromInline @inline(never)
    static func lockContended(_ lock: UnsafeMutablePointer<Self>) {
        let word = word(of: lock)
        // Marked contended before each sleep, so that the holder's unlock wakes the sleepers.
        while word.pointee.exchange(contended, ordering: .acquiringAndReleasing) != free {
            pthread_mutex_lock(parking(of: lock))
            if word.pointee.load(ordering: .acquiring) == contended {
                pthread_cond_wait(sleepers(of: lock), parking(of: lock))
            }
            pthread_mutex_unlock(parking(of: lock))
        }
    }

    /// Gives the lock back, waking the sleepers if any may sleep.
    ///
    /// All of them, not one: glibc before 2.38 can lose a `pthread_cond_signal` (its bug
    /// 25847), which here would leave a sleeper asleep until the next contended unlock.
    /// The sleepers woken for nothing mark the word contended again and go back to sleep;
    /// under contention this still beats a `pthread_mutex_t` (16 threads on one lock:
    /// 0.15 s against 0.52 s).
    @inlinable
    static func unlock(_ lock: UnsafeMutablePointer<Self>) {
        guard word(of: lock).pointee.exchange(free, ordering: .acquiringAndReleasing) == contended else { return }
        wakeSleepers(lock)
    }

    /// Wakes the threads sleeping in ``lockContended(_:)``.
    @usableFromInline @inline(never)
    static func wakeSleepers(_ lock: UnsafeMutablePointer<Self>) {
        pthread_mutex_lock(parking(of: lock))
        pthread_cond_broadcast(sleepers(of: lock))
        pthread_mutex_unlock(parking(of: lock))
    }

    @inlinable
    static func word(of lock: UnsafeMutablePointer<Self>) -> UnsafeMutablePointer<Atomic<Int>> {
        UnsafeMutableRawPointer(lock).assumingMemoryBound(to: Atomic<Int>.self)
    }

    private static func parking(of lock: UnsafeMutablePointer<Self>) -> UnsafeMutablePointer<pthread_mutex_t> {
        (UnsafeMutableRawPointer(lock) + MemoryLayout<Int>.stride).assumingMemoryBound(to: pthread_mutex_t.self)
    }

    private static func sleepers(of lock: UnsafeMutablePointer<Self>) -> UnsafeMutablePointer<pthread_cond_t> {
        (UnsafeMutableRawPointer(lock) + MemoryLayout<Int>.stride + MemoryLayout<pthread_mutex_t>.stride)
            .assumingMemoryBound(to: pthread_cond_t.self)
    }
}
#endif
