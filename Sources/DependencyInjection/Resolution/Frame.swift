import _DependencyInjectionShims

/// Who runs a piece of code: a task, or a thread outside any task.
///
/// A construction belongs to the owner that runs it. Frames are inherited by every task
/// created inside a construction (task-local values are), so the owner is what tells the
/// construction's own code from a task it spawned: that task is someone else, and asking
/// for the construction in progress makes it wait instead of reporting a cycle.
struct Owner: Hashable, Sendable {
    /// The task's or the thread's address, with the lowest bit set for a task: both are
    /// aligned, so the bit is free, and one word is one store and one comparison.
    private let bits: UInt

    private init(id: UnsafeRawPointer, isTask: Bool) { bits = UInt(bitPattern: id) | (isTask ? 1 : 0) }

    private init(bits: UInt) { self.bits = bits }

    /// Stands for no owner, where none is needed (a cache hit builds and waits for nothing).
    static let nobody = Owner(bits: 0)

    /// The task running this code, or the thread when no task does.
    ///
    /// The task's address, not its hash value: two tasks never share an address while both
    /// run. Read from the concurrency runtime through `_DependencyInjectionShims`, as
    /// `withUnsafeCurrentTask` reads it but without that function's generic call and
    /// closure, some 50 instructions on every construction. A thread is named by the
    /// address of one of its thread-local variables, which needs no call either.
    static var current: Owner {
        if let task = _di_running_task() { return Owner(id: task, isTask: true) }
        return Owner(id: _di_thread_identity(), isTask: false)
    }
}

/// Where a registration (or a `@Dependency` property) is declared, for messages.
///
/// Naming runs no user code: a registration's name is the static string of its helper's
/// `name` parameter, and a property is named by the type that declares it and the line of
/// its declaration, never by evaluating anything.
struct Site: Sendable, CustomStringConvertible {
    enum Name {
        case registration(StaticString)
        /// A `@Dependency` property, by the type that declares it.
        case property(in: StaticString)
    }

    let name: Name
    /// The file, as the key keeps it: a first build names its site without counting the
    /// file name's length, which only a message needs.
    let file: FileName
    let line: UInt

    init(name: Name, file: FileName, line: UInt) {
        (self.name, self.file, self.line) = (name, file, line)
    }

    init(name: Name, fileID: StaticString, line: UInt) {
        self.init(name: name, file: FileName(fileID), line: line)
    }

    /// The `#fileID` of the declaration.
    var fileID: StaticString { file.string }

    var nameText: String {
        switch name {
        case .registration(let name): return name.description
        case .property(let type): return "@Dependency in \(type)"
        }
    }

    /// `feedLoader (App/Services.swift:12)`.
    var description: String { "\(nameText) (\(fileID):\(line))" }
}

/// One construction in progress: what is built, in which container, by which owner, and
/// inside which other construction.
///
/// Frames form an immutable chain, innermost first, bound as a task-local value while a
/// construction runs, for synchronous and asynchronous code alike. The chain is the
/// package's one answer to "who is building here": it finds cycles on one owner, it gives
/// trace depths and batches, it tells a `@Dependency` created during a construction which
/// container built its owner, and whether that container keeps the owner.
///
/// ```swift
/// let frame = Frame(container: id, building: container, keepsResult: true, key: key, site: site,
///                   servesScope: nil, trace: nil, owner: .current, parent: Frame.current)
/// frame.bind { make() }
/// ```
///
/// A resolution past the inline cache is itself the frame its synchronous construction
/// runs in (``Resolution``, the one subclass); plain factories and asynchronous
/// constructions use frames of this class. What inlinable code calls is `final`: the app's
/// module cannot know there is no other subclass, and called those methods through the
/// class's table (a 50-level chain of factories cost 1,000 instructions more).
///
/// A task created inside a construction inherits the chain, and can outlive it. So a frame
/// is *active* only while its binding lasts, and code asks "am I building here?" only of
/// active frames: an ended frame's owner may be gone, and its task's address reused by a
/// task that inherited the chain.
@usableFromInline
class Frame: @unchecked Sendable {
    // @unchecked: `activeWord` is read and written only atomically; `graphInstances` only
    // by the owner, one step at a time; everything else is immutable while the frame is
    // reachable by anyone but its owner. A property's first read reuses its thread's spare
    // frame (`reuse`, `forgetLinks`) only when no task could have reached it: its thread
    // bound nothing as a task-local value during the read, and no other owner came to it
    // through the property's storage (``ThreadFrames/keepSpare(_:)``). That rests on a rule
    // every change must keep: a frame whose chain may lead to a read's frame reaches another
    // thread only through a task-local binding (which its thread counts) or a structure
    // guarded by a lock its owner takes again before the read ends (the wait graph, a
    // storage's state), never in a closure or a store that no such lock guards. The task
    // of an asynchronous construction captures its resolution, whose chain cannot lead to
    // a read's frame: a read is synchronous, and an asynchronous resolution started inside
    // it runs as another owner, which does not see the thread's frames.

