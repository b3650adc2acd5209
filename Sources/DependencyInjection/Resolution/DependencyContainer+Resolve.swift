extension DependencyContainer {
    /// Resolves `provider` according to its scope.
    ///
    /// A cached singleton is served inline, at the caller: one lock round-trip and a probe
    /// of a flat hash table, with no allocation and no dynamic cast. Everything else takes
    /// the one road, ``resolveSlowly(_:)``.
    @inlinable
    func resolve<Value>(_ provider: Provider<Value>) -> Value {
        if provider.scope.isKeptByContainer,
            let value = withStateLock({ $0.cachedSingleton(provider.key, as: Value.self) })
        {
            return value
        }
        return resolveSlowly(provider)
    }

    /// The box of `provider`'s instance that this container keeps, if it is built and
    /// nothing needs the slow path (see ``ContainerState/cachedSingletonBox(_:)``): for a
    /// `@Dependency` property to keep, shared with the container, which saves the property
    /// an allocation and the memory of a second box.
    ///
    /// ```swift
    /// let box = container.cachedBox(container.httpClient) ?? Box(container.httpClient())
    /// ```
    @inlinable
    func cachedBox<Value>(_ provider: Provider<Value>) -> AnyBox? {
        guard provider.scope.isKeptByContainer else { return nil }
        return withStateLock { $0.cachedSingletonBox(provider.key) }
    }

    /// The road every synchronous resolution takes past the inline cache: a scope container
    /// first hands app-wide registrations to its app container
    /// (``appContainer(resolving:_:)``); then the container decides under its lock
    /// (``ContainerState/claim(_:scope:)``) whether to serve, wait or build, and
    /// this adapter waits on a semaphore or builds on this thread.
    ///
    /// The bookkeeping is compiled once in this module; only the calls of the closures are
    /// specialized where the provider is resolved.
    @inlinable
    func resolveSlowly<Value>(_ provider: Provider<Value>) -> Value {
        if provider.scope == .factory, let entry = beginPlainFactory(provider.key, provider.name) {
            defer {
                ThreadFrames.leave(entry)
                // The plain frame names the provider's container and argument without
                // holding them: the provider must outlive it, wherever this is inlined.
                withExtendedLifetime(provider) {}
            }
            return provider.make()
        }
        // Only a scope hands over: every other container skips the calls.
        guard appContainerOfScope != nil else { return resolveSlowly(provider, servingScope: nil) }
        if provider.scope == .singleton {
            var overriddenInScope = false
            if let shared = appInstanceShared(provider, overriddenInScope: &overriddenInScope) { return shared }
            if overriddenInScope { return resolveSlowly(provider, servingScope: nil) }
        }
        guard let handover = appContainer(resolving: provider.key, provider.scope) else {
            return resolveSlowly(provider, servingScope: nil)
        }
        return resolve(provider, handingOver: handover)
    }

    /// Resolves `provider` in a scope that hands it to its app container: shares the app
    /// container's instance, or builds its own, or asks again
    /// (``afterHandover(_:_:asked:)``). A function of its own, so that the frame of every
    /// resolution (a deep chain has thousands of them on one stack) does not carry it.
    @inlinable
    func resolve<Value>(_ provider: Provider<Value>, handingOver first: Handover) -> Value {
        var (handover, asked) = (first, 1)
        while true {
            let home = handover.app
            let cached = provider.scope.isKeptByContainer
                ? home.withStateLock({ $0.cachedSingleton(provider.key, as: Value.self) }) : nil
            let value = cached ?? handingOver { home.resolveSlowly(provider, servingScope: ObjectIdentifier(self)) }
            switch afterHandover(provider.key, handover, asked: asked) {
            case .sharesAppInstance: return value
            case .buildsOwn: return resolveSlowly(provider, servingScope: nil)
            case .asksAgain: asked += 1
            }
            guard let next = appContainer(resolving: provider.key, provider.scope) else {
                return resolveSlowly(provider, servingScope: nil)
            }
            handover = next
        }
    }

    /// Resolves `provider` in this container, for `servingScope` when this is the app
    /// container of a scope that handed it over.
    @inlinable
    func resolveSlowly<Value>(_ provider: Provider<Value>, servingScope: ObjectIdentifier?) -> Value {
        let build: Resolution
        switch prepare(provider.key, provider.name, provider.scope, Value.self, servingScope: servingScope) {
        case .ready(let object): return Self.unbox(object)
        case .build(let started): build = started
        }
        var value: Value?
        build.run(in: self) { value = Decorated.value(from: provider.make, replacedBy: build.override) }
        let kept: Box<Value>? =
            if build.scope == .factory { nil } else if provider.isMainActor { MainActorBox(value!, keptBy: self) } else { Box(value!) }
        build.finish(in: self, keeping: kept, teardown: provider.pendingTeardown(of: kept))
        return value!
    }

    /// Claims `key` for a synchronous resolution: serves what is cached, waits for what
    /// is in flight, or returns what building here needs.
    @usableFromInline
    func prepare(
        _ key: RegistrationKey, _ name: StaticString, _ scope: DependencyScope, _ type: Any.Type,
        servingScope: ObjectIdentifier?
    ) -> Preparation {
        let (resolution, claim) = begin(key, name, scope, type, servingScope: servingScope)
        // What is served here ends the resolution here, as a built one ends
        // (``Resolution/finish(in:keeping:teardown:)``).
        if scope == .graph, let box = resolution.graphInstance(in: self) {
            resolution.conclude(.cached)
            return .ready(box)
        }
        switch claim {
        case .cached(let object):
            resolution.conclude(.cached)
            return .ready(object)
        case .await(let construction):
            let box = construction.wait(as: resolution.owner, innermost: resolution.enclosing)
            resolution.conclude(.awaited)
            return .ready(box)
        case .build:
            return .build(resolution)
        }
    }

    /// Resolves an async `provider` according to its scope: the same road as
    /// ``resolveSlowly(_:)``, waiting on continuations. A singleton or shared instance is
    /// built in a task of its own, which inherits this task's task-local values, so that
    /// cancelling one waiter does not cancel it for the others.
    ///
    /// A scope whose app container's construction fails builds its own instead, when the
    /// construction used something the scope overrides (``buildsOwnAfterFailedHandover(_:_:)``):
    /// the failure may come from the app's values of it.
    func resolve<Value>(_ provider: AsyncProvider<Value>) async throws -> Value {
        var asked = 1
        handingOver: while let handover = appContainer(resolving: provider.key, provider.scope) {
            let value: Value
            do {
                value = try await handingOver { try await handover.app.resolve(provider, servingScope: self) }
            } catch {
                guard buildsOwnAfterFailedHandover(provider.key, handover) else { throw error }
                break handingOver
            }
            switch afterHandover(provider.key, handover, asked: asked) {
            case .sharesAppInstance: return value
            case .buildsOwn: break handingOver
            case .asksAgain: asked += 1
            }
        }
        return try await resolve(provider, servingScope: nil)
    }

    private func resolve<Value>(_ provider: AsyncProvider<Value>, servingScope: DependencyContainer?) async throws -> Value {
        let (resolution, claim) = begin(
            provider.key, provider.name, provider.scope, Value.self, servingScope: servingScope.map(ObjectIdentifier.init),
            isAsync: true)
        do {
            return try await resolve(provider, resolution, claim, servingScope: servingScope)
        } catch {
            resolution.traced?.finish(outcome: nil)
            throw error
        }
    }

    private func resolve<Value>(
        _ provider: AsyncProvider<Value>, _ resolution: Resolution, _ claim: ContainerState.Claim,
        servingScope: DependencyContainer?
    ) async throws -> Value {
        let object: AnyObject
        switch claim {
        case .cached(let cached):
            object = cached
        case .await(let construction):
            object = try await construction.value(as: resolution.owner, innermost: resolution.enclosing)
        case .build:
            if provider.scope == .graph, let box = resolution.graphInstance(in: self) {
                resolution.traced?.finish(outcome: .cached)
                return Self.unbox(box)
            }
            let make = Decorated.make(from: provider.make, replacedBy: resolution.override)
            // Read before the construction starts, which alone takes it from the resolution.
            let room = resolution.asyncWaitRoom
            // Runs the closure in this construction's frame, as `owner`.
            let run = { @Sendable (owner: Owner) in
                try await resolution.frame(self, owner: owner, waitedIn: room).bind(make)
            }
            guard let room else {
                let value = try await run(resolution.owner)
                if provider.scope == .graph { resolution.keepGraphInstance(Box(value), in: self) }
                resolution.traced?.finish(outcome: resolution.outcome)
                return value
            }
            // The scope this construction is built for keeps its cache aside until the
            // construction ends, not only while this task waits: a waiter that is cancelled
            // stops waiting, and the construction runs on.
            servingScope?.beginHandover()
            let construction = AsyncConstruction { [self] in
                let outcome: Result<AnyBox, any Error>
                var teardown: PendingTeardown?
                do {
                    let box = Box(try await run(.current))
                    (outcome, teardown) = (.success(box), provider.pendingTeardown(of: box))
                } catch {
                    outcome = .failure(error)
                }
                // Before the waiters wake: one that returns must find the cache back.
                servingScope?.endHandover()
                var released = Released()
                let ended = self.complete(
                    resolution, try? outcome.get(), scope: provider.scope, overriddenHere: resolution.overriddenHere, teardown: teardown,
                    released: &released)
                return (ended, outcome, released)
            }
            Task { await construction.run() }
            object = try await room.value(as: resolution.owner, innermost: resolution.enclosing)
        }
        resolution.traced?.finish(outcome: resolution.outcome)
        return Self.unbox(object)
    }

    /// Claims `key` under the lock and prepares what building or waiting needs.
    ///
    /// A resolution that builds what the container keeps (a singleton, scoped or shared
    /// instance) is made under the lock and
    /// listed there as the construction running (``ContainerState/startBuilding(_:)``):
    /// it is the record others find and wait for, so that a first build allocates no
    /// record of its own, and the frame that builds is known before anyone can wait. An
    /// asynchronous one makes its waiting room at once (`isAsync`): the task that
    /// resolves waits there itself, for the task that builds.
    ///
    /// - Returns: The resolution, and what the container decided, which the caller acts on
    ///   at once: kept in the resolution, it cost every first build a release of its own.
    private func begin(
        _ key: RegistrationKey, _ name: StaticString, _ scope: DependencyScope, _ type: Any.Type,
        servingScope: ObjectIdentifier?, isAsync: Bool = false
    ) -> (Resolution, ContainerState.Claim) {
        let (claim, listed, ownOverride, tracer) = withStateLock({ state -> (ContainerState.Claim, Resolution?, AnyObject?, ResolutionTracer?) in
            let claim = state.claim(key, scope: scope)
            guard case .build = claim else { return (claim, nil, nil, state.tracer) }
            let ownOverride = state.replacement(for: key)
            guard scope.isBuiltOnceByContainer else { return (claim, nil, ownOverride, state.tracer) }
            let (owner, enclosing) = Frame.ownerAndInnermost
            let construction = Resolution(
                in: self, key: key, name: name, scope: scope, owner: owner, enclosing: enclosing,
                servesScope: servingScope, override: ownOverride, overriddenHere: ownOverride != nil, isListed: true)
            if isAsync {
                construction.openWaitRoom()
                construction.buildsInATask = true
            }
            state.startBuilding(construction)
            return (claim, construction, ownOverride, state.tracer)
        })
        let resolution: Resolution
        if let listed {
            resolution = listed
        } else {
            // A cache hit needs neither the frame chain nor the owner, unless it is traced.
            let served: Bool = if case .cached = claim { true } else { false }
            let (owner, enclosing) = served && tracer == nil ? (.nobody, nil) : Frame.ownerAndInnermost
            resolution = Resolution(
                in: self, key: key, name: name, scope: scope, owner: served ? .nobody : owner,
                enclosing: enclosing, servesScope: servingScope, override: ownOverride, overriddenHere: ownOverride != nil,
                isListed: false)
        }
        if scope == .shared, case .cached(let instance) = claim { releaseHolds(ofShared: instance, key) }
        if let tracer {
            if let trace = Trace(tracer, name: name, type: type, scope: scope, enclosing: resolution.enclosing) {
                resolution.startTrace(trace)
            } else {
                resolution.keepUntraced(tracer)
            }
        }
        switch claim {
        case .cached: return (resolution, claim)
        case .await: resolution.outcome = .awaited
        case .build:
            if let parent, Decorated.isOpen(resolution.override) {
                resolution.override = parent.installedOverride(for: key, below: resolution.override)
            }
            resolution.outcome = Decorated.isOpen(resolution.override) ? .built : .builtFromOverride
            if key.argument != nil { key.checkArgument(of: name) }
        }
        // Nothing encloses most first builds: nothing to check, and no call.
        if resolution.enclosing != nil {
            Frame.checkNoCycle(
                building: key, in: ObjectIdentifier(self), site: resolution.site, owner: resolution.owner,
                from: resolution.enclosing)
        }
        return (resolution, claim)
    }

    /// Ends a construction: caches what it built (unless it was dropped meanwhile) with its
    /// teardown, then wakes its waiters.
    ///
    /// A scope that built an app-wide registration itself decided so before it began, from
    /// what it overrode then. A session that removed its override in between dropped
    /// nothing in its requests, since nothing was built yet; a request that kept its copy
    /// would hold its own instance of an app-wide singleton for good. So the scope keeps it
    /// only if what it overrides now still says so: it overrides the registration, or the
    /// app container's record shows it is built from something the scope overrides, or
    /// the scope's own record does (``ContainerState/complete(_:keeping:weakly:teardown:checkingOwnAgainst:released:)``),
    /// which neither the app container's changes nor unrelated ones touch. A change after
    /// this reads the overrides drops the instance through the record of uses, as any
    /// change does.
    ///
    /// A construction from an override this container installed (`overriddenHere`) needs no
    /// check: removing or replacing that override drops the construction.
    ///
    /// What the construction's end takes out of the state goes to `released`, which the
    /// caller lets go of only after opening the room: a `deinit` it runs may resolve what
    /// a waiter is building, and that waiter waits for this construction, so run before
    /// the room opens, it would wait for its own thread.
    ///
    /// - Returns: The room where others wait for the construction, if any did, for the
    ///   caller to open with the outcome (``InFlight/finish(_:)``), after letting go of
    ///   what else it holds.
    @inline(__always)
    fileprivate func complete(
        _ construction: Resolution, _ box: AnyBox?, scope: DependencyScope, overriddenHere: Bool,
        teardown: PendingTeardown?, released: inout Released
    ) -> InFlight? {
        let installed =
            appContainerOfScope == nil || box == nil || overriddenHere ? nil : overridesToCheck(construction.key, scope)
        let weakly = scope == .shared
        return withStateLock { state in
            state.complete(
                construction, keeping: weakly ? box?.object : box, weakly: weakly, teardown: teardown,
                checkingOwnAgainst: installed, released: &released)
        }
    }

    /// A resolved value from a box, or a live shared instance stored as itself.
    @inlinable
    static func unbox<Value>(_ object: AnyObject) -> Value {
        if let box = object as? Box<Value> { return box.value }
        return object as! Value
    }
}

