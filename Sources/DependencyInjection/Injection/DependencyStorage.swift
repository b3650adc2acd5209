import _DependencyInjectionShims

/// The state behind one `@Dependency` property: its container and its first resolution,
/// in one object.
///
/// Apps create objects with injected properties all day (a view model per screen, a
/// handler per request) and keep thousands alive, so a property costs one allocation of
/// three words: this object, which holds the published value's word, the container and
/// how the property reads its registration: the getter its declaration compiled, a
/// function with nothing captured, or else the key path (``_PropertyGetterWord``). There
/// is no lock object and no closure context of its own: the wrapper, specialized where it
/// is used, passes the function that reads a key path, and the site messages name (one
/// word, see ``PropertySite``), on each first read. What
/// only some properties need (a container held weakly, a value replaced, another owner
/// waiting) moves to a ``PropertyState`` when it is first needed:
///
/// - Reads of a resolved value load the published word (the object's first stored
///   property) atomically, without a lock: see ``_PublishedBox``.
/// - Everything else (resolving, switching the container, resetting, setting), but the
///   mark of a look, below, is serialised by one of ``_LockStripes``' locks, picked by this
///   object's address. Those sections are short, run no user code, take no other lock and
///   deinitialize nothing.
/// - A first read of what the container already keeps (a singleton built at launch, read
///   by every new view model) takes no frame, and the lock only to publish: it marks the
///   word of state "looked at" without the lock (``_PropertyStateWord``), the wrapper
///   projects the provider and finds its instance in the container the word holds, and
///   the storage publishes it if the word still holds that container. A change meanwhile
///   (a switch, a reset, a set, another reader's frame) hands the read a reference to the
///   container, so that the container outlives the look.
/// - Any other first resolution runs in a ``Frame``, like a construction, so that what it
///   creates knows its container and the owner reading the property again is a cycle,
///   named without evaluating any registration. The frame is the thread's spare one, the
///   frame its last first read ended in, when nothing else holds that any more
///   (``ThreadFrames/takeSpareFrame()``): making an object and reading its property then
///   allocates the object and this storage only. Only when another owner comes to read
///   the property meanwhile does it get an ``InFlight`` record, to wait on through the
///   wait graph.
///
/// The storage is not generic: it holds type-erased boxes, and the wrapper, inlined and
/// specialized where it is used, creates and opens them. Generic class code compiled once
/// in this module would ask the runtime for `Box<Value>`'s metadata on every resolution.
///
/// ```swift
/// let storage = DependencyStorage(PropertyGetter { container, step in
///     guard let container else { return \DependencyContainer.baseURL }
///     step = .built
///     return Box(container.baseURL)
/// }, container: nil)
/// let site = PropertySite(declaredIn: "Feed", fileID: #fileID, line: #line)
/// let box = DependencyStorage.resolveOnce(from: storage.published, declaredAt: site) { container, keyPath, step in
///     step = .built   // only for a storage that kept the key path
///     return Box(container[keyPath: unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, String>.self)])
/// }
/// ```
@usableFromInline
final class DependencyStorage: @unchecked Sendable {
    // @unchecked: the published word is read and written atomically, and so is the state's
    // word, which is written only under `lock`, the stripe of this object, as is every `var`
    // of a `PropertyState` or of the frame it holds; `getter` is immutable.

    /// The published box, retained, or nil. It must stay the first stored property: the
    /// wrapper reads it at the address of the object's stored properties.
    @exclusivity(unchecked) private var publishedWord: UnsafeRawPointer?
    /// Where the property stands, in one word (``_PropertyStateWord``): the container
    /// alone, which nearly every property holds for its whole life; the ``Frame`` of the
    /// first resolution in progress, from the container the frame builds for, which the
    /// resolving owner holds until it puts the container back here; or a ``PropertyState``,
    /// with everything else.
    @exclusivity(unchecked) private var stateWord: UnsafeMutableRawPointer
    /// How the property reads its registration: the getter its declaration compiled, or
    /// the key path (``_PropertyGetterWord``). The key path is the object's own, not shared
    /// with other objects of the declaration: a key path to a parameterized registration
    /// carries its argument, which goes with the object.
    private let getter: _PropertyGetterWord