    /// Non-nil while the frame is bound. It must stay the first stored property: it is
    /// reached through the address of the object's stored properties, for atomic access.
    private var activeWord: UnsafeRawPointer? = UnsafeRawPointer(bitPattern: 1)

    /// The innermost construction bound as a task-local value: an asynchronous one, or a
    /// synchronous one that tasks it starts must see. Read through ``current``.
    @TaskLocal private static var bound = Bound(frame: nil)

    /// A frame as a task-local value: a struct of its own, not `Frame?`, so that the
    /// runtime copies and destroys it through this type's own value witnesses, a retain and
    /// a release. `Optional`'s are generic and look at the payload's metadata: about 65
    /// instructions on each binding's end alone.
    private struct Bound: Sendable {
        let frame: Frame?
    }

    /// How many frames are bound as task-local values right now, in the whole process. While
    /// none is, every frame a task inherited has ended, and ``current`` skips the task-local
    /// lookup.
    ///
    /// The count is a C word of `_DependencyInjectionShims`: every construction reads it,
    /// and there it is a plain atomic load (on this package's oldest systems Swift offers
    /// one only as a compare-and-exchange, which writes the shared word), with no one-time
    /// initialization before it.
    ///
    /// ```swift
    /// BoundCount.increment()
    /// defer { BoundCount.decrement() }
    /// ```
    private enum BoundCount {
        static var isZero: Bool { _di_no_bound_frames() }
        static func increment() {
            _di_add_bound_frames(1)
            // A read's frame that a task may reach is not kept for reuse (ThreadFrames.keepSpare).
            ThreadFrames.noteBinding()
        }
        static func decrement() { _di_add_bound_frames(-1) }
    }

    /// The innermost construction running here: this thread's synchronous one, else the
    /// task's bound one.
    static var current: Frame? { ownerAndInnermost.1 }