/// What a synchronous resolution does after ``DependencyContainer/prepare(_:_:_:_:)``.
@usableFromInline
enum Preparation {
    case ready(AnyObject)
    case build(Resolution)
}

/// One resolution past the inline cache, between claiming its key and returning: the
/// frame its construction runs in, with what the container decided under its lock.
///
/// It is the construction's frame itself, not an object beside it: a synchronous
/// construction runs in the resolution, so a first build allocates one object for both,
/// and copies the key and the chain once. An asynchronous construction runs in a task of
/// its own, which is another owner, and gets a frame of its own
/// (``frame(_:owner:waitedIn:)``).
///
/// It is also the record of a construction whose result the container keeps: the
/// container lists it while it runs (``ContainerState/startBuilding(_:)``), and a
/// resolution that finds it there waits in the room the first such one makes
/// (``waitRoom()``). A construction no one waits for, the usual first build, so costs no
/// object and no lock beyond the resolution itself.
///
/// A class, not a struct: it travels through ``Preparation`` and into the closures that
/// build, and a struct of this size is copied field by field at each step (retaining and
/// releasing every reference in it), which cost a first build some 3,000 instructions.
@usableFromInline
final class Resolution: Frame, @unchecked Sendable {
    // @unchecked: its own fields are read and written only by the owner that resolves,
    // but `isDropped` and `room`, which the lock of the container it runs in guards;
    // `override` is an `Override`, an `AsyncOverride` or a `Decorated` entry, and a cached
    // object is a `Sendable` value's box, a `Sendable` shared instance, or the box of this
    // owner's graph instance. What other owners read of it is the frame's.

