#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import _DependencyInjectionShims

/// The synchronous constructions running on each thread, in a thread-specific slot.
///
/// A synchronous construction cannot suspend, so it starts and ends on one thread, with one
/// owner: a thread slot is enough to find it, and costs a fraction of a task-local binding
/// (which allocates an entry on every construction outside a task). Only constructions whose
/// frame a task they start must see (those whose result the container keeps: see
/// ``Frame/keepsResult``) and asynchronous ones are also bound as task-local values;
/// ``Frame/current`` reads this slot first, then the task-local chain.
///
/// The slot names each frame by a ``Word``: a ``Frame`` object, or a ``PlainFrame`` that
/// the slot itself keeps, in a stack of its own. Besides the innermost frame, the slot
/// files this thread's frames by a hash of what they build, in 64 buckets chained through
/// the frames. The cycle check then looks at the frames of one bucket instead of the whole
/// chain: about a sixty-fourth of the comparisons, which keeps the cost per level of the
/// chains apps write about the same at any depth (the comparisons still grow as n² for
/// chains of many thousands). All the frames filed belong to the owner that filed the
/// first: another owner's frames are never filed here (see
/// ``DependencyContainer/beginPlainFactory(_:_:)`` and ``Frame/fitsThreadSlot``), so
/// the check needs no owner of the frames it compares. Frames are held
/// unretained: each construction keeps its frame alive while it is filed, and the frames
/// end innermost first.
///
/// ```swift
/// let entry = ThreadFrames.replace(with: frame)
/// defer { ThreadFrames.restore(entry, removing: frame) }
/// ```
@usableFromInline
enum ThreadFrames {
    /// A frame as the slot names it: a ``Frame`` object's address, or a ``PlainFrame``'s
    /// address with its lowest bit set (objects are aligned to 16 bytes, plain frames to 8).
    typealias Word = UnsafeMutableRawPointer

    /// The indices of the words of a thread's slot: the innermost frame, the base (the frame the
    /// outermost of this thread's frames started in, if any), the block of plain frames in
    /// use and how many of its places are taken, the first block, the spare frame (retained),
    /// how many frames the thread has bound as task-local values, the container of the
    /// `@Dependency` read the thread serves without a frame and the task serving it (none
    /// for a thread's own code), the innermost frame running here for another owner than
    /// the one that files the thread's frames, then the buckets.
    private static let innermostIndex = 0
    private static let baseIndex = 1
    private static let plainBlockIndex = 2
    private static let plainCountIndex = 3
    private static let firstPlainBlockIndex = 4
    private static let spareIndex = 5
    private static let bindingsIndex = 6
    private static let unframedReadIndex = 7
    private static let unframedReaderIndex = 8
    private static let unfiledIndex = 9
    private static let firstBucketIndex = 10
    static let bucketBits = 6
    static let bucketCount = 1 << bucketBits
    /// How many plain frames one block of a thread's stack holds: enough for the chains of
    /// factories apps write. A deeper chain goes on in another block, made then and kept
    /// until the thread ends; plain frames never move, since words name them by address.
    static let plainBlockCapacity = 64