    /// What cycles are keyed by: the container, or the `@Dependency` storage, that builds.
    @exclusivity(unchecked) private(set) var container: ObjectIdentifier
    /// The container that runs this construction (or that a `@Dependency` resolves from).
    /// Read only through ``building(from:owner:)``, by the frame's owner while the frame is
    /// active, when the container is busy and so alive; `unowned(unsafe)` spares a
    /// reference count on every construction, and a frame inherited by a task that
    /// outlives the container never reads it.
    @exclusivity(unchecked) private(set) unowned(unsafe) var building: DependencyContainer
    @exclusivity(unchecked) private(set) var buildingID: ObjectIdentifier
    /// Whether `building` keeps what this frame builds (a singleton, or an object the
    /// container keeps whose property this frame resolves): a `@Dependency` created under
    /// it must not hold that container strongly.
    @exclusivity(unchecked) private(set) var keepsResult: Bool
    @exclusivity(unchecked) private(set) var key: RegistrationKey
    @exclusivity(unchecked) private(set) var site: Site
    /// Whether this is a construction's frame, not a `@Dependency` property's first read or
    /// a linked provider's call (``DeferredTraceFrame``).
    final var isConstruction: Bool { !(self is DeferredTraceFrame) }
    /// The scope container this frame builds for, when `building` is that scope's app
    /// container building an app-wide instance the scope asked for: what the construction
    /// asks of the scope, it asks of `building`.
    @exclusivity(unchecked) private(set) var servesScope: ObjectIdentifier?
    @exclusivity(unchecked) private(set) var owner: Owner
    @exclusivity(unchecked) private(set) var parent: Frame?
    /// The trace batch of the outermost traced resolution, if tracing.
    @exclusivity(unchecked) private(set) var trace: TraceBatch?
    /// The number, in ``trace``, of the event of the nearest traced resolution this frame
    /// runs in (its own, or one enclosing it), or -1: what a resolution traced in this
    /// frame is nested under, which a batch that tasks fill at once cannot tell from the
    /// order and depths of its events (``TraceBatch/ownTrees(_:enclosing:)``).
    @exclusivity(unchecked) private(set) var traceEvent: Int
    /// How many constructions enclose this frame, for trace depths: 0 for the outermost.
    /// A property's first read is no level of its own: what it resolves inside a
    /// construction is one level below that construction, as what the construction
    /// resolves itself, and a first read that nothing encloses is at -1, so that what it
    /// resolves is at 0.
    @exclusivity(unchecked) private(set) var depth: Int
    /// Which of its thread's buckets files this frame (see ``ThreadFrames``).
    @exclusivity(unchecked) private(set) var bucket: Int
    /// The next frame of the same bucket further out, while this one is filed on its thread;
    /// or, while it runs on a thread that files another owner's frames, the next such frame
    /// further out (``ThreadFrames/runningUnfiled(_:_:)``). Only its own thread touches it,
    /// meanwhile.
    @exclusivity(unchecked) var sameBucketBelow: ThreadFrames.Word?
    /// The graph instances of the outermost resolution this frame runs, if it is one: only
    /// its owner touches them, one step at a time, while the frame is active, and they go
    /// when it ends. Exclusivity is not checked dynamically: every construction would pay.
    @exclusivity(unchecked) var graphInstances = GraphInstances()
    /// The outermost active frame of this frame's owner around it, once a walk found it
    /// (``outermost(of:from:)``); unretained, as it outlives this frame's activity. Only the
    /// owner reads or writes it, while the frame is active.
    @exclusivity(unchecked) var knownOutermost: Unmanaged<Frame>?
    /// What resolutions running inside this frame, the outermost of its owner, held of an
    /// override or a tracer when they ended, kept until this frame ends (``hold(_:_:)``):
    /// the first in a slot of its own, the rest in an array, made for the second. A request
    /// whose handler resolves the request's user through the scope's override holds one,
    /// and an array for it cost every such request an allocation, some 1,100 instructions.
    @exclusivity(unchecked) private var firstHeld: AnyObject?
    @exclusivity(unchecked) private var moreHeld: [AnyObject]?
    /// Whether this frame lets go of what it holds until its end (its graph instances, and
    /// what ``hold(_:_:)`` kept) only once complete, in ``completed()``, not in ``end()``:
    /// a construction the container lists, once the container has completed it (it is
    /// still listed when the frame ends, and a `deinit` that resolved it would wait for it
    /// on the thread that is to complete it); a property's first read, once it has
    /// published (a `deinit` reading the property would find the read still running).
    final let releasesHeldOnCompletion: Bool
    /// What the construction of a `graph` or `shared` instance noted of the `@Dependency`
    /// properties created under it holding its container strongly (``StrongHolders``),
    /// once it noted something; only its owner touches it while it runs. The frame of an
    /// asynchronous one fills its resolution's, from the start.
    @exclusivity(unchecked) var strongHolders: StrongHolders?