    let name: StaticString
    @usableFromInline let scope: DependencyScope
    /// Whether this container itself overrides or decorates the key.
    let overriddenHere: Bool
    /// Whether the container lists this resolution as a construction running there: it
    /// builds what the container keeps.
    let isListed: Bool
    /// Under the lock of the container that runs it: whether an override or reset dropped
    /// what is being built, which is then handed out but not kept.
    @exclusivity(unchecked) var isDropped = false
    /// Set under the lock of the container that runs it, as it is listed: whether its
    /// construction runs in a task of its own (an asynchronous one), not on the stack of
    /// the owner that resolved it (``ResolvingCode``).
    @exclusivity(unchecked) var buildsInATask = false
    /// Under the lock of the container that runs it: where others wait for this
    /// construction, once one does. Taken when the construction ends
    /// (``ContainerState/complete(_:keeping:weakly:teardown:checkingOwnAgainst:released:)``):
    /// a task started inside the construction keeps its frame, and must not keep the
    /// construction's result with it.
    @exclusivity(unchecked) private var room: InFlight?
    /// The installed override, an `Override<Value>` or `AsyncOverride<Value>`, or a
    /// `Decorated` entry, if any. Cleared when the resolution ends
    /// (``finish(in:keeping:teardown:)``), as ``room`` is taken.
    @exclusivity(unchecked) @usableFromInline var override: AnyObject?
    /// Present only while tracing. Cleared when the resolution ends, as ``override`` is: it
    /// holds the tracer, and whatever the tracer's closure captured.
    @exclusivity(unchecked) private(set) var traced: Trace?
    @exclusivity(unchecked) var outcome = ResolutionEvent.Outcome.cached

