/// The state behind one `@Dependency` property: its container and its first resolution.
///
/// Reads of a resolved value go through ``_LazyCell`` without a lock. Everything else
/// (resolving, switching the container, resetting, setting) is serialised by `state`'s
/// lock. The first resolution is an ``InFlight`` construction like any other: other
/// readers wait for it through the wait graph, and the resolving owner reading the
/// property again is a cycle, named without evaluating any registration.
///
/// The storage is not generic: it holds type-erased boxes, and the wrapper, inlined and
/// specialized where it is used, creates and opens them. Generic class code compiled once
/// in this module would ask the runtime for `Box<Value>`'s metadata on every resolution.
@usableFromInline
final class DependencyStorage: @unchecked Sendable {
    // @unchecked: mutable state lives in `state` behind its lock; the cell is published
    // under that lock and read atomically.

    @usableFromInline let cell = _LazyCell()
    private let state: _Locked<State>
    private let resolve: (DependencyContainer) -> AnyBox
    private let site: Site

    private struct State {
        /// The container, held weakly when it caches the object that owns this property.
        /// Only then: a weak reference gives the container a side table, and every later
        /// retain and release of it takes the runtime's slow path.
        var reference: (strong: DependencyContainer?, weak: Weak<DependencyContainer>?)
        /// Bumped by every reset, switch and set: a resolution begun before one of them
        /// does not publish.
        var generation: UInt64 = 0
        var resolving: InFlight?
        /// Replaced boxes, kept while a lock-free reader may still read them.
        var retired: [AnyBox] = []

        var container: DependencyContainer? { reference.strong ?? reference.weak?.object }
    }

    /// Stands for "this property's first resolution" in frames and the wait graph.
    private static let resolutionKey = RegistrationKey(
        file: #fileID, line: 0, column: 0, type: AnyBox.self, argument: nil)

    @usableFromInline
    init(
        container chosen: DependencyContainer?, declaredIn type: StaticString, fileID: StaticString, line: UInt,
        resolve: @escaping (DependencyContainer) -> AnyBox
    ) {
        // The container building the owning object, if one is; else `main`.
        let innermost = Frame.current
        let container = chosen ?? Frame.building(from: innermost) ?? DependencyContainer.main
        // A construction of `container` still running builds something the container
        // keeps (a singleton, directly or through a task it started, or an object whose
        // property it resolves): holding the container strongly would keep both forever.
        let weakly = Frame.keepsResult(of: container, from: innermost)
        state = .init(State(reference: weakly ? (nil, Weak(container)) : (container, nil)))
        site = Site(name: .property(in: type), fileID: fileID, line: line)
        self.resolve = resolve
        cell.attach(to: self)
    }

    /// The slow path of a wrapper read: resolves through the storage that owns `slot`.
    @usableFromInline @inline(never)
    static func resolveOnce(from slot: UnsafeMutablePointer<AnyBox?>) -> AnyBox {
        _LazyCell.withOwner(of: slot, as: DependencyStorage.self) { $0.resolveOnce() }
    }

    private enum Step {
        case resolved(AnyBox)
        case wait(InFlight)
        case resolve(InFlight, DependencyContainer, generation: UInt64, keptByContainer: Bool)
        case released
    }

    func resolveOnce() -> AnyBox {
        let owner = Owner.current
        let step: Step = state.withLock { state in
            if let box = cell.published { return .resolved(box) }
            if let resolving = state.resolving { return .wait(resolving) }
            guard let container = state.container else { return .released }
            let resolving = InFlight(key: Self.resolutionKey)
            state.resolving = resolving
            return .resolve(resolving, container, generation: state.generation, keptByContainer: state.reference.strong == nil)
        }
        switch step {
        case .resolved(let box):
            return box
        case .released:
            stopReleased()
        case .wait(let resolving):
            let enclosing = Frame.current
            Frame.checkNoCycle(
                building: Self.resolutionKey, in: ObjectIdentifier(self), site: site, owner: owner, from: enclosing)
            return resolving.wait(as: owner, innermost: enclosing)
        case .resolve(let resolving, let container, let generation, let keptByContainer):
            let enclosing = Frame.current
            let frame = Frame(
                container: ObjectIdentifier(self), building: container, keepsResult: keptByContainer,
                key: Self.resolutionKey, site: site, servesScope: nil, trace: enclosing?.trace, owner: owner,
                parent: enclosing)
            WaitGraph.start(resolving, builtBy: frame)
            let box = frame.bind { resolve(container) }
            state.withLock { state in
                state.resolving = nil
                if state.generation == generation { publish(box, in: &state) }
            }
            resolving.finish(.success(box))
            return box
        }
    }

    var container: DependencyContainer {
        guard let container = state.withLock({ $0.container }) else { stopReleased() }
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
        state.withLock { publish(box, in: &$0) }
    }

    func switchContainer(to container: DependencyContainer) {
        state.withLock(releasingAfter: { state, released in
            released.append(state.reference)
            state.reference = (container, nil)
            publish(nil, in: &state)
        })
    }

    /// Swaps the published box; the old one is retired, not released.
    private func publish(_ box: AnyBox?, in state: inout State) {
        state.generation &+= 1
        if let replaced = cell.exchange(box) { state.retired.append(replaced) }
    }
}