    init(
        container: ObjectIdentifier, building: DependencyContainer, keepsResult: Bool, key: RegistrationKey,
        site: Site, servesScope: ObjectIdentifier?, trace: TraceBatch?, owner: Owner, parent: Frame?,
        countsALevel: Bool = true, traceEvent: Int? = nil, releasesHeldOnCompletion: Bool = false
    ) {
        self.container = container
        self.building = building
        self.buildingID = ObjectIdentifier(building)
        self.keepsResult = keepsResult
        self.key = key
        self.site = site
        self.servesScope = servesScope
        self.owner = owner
        self.parent = parent
        self.trace = trace
        self.traceEvent = traceEvent ?? Frame.event(in: trace, under: parent)
        self.depth = (parent?.depth ?? -1) + (countsALevel ? 1 : 0)
        self.bucket = Frame.bucket(of: key, in: container)
        self.releasesHeldOnCompletion = releasesHeldOnCompletion
    }

    /// Makes this ended frame of a property's first read, which no one else holds any more,
    /// the frame of another first read on its thread (``ThreadFrames/takeSpareFrame()``):
    /// the read of the storage `storage`, from `building`. What every such frame shares, its
    /// key and the scope it serves (none), stays.
    ///
    /// ```swift
    /// spare.reuse(forReadOf: ObjectIdentifier(storage), from: container, keepsResult: false, site: site,
    ///             trace: enclosing?.trace, owner: owner, parent: enclosing)
    /// ```
    final func reuse(
        forReadOf storage: ObjectIdentifier, from building: DependencyContainer, keepsResult: Bool, site: Site,
        trace: TraceBatch?, owner: Owner, parent: Frame?
    ) {
        (container, self.building, buildingID) = (storage, building, ObjectIdentifier(building))
        (self.keepsResult, self.site, self.owner) = (keepsResult, site, owner)
        (self.parent, self.trace, depth) = (parent, trace, parent?.depth ?? -1)
        traceEvent = Frame.event(in: trace, under: parent)
        (bucket, sameBucketBelow, knownOutermost) = (Frame.bucket(of: key, in: storage), nil, nil)
        var ended: UnsafeRawPointer? = nil
        _ = _stdlib_atomicCompareExchangeStrongPtr(
            object: activeWordAddress, expected: &ended, desired: UnsafeRawPointer(bitPattern: 1))
    }

    /// The list ``strongHolders`` fills, made now if it was not.
    final var strongHoldersToFill: StrongHolders {
        if let made = strongHolders { return made }
        let made = StrongHolders()
        strongHolders = made
        return made
    }

    /// Whether this frame builds a `graph` or `shared` instance, a construction that notes
    /// the `@Dependency` properties created under it holding its container strongly: a
    /// resolution of either scope, or the frame an asynchronous one runs in, which starts
    /// with its resolution's list. Asked only where such a property is created inside a
    /// construction.
    final var collectsStrongHolders: Bool {
        if strongHolders != nil { return true }
        guard ObjectIdentifier(type(of: self)) == ObjectIdentifier(Resolution.self) else { return false }
        let scope = unsafeDowncast(self, to: Resolution.self).scope
        return scope == .graph || scope == .shared
    }

    /// Lets go of what this ended frame refers to (the frames it ran in, the trace batch),
    /// when no one else holds it: it is kept for reuse, and must not keep them alive.
    final func forgetLinks() {
        (parent, trace, traceEvent) = (nil, nil, -1)
    }

    /// Joins the trace batch `batch` as its event numbered `event`, before this frame
    /// runs: what its construction resolves joins it too, nested under that event.
    final func join(_ batch: TraceBatch, as event: Int) {
        (trace, traceEvent) = (batch, event)
    }

    /// The event that a frame carrying `trace` under `parent` runs in: the parent's, when
    /// the parent carries the same batch; none otherwise.
    private static func event(in trace: TraceBatch?, under parent: Frame?) -> Int {
        guard let trace, let parent, parent.trace === trace else { return -1 }
        return parent.traceEvent
    }