    init(
        in container: DependencyContainer, key: RegistrationKey, name: StaticString,
        scope: DependencyScope, owner: Owner, enclosing: Frame?, servesScope: ObjectIdentifier?, override: AnyObject?,
        overriddenHere: Bool, isListed: Bool
    ) {
        (self.name, self.scope, self.overriddenHere, self.isListed) = (name, scope, overriddenHere, isListed)
        self.override = override
        super.init(
            container: ObjectIdentifier(container), building: container, keepsResult: scope.isKeptByContainer, key: key,
            site: Site(name: .registration(name), file: key.fileName, line: key.line), servesScope: servesScope,
            trace: nil, owner: owner, parent: enclosing, releasesHeldOnCompletion: isListed)
    }

    /// The frame this resolution started in, if any.
    var enclosing: Frame? { parent }

    /// Traces this resolution with `trace`, before its construction starts.
    func startTrace(_ trace: Trace) {
        traced = trace
        join(trace.batch, as: trace.sequence)
    }

    /// Under the container's lock: the room where another owner waits for this
    /// construction, made by the first that does. A synchronous construction runs in this
    /// frame, which the room names as its builder from the start, for the wait graph.
    func waitRoom() -> InFlight {
        if let room { return room }
        let made = InFlight(key: key, builtBy: self)
        room = made
        return made
    }

