#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The innermost synchronous construction running on each thread, in a thread-specific
/// slot.
///
/// A synchronous construction cannot suspend, so it starts and ends on one thread, with one
/// owner: a thread slot is enough to find it, and costs a fraction of a task-local binding
/// (which allocates an entry on every construction outside a task). The slot holds the frame
/// unretained: the construction's `bind` keeps it alive while it is there.
///
/// Only constructions whose frame a task they start must see (those whose result the
/// container keeps: see ``Frame/keepsResult``) and asynchronous ones are also bound as task-local
/// values; ``Frame/current`` reads this slot first, then the task-local chain.
///
/// ```swift
/// let entry = ThreadFrames.replace(with: frame)
/// defer { ThreadFrames.restore(entry) }
/// ```
@usableFromInline
enum ThreadFrames {
    /// The key of each thread's slot: one word, allocated on the thread's first
    /// construction and freed when the thread exits. Changing a word of one's own costs less
    /// than `pthread_setspecific` on every construction.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { free($0) }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    /// This thread's slot, made on first use.
    private static var slot: UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        if let slot = pthread_getspecific(key) { return slot.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) }
        let slot = malloc(MemoryLayout<UnsafeMutableRawPointer?>.stride)!
            .bindMemory(to: UnsafeMutableRawPointer?.self, capacity: 1)
        slot.initialize(to: nil)
        pthread_setspecific(key, slot)
        return slot
    }

    /// The innermost synchronous construction running on this thread, if any.
    static var innermost: Frame? {
        guard let slot = pthread_getspecific(key), let frame = slot.load(as: UnsafeMutableRawPointer?.self) else {
            return nil
        }
        return Unmanaged<Frame>.fromOpaque(frame).takeUnretainedValue()
    }

    /// What a construction puts back in the slot when it ends.
    @usableFromInline
    struct Entry {
        let slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
        let previous: UnsafeMutableRawPointer?
    }

    /// Makes `frame` this thread's innermost construction.
    static func replace(with frame: Frame) -> Entry {
        let slot = self.slot
        defer { slot.pointee = Unmanaged.passUnretained(frame).toOpaque() }
        return Entry(slot: slot, previous: slot.pointee)
    }

    /// Puts back what ``replace(with:)`` returned, when the construction ends.
    static func restore(_ entry: Entry) {
        entry.slot.pointee = entry.previous
    }
}
