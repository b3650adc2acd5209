/// The state behind one `@Dependency` property: its container and its first resolution,
/// in one object.
///
/// Apps create objects with injected properties all day (a view model per screen, a
/// handler per request), so a property costs one allocation: this object, which holds the
/// published value's word, the container, the key path and the site. There is no lock
/// object and no closure context of its own:
///
/// - Reads of a resolved value load the published word (the object's first stored
///   property) atomically, without a lock: see ``_PublishedBox``.
/// - Everything else (resolving, switching the container, resetting, setting) is
///   serialised by one of ``_LockStripes``' locks, picked by this object's address. Those
///   sections are short, run no user code, take no other lock and release nothing.
/// - The first resolution runs in a ``Frame``, like a construction, so that what it
///   creates knows its container and the owner reading the property again is a cycle,
///   named without evaluating any registration. Only when another owner comes to read the
///   property meanwhile does it get an ``InFlight`` record, to wait on through the wait
///   graph.
///
/// The storage is not generic: it holds type-erased boxes, and the wrapper, inlined and
/// specialized where it is used, creates and opens them. Generic class code compiled once
/// in this module would ask the runtime for `Box<Value>`'s metadata on every resolution.
///
/// ```swift
/// let storage = DependencyStorage(\.httpClient, container: nil, declaredIn: "Feed", fileID: #fileID,
///                                 line: #line) { container, keyPath in
///     Box(container[keyPath: unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, any HTTPClient>.self)])
/// }
/// ```
@usableFromInline
final class DependencyStorage: @unchecked Sendable {
    // @unchecked: the published word is read and written atomically; every other `var`
    // only under `lock`, the stripe of this object.

    /// The published box, retained, or nil. It must stay the first stored property: the
    /// wrapper reads it at the address of the object's stored properties.
    @exclusivity(unchecked) private var publishedWord: UnsafeRawPointer?
    /// The container, held strongly, or nil when it is held weakly (below) or released.
    @exclusivity(unchecked) private var strongContainer: DependencyContainer?
    /// The container, when it caches the object that owns this property. Only then: a
    /// weak reference gives the container a side table, and every later retain and
    /// release of it takes the runtime's slow path.
    @exclusivity(unchecked) private weak var weakContainer: DependencyContainer?
    /// Bumped by every reset, switch and set: a resolution begun before one of them does
    /// not publish.
    @exclusivity(unchecked) private var generation: UInt64 = 0
    /// The frame of the first resolution in progress, if one is.
    @exclusivity(unchecked) private var resolvingFrame: Frame?
    /// What other owners wait on while the first resolution runs; made by the first of them.
    @exclusivity(unchecked) private var waited: InFlight?
    /// Replaced boxes, kept while a lock-free reader may still read them.
    @exclusivity(unchecked) private var retired: [AnyBox] = []
    private let keyPath: AnyKeyPath
    /// Resolves `keyPath` in a container: a function without context, specialized where the
    /// wrapper is used.
    private let resolve: (DependencyContainer, AnyKeyPath) -> AnyBox
    private let site: Site

