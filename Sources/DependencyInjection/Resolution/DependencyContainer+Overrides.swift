extension DependencyContainer {
    /// Replaces a registration in this container (and the children that do not
    /// override it themselves).
    ///
    /// The replacement keeps the registration's scope: an overridden singleton is
    /// built once from `make`. Decorations installed with
    /// ``decorate(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)`` stay, and wrap
    /// what `make` builds. Every dependency resolved through the provider afterwards
    /// sees the replacement, and anything this container had cached that was built
    /// from the old registration is dropped, so no stale instance is served:
    ///
    /// ```swift
    /// DependencyContainer.mocks.override(\.httpClient) { StubHTTPClient() }
    /// let loader = DependencyContainer.mocks.feedLoader()   // built with the stub
    /// ```
    ///
    /// Parameterized registrations are overridden one argument at a time:
    /// `override(\.[session: "42"]) { … }`.
    ///
    /// Overrides are how tests and composition roots choose implementations without
    /// touching the registrations; see <doc:OverridesAndMocks>.
    ///
    /// - Parameters:
    ///   - keyPath: The provider to replace.
    ///   - make: Builds the replacement. It may be called from any thread.
    @inlinable  // specialised where it is called: no runtime lookup of `Override<Value>`
    public func override<Value>(
        _ keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        _ make: @escaping @Sendable () -> Value
    ) {
        let provider = self[keyPath: keyPath]
        replaceOverride(
            of: provider.key, named: provider.name, at: RegistrationIdentity.keyPathToNote(keyPath), with: Override(make))
    }

    /// Replaces an async registration in this container (and the children that do not
    /// override it themselves).
    ///
    /// It behaves as
    /// ``override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)`` does for
    /// synchronous registrations: the replacement keeps the scope, and what this container
    /// built from the old registration is dropped.
    ///
    /// ```swift
    /// container.override(\.database) { try await InMemoryDatabase() }
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The async provider to replace.
    ///   - make: Builds the replacement; it may suspend and throw.
    @inlinable  // specialised where it is called: no runtime lookup of `AsyncOverride<Value>`
    public func override<Value>(
        _ keyPath: KeyPath<DependencyContainer, AsyncProvider<Value>>,
        _ make: @escaping @Sendable () async throws -> Value
    ) {
        let provider = self[keyPath: keyPath]
        replaceOverride(
            of: provider.key, named: provider.name, at: RegistrationIdentity.keyPathToNote(keyPath),
            with: AsyncOverride(make))
    }

    /// Drops every cached instance, every override and every decoration of this container.
    ///
    /// Use it to start over in a container that outlives one use, such as the shared
    /// `mocks` between tests that run one at a time, or a user's container at sign-out:
    ///
    /// ```swift
    /// DependencyContainer.mocks.override(\.httpClient) { StubHTTPClient() }
    /// // ...
    /// DependencyContainer.mocks.reset()
    /// DependencyContainer.mocks.httpClient()   // built from the registration again
    /// ```
    ///
    /// Stored values are kept (use ``removeAll()`` for those). The next resolution of
    /// each singleton builds it again from its registration. Children drop what they
    /// built from this container's overrides. Instances are released without their
    /// teardowns: ``shutdown(fileID:filePath:line:column:)`` runs those, and keeps the
    /// overrides.
    public func reset() {
        let (dropped, (instances, handing), children) = withStateLock(releasingAfter: { state, released in
            state.forgetWhatOverridesDecided(released: &released)
            released.append(state.overrides)
            released.append(state.decorations)
            released.append(state.sharedInstances)
            state.dependents.keepReferences(in: &released)
            state.windowOnlyUses.keepReferences(in: &released)
            released.append(state.teardowns)
            released.append(state.arguments)
            defer {
                (state.overrides, state.dependents) = (.init(), .init())
                if let seldom = state.seldom {
                    (seldom.decorations, seldom.sharedInstances, seldom.arguments) = ([:], [:], [:])
                    (seldom.windowOnlyUses, seldom.teardowns) = (.init(), [:])
                }
                // After the scopes' keys are read below: they include every singleton.
                state.singletons.removeAll(into: &released)
                state.building.dropAll()
                state.drops &+= 1
            }
            let children = state.liveChildren
            // A scope shares this container's instances, so what it built from them goes
            // too, and what it builds from those being built; an isolated child built its
            // own, which stay. The record names the shared instances that died since, and
            // were swept: a scope may have built from them too.
            let instances = children.contains(where: \.isScope) ? state.keysOfEverythingBuilt : []
            let handing = state.noteStaleUnderWay(instances, changed: [])
            return (Array(Set(state.overrides.keys).union(state.decorations.keys)), (instances, handing), children)
        })
        let stale = StaleAppInstances(keys: instances, origin: .appReset, changed: [])
        for child in children {
            Self.invalidate(
                dropped, stale: child.isScope ? stale : .none, in: child.container, isScope: child.isScope,
                forgettingLearned: isScope)
        }
        if let handing { withStateLock(releasingAfter: { $0.forgetStaleUnderWay(handing, released: &$1) }) }
    }

    /// Drops the cached instance, the override and the decorations of one registration,
    /// and everything this container built from it.
    ///
    /// ```swift
    /// DependencyContainer.mocks.reset(\.httpClient)
    /// ```
    ///
    /// - Parameter keyPath: The provider to reset.
    public func reset<Value>(_ keyPath: KeyPath<DependencyContainer, Provider<Value>>) {
        let provider = self[keyPath: keyPath]
        replaceOverride(of: provider.key, named: provider.name, at: keyPath, with: nil)
    }

    /// Drops the cached instance, the override and the decorations of one async
    /// registration, and everything this container built from it.
    ///
    /// ```swift
    /// container.reset(\.database)
    /// let database = try await container.database()   // opened again
    /// ```
    ///
    /// - Parameter keyPath: The async provider to reset.
    public func reset<Value>(_ keyPath: KeyPath<DependencyContainer, AsyncProvider<Value>>) {
        let provider = self[keyPath: keyPath]
        replaceOverride(of: provider.key, named: provider.name, at: keyPath, with: nil)
    }

    /// Installs an override, or removes it and the decorations, then drops what was built
    /// from the old one here and in every descendant that does not override it itself. With
    /// `includingArguments`, `key` is a provider family's, and the overrides of its
    /// arguments are removed too. `keyPath`, the key path the caller named the registration
    /// by, is checked in a debug build (``RegistrationIdentity``), and may be nil elsewhere.
    @usableFromInline
    func replaceOverride(
        of key: RegistrationKey, named name: StaticString, at keyPath: AnyKeyPath?, with override: AnyObject?,
        includingArguments: Bool = false
    ) {
        change(key, named: name, at: keyPath) { state, released in
            if let override {
                released.keep(state.overrides.updateValue(override, forKey: key))
            } else {
                state.removeOverride(of: key, into: &released)
            }
            if includingArguments { state.removeOverridesOfArguments(of: key, into: &released) }
        }
    }

    /// Changes how this container builds `key` with `body`, under the lock, then drops what
    /// was built from it here and in every descendant that does not override it itself.
    ///
    /// A scope shares its app container's instances, so what it built from an app-wide
    /// instance is built from what that instance was built from. A change reaching a scope
    /// therefore also drops what the scope built from the app-wide instances built from
    /// `key`: a request's handler, built from the app's `timed`, built from the app's
    /// `clock`, goes when the app or the session overrides `clock`
    /// (``StaleAppInstances``).
    func change(
        _ key: RegistrationKey, named name: StaticString, at keyPath: AnyKeyPath?,
        _ body: (inout ContainerState, inout Released) -> Void
    ) {
        RegistrationIdentity.note(keyPath, leadsTo: key, name: name, in: self)
        let isScope = self.isScope
        let spread: Spread? = withStateLock(releasingAfter: { state, released in
            state.forgetWhatOverridesDecided(released: &released)
            body(&state, &released)
            let children = state.liveChildren
            // Read before the drop, which forgets the record: the scopes among the children
            // share what this container drops.
            let spread: Spread?
            if isScope {
                if children.isEmpty && state.hasNothingToDrop {
                    spread = nil
                } else {
                    state.changesUnderWay += 1
                    spread = Spread(children: children, appInstances: [], handing: nil, reachingOwnUses: true)
                }
            } else if children.isEmpty {
                spread = nil
            } else {
                let shared = state.keysSharedWithScopes(in: children, builtFrom: [key])
                spread = Spread(
                    children: children, appInstances: shared, handing: state.noteStaleUnderWay(shared, changed: [key]),
                    reachingOwnUses: false)
            }
            state.invalidate(key, keepingOwnOverrides: false, released: &released)
            return spread
        })
        if let spread { self.spread(change: key, spread) }
    }

    /// Where a change goes after the container's own lock: its `children`, with the keys of
    /// the instances it dropped that its scopes shared (`appInstances`, noted as `handing`
    /// in ``ContainerState/staleUnderWay`` until they reached them), and, in a scope that
    /// built something or has children (`reachingOwnUses`), its own uses of app-wide
    /// instances. `nil` for the usual change, in a container with no children.
    private struct Spread {
        let children: [ContainerState.Child]
        let appInstances: [RegistrationKey]
        let handing: Int?
        let reachingOwnUses: Bool
    }

    /// Drops, in the children of a change's ``Spread`` and their descendants, what was
    /// built from the changed `key`, and in the scopes among them what was built from the
    /// instances this container dropped. In a scope, then drops what it and its
    /// descendants built from the app-wide instances built from `key`.
    ///
    /// Apart from ``change(_:named:at:_:)``, which every override takes: most containers
    /// have no children.
    @inline(never)
    private func spread(change key: RegistrationKey, _ spread: Spread) {
        let keys = [key]
        let stale = StaleAppInstances(keys: spread.appInstances, origin: .appChange, changed: keys)
        for child in spread.children {
            Self.invalidate(
                keys, stale: child.isScope ? stale : .none, in: child.container, isScope: child.isScope,
                forgettingLearned: isScope)
        }
        if let handing = spread.handing {
            withStateLock(releasingAfter: { $0.forgetStaleUnderWay(handing, released: &$1) })
        }
        // After every scope inside this one has seen the change, so that one that handed an
        // app-wide registration over from then on looks again at what it overrides
        // (``afterHandover(_:_:asked:)``), and one that did so before finds the instance it
        // got in the app container's record now. Meanwhile a scope may have built its own
        // copy of such an instance (on another thread, or in the `deinit` of something the
        // first step dropped), after what it built from the app's copy: so the users of
        // the key go even then (``StaleAppInstances/Origin/scopeChange``).
        if spread.reachingOwnUses, let app = appContainerOfScope {
            let appWide = app.withStateLock { $0.keysStaleForScopes(changing: keys) }
            if !appWide.isEmpty {
                Self.invalidate(
                    [], stale: StaleAppInstances(keys: appWide, origin: .scopeChange, changed: keys), in: self,
                    isScope: true)
            }
            withStateLock { $0.changesUnderWay -= 1 }
        }
    }

    /// Drops what was built from a parent's changed `keys` in `container` and
    /// in every descendant, except what comes from that container's own overrides.
    /// A loop, not a recursion: a chain of thousands of nested children must not overflow
    /// the stack.
    ///
    /// `stale` names app-wide instances that the app container dropped, or that were built
    /// from what changed: a scope drops what it built from them (``StaleAppInstances``).
    /// A container that is not a scope (`isScope` false) hands its scopes the keys of the
    /// instances it drops in the same way: they shared them.
    ///
    /// With `forgettingLearned` (a change in a scope), the scopes inside it also forget the
    /// app-wide registrations they learned to build themselves, which may have been learned
    /// from the changed overrides.
    static func invalidate(
        _ keys: [RegistrationKey], stale: StaleAppInstances = .none, in container: DependencyContainer, isScope: Bool,
        forgettingLearned: Bool = false
    ) {
        var pending = [(keys: keys, stale: stale, container: container, isScope: isScope)]
        // The containers that are not scopes, with the keys they hand their scopes until
        // the end (``ContainerState/noteStaleUnderWay(_:)``).
        var handing: [(container: DependencyContainer, handing: Int)] = []
        while let next = pending.popLast() {
            let (reaching, stale, shared, children) = next.container.withStateLock(releasingAfter: { state, released in
                if forgettingLearned { state.forgetLearnedOwn(released: &released) }
                let result = state.invalidate(next.keys, stale: next.stale, isScope: next.isScope, released: &released)
                if let number = state.noteStaleUnderWay(result.shared, changed: result.reaching) {
                    handing.append((next.container, number))
                }
                return result
            })
            guard forgettingLearned || !reaching.isEmpty || !stale.keys.isEmpty else { continue }
            // A container that is not a scope gets no stale instances: it built its own.
            let passed = shared.isEmpty ? stale : StaleAppInstances(keys: shared, origin: .appChange, changed: reaching)
            pending += children.map { child in
                (keys: reaching, stale: child.isScope ? passed : .none, container: child.container, isScope: child.isScope)
            }
        }
        for (container, number) in handing {
            container.withStateLock(releasingAfter: { $0.forgetStaleUnderWay(number, released: &$1) })
        }
    }

    /// What replaces the registration of `key` for a resolution in a descendant that found
    /// `below` on its way here: the override box of the nearest container (this one or a
    /// parent) that has one, or a ``Decorated`` entry when decorations apply on the way.
    /// The box's type matches the key: keys include the value type, and sync and async
    /// registrations never share a call site.
    func installedOverride(for key: RegistrationKey, below: AnyObject?) -> AnyObject? {
        var found = below
        var container: DependencyContainer? = self
        while Decorated.isOpen(found), let current = container {
            found = Decorated.stack(found, over: current.withStateLock { $0.replacement(for: key) })
            container = current.parent
        }
        return found
    }
}