    /// Runs `body` with this frame bound as the innermost construction, and ends the frame
    /// when `body` returns.
    func bind<Result>(_ body: () throws -> Result) rethrows -> Result {
        guard fitsThreadSlot else {
            BoundCount.increment()
            defer {
                BoundCount.decrement()
                end()
            }
            return try ThreadFrames.runningUnfiled(self) { try Frame.$bound.withValue(Bound(frame: self), operation: body) }
        }
        let previous = enter()
        defer { leave(restoring: previous) }
        // A task started here must see a construction whose result the container keeps, so
        // that what it creates holds the container weakly, and a traced one, so that what
        // it resolves joins the batch; other frames matter only to their own owner, and
        // stay off the task-local chain.
        guard keepsResult || trace != nil else { return try body() }
        BoundCount.increment()
        defer { BoundCount.decrement() }
        return try Frame.$bound.withValue(Bound(frame: self), operation: body)
    }

    /// Runs `body` with this frame bound as the innermost construction, and ends the frame
    /// when `body` returns.
    func bind<Result>(
        _ body: () async throws -> Result, isolation: isolated (any Actor)? = #isolation
    ) async rethrows -> Result {
        BoundCount.increment()
        defer {
            BoundCount.decrement()
            end()
        }
        return try await Frame.$bound.withValue(Bound(frame: self), operation: body)
    }

    /// Makes this frame the thread's innermost synchronous construction, for code that
    /// runs the construction inline instead of through ``bind(_:)-(()->Result)``.
    ///
    /// - Returns: What ``leave(restoring:)`` puts back.
    @usableFromInline
    final func enter() -> ThreadFrames.Entry {
        ThreadFrames.replace(with: self)
    }

    /// Ends the construction that ``enter()`` began.
    @usableFromInline
    final func leave(restoring previous: ThreadFrames.Entry) {
        ThreadFrames.restore(previous, removing: self)
        end()
    }

    /// The owner running this code and its innermost construction. The thread's frames
    /// count only if this owner filed them: a task started with `Task.immediate` inside a
    /// construction runs on that construction's thread, and is someone else.
    static var ownerAndInnermost: (Owner, Frame?) {
        let owner = Owner.current
        return (owner, ThreadFrames.innermost(of: owner) ?? innermostBound)
    }

    /// Runs `body` outside every construction the task inherited: a tracer's callback,
    /// delivered in a task a construction started, is none of that construction's code,
    /// and what it resolves must not be routed, cycle-checked or recorded as if it were.
    ///
    /// ```swift
    /// Frame.outsideInheritedConstructions { tracer.deliver(events) }
    /// ```
    static func outsideInheritedConstructions(_ body: () -> Void) {
        guard innermostBound != nil else { return body() }
        $bound.withValue(Bound(frame: nil), operation: body)
    }

    /// The task's innermost bound construction, if any.
    @inline(__always)
    static var innermostBound: Frame? {
        BoundCount.isZero ? nil : bound.frame
    }

    /// Whether any construction may be running here: a frame in this thread's slot, or a
    /// task-local one anywhere. When there is none, no construction builds what runs now,
    /// and callers skip the owner lookup (a few hundred instructions).
    static var mayBeBuilding: Bool {
        ThreadFrames.isBuilding || !BoundCount.isZero
    }

    /// Whether this frame may be filed in its thread's slot: not when the thread's innermost
    /// frame belongs to another owner (a task started with `Task.immediate` runs on the
    /// thread of the construction that started it), whose chain it must not join.
    @usableFromInline
    final var fitsThreadSlot: Bool {
        ThreadFrames.innermostOwner.map { $0 == owner } ?? true
    }

    /// The container building an object on this thread, or in this task, right now: the
    /// innermost construction, if `owner` (the one running this code) runs it. A task that
    /// a construction started is somebody else, and gets `nil`.
    ///
    /// ```swift
    /// let (owner, innermost) = Frame.ownerAndInnermost
    /// let container = Frame.building(from: innermost, owner: owner) ?? .main
    /// ```
    ///
    /// The frame of a linked provider's call builds in the provider's private container,
    /// which builds nothing: what the call's reading of the registration creates (in the
    /// registration's getter, or a `deinit` run there) takes the container the link reads
    /// (``creator(from:owner:)``), or none when that container is gone.
    static func building(from innermost: Frame?, owner: Owner) -> DependencyContainer? {
        creator(from: innermost, owner: owner)?.container
    }

