#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The synchronous constructions running on each thread, in a thread-specific slot.
///
/// A synchronous construction cannot suspend, so it starts and ends on one thread, with one
/// owner: a thread slot is enough to find it, and costs a fraction of a task-local binding
/// (which allocates an entry on every construction outside a task). Only constructions whose
/// frame a task they start must see (those whose result the container keeps: see
/// ``Frame/keepsResult``) and asynchronous ones are also bound as task-local values;
/// ``Frame/current`` reads this slot first, then the task-local chain.
///
/// Besides the innermost frame, the slot files this thread's frames by a hash of what they
/// build, in 64 buckets chained through the frames. The cycle check then looks at the
/// frames of one bucket instead of the whole chain, so a chain of n constructions costs
/// O(n), not O(n²). Frames are held unretained: each construction's `bind` keeps its frame
/// alive while it is filed, and the frames end innermost first.
///
/// ```swift
/// let entry = ThreadFrames.replace(with: frame)
/// defer { ThreadFrames.restore(entry, removing: frame) }
/// ```
@usableFromInline
enum ThreadFrames {
    /// The words of a thread's slot: the innermost frame, the base (the frame the
    /// outermost of this thread's frames started in, if any), then the buckets.
    private static let innermostWord = 0
    private static let baseWord = 1
    private static let spareCountWord = 2
    private static let firstSpareWord = 3
    /// How many ended frames a thread keeps for reuse: enough for a chain of factories.
    static let spareCapacity = 16
    private static let firstBucketWord = firstSpareWord + spareCapacity
    static let bucketCount = 64

    /// The key of each thread's slot, allocated on the thread's first construction and
    /// freed when the thread exits. Changing words of one's own costs less than
    /// `pthread_setspecific` on every construction.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { words in
            guard let words else { return }
            Slot(words: words.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)).releaseSpares()
            free(words)
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    fileprivate typealias Words = UnsafeMutablePointer<UnsafeMutableRawPointer?>

    /// This thread's slot, made on first use.
    ///
    /// A construction that looks at its thread's frames several times (the plain factory
    /// road: the innermost frame, the cycle check, the filing) fetches the slot once here
    /// and asks it, instead of looking it up by key each time.
    static var slot: Slot {
        if let words = pthread_getspecific(key) { return Slot(words: words.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)) }
        let count = firstBucketWord + bucketCount
        let words = malloc(count * MemoryLayout<UnsafeMutableRawPointer?>.stride)!
            .bindMemory(to: UnsafeMutableRawPointer?.self, capacity: count)
        words.initialize(repeating: nil, count: count)
        pthread_setspecific(key, words)
        return Slot(words: words)
    }

    private static func frame(_ word: UnsafeMutableRawPointer?) -> Frame? {
        word.map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The innermost synchronous construction running on this thread, if any.
    static var innermost: Frame? {
        guard let words = pthread_getspecific(key) else { return nil }
        return Slot(words: words.assumingMemoryBound(to: UnsafeMutableRawPointer?.self)).innermost
    }

    /// The frames of this thread filed in `bucket`, innermost first, then the frame the
    /// thread's outermost construction started in: what a cycle check looks at when
    /// `innermost` is this thread's innermost frame. `nil` when it is not.
    static func sameBucket(as bucket: Int, below innermost: Frame) -> (candidates: Frame?, base: Frame?)? {
        guard let words = pthread_getspecific(key) else { return nil }
        return Slot(words: words.assumingMemoryBound(to: UnsafeMutableRawPointer?.self))
            .sameBucket(as: bucket, below: innermost)
    }

    /// The next frame filed in the same bucket as `frame`, further out.
    static func nextInBucket(after frame: Frame) -> Frame? {
        self.frame(frame.sameBucketBelow)
    }

    /// Makes `frame` this thread's innermost construction, and files it in its bucket.
    static func replace(with frame: Frame) -> Entry {
        slot.file(frame)
    }

    /// One thread's slot, fetched once by a construction that reads and files frames.
    struct Slot {
        fileprivate let words: Words

        /// The innermost synchronous construction running on the slot's thread, if any.
        var innermost: Frame? { ThreadFrames.frame(words[innermostWord]) }

        /// What ``ThreadFrames/sameBucket(as:below:)`` answers, for this slot.
        func sameBucket(as bucket: Int, below innermost: Frame) -> (candidates: Frame?, base: Frame?)? {
            guard words[innermostWord] == Unmanaged.passUnretained(innermost).toOpaque() else { return nil }
            return (ThreadFrames.frame(words[firstBucketWord + bucket]), ThreadFrames.frame(words[baseWord]))
        }

        /// How many ended frames the thread keeps for reuse.
        fileprivate(set) var spareCount: Int {
            get { Int(bitPattern: words[spareCountWord]) }
            nonmutating set { words[spareCountWord] = UnsafeMutableRawPointer(bitPattern: newValue) }
        }

        /// An ended frame of this thread's to reuse, if one is kept.
        func takeSpare() -> Frame? {
            let count = spareCount
            guard count > 0 else { return nil }
            spareCount = count - 1
            return Unmanaged<Frame>.fromOpaque(words[firstSpareWord + count - 1].unsafelyUnwrapped).takeRetainedValue()
        }

        /// Keeps `frame`, ended and referenced by no one else, for reuse on this thread.
        func keepSpare(_ frame: Frame) {
            let count = spareCount
            guard count < spareCapacity else { return }
            words[firstSpareWord + count] = Unmanaged.passRetained(frame).toOpaque()
            spareCount = count + 1
        }

        /// Lets go of the kept frames, when the thread ends.
        fileprivate func releaseSpares() {
            while let spare = takeSpare() { withExtendedLifetime(spare) {} }
        }

        /// Makes `frame` the thread's innermost construction, and files it in its bucket.
        func file(_ frame: Frame) -> Entry {
            let previous = words[innermostWord]
            let pointer = Unmanaged.passUnretained(frame).toOpaque()
            if previous == nil { words[baseWord] = frame.parent.map { Unmanaged.passUnretained($0).toOpaque() } }
            let bucket = firstBucketWord + frame.bucket
            frame.sameBucketBelow = words[bucket]
            words[bucket] = pointer
            words[innermostWord] = pointer
            return Entry(slot: words, previous: previous)
        }
    }

    /// What a construction puts back in the slot when it ends.
    @usableFromInline
    struct Entry {
        let slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
        let previous: UnsafeMutableRawPointer?

        /// The slot of the thread the entry was made on.
        var thread: Slot { Slot(words: slot) }
    }

    /// Puts back what ``replace(with:)`` returned, when `frame`'s construction ends.
    static func restore(_ entry: Entry, removing frame: Frame) {
        entry.slot[firstBucketWord + frame.bucket] = frame.sameBucketBelow
        entry.slot[innermostWord] = entry.previous
        if entry.previous == nil { entry.slot[baseWord] = nil }
    }
}