    /// Stands for "this property's first resolution" in frames and the wait graph.
    private static let resolutionKey = RegistrationKey(
        file: #fileID, line: 0, column: 0, type: AnyBox.self, argument: nil)

    @usableFromInline
    init(_ getter: PropertyGetter, container chosen: DependencyContainer?) {
        // The container building the owning object, if one is (or whose first read without a
        // frame runs the getter creating it); else `main`.
        let (owner, innermost) = Frame.mayBeBuilding ? Frame.ownerAndInnermost : (.nobody, nil)
        // Nearly every object is created outside constructions: no frame to ask, and no call.
        let creator = chosen == nil && innermost != nil ? Frame.creator(from: innermost, owner: owner) : nil
        let container = chosen ?? creator?.container ?? ThreadFrames.unframedReadContainer ?? DependencyContainer.main
        // A construction of `container` still running builds something the container
        // keeps (a singleton, directly or through a task it started, or an object whose
        // property it resolves): holding the container strongly would keep both forever.
        // So does a linked provider's call reading its registration, for an instance the
        // container keeps.
        self.getter = _PropertyGetterWord(getter)
        if innermost != nil && (creator?.isLinkedCall == true || Frame.keepsResult(of: container, from: innermost)) {
            stateWord = _PropertyStateWord.word(ofBusy: PropertyState(weaklyHolding: container))
        } else {
            stateWord = _PropertyStateWord.word(of: container)
            // A graph or shared instance built now may be taken later by a construction
            // that the container keeps, which then makes this hold weak (StrongHolders).
            if innermost != nil { Frame.noteStrongHold(of: self, on: container, owner: owner, from: innermost) }
        }
    }

    deinit {
        if let word = publishedWord { Unmanaged<AnyBox>.fromOpaque(word).release() }
        _PropertyStateWord.release(stateWord)
        getter.release()
    }

    /// The published word, which the wrapper reads without a lock.
    @usableFromInline
    var published: UnsafeMutablePointer<AnyBox?> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: AnyBox?.self)
    }

    /// This object's lock.
    private var lock: _StripeLock { _LockStripes.lock(for: self) }

    private var publishedWordAddress: UnsafeMutablePointer<UnsafeRawPointer?> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: UnsafeRawPointer?.self)
    }

    /// ``stateWord``, for its atomic operations: the second stored property.
    private var word: _PropertyStateWord {
        _PropertyStateWord(
            address: (_getUnsafePointerToStoredProperties(self) + MemoryLayout<UnsafeRawPointer?>.stride)
                .assumingMemoryBound(to: UnsafeMutableRawPointer?.self))
    }

    /// The object ``stateWord`` holds; read under the lock.
    private var state: AnyObject { word.object }

    /// ``state`` by its class; read under the lock.
    private enum Phase {
        /// The container alone; `lookedAt` while a first read looks at it without the lock.
        case idle(DependencyContainer, lookedAt: Bool)
        case resolving(Frame)
        case detailed(PropertyState)
    }

    private var phase: Phase {
        switch word.content {
        case .container(let container, let looked):
            return .idle(container, lookedAt: looked)
        case .busy(let object):
            if ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(PropertyState.self) {
                return .detailed(unsafeDowncast(object, to: PropertyState.self))
            }
            return .resolving(unsafeDowncast(object, to: Frame.self))
        }
    }

    /// The state in full, made from the one word if it was not yet; call under the lock.
    /// Nothing is deinitialized: the container or frame the word held moves into it, which
    /// takes a reference of its own before the word's goes; and a read looking at the
    /// container alone gets a reference of its own, to let go when its look ends.
    private func detailedState() -> PropertyState {
        let detailed: PropertyState
        switch phase {
        case .detailed(let detailed):
            return detailed
        case .idle:
            let (container, lookedAt) = word.seal()
            detailed = PropertyState(strongContainer: container, resolving: nil)
            if lookedAt { detailed.lookersContainer = container }
        case .resolving(let frame):
            // The resolving owner holds the frame's container until the frame ends.
            detailed = PropertyState(strongContainer: frame.building, resolving: frame)
        }
        // Not the last reference: the state in full took its own.
        Unmanaged<AnyObject>.fromOpaque(word.store(_PropertyStateWord.word(ofBusy: detailed))).release()
        return detailed
    }

    /// The container the property resolves from, or nil if it was held weakly and is
    /// gone; call under the lock.
    private var container: DependencyContainer? {
        switch phase {
        case .idle(let container, _): container
        case .resolving(let frame): frame.building
        case .detailed(let detailed): detailed.container
        }
    }

    /// How far a first read may go: only look for what the container keeps, or resolve,
    /// building if it must; and, once resolved, how it went.
    @usableFromInline
    enum FirstReadStep {
        /// Look for the instance the container keeps; build nothing, and run no getter that
        /// builds (a plain property's getter is its construction).
        case look
        /// Resolve, building if needed: the property's frame is running.
        case resolve
        /// Resolve, as above, for a property whose container keeps its owner, and which
        /// holds the container weakly: what it publishes must not hold the container
        /// either (``PropertyLink``).
        case resolveForKeptOwner
        /// Resolved: the container kept the instance.
        case foundKept
        /// Resolved: something was built.
        case built
    }

    /// How the wrapper resolves a key path in a container, as far as `step` allows: the
    /// box, and `step` set to how it went; or nil when `step` is ``FirstReadStep/look``
    /// and the container keeps no instance. Called for a storage that keeps its key path
    /// rather than its getter's function (``_PropertyGetterWord``); the getter's function
    /// answers on the same terms.
    @usableFromInline
    typealias Resolve = (DependencyContainer, AnyKeyPath, _ step: inout FirstReadStep) -> AnyBox?

    /// The slow path of a wrapper read: resolves through the storage whose published word
    /// is `slot`, for the property declared at `site`, with `resolve`, which the wrapper
    /// passes. The box comes with a reference of the caller's: an optimized build may
    /// release the owning object, and so the storage, after its last use, the load of the
    /// wrapper's words, before the caller unboxes (a temporary's `makeModel().client`).
    @usableFromInline @inline(never)
    static func resolveOnce(from slot: UnsafeMutablePointer<AnyBox?>, declaredAt site: PropertySite, _ resolve: Resolve)
        -> Unmanaged<AnyBox>
    {
        _PublishedBox.withOwner(of: slot, as: DependencyStorage.self) { $0.resolveOnce(declaredAt: site, resolve) }
    }

    /// Resolves the property for its first read.
    ///
    /// Most first reads find what they resolve built already: a singleton the container
    /// keeps. Building needs the property's frame, and the frame costs more than such a
    /// read, so the read looks first, without a frame: the wrapper reads the key path
    /// (a provider's getter only makes the provider) and asks the container for the
    /// instance it keeps. What it finds is published only if the word still holds the
    /// container it came from. A read that overlaps a change (another owner's first read
    /// taking the frame, a switch of container, a reset), or finds nothing kept, goes on
    /// in the frame, as a read arriving then: it waits for the resolution in progress, or
    /// resolves, so that every reader of the property sees the value it keeps.
    ///
    /// Looking costs a read that must build one more round of the lock and a second read
    /// of the key path. So a declaration whose last first read built (a factory, a plain
    /// property) takes the frame at once, and looks again once a read in the frame finds
    /// the instance kept (``PropertySite/lastReadFoundItKept``).
    /// The box comes with a reference of the caller's.
    func resolveOnce(declaredAt site: PropertySite, _ resolve: Resolve) -> Unmanaged<AnyBox> {
        // Only a read that nothing encloses looks: one inside a construction (on this
        // thread, or inherited by this task), or inside another read's look, takes its
        // frame, which names it in a cycle's chain.
        guard site.lastReadFoundItKept, !ThreadFrames.isBuilding, !ThreadFrames.isReadingUnframed,
            Frame.innermostBound == nil
        else {
            return resolveInFrame(declaredAt: site, resolve)
        }
        // Without the lock: the mark keeps the container alive until the look ends.
        guard let looked = word.beginLook() else { return resolveInFrame(declaredAt: site, resolve) }
        let found: Unmanaged<AnyBox>? = looked._withUnsafeGuaranteedRef { container in
            ThreadFrames.beginUnframedRead(from: container)
            defer { ThreadFrames.endUnframedRead() }
            var step = FirstReadStep.look
            return getter.resolve(in: container, &step, projecting: resolve)
        }
        let ended = endLook(of: looked, publishing: found)
        // Outside the lock: the last references to what another read published first, and
        // to a container the property switched from meanwhile.
        ended.unpublished?.release()
        withExtendedLifetime(ended.lookersContainer) {}
        if let served = ended.served { return served }
        return resolveInFrame(declaredAt: site, resolve)
    }

    /// Ends the look at `container` and publishes `box`, what it found, with the reference
    /// it comes with, if the word still holds `container` alone. Returns what the read
    /// yields, with a reference of the reader's: what another read published first, or
    /// `box`; or nil when the state changed meanwhile. What the caller releases outside the
    /// lock comes back too: the box, when it was not published, and the reference to the
    /// container that a change handed the read.
    private func endLook(of container: Unmanaged<DependencyContainer>, publishing box: Unmanaged<AnyBox>?) -> (
        served: Unmanaged<AnyBox>?, unpublished: Unmanaged<AnyBox>?, lookersContainer: DependencyContainer?
    ) {
        lock.withLock { _ in
            guard word.endLook(of: container) else {
                return (nil, box, unsafeDowncast(state, to: PropertyState.self).takeLookersContainer())
            }
            guard let box else { return (nil, nil, nil) }
            if let first = _PublishedBox.published(in: published) { return (Unmanaged.passRetained(first), box, nil) }
            retire(swapPublished(handingOver: box))
            return (box.retain(), nil, nil)
        }
    }

    private enum Step {
        case resolved(AnyBox)
        case wait(InFlight)
        case cycle(Frame)
        /// Resolve in `frame`, which the state holds (the word itself, or the state in
        /// full): named without a reference of this step's own, so that the state's is the
        /// frame's last one when the read ends (``ThreadFrames/keepSpare(_:)``).
        /// The container comes with the reference the state's word had, which goes back to
        /// the word when the read ends.
        case resolve(Unmanaged<Frame>, Unmanaged<DependencyContainer>)
        case released
    }

    /// Resolves the property in a frame of its own, from whatever container the state
    /// holds; or waits for the resolution in progress, or stops a cycle: the road of a read
    /// that found more than the container in the word, nothing kept, or a declaration whose
    /// last first read built. Notes for the declaration whether the read, if it resolved,
    /// found the instance kept. The box comes with a reference of the caller's.
    private func resolveInFrame(declaredAt propertySite: PropertySite, _ resolve: Resolve) -> Unmanaged<AnyBox> {
        let site = propertySite.site
        let (owner, enclosing) = Frame.ownerAndInnermost
        var spare = ThreadFrames.takeSpareFrame()
        let bindingsBefore = ThreadFrames.bindingsMade
        let step: Step = lock.withLock { _ in
            if let box = _PublishedBox.published(in: published) { return .resolved(box) }
            // Nearly every first read: the word holds the container, and takes the frame,
            // unless a read looks at the container meanwhile.
            guard word.holdsContainerAlone, case (let container, lookedAt: false) = word.seal() else {
                return nextStep(for: owner, enclosing: enclosing, site: site)
            }
            let frame = makeFrame(
                resolvingFrom: container, keepsResult: false, owner: owner, enclosing: enclosing, site: site,
                reusing: spare.take())
            // Exchanged, not assigned: the container's reference moves to this resolution
            // and back, without a count (a container that something holds weakly counts
            // its references on the runtime's slow path).
            let taken = word.store(_PropertyStateWord.word(ofBusy: frame))
            return .resolve(Unmanaged.passUnretained(frame), Unmanaged.fromOpaque(taken))
        }
        // Not taken: the read needed no frame, or one of the state in full.
        if spare != nil { ThreadFrames.keepSpare(&spare) }
        switch step {
        case .resolved(let box):
            return Unmanaged.passRetained(box)
        case .released:
            stopReleased(declaredAt: site)
        case .cycle(let frame):
            CycleReport.stop(frame.steps(to: enclosing), closing: CycleStep(site: site, argument: nil))
        case .wait(let construction):
            return Unmanaged.passRetained(construction.wait(as: owner, innermost: enclosing))
        case .resolve(let frame, let container):
            // No cycle check: this frame is new, and no frame of this property is running.
            var step: FirstReadStep = frame._withUnsafeGuaranteedRef { $0.keepsResult } ? .resolveForKeptOwner : .resolve
            let box = frame._withUnsafeGuaranteedRef {
                $0.bind { getter.resolve(in: container.takeUnretainedValue(), &step, projecting: resolve)! }
            }
            // Delivered last, once the read has published (``PropertyReadFrame``).
            let trace = frame._withUnsafeGuaranteedRef { unsafeDowncast($0, to: PropertyReadFrame.self).takeDeferredTrace() }
            // The box's reference is the caller's; the published word takes one of its own.
            propertySite.noteFirstRead(foundItKept: step == .foundKept)
            var (ended, waiting, alone): (AnyObject?, InFlight?, Bool) = lock.withLock { _ in
                guard state === frame.takeUnretainedValue() else {
                    let (ended, waiting) = end(frame.takeUnretainedValue(), publishing: box.takeUnretainedValue())
                    return (ended, waiting, false)
                }
                // Nothing happened meanwhile: the word goes back to the container, and
                // nothing was published (a set would have made the state in full).
                let given = word.store(container.toOpaque())
                retire(swapPublished(box.takeUnretainedValue()))
                return (Unmanaged<AnyObject>.fromOpaque(given).takeRetainedValue(), nil, true)
            }
            // The waiters wake before the read lets go of anything: the last reference to
            // the container it resolved from, when the property switched meanwhile, runs
            // the `deinit`s of what that container kept, and one may resolve what a waiter
            // is building while it waits for this read.
            waiting?.finish(.success(box.takeUnretainedValue()))
            // What the read, the outermost frame of its thread, held until its end (an
            // override replaced meanwhile, `graph` instances) goes only now that the read
            // has published: a `deinit` there may read this very property.
            frame._withUnsafeGuaranteedRef { $0.completed() }
            // Not handed back to the word: the resolution lets its reference go (the state
            // in full holds one of its own).
            if !alone { container.release() }
            // Kept for the thread's next first read when no one else can have read it: no
            // other owner came to it through this storage (the state would be in full), and
            // this thread bound no frame as a task-local value meanwhile, which a task could
            // inherit and walk to it. Only after unlocking: letting go of what it refers to
            // may run a `deinit`.
            if alone && ThreadFrames.bindingsMade == bindingsBefore { ThreadFrames.keepSpare(&ended) }
            withExtendedLifetime(ended) {}
            trace?.deliver()
            return box
        }
    }

    /// What a first read does when the word holds more than the container: waits for the
    /// resolution in progress, stops a cycle, or resolves with the state in full. Under
    /// the lock.
    @inline(never)
    private func nextStep(for owner: Owner, enclosing: Frame?, site: Site) -> Step {
        let detailed: PropertyState
        switch phase {
        case .idle(_, let lookedAt):
            // A read looks at the container alone; it gets a reference of its own.
            precondition(lookedAt, "a container alone takes the first read's road")
            detailed = detailedState()
        case .resolving(let frame):
            if frame.owner == owner { return .cycle(frame) }
            detailed = detailedState()
        case .detailed(let state):
            detailed = state
        }
        if let frame = detailed.resolvingFrame {
            if frame.owner == owner { return .cycle(frame) }
            // A read that a change outdated resolves from the container the property held
            // then: this one, which starts after the change, resolves anew.
            if !detailed.isOutdated { return .wait(detailed.construction(awaitedFrom: frame)) }
        }
        guard let container = detailed.container else { return .released }
        let frame = makeFrame(
            resolvingFrom: container, keepsResult: detailed.strongContainer == nil, owner: owner, enclosing: enclosing,
            site: site)
        detailed.begin(frame)
        // A reference of the resolution's own, released when it ends.
        return .resolve(Unmanaged.passUnretained(frame), Unmanaged.passRetained(container))
    }

    /// Ends the resolution `frame` ran, when the state is in full: publishes `box` unless
    /// the resolution was outdated, and returns the frame and the record of its waiters,
    /// for the caller to release and wake outside the lock.
    @inline(never)
    private func end(_ frame: Frame, publishing box: AnyBox) -> (AnyObject?, InFlight?) {
        let detailed = unsafeDowncast(state, to: PropertyState.self)
        let (outdated, waiting) = detailed.end(frame)
        if !outdated { retire(swapPublished(box)) }
        return (frame, waiting)
    }

    /// The frame of a first read from `container`: `spare`, the thread's spare frame, filled
    /// anew, or a new one. Under the lock: a spare frame refers to nothing, so filling it
    /// releases nothing.
    private func makeFrame(
        resolvingFrom container: DependencyContainer, keepsResult: Bool, owner: Owner, enclosing: Frame?, site: Site,
        reusing spare: Frame? = nil
    ) -> Frame {
        guard let spare else {
            return PropertyReadFrame(
                forReadOf: ObjectIdentifier(self), key: Self.resolutionKey, from: container, keepsResult: keepsResult,
                site: site, trace: enclosing?.trace, owner: owner, parent: enclosing)
        }
        spare.reuse(
            forReadOf: ObjectIdentifier(self), from: container, keepsResult: keepsResult, site: site,
            trace: enclosing?.trace, owner: owner, parent: enclosing)
        return spare
    }

    /// The key path the storage keeps, if it keeps one rather than its getter's function:
    /// for tests, which tell the two apart.
    var keptKeyPath: AnyKeyPath? { getter.keyPath }

    /// Whether the property's getter captured nothing, a plain function (kept as such
    /// unless its address is odd): for tests.
    var getterCapturedNothing: Bool { getter.getterCapturedNothing }

    /// Whether another owner waits for the first read in progress, which tests wait for
    /// before they change the property.
    var isAwaited: Bool {
        lock.withLock { _ in
            if case .detailed(let detailed) = phase { detailed.isAwaited } else { false }
        }
    }

    /// The container the property declared at `site` resolves from.
    @usableFromInline
    func resolvingContainer(declaredAt site: PropertySite) -> DependencyContainer {
        guard let container = lock.withLock({ _ in container }) else { stopReleased(declaredAt: site.site) }
        return container
    }

    private func stopReleased(declaredAt site: Site) -> Never {
        fatalError("\(site): the container this property resolves from was released before the property "
            + "was first read; read it while the container lives (keep a scope alive until its request ends, "
            + "for example with withExtendedLifetime(scope)), or set `$property.container`. A deinit of "
            + "what the container keeps runs after the container is gone: to read properties there, end it "
            + "with shutdown(), which releases what it kept while it lives",
            file: site.fileID, line: site.line)
    }

    /// Publishes `box`, or forgets the value when it is nil. A first resolution in progress
    /// does not publish what it resolves.
    @usableFromInline
    func replace(with box: AnyBox?) {
        lock.withLock { _ in
            detailedState().outdateResolution()
            retire(swapPublished(box))
        }
    }

    /// Holds `container` weakly from now on, if the property holds it strongly: the
    /// container came to keep the object that owns the property (``StrongHolders``).
    func holdWeakly(_ container: DependencyContainer) {
        let released: DependencyContainer? = lock.withLock { _ in
            switch phase {
            case .idle(let held, _) where held !== container: return nil
            case .resolving(let frame) where frame.building !== container: return nil
            default: return detailedState().releaseStrongHold(on: container)
            }
        }
        // Outside the lock: not the last reference (the caller holds the container), but
        // nothing is released under a lock.
        withExtendedLifetime(released) {}
    }

    func switchContainer(to container: DependencyContainer) {
        let previous: DependencyContainer? = lock.withLock { _ in
            let detailed = detailedState()
            detailed.outdateResolution()
            retire(swapPublished(nil))
            return detailed.hold(container)
        }
        withExtendedLifetime(previous) {}
    }

    /// Swaps the published box and returns the one it replaced; call under the lock.
    private func swapPublished(_ box: AnyBox?) -> AnyBox? {
        swapPublished(handingOver: box.map { Unmanaged.passRetained($0) })
    }

    /// Swaps the published box for `box`, whose reference the published word takes, and
    /// returns the one it replaced; call under the lock.
    private func swapPublished(handingOver box: Unmanaged<AnyBox>?) -> AnyBox? {
        let desired = box.map { UnsafeRawPointer($0.toOpaque()) }
        var expected = publishedWordAddress.pointee
        let swapped = _stdlib_atomicCompareExchangeStrongPtr(
            object: publishedWordAddress, expected: &expected, desired: desired)
        precondition(swapped, "the published value changed outside the lock")
        return expected.map { Unmanaged<AnyBox>.fromOpaque($0).takeRetainedValue() }
    }

    /// Keeps a replaced box, not released: a reader that loaded it before the exchange may
    /// still be reading it. Call under the lock.
    private func retire(_ replaced: AnyBox?) {
        guard let replaced else { return }
        detailedState().retired.append(replaced)
    }
}