    /// What ``building(from:owner:)`` gives, and whether it is the container a linked
    /// provider's call reads its registration in.
    ///
    /// Such a call exists only for an instance its container keeps (``Provider/linked(to:in:)``),
    /// as a property's first read does: what the call's reading creates holds the
    /// container weakly, as what that read's getter creates does, since the instance the
    /// call builds may keep it.
    ///
    /// ```swift
    /// let weakly = Frame.creator(from: innermost, owner: owner)?.isLinkedCall == true
    /// ```
    static func creator(from innermost: Frame?, owner: Owner) -> (container: DependencyContainer, isLinkedCall: Bool)? {
        guard let frame = innermost, frame.isActive, frame.owner == owner else { return nil }
        let building = frame.building
        guard building.isLinkHost else { return (building, false) }
        return building.withStateLock { $0.linkTarget }?.container.map { ($0, true) }
    }

    /// The scope that the innermost construction, run by this owner, builds an app-wide
    /// instance for, if any.
    static func servedScope(from innermost: Frame?) -> ObjectIdentifier? {
        guard let frame = innermost, let scope = frame.servesScope, frame.isActive, frame.owner == .current else {
            return nil
        }
        return scope
    }

    /// The outermost construction of this owner's chain that builds an app-wide instance
    /// for a scope, for messages.
    static func outermostServingScope(from innermost: Frame?) -> Frame? {
        let owner = Owner.current
        var frame = innermost
        var found: Frame?
        while let own = frame, own.owner == owner, own.isActive {
            if own.servesScope != nil { found = own }
            frame = own.parent
        }
        return found
    }

    /// Whether a construction still running anywhere in `innermost`'s chain is building
    /// something `container` keeps: an object created under it must hold `container` weakly.
    static func keepsResult(of container: DependencyContainer, from innermost: Frame?) -> Bool {
        let id = ObjectIdentifier(container)
        var frame = innermost
        while let enclosing = frame {
            if enclosing.keepsResult && enclosing.buildingID == id && enclosing.isActive { return true }
            frame = enclosing.parent
        }
        return false
    }

    /// Stops with the chain when the current owner is already building `key` in
    /// `container`: building it again could only recurse forever. Frames inherited from
    /// the task that created this one belong to someone else and end the walk, and so do
    /// ended ones.
    static func checkNoCycle(
        building key: RegistrationKey, in container: ObjectIdentifier, site: Site, owner: Owner, from innermost: Frame?
    ) {
        guard let innermost else { return }
        if let thread = ThreadFrames.existingSlot, thread.isInnermost(innermost), let word = thread.innermostWord {
            checkFiled(in: thread, building: key, in: container, site: site, asker: owner, innermost: word)
            checkOwnChain(from: thread.base, building: key, in: container, site: site, owner: owner, innermost: innermost)
        } else {
            // Not this thread's innermost frame (a task's bound one, or none filed here):
            // the chain from it, without making a slot for a thread that has none.
            checkOwnChain(from: innermost, building: key, in: container, site: site, owner: owner, innermost: innermost)
        }
    }

    /// Stops with the chain from `word`, a frame of this thread's that builds `key`, to
    /// `innermost`, which asks for it again. Out of line: a plain factory only calls it to
    /// stop.
    @inline(never)
    static func stopCycle(
        in thread: ThreadFrames.Slot, from word: ThreadFrames.Word, to innermost: ThreadFrames.Word,
        closing key: RegistrationKey, named name: StaticString
    ) -> Never {
        CycleReport.stop(
            thread.object(for: word).steps(to: thread.object(for: innermost)),
            closing: CycleStep(site: Site(name: .registration(name), file: key.fileName, line: key.line), argument: key.argument))
    }