    /// Stands for "this property's first resolution" in frames and the wait graph.
    private static let resolutionKey = RegistrationKey(
        file: #fileID, line: 0, column: 0, type: AnyBox.self, argument: nil)

    @usableFromInline
    init(
        _ keyPath: AnyKeyPath, container chosen: DependencyContainer?, declaredIn type: StaticString,
        fileID: StaticString, line: UInt, resolve: @escaping (DependencyContainer, AnyKeyPath) -> AnyBox
    ) {
        // The container building the owning object, if one is; else `main`.
        let (owner, innermost) = Frame.mayBeBuilding ? Frame.ownerAndInnermost : (.nobody, nil)
        let container = chosen ?? Frame.building(from: innermost, owner: owner) ?? DependencyContainer.main
        // A construction of `container` still running builds something the container
        // keeps (a singleton, directly or through a task it started, or an object whose
        // property it resolves): holding the container strongly would keep both forever.
        if innermost != nil && Frame.keepsResult(of: container, from: innermost) {
            weakContainer = container
        } else {
            strongContainer = container
        }
        self.keyPath = keyPath
        self.resolve = resolve
        site = Site(name: .property(in: type), fileID: fileID, line: line)
    }

    deinit {
        if let word = publishedWord { Unmanaged<AnyBox>.fromOpaque(word).release() }
    }

    /// The published word, which the wrapper reads without a lock.
    @usableFromInline
    var published: UnsafeMutablePointer<AnyBox?> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: AnyBox?.self)
    }

    /// This object's lock.
    private var lock: _Locked<_Elsewhere> { _LockStripes.lock(for: self) }

    private var container: DependencyContainer? { strongContainer ?? weakContainer }

    private var publishedWordAddress: UnsafeMutablePointer<UnsafeRawPointer?> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: UnsafeRawPointer?.self)
    }

    /// The slow path of a wrapper read: resolves through the storage whose published word
    /// is `slot`.
    @usableFromInline @inline(never)
    static func resolveOnce(from slot: UnsafeMutablePointer<AnyBox?>) -> AnyBox {
        _PublishedBox.withOwner(of: slot, as: DependencyStorage.self) { $0.resolveOnce() }
    }

    private enum Step {
        case resolved(AnyBox)
        case wait(InFlight)
        case cycle(Frame)
        case resolve(Frame, DependencyContainer, generation: UInt64)
        case released
    }

    func resolveOnce() -> AnyBox {
        let (owner, enclosing) = Frame.ownerAndInnermost
        let step: Step = lock.withLock { _ in
            if let box = _PublishedBox.published(in: published) { return .resolved(box) }
            if let frame = resolvingFrame {
                if frame.owner == owner { return .cycle(frame) }
                if let waited { return .wait(waited) }
                let construction = InFlight(key: Self.resolutionKey)
                WaitGraph.start(construction, builtBy: frame)
                waited = construction
                return .wait(construction)
            }
            guard let container else { return .released }
            let frame = Frame(
                container: ObjectIdentifier(self), building: container, keepsResult: strongContainer == nil,
                key: Self.resolutionKey, site: site, servesScope: nil, trace: enclosing?.trace, owner: owner,
                parent: enclosing)
            resolvingFrame = frame
            return .resolve(frame, container, generation: generation)
        }
        switch step {
        case .resolved(let box):
            return box
        case .released:
            stopReleased()
        case .cycle(let frame):
            CycleReport.stop(frame.sites(to: enclosing), closing: site)
        case .wait(let construction):
            return construction.wait(as: owner, innermost: enclosing)
        case .resolve(let frame, let container, let generation):
            // No cycle check: this frame is new, and no frame of this property is running.
            let box = frame.bind { resolve(container, keyPath) }
            let (ended, waiting): (Frame?, InFlight?) = lock.withLock { _ in
                defer { (resolvingFrame, waited) = (nil, nil) }
                if self.generation == generation { publish(box) }
                return (resolvingFrame, waited)
            }
            withExtendedLifetime(ended) {}
            waiting?.finish(.success(box))
            return box
        }
    }

    /// The container the property resolves from.
    @usableFromInline
    var resolvingContainer: DependencyContainer {
        guard let container = lock.withLock({ _ in container }) else { stopReleased() }
        return container
    }

    private func stopReleased() -> Never {
        fatalError("\(site): the container this property resolves from was released before the property "
            + "was first read; read it while the container lives (keep a scope alive until its request ends, "
            + "for example with withExtendedLifetime(scope)), or set `$property.container`",
            file: site.fileID, line: site.line)
    }

    /// Publishes `box`, or forgets the value when it is nil.
    @usableFromInline
    func replace(with box: AnyBox?) {
        lock.withLock { _ in publish(box) }
    }

    func switchContainer(to container: DependencyContainer) {
        let previous: DependencyContainer? = lock.withLock { _ in
            defer { (strongContainer, weakContainer) = (container, nil) }
            publish(nil)
            return self.container
        }
        withExtendedLifetime(previous) {}
    }

    /// Swaps the published box; call under the lock. The old box is retired, not
    /// released: a reader that loaded it before the exchange may still be reading it.
    private func publish(_ box: AnyBox?) {
        generation &+= 1
        let desired = box.map { UnsafeRawPointer(Unmanaged.passRetained($0).toOpaque()) }
        var expected = publishedWordAddress.pointee
        let swapped = _stdlib_atomicCompareExchangeStrongPtr(
            object: publishedWordAddress, expected: &expected, desired: desired)
        precondition(swapped, "the published value changed outside the lock")
        if let replaced = expected { retired.append(Unmanaged<AnyBox>.fromOpaque(replaced).takeRetainedValue()) }
    }
}
