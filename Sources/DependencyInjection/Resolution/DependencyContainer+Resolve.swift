extension DependencyContainer {
    /// Resolves `provider` according to its scope.
    ///
    /// A cached singleton is served inline, at the caller: one lock round-trip and a probe
    /// of a flat hash table, with no allocation and no dynamic cast. Everything else takes
    /// the one road, ``resolveSlowly(_:)``.
    @inlinable
    func resolve<Value>(_ provider: Provider<Value>) -> Value {
        if provider.scope == .singleton,
            let value = state.withLock({ $0.cachedSingleton(provider.key, as: Value.self) })
        {
            return value
        }
        return resolveSlowly(provider)
    }

    /// The road every synchronous resolution takes past the inline cache: the container
    /// decides under its lock (``ContainerState/claim(_:scope:released:)``) whether to
    /// serve, wait or build, and this adapter waits on a semaphore or builds on this thread.
    ///
    /// The bookkeeping is compiled once in this module; only the calls of the closures are
    /// specialized where the provider is resolved.
    @inlinable
    func resolveSlowly<Value>(_ provider: Provider<Value>) -> Value {
        let build: Resolution
        switch prepare(provider.key, provider.name, provider.scope, Value.self) {
        case .ready(let object): return Self.unbox(object)
        case .build(let started): build = started
        }
        var value: Value?
        build.run(in: self) { value = (build.override.map { $0 as! Override<Value> })?.make() ?? provider.make() }
        let kept: Box<Value>? =
            if build.scope == .factory { nil } else if provider.isMainActor { MainActorBox(value!) } else { Box(value!) }
        build.finish(in: self, keeping: kept, teardown: provider.pendingTeardown(of: kept))
        return value!
    }

    /// Claims `key` for a synchronous resolution: serves what is cached, waits for what
    /// is in flight, or returns what building here needs.
    @usableFromInline
    func prepare(_ key: RegistrationKey, _ name: StaticString, _ scope: DependencyScope, _ type: Any.Type) -> Preparation {
        let resolution = begin(key, name, scope, type)
        switch resolution.claim {
        case .cached(let object):
            resolution.trace?.finish(outcome: .cached)
            return .ready(object)
        case .await(let construction):
            let box = construction.wait(as: resolution.owner, innermost: resolution.enclosing)
            resolution.trace?.finish(outcome: .awaited)
            return .ready(box)
        case .build:
            return .build(resolution)
        }
    }

    /// Resolves an async `provider` according to its scope: the same road as
    /// ``resolveSlowly(_:)``, waiting on continuations. A singleton or shared instance is
    /// built in a task of its own, which inherits this task's task-local values, so that
    /// cancelling one waiter does not cancel it for the others.
    func resolve<Value>(_ provider: AsyncProvider<Value>) async throws -> Value {
        let resolution = begin(provider.key, provider.name, provider.scope, Value.self)
        do {
            return try await resolve(provider, resolution)
        } catch {
            resolution.trace?.finish(outcome: nil)
            throw error
        }
    }

    private func resolve<Value>(_ provider: AsyncProvider<Value>, _ resolution: Resolution) async throws -> Value {
        let object: AnyObject
        switch resolution.claim {
        case .cached(let cached):
            object = cached
        case .await(let construction):
            object = try await construction.value(as: resolution.owner, innermost: resolution.enclosing)
        case .build(let construction):
            let override = resolution.override.map { $0 as! AsyncOverride<Value> }
            let make = override?.make ?? provider.make
            // Runs the closure in this construction's frame, as `owner`.
            let run = { @Sendable (owner: Owner) in
                try await Frame.$current.withValue(resolution.frame(self, owner: owner), operation: make)
            }
            guard let construction else {
                let value = try await run(resolution.owner)
                resolution.trace?.finish(outcome: resolution.outcome)
                return value
            }
            Task {
                let outcome: Result<AnyBox, any Error>
                var teardown: PendingTeardown?
                do {
                    let box = Box(try await run(.current))
                    (outcome, teardown) = (.success(box), provider.pendingTeardown(of: box))
                } catch {
                    outcome = .failure(error)
                }
                self.complete(construction, outcome, weakly: provider.scope == .shared, teardown: teardown)
            }
            object = try await construction.value(as: resolution.owner, innermost: resolution.enclosing)
        }
        resolution.trace?.finish(outcome: resolution.outcome)
        return Self.unbox(object)
    }

    /// Claims `key` under the lock and prepares what building or waiting needs.
    private func begin(_ key: RegistrationKey, _ name: StaticString, _ scope: DependencyScope, _ type: Any.Type) -> Resolution {
        let (claim, ownOverride, tracer) = state.withLock(releasingAfter: { state, released in
            let claim = state.claim(key, scope: scope, released: &released)
            guard case .build = claim else { return (claim, nil as AnyObject?, state.tracer) }
            return (claim, state.override(for: key), state.tracer)
        })
        // A cache hit needs neither the frame chain nor the owner, unless it is traced.
        let served: Bool = if case .cached = claim { true } else { false }
        let enclosing = served && tracer == nil ? nil : Frame.current
        var resolution = Resolution(
            claim: claim, key: key, name: name, scope: scope, owner: served ? .nobody : .current, enclosing: enclosing,
            override: ownOverride,
            trace: tracer.flatMap { Trace($0, name: name, type: type, scope: scope, enclosing: enclosing) })
        switch claim {
        case .cached: return resolution
        case .await: resolution.outcome = .awaited
        case .build:
            if resolution.override == nil { resolution.override = parent?.installedOverride(for: key) }
            resolution.outcome = resolution.override == nil ? .built : .builtFromOverride
            key.checkArgument(of: name)
        }
        Frame.checkNoCycle(
            building: key, in: ObjectIdentifier(self), site: resolution.site, owner: resolution.owner, from: enclosing)
        return resolution
    }

    /// Ends a construction: caches what it built (unless it was dropped meanwhile) with its
    /// teardown, then wakes its waiters.
    fileprivate func complete(
        _ construction: InFlight, _ outcome: Result<AnyBox, any Error>, weakly: Bool, teardown: PendingTeardown?
    ) {
        let box = try? outcome.get()
        state.withLock(releasingAfter: { state, released in
            state.complete(
                construction, keeping: weakly ? box?.object : box, weakly: weakly, teardown: teardown,
                released: &released)
        })
        construction.finish(outcome)
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

/// One resolution past the inline cache, between claiming its key and returning.
@usableFromInline
struct Resolution: @unchecked Sendable {
    // @unchecked: immutable once begun; `override` is an `Override` or `AsyncOverride`,
    // and a cached object is a `Sendable` value's box or a `Sendable` shared instance.
    let claim: ContainerState.Claim
    let key: RegistrationKey
    let name: StaticString
    @usableFromInline let scope: DependencyScope
    let owner: Owner
    /// The frame this resolution started in, if any.
    let enclosing: Frame?
    /// The installed override, an `Override<Value>` or `AsyncOverride<Value>`, if any.
    @usableFromInline var override: AnyObject?
    /// Present only while tracing.
    let trace: Trace?
    var outcome = ResolutionEvent.Outcome.cached

    var site: Site { Site(name: .registration(name), fileID: key.file, line: key.line) }

    /// Runs `body`, the registration's closure, in this construction's frame.
    @usableFromInline
    func run(in container: DependencyContainer, _ body: () -> Void) {
        Frame.$current.withValue(frame(container, owner: owner), operation: body)
    }

    /// Ends the construction: keeps `box` for a cached scope, with the teardown of a
    /// singleton that declares one, and traces it.
    @usableFromInline
    func finish(in container: DependencyContainer, keeping box: AnyBox?, teardown: PendingTeardown?) {
        if let box, case .build(let construction?) = claim {
            container.complete(construction, .success(box), weakly: scope == .shared, teardown: teardown)
        }
        trace?.finish(outcome: outcome)
    }

    /// The frame in which this resolution builds, for the owner running it now.
    func frame(_ container: DependencyContainer, owner: Owner) -> Frame {
        let construction: InFlight? = if case .build(let construction?) = claim { construction } else { nil }
        let frame = Frame(
            container: ObjectIdentifier(container), key: key, site: site,
            singleton: scope == .singleton ? construction : nil, trace: trace?.batch, owner: owner, parent: enclosing)
        if let construction { WaitGraph.start(construction, builtBy: frame) }
        return frame
    }
}
