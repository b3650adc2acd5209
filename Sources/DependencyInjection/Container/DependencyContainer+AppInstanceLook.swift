extension DependencyContainer {
    /// In a scope of its app container, the app's cached instance of the singleton `key`,
    /// when the scope shares it and nothing needs the handover's road: the road a request
    /// takes for every app-wide singleton it resolves, a server's everyday operation.
    ///
    /// ```swift
    /// let request = DependencyContainer(scopeOf: app)
    /// request.override(\.requestUser) { user }
    /// let client = request.client()   // the app's client, found here
    /// ```
    ///
    /// The handover (``appContainer(resolving:_:)``, then ``afterHandover(_:_:asked:)``)
    /// looks for the construction the scope may be serving, notes the use for what the
    /// scope builds, and reads the scope's overrides and the app container's record of
    /// uses twice, before and after the app container answers: some eight lock
    /// round-trips. When the app container keeps the instance and no handover is under way
    /// (which a construction the scope serves implies), only a change of the scope's
    /// overrides meanwhile can change that answer; a tracer of the scope hears nothing of
    /// the app container's instances either way, which are the app container's events. So
    /// this look reads, under the scope's lock, that no handover is under way and the scope
    /// has not learned to build `key` itself, and what it overrides, with its count of
    /// changes; notes the use under that lock again when the scope builds, before the app
    /// container is asked, as the handover does; then, under the app container's lock,
    /// takes the instance kept for `key`, unless its record of uses says the instance was
    /// built from what the scope overrides; then, under the scope's lock again, checks that
    /// the count has not moved and the scope has not learned to build `key` itself. The
    /// overrides stood still from the first lock to the last, so the answer is the one the
    /// scope would have had at the moment the app container gave it.
    ///
    /// A scope of a scope (a request in a session) also reads what the scopes between it
    /// and the app container override, a lock round-trip each, after its count, as the
    /// handover does: such a change installs its override there before it counts the
    /// change here.
    ///
    /// A registration that the scope, or a scope between it and the app container,
    /// overrides or decorates (or its family) is built in the scope whatever the app
    /// container keeps. The look says so (`overriddenInScope`), and the resolution goes
    /// straight to its construction here, once the look has checked, under the scope's
    /// lock again, that its count of changes shows the overrides stood still since it read
    /// them (or it takes the handover's road), and, in a scope that builds, noted the use
    /// there: whatever construction runs in the scope then, also one that started while
    /// the look compared keys, a change of the override from then on finds it to drop,
    /// also when it waits for a thread that resolves the key (a use by time window only).
    /// The claim notes the use again, for a construction that starts after the look, as
    /// on the handover's road. That road would have read the same overrides again and
    /// come to the same construction, about 570 instructions later. A request's own
    /// user, which its handler resolves on every request, is such a registration. An
    /// override removed between the look and the claim leaves the construction what it is
    /// on the handover's road when the override goes between its read and the claim: built
    /// from what is installed then, handed out once, and not kept.
    ///
    /// ```swift
    /// var overriddenInScope = false
    /// if let shared = appInstanceShared(provider, overriddenInScope: &overriddenInScope) { return shared }
    /// if overriddenInScope { return resolveSlowly(provider, servingScope: nil) }
    /// ```
    ///
    /// The flag is an `inout` parameter, not a case of the result: an enum of the value
    /// or the look's reads was copied with a retain and release of each reference, about
    /// 150 instructions on every app singleton a request resolves.
    ///
    /// - Returns: The app container's instance, or `nil` when the scope builds its own
    ///   (`overriddenInScope` set) or the resolution takes the handover's road.
    @inlinable
    func appInstanceShared<Value>(_ provider: Provider<Value>, overriddenInScope: inout Bool) -> Value? {
        guard let look = lookAtAppInstance(of: provider.key, overriddenInScope: &overriddenInScope) else { return nil }
        let value = look.app.withStateLock { state -> Value? in
            if !look.installed.isEmpty, state.built(provider.key, fromAnyOf: look.installed) { return nil }
            return state.cachedSingleton(provider.key, as: Value.self)
        }
        guard let value, overridesStoodStill(since: look, for: provider.key) else { return nil }
        return value
    }

    /// The first step of ``appInstanceShared(_:overriddenInScope:)``: under this scope's lock, that no
    /// handover is under way and it has not learned to build `key` itself, with what it
    /// overrides and its count of changes; then what the scopes between it and the app
    /// container override; then, when the scope builds, the use of `key`, noted under its
    /// lock.
    ///
    /// - Returns: What to ask the app container with, or `nil`: with `overriddenInScope`
    ///   set when the scope or one between it and the app container overrides `key`,
    ///   otherwise when the resolution takes the handover's road.
    @usableFromInline
    func lookAtAppInstance(of key: RegistrationKey, overriddenInScope: inout Bool) -> AppInstanceLook? {
        guard let app = appContainerOfScope else { return nil }
        let read: (own: OverriddenKeys, changes: Int, isBuilding: Bool)? = withStateLock { state in
            // While a handover is under way, a resolution may come from the app container's
            // construction for this scope, which the handover's road sees and serves.
            guard state.handovers == 0, !state.hasLearnedOwn || !state.learnedOwn.contains(key) else { return nil }
            // A scope that overrides nothing, as many do, makes no list.
            let own = state.overrides.isEmpty && !state.hasDecorations ? OverriddenKeys.none : state.listedOverriddenKeys()
            return (own, state.learnedOwnForgotten, state.isBuilding)
        }
        guard let read else { return nil }
        var overridden = ScopeOverrides(own: read.own, changes: read.changes)
        if parent !== app {
            // Read after the count, as the handover reads them: a change in an enclosing
            // scope installs its override before it counts the change here.
            addOverridesOfEnclosingScopes(upTo: app, to: &overridden.enclosing)
        }
        // Compared outside the lock: a key's argument compares with its own `==`.
        if !overridden.isEmpty, overridden.overrides(key) {
            // What the scope builds uses `key`: noted before the construction is claimed,
            // as the handover notes it before it reads the overrides again, so that a
            // change of the override from now on finds what to drop, also a use by a
            // thread a construction waits for, which counts by time window only. Under
            // the lock where the count shows the overrides stood still since they were
            // read (a change meanwhile, which found nothing to drop, sends the resolution
            // the long way), and whether or not the scope built when they were read: a
            // construction may have started while the keys were compared.
            let stoodStill = withStateLock { state -> Bool in
                guard state.learnedOwnForgotten == read.changes else { return false }
                if state.isBuilding { state.recordUse(of: key) }
                return true
            }
            guard stoodStill else { return nil }
            overriddenInScope = true
            return nil
        }
        if read.isBuilding {
            // The use of the app's instance, noted for what the scope builds before the app
            // container is asked, as the handover notes it: a change of the key there then
            // finds the constructions to drop. A change of the scope's overrides since they
            // were read sends the resolution the long way at the last step, which notes it
            // again, after that change.
            withStateLock { $0.recordUse(of: key) }
        }
        return AppInstanceLook(app: app, installed: overridden.registrations, changes: read.changes)
    }

    /// The last step of ``appInstanceShared(_:overriddenInScope:)``: whether, under this scope's lock, its
    /// count of changes is still the one `look` read, and it has not learned meanwhile to
    /// build `key` itself.
    @usableFromInline
    func overridesStoodStill(since look: AppInstanceLook, for key: RegistrationKey) -> Bool {
        withStateLock { state in
            state.learnedOwnForgotten == look.changes && (!state.hasLearnedOwn || !state.learnedOwn.contains(key))
        }
    }
}

/// What a scope read before it looks at its app container's cached instance
/// (``DependencyContainer/appInstanceShared(_:overriddenInScope:)``).
@usableFromInline
struct AppInstanceLook {
    /// The scope's app container.
    @usableFromInline let app: DependencyContainer
    /// The registrations the scope, and the scopes between it and the app container,
    /// override or decorate (``OverriddenKeys/registrations``).
    @usableFromInline let installed: [RegistrationKey]
    /// The scope's ``ContainerState/learnedOwnForgotten`` when it read `installed`.
    let changes: Int
}