    /// Under the container's lock, as it is listed: makes the room of an asynchronous
    /// construction, where the task that resolves waits for the task that builds, whose
    /// frame ``frame(_:owner:waitedIn:)`` names.
    func openWaitRoom() {
        room = InFlight(key: key)
    }

    /// The room of an asynchronous construction, read by the task that resolves before
    /// it starts the construction: nothing else changes it until the construction ends.
    var asyncWaitRoom: InFlight? { room }

    /// Under the container's lock, when the construction ends: the room, if any, for the
    /// caller to open after unlocking. No one can find the construction afterwards.
    func takeWaitRoom() -> InFlight? {
        let taken = room
        room = nil
        return taken
    }

    /// Runs `body`, the registration's closure, in this construction's frame.
    @usableFromInline
    func run(in container: DependencyContainer, _ body: () -> Void) {
        bind(body)
    }

    /// Ends the construction: keeps `box` for a cached scope, with the teardown of a
    /// singleton that declares one (or for the outermost resolution, for a graph
    /// registration), and traces it. Then lets go of what the resolution held: a
    /// construction the container listed, only now that it is complete, since a `deinit`
    /// run earlier that resolved it would find it still building.
    @usableFromInline
    func finish(in container: DependencyContainer, keeping box: AnyBox?, teardown: PendingTeardown?) {
        if let box, isListed {
            var released = Released()
            container.complete(
                self, box, scope: scope, overriddenHere: overriddenHere, teardown: teardown, released: &released)?
                .finish(.success(box))
            withExtendedLifetime(released) {}
        } else if let box {
            keepGraphInstance(box, in: container)
        }
        conclude(outcome)
        completed()
    }