    /// The key under which each thread's slot is registered, so that the slot is freed when
    /// the thread exits. Only a thread's first construction and its exit use the key: every
    /// other look reads the slot's address from a C thread-local variable
    /// (`_DependencyInjectionShims`), a few instructions where `pthread_getspecific`
    /// behind this key's one-time initialization cost some 40. The exit clears that variable
    /// before freeing, so a destructor that runs later on the thread and resolves makes a
    /// new slot instead of using the freed one.
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { words in
            guard let words else { return }
            _di_set_thread_frames(nil)
            // A spare frame refers to nothing (``keepSpare(_:)``): releasing it runs no user code.
            if let spare = words.assumingMemoryBound(to: Word?.self)[spareIndex] {
                Unmanaged<Frame>.fromOpaque(spare).release()
            }
            var block = words.assumingMemoryBound(to: Word?.self)[firstPlainBlockIndex].map(PlainBlock.init)
            while let current = block {
                block = current.above
                free(current.address)
            }
            free(words)
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    fileprivate typealias Words = UnsafeMutablePointer<Word?>

    /// This thread's slot, made on first use.
    ///
    /// A construction that looks at its thread's frames several times (the plain factory
    /// road: the innermost frame, the cycle check, the filing) fetches the slot once here
    /// and asks it. Inlined, with the making kept out of line: the look is one load.
    static var slot: Slot {
        @inline(__always) get {
            if let words = _di_thread_frames() { return Slot(words: words.assumingMemoryBound(to: Word?.self)) }
            return makeSlot()
        }
    }

    /// Makes this thread's slot, with its first block of plain frames, and registers it to
    /// be freed when the thread exits; or finds the one registered, when the thread-local
    /// variable reads nil while the thread still has one.
    ///
    /// That happens as a thread exits on Apple platforms: the system frees the block of
    /// the thread's C thread-local variables from a destructor that may run before the
    /// slot's, and a destructor that runs in between and resolves reads a new, empty
    /// block. Registering a second slot there would leak the first.
    @inline(never)
    private static func makeSlot() -> Slot {
        if let registered = pthread_getspecific(key) {
            _di_set_thread_frames(registered)
            return Slot(words: registered.assumingMemoryBound(to: Word?.self))
        }
        let count = firstBucketIndex + bucketCount
        let words = malloc(count * MemoryLayout<Word?>.stride)!.bindMemory(to: Word?.self, capacity: count)
        words.initialize(repeating: nil, count: count)
        let block = PlainBlock.make(below: nil)
        (words[plainBlockIndex], words[firstPlainBlockIndex]) = (block.address, block.address)
        pthread_setspecific(key, words)
        _di_set_thread_frames(words)
        return Slot(words: words)
    }

    /// This thread's slot, if it has made one: for a look that must not make one.
    static var existingSlot: Slot? {
        _di_thread_frames().map { Slot(words: $0.assumingMemoryBound(to: Word?.self)) }
    }

    // MARK: - The spare frame

    /// This thread's spare frame, taken from its slot, for a property's first read to fill
    /// with ``Frame/reuse(forReadOf:from:keepsResult:site:trace:owner:parent:)`` instead of
    /// allocating one; nil when the thread has none. The read gives it back with
    /// ``keepSpare(_:)`` when it ends.
    ///
    /// Objects with an injected property are made all day, and each first read ran in a
    /// frame of its own: an allocation and a `free`, a third of the allocations of making
    /// such an object and reading its property. The slot keeps one ended frame instead. It is
    /// taken out while a read runs, so that a read nested in it (a property read while the
    /// first one resolves) makes a frame of its own.
    ///
    /// ```swift
    /// let spare = ThreadFrames.takeSpareFrame()   // outside every lock
    /// spare?.reuse(forReadOf: ObjectIdentifier(storage), from: container, keepsResult: false,
    ///              site: site, trace: nil, owner: owner, parent: enclosing)
    /// var ended: AnyObject? = spare              // the read's one reference, at its end
    /// ThreadFrames.keepSpare(&ended)              // outside every lock
    /// ```
    static func takeSpareFrame() -> Frame? {
        let slot = slot
        guard let word = slot.words[spareIndex] else { return nil }
        slot.words[spareIndex] = nil
        return Unmanaged<Frame>.fromOpaque(word).takeRetainedValue()
    }

    /// How many frames this thread has bound as task-local values so far: the only way a
    /// frame reaches another thread without a lock is a task that inherits a bound frame
    /// whose chain leads to it, so a read during which this count did not change was seen
    /// by no such task (``keepSpare(_:)``).
    static var bindingsMade: Int { Int(bitPattern: slot.words[bindingsIndex]) }

    /// Counts a frame this thread binds as a task-local value.
    static func noteBinding() {
        let slot = slot
        slot.words[bindingsIndex] = Word(bitPattern: Int(bitPattern: slot.words[bindingsIndex]) &+ 1)
    }

    /// Marks this thread as serving a `@Dependency` first read from `container` without a
    /// frame, while the provider's getter runs: every read on the thread meanwhile takes a
    /// frame (``isReadingUnframed``), so that a read that comes back to a property is a
    /// cycle, named with every property on its way, and an object the getter creates
    /// resolves from `container` (``unframedReadContainer``), as in a frame; not one that
    /// another owner creates on this thread (a task the getter starts with
    /// `Task.immediate`), which is someone else, as for a frame. The caller holds
    /// `container` until ``endUnframedRead()``.
    ///
    /// ```swift
    /// ThreadFrames.beginUnframedRead(from: container)
    /// defer { ThreadFrames.endUnframedRead() }
    /// ```
    static func beginUnframedRead(from container: DependencyContainer) {
        let slot = slot
        slot.words[unframedReadIndex] = Unmanaged.passUnretained(container).toOpaque()
        // One thread's owners differ only by their task.
        slot.words[unframedReaderIndex] = _di_running_task()
    }

    /// Ends what ``beginUnframedRead(from:)`` began.
    static func endUnframedRead() {
        slot.words[unframedReadIndex] = nil
    }

    /// Whether this thread is serving a first read without a frame.
    static var isReadingUnframed: Bool { existingSlot?.words[unframedReadIndex] != nil }

    /// The container of the first read this thread serves without a frame, if the owner
    /// running this code serves it.
    static var unframedReadContainer: DependencyContainer? {
        guard let slot = existingSlot, let word = slot.words[unframedReadIndex],
            slot.words[unframedReaderIndex] == _di_running_task()
        else { return nil }
        return Unmanaged<DependencyContainer>.fromOpaque(word).takeUnretainedValue()
    }

    /// Keeps `frame`, a read's frame that has ended, as this thread's spare, and sets
    /// `frame` to nil either way. Call it outside every lock, and only for a read during
    /// which this thread bound no frame as a task-local value (``bindingsMade`` did not
    /// change), so that no task can have read it: a task reads the frames it inherited
    /// without a lock, and the end of its reads is ordered before the refill only by the
    /// reference count, which is not a synchronization. When the read held the last
    /// reference, the frame is kept, and lets go of the frames and the trace batch it
    /// refers to, whose `deinit`s may run; otherwise it is only released.
    static func keepSpare<Object: AnyObject>(_ frame: inout Object?) {
        guard isKnownUniquelyReferenced(&frame), let ended = frame else {
            frame = nil
            return
        }
        frame = nil
        let spare = unsafeDowncast(ended, to: Frame.self)
        spare.forgetLinks()
        let slot = slot
        if let previous = slot.words[spareIndex] {
            // A nested read's frame came back first: keep one.
            Unmanaged<Frame>.fromOpaque(previous).release()
        }
        slot.words[spareIndex] = Unmanaged.passRetained(spare).toOpaque()
    }

    /// The plain frame a word names, if it names one.
    @inline(__always)
    static func plain(_ word: Word) -> UnsafeMutablePointer<PlainFrame>? {
        let bits = UInt(bitPattern: word)
        guard bits & 1 != 0 else { return nil }
        return UnsafeMutablePointer(bitPattern: bits & ~1)
    }

    /// The owner of the frame a word names.
    static func owner(of word: Word) -> Owner {
        if let plain = plain(word) { return plain.pointee.owner }
        return Unmanaged<Frame>.fromOpaque(word).takeUnretainedValue().owner
    }

    /// Whether the frame a word names builds `key` in `container`.
    static func builds(_ word: Word, _ key: RegistrationKey, in container: ObjectIdentifier) -> Bool {
        if let plain = plain(word) { return plain.pointee.builds(key, in: container) }
        let frame = Unmanaged<Frame>.fromOpaque(word).takeUnretainedValue()
        return frame.container == container && frame.key == key
    }

    /// The next frame filed in the same bucket as the one a word names, further out.
    static func nextInBucket(after word: Word) -> Word? {
        if let plain = plain(word) { return plain.pointee.sameBucketBelow }
        return Unmanaged<Frame>.fromOpaque(word).takeUnretainedValue().sameBucketBelow
    }

    /// Whether `frame` is a synchronous construction running on this thread, whoever its
    /// owner: filed in this thread's slot, or running here unfiled (``runningUnfiled(_:_:)``).
    static func runs(_ frame: Frame) -> Bool {
        guard let slot = existingSlot else { return false }
        let word = Unmanaged.passUnretained(frame).toOpaque()
        var candidate = slot.firstInBucket(frame.bucket)
        while let filed = candidate {
            if filed == word { return true }
            candidate = nextInBucket(after: filed)
        }
        candidate = slot.words[unfiledIndex]
        while let running = candidate {
            if running == word { return true }
            candidate = Unmanaged<Frame>.fromOpaque(running).takeUnretainedValue().sameBucketBelow
        }
        return false
    }

    /// Runs `body`, the synchronous construction of `frame`, noting that it runs on this
    /// thread though the thread does not file it: its owner is a task started with
    /// `Task.immediate` inside a construction of another owner, whose frames the thread
    /// files (``Frame/fitsThreadSlot``). A task started the same way inside `body` that
    /// waits for `frame` then stops with a message (``runs(_:)``), where it blocked the
    /// thread `frame` needs to go on. The frames noted so are chained through their
    /// ``Frame/sameBucketBelow``, which only filing uses otherwise.
    ///
    /// ```swift
    /// ThreadFrames.runningUnfiled(frame) { Frame.$bound.withValue(Bound(frame: frame), operation: body) }
    /// ```
    static func runningUnfiled<Result>(_ frame: Frame, _ body: () throws -> Result) rethrows -> Result {
        let slot = slot
        frame.sameBucketBelow = slot.words[unfiledIndex]
        slot.words[unfiledIndex] = Unmanaged.passUnretained(frame).toOpaque()
        defer {
            slot.words[unfiledIndex] = frame.sameBucketBelow
            frame.sameBucketBelow = nil
        }
        return try body()
    }

    /// The owners other than `owner` whose synchronous constructions run on this thread,
    /// each with its innermost one there: the owner that files the thread's frames, and
    /// those of tasks started with `Task.immediate` that run unfiled
    /// (``runningUnfiled(_:_:)``). Code of `owner` that runs now runs above all of them on
    /// the thread's stack, so while it blocks the thread, none of them can go on
    /// (``WaitGraph/beginWaiting(_:innermost:on:blocksThread:)``). Most threads run none.
    static func ownersBelow(_ owner: Owner) -> [(owner: Owner, innermost: Frame)] {
        guard let slot = existingSlot else { return [] }
        var below: [(owner: Owner, innermost: Frame)] = []
        var candidate = slot.words[unfiledIndex]
        while let running = candidate {
            let frame = Unmanaged<Frame>.fromOpaque(running).takeUnretainedValue()
            if frame.owner != owner, !below.contains(where: { $0.owner == frame.owner }) {
                below.append((frame.owner, frame))
            }
            candidate = frame.sameBucketBelow
        }
        if let word = slot.innermostWord, Self.owner(of: word) != owner {
            below.append((Self.owner(of: word), slot.object(for: word)))
        }
        return below
    }

    /// The owner of the innermost synchronous construction running on this thread, if any.
    static var innermostOwner: Owner? {
        existingSlot?.innermostWord.map(owner(of:))
    }

    /// Whether a synchronous construction is running on this thread.
    static var isBuilding: Bool {
        existingSlot?.innermostWord != nil
    }

    /// The innermost synchronous construction running on this thread, if `owner` runs it,
    /// as an object (made now if it is a plain frame).
    static func innermost(of owner: Owner) -> Frame? {
        guard let slot = existingSlot, let word = slot.innermostWord, Self.owner(of: word) == owner else { return nil }
        return slot.object(for: word)
    }

    /// Makes `frame` this thread's innermost construction, and files it in its bucket.
    static func replace(with frame: Frame) -> Entry {
        slot.file(frame)
    }

    /// One thread's slot, fetched once by a construction that reads and files frames.
    struct Slot {
        fileprivate let words: Words

        /// The innermost synchronous construction running on the slot's thread, if any.
        var innermostWord: Word? { words[innermostIndex] }

        /// The frame the outermost of the thread's frames started in, if any.
        var base: Frame? { words[baseIndex].map { Unmanaged<Frame>.fromOpaque($0).takeUnretainedValue() } }

        /// The innermost frame of the thread filed in `bucket`, if any.
        func firstInBucket(_ bucket: Int) -> Word? { words[firstBucketIndex + bucket] }

        /// Whether `frame` is this thread's innermost construction: the object filed, or the
        /// one made for the plain frame filed.
        func isInnermost(_ frame: Frame) -> Bool {
            guard let word = words[innermostIndex] else { return false }
            let object = Unmanaged.passUnretained(frame)
            if let plain = ThreadFrames.plain(word) { return plain.pointee.object?.toOpaque() == object.toOpaque() }
            return word == object.toOpaque()
        }

        /// The block of the stack of plain frames in use.
        fileprivate var plainBlock: PlainBlock {
            get { PlainBlock(address: words[plainBlockIndex].unsafelyUnwrapped) }
            nonmutating set { words[plainBlockIndex] = newValue.address }
        }

        /// How many places of the block in use are taken.
        fileprivate var plainCount: Int {
            get { Int(bitPattern: words[plainCountIndex]) }
            nonmutating set { words[plainCountIndex] = Word(bitPattern: newValue) }
        }

        /// How many plain frames the thread's stack holds, in all its blocks.
        var plainDepth: Int {
            var (depth, block) = (plainCount, plainBlock.below)
            while let below = block { (depth, block) = (depth + plainBlockCapacity, below.below) }
            return depth
        }

        /// The object for the frame a word names: the frame itself, or the object made for a
        /// plain frame, made now, with objects for the plain frames below it that have none.
        /// The slot holds what it makes until the plain frame's factory ends
        /// (``ThreadFrames/leave(_:)``).
        func object(for word: Word) -> Frame {
            guard var plain = ThreadFrames.plain(word) else { return Unmanaged<Frame>.fromOpaque(word).takeUnretainedValue() }
            if let object = plain.pointee.object { return object.takeUnretainedValue() }
            // The common case: the frame below is an object, or has one, or there is none.
            guard let parent = plain.pointee.parent else { return make(plain, below: nil) }
            if ThreadFrames.plain(parent).map({ $0.pointee.object != nil }) ?? true {
                return make(plain, below: object(for: parent))
            }
            // Down to the first frame that has an object (or to the start of the chain),
            // then up, each object the parent of the next: a loop, for chains of any depth.
            var pending = [plain]
            var below: Frame?
            while let parent = plain.pointee.parent {
                guard let next = ThreadFrames.plain(parent) else {
                    below = Unmanaged<Frame>.fromOpaque(parent).takeUnretainedValue()
                    break
                }
                if let object = next.pointee.object {
                    below = object.takeUnretainedValue()
                    break
                }
                pending.append(next)
                plain = next
            }
            for frame in pending.reversed() { below = make(frame, below: below) }
            return below.unsafelyUnwrapped
        }

        /// Makes the object for `plain`, whose parent is `below`, and keeps it until the
        /// plain frame ends: a ``LinkCallFrame`` for a factory of a link's own container.
        private func make(_ plain: UnsafeMutablePointer<PlainFrame>, below: Frame?) -> Frame {
            let object =
                plain.pointee.building.isLinkHost ? LinkCallFrame(plain.pointee, below: below) : Frame(plain.pointee, below: below)
            plain.pointee.object = Unmanaged.passRetained(object)
            return object
        }

        /// Makes a plain frame with these fields the thread's innermost construction, and
        /// files it in its bucket.
        ///
        /// Inlined into the plain factory road, which hands it six arguments of ten words:
        /// out of line, passing them and saving the registers it uses cost a factory 24 instructions
        /// (713 against 689) and each level of a chain about 27. It was kept out of line
        /// while the road built the cycle report's site up front, whose registers spilled
        /// when the frame was written inline (856 against 908 then).
        @inline(__always)
        func file(
            parent: Word?, owner: Owner, building: DependencyContainer, key: RegistrationKey, name: StaticString,
            bucket: Int
        ) -> Entry {
            var (block, count) = (plainBlock, plainCount)
            if count == plainBlockCapacity {
                block = block.above ?? block.makeAbove()
                (plainBlock, count) = (block, 0)
            }
            let frame = block.frames + count
            frame.initialize(
                to: PlainFrame(parent: parent, owner: owner, building: building, key: key, name: name, bucket: bucket))
            plainCount = count + 1
            return file(Word(bitPattern: UInt(bitPattern: frame) | 1).unsafelyUnwrapped, bucket: bucket, parent: parent) {
                frame.pointee.sameBucketBelow = $0
            }
        }

        /// Makes `frame` the thread's innermost construction, and files it in its bucket.
        func file(_ frame: Frame) -> Entry {
            file(Unmanaged.passUnretained(frame).toOpaque(), bucket: frame.bucket, parent: frame.parent.map {
                Unmanaged.passUnretained($0).toOpaque()
            }) { frame.sameBucketBelow = $0 }
        }

        @inline(__always)
        private func file(_ word: Word, bucket: Int, parent: Word?, linkingBelow link: (Word?) -> Void) -> Entry {
            let previous = words[innermostIndex]
            if previous == nil { words[baseIndex] = parent }
            let bucket = firstBucketIndex + bucket
            link(words[bucket])
            words[bucket] = word
            words[innermostIndex] = word
            return Entry(slot: words, previous: previous)
        }
    }

    /// What a construction puts back in the slot when it ends.
    @usableFromInline
    struct Entry {
        let slot: UnsafeMutablePointer<Word?>
        let previous: Word?

        /// The slot of the thread the entry was made on.
        var thread: Slot { Slot(words: slot) }
    }

    /// Puts back what ``replace(with:)`` returned, when `frame`'s construction ends.
    static func restore(_ entry: Entry, removing frame: Frame) {
        unfile(entry, bucket: frame.bucket, sameBucketBelow: frame.sameBucketBelow)
    }

    /// Takes the innermost frame, filed in `bucket`, out of the slot: what was filed before
    /// it becomes the innermost and the head of its bucket again.
    @inline(__always)
    private static func unfile(_ entry: Entry, bucket: Int, sameBucketBelow: Word?) {
        entry.slot[firstBucketIndex + bucket] = sameBucketBelow
        entry.slot[innermostIndex] = entry.previous
        if entry.previous == nil { entry.slot[baseIndex] = nil }
    }

    /// Ends the innermost plain frame, which ``Slot/file(parent:owner:building:key:name:bucket:)`` filed, and the
    /// object made for it, if any.
    @usableFromInline
    static func leave(_ entry: Entry) {
        let slot = entry.thread
        let (block, count) = (slot.plainBlock, slot.plainCount - 1)
        let frame = block.frames + count
        assert(
            entry.slot[innermostIndex] == Word(bitPattern: UInt(bitPattern: frame) | 1),
            "a plain frame ended while a frame filed after it still runs")
        unfile(entry, bucket: frame.pointee.bucket, sameBucketBelow: frame.pointee.sameBucketBelow)
        if count == 0, let below = block.below {
            (slot.plainBlock, slot.plainCount) = (below, plainBlockCapacity)
        } else {
            slot.plainCount = count
        }
        if let object = frame.pointee.object { end(object) }
    }

    /// Ends the object made for a plain frame that has just left its slot, and lets go of
    /// it. A linked provider's call then delivers what it resolved outside every
    /// construction, now that its frame has ended (``LinkCallFrame``). Out of line: in
    /// ``leave(_:)``, its registers were saved and restored on every factory (a 50-level
    /// chain 250 instructions dearer).
    @inline(never)
    private static func end(_ object: Unmanaged<Frame>) {
        let ended = object.takeUnretainedValue()
        ended.end()
        let trace = ObjectIdentifier(type(of: ended)) == ObjectIdentifier(LinkCallFrame.self)
            ? unsafeDowncast(ended, to: LinkCallFrame.self).takeDeferredTrace() : nil
        object.release()
        trace?.deliver()
    }
}