    /// Stops with the chain when a frame of `owner`'s chain that this thread's frames
    /// started in (``ThreadFrames/Slot/base``) builds `key` in `container`. Out of line,
    /// and the site named only here: a plain factory calls it only when there is a base.
    @inline(never)
    static func checkThreadBase(
        _ thread: ThreadFrames.Slot, building key: RegistrationKey, named name: StaticString,
        in container: ObjectIdentifier, owner: Owner, innermost: ThreadFrames.Word
    ) {
        checkOwnChain(
            from: thread.base, building: key, in: container,
            site: Site(name: .registration(name), file: key.fileName, line: key.line), owner: owner,
            innermost: thread.object(for: innermost))
    }

    /// Stops with the chain when a frame of this thread's, filed in the bucket of `key` in
    /// `container`, builds it: only those can match among the thread's frames. The frames
    /// filed belong to another owner than `asker` only when it is a task started with
    /// `Task.immediate` inside the innermost of them, which the message then names.
    @inline(__always)
    static func checkFiled(
        in thread: ThreadFrames.Slot, building key: RegistrationKey, in container: ObjectIdentifier,
        site: @autoclosure () -> Site, asker: Owner, innermost: ThreadFrames.Word
    ) {
        var candidate = thread.firstInBucket(bucket(of: key, in: container))
        while let word = candidate {
            if ThreadFrames.builds(word, key, in: container) {
                CycleReport.stop(
                    thread.object(for: word).steps(to: thread.object(for: innermost)),
                    closing: CycleStep(site: site(), argument: key.argument),
                    cause: ThreadFrames.owner(of: innermost) != asker ? .immediateTask : .plain)
            }
            candidate = ThreadFrames.nextInBucket(after: word)
        }
    }

    /// Stops with the chain when a frame of `owner`'s, from `start` outward while they are
    /// active, builds `key` in `container`.
    @inline(__always)
    static func checkOwnChain(
        from start: Frame?, building key: RegistrationKey, in container: ObjectIdentifier, site: @autoclosure () -> Site,
        owner: Owner, innermost: @autoclosure () -> Frame?
    ) {
        var frame = start
        while let own = frame, own.owner == owner, own.isActive {
            if own.container == container && own.key == key {
                CycleReport.stop(own.steps(to: innermost()), closing: CycleStep(site: site(), argument: key.argument))
            }
            frame = own.parent
        }
    }