    /// Concludes this resolution, built or served (a cached instance, a `graph` instance,
    /// another owner's construction): traces its outcome, then lets go of the override and
    /// the trace it held, here outside every construction of its owner, or inside one
    /// when the outermost ends (``Frame/hold(_:_:)``), as the reference may be the last.
    ///
    /// ```swift
    /// case .cached(let object):
    ///     resolution.conclude(.cached)
    ///     return .ready(object)
    /// ```
    func conclude(_ outcome: ResolutionEvent.Outcome) {
        traced?.finish(outcome: outcome)
        // Most resolutions hold neither: no call.
        if override != nil || traced != nil || holdsObjectsUntilEnd { letGoOfOverrideAndTrace() }
    }

    /// Lets go of the override and the trace this resolution held (``conclude(_:)``).
    private func letGoOfOverrideAndTrace() {
        if let outermost = Frame.outermost(of: owner, from: enclosing) {
            outermost.hold(override, traced)
            moveHeldObjects(to: outermost)
        }
        (override, traced) = (nil, nil)
    }

    /// Keeps `tracer`, the container's, which traces nothing of this resolution (it runs
    /// inside a construction that was not traced), as ``letGoOfOverrideAndTrace()`` keeps
    /// a trace: this reference is the last when another thread removed the tracer
    /// meanwhile, and a `deinit` of what its closure captured may resolve what this
    /// resolution claimed, or what encloses it. A listed construction keeps it until it
    /// completes; any other hands it to the outermost resolution around it, if any.
    func keepUntraced(_ tracer: ResolutionTracer) {
        if isListed {
            hold(nil, tracer)
        } else {
            Frame.outermost(of: Owner.current, from: enclosing)?.hold(nil, tracer)
        }
    }

    /// The frame in which an asynchronous construction of this resolution builds, for the
    /// task running it, which is another owner than the one that resolves. Named as the
    /// builder in `room`, the construction's waiting room, when the container keeps it.
    func frame(_ container: DependencyContainer, owner: Owner, waitedIn room: InFlight?) -> Frame {
        let frame = Frame(
            container: ObjectIdentifier(container), building: container, keepsResult: scope.isKeptByContainer, key: key,
            site: site, servesScope: servesScope, trace: trace, owner: owner, parent: enclosing,
            traceEvent: traceEvent)
        // What the task notes goes with the instance this resolution keeps or shares.
        if scope == .graph || scope == .shared { frame.strongHolders = strongHoldersToFill }
        if let room { WaitGraph.start(room, builtBy: frame) }
        return frame
    }
}