    /// The bucket of a frame that builds `key` in `container`.
    ///
    /// The top bits of one multiply, as in ``RegistrationKey/slot(mask:)``: the buckets
    /// only spread the frames of one thread's chain, and a chain's keys come from source
    /// positions and addresses, so the two mixing rounds of a seeded hash would buy nothing
    /// on every construction. A family's argument contributes its seeded hash.
    @inline(__always)
    static func bucket(of key: RegistrationKey, in container: ObjectIdentifier) -> Int {
        var bits = key.position ^ UInt64(UInt(bitPattern: key.type)) ^ UInt64(UInt(bitPattern: container)).byteSwapped
        if let argument = key.argument { bits ^= UInt64(UInt(bitPattern: argument.hash)) }
        return Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) &>> (64 - ThreadFrames.bucketBits))
    }

    /// The steps from this frame down to `innermost`, outermost first, for a cycle's
    /// message.
    ///
    /// A construction listed in its container but not yet running is in no chain of
    /// frames: a family argument's `==`, checked between the two, may resolve something
    /// that waits for it. The chain from it is then its own step alone.
    func steps(to innermost: Frame?) -> [CycleStep] {
        var steps: [CycleStep] = []
        var frame = innermost
        while let current = frame {
            steps.append(current.step)
            if current === self { return steps.reversed() }
            frame = current.parent
        }
        return [step]
    }

    /// This frame as a step of a cycle's message: its site, and its key's argument.
    var step: CycleStep { CycleStep(site: site, argument: key.argument) }

    // MARK: - The active flag, read and written atomically

    private var activeWordAddress: UnsafeMutablePointer<UnsafeRawPointer?> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: UnsafeRawPointer?.self)
    }

    /// Whether this is an active frame of the task that runs `construction`, an
    /// asynchronous one: such a frame is made from the construction
    /// (``Resolution/frame(_:owner:waitedIn:)``), in its container, with a copy of its key.
    ///
    /// The key's argument is compared by identity, a copy's being the same object: compared
    /// by value, it ran the argument's `==`, user code, under the container's lock where
    /// ``ResolvingCode`` asks, and took most of the walk of a deep chain.
    final func runsTask(of construction: Resolution) -> Bool {
        buildingID == construction.buildingID && key.isCopy(of: construction.key) && isActive
    }

    /// Whether the frame is still bound. A compare-and-exchange that never changes the
    /// word serves as the atomic load.
    var isActive: Bool {
        var seen: UnsafeRawPointer? = nil
        return !_stdlib_atomicCompareExchangeStrongPtr(object: activeWordAddress, expected: &seen, desired: nil)
    }

    /// Marks the frame ended, and lets go of what it held until then, unless it does so
    /// once complete (``releasesHeldOnCompletion``, ``completed()``).
    func end() {
        var active = UnsafeRawPointer(bitPattern: 1)
        _ = _stdlib_atomicCompareExchangeStrongPtr(object: activeWordAddress, expected: &active, desired: nil)
        guard !releasesHeldOnCompletion, holdsSomethingUntilEnd else { return }
        releaseHeldUntilEnd()
    }

    /// Lets go of what this ended frame held until its end, if it does so once complete
    /// (``releasesHeldOnCompletion``): called by a listed construction once its container
    /// has completed it and woken its waiters, and by a first read once it has published
    /// and unlocked. Every other frame let go of it in ``end()``; here it does nothing.
    ///
    /// ```swift
    /// waiting?.finish(.success(box))
    /// frame.completed()
    /// ```
    final func completed() {
        guard releasesHeldOnCompletion, holdsSomethingUntilEnd else { return }
        releaseHeldUntilEnd()
    }

    /// Keeps `override` and `trace`, what a resolution running inside this frame held, until
    /// this frame, the outermost of its owner, ends.
    ///
    /// A resolution that ends inside a construction of its owner must not be the one that
    /// lets go of them there. Another thread may have replaced the override, or the tracer,
    /// while the resolution ran it; the resolution's reference is then the last, and its
    /// release runs the `deinit`s of what the closure captured: a test's spy that reports
    /// through the app's analytics, which the enclosing construction is building. Run
    /// there, that resolution would find a cycle no registration has.
    ///
    /// ```swift
    /// Frame.outermost(of: owner, from: enclosing)?.hold(override, traced)
    /// ```
    final func hold(_ override: AnyObject?, _ trace: AnyObject?) {
        if let override { hold(override) }
        if let trace { hold(trace) }
    }

    /// Whether this frame holds an override or a tracer until its end.
    final var holdsObjectsUntilEnd: Bool { firstHeld != nil }

    /// Hands the overrides and tracers this frame holds to `outermost`, which encloses it.
    final func moveHeldObjects(to outermost: Frame) {
        guard let first = firstHeld else { return }
        let more = moreHeld
        (firstHeld, moreHeld) = (nil, nil)
        outermost.hold(first)
        for object in more ?? [] { outermost.hold(object) }
    }

    private func hold(_ object: AnyObject) {
        if firstHeld == nil {
            firstHeld = object
        } else {
            if moreHeld == nil { moreHeld = [] }
            moreHeld!.append(object)
        }
    }

    /// Whether this frame holds anything until its end.
    final var holdsSomethingUntilEnd: Bool { firstHeld != nil || !graphInstances.isEmpty }

    /// Lets go of what this frame held until its end, its graph instances too: outside
    /// every lock, once the frame has ended. Each is looked at in place, and most frames
    /// hold nothing: taken out together, as a tuple holding an `Any`, they were destroyed
    /// through value witnesses, some 140 instructions of every first build.
    @inline(never)
    private func releaseHeldUntilEnd() {
        if firstHeld != nil {
            let (first, more) = (firstHeld, moreHeld)
            (firstHeld, moreHeld) = (nil, nil)
            withExtendedLifetime(first) {}
            withExtendedLifetime(more) {}
        }
        withExtendedLifetime(graphInstances.takeAll()) {}
    }
}
