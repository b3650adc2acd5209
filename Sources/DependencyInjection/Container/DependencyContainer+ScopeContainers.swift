extension DependencyContainer {
    /// Creates a scope of `parent`: a session, a request, a screen.
    ///
    /// A scope shares its app container's instances and builds its own only where it must.
    /// Its app container is `parent`, or `parent`'s app container when `parent` is itself
    /// a scope. In a scope:
    ///
    /// - a `singleton` or `shared` registration resolves to the app container's instance,
    ///   built there and shared by every scope, unless it is built from something this
    ///   scope (or a scope between it and the app container) overrides or decorates: then
    ///   the scope builds its own;
    /// - a `scoped` registration
    ///   (``scoped(name:fileID:line:column:isolation:_:)->Provider<Value>``) is built once per scope;
    /// - a `factory` builds a new instance, in the scope.
    ///
    /// A scope's own values are overrides, typically of `unimplemented()` registrations,
    /// so that reading one that was never installed stops with a message naming it:
    ///
    /// ```swift
    /// final class Database: Sendable {}
    /// final class Handler: Sendable {
    ///     let user: String
    ///     let database: Database
    ///     init(user: String, database: Database) { (self.user, self.database) = (user, database) }
    /// }
    ///
    /// extension DependencyContainer {
    ///     var database: Provider<Database> { singleton { Database() } }
    ///     var currentUser: Provider<String> { unimplemented() }
    ///     var handler: Provider<Handler> {
    ///         scoped { Handler(user: self.currentUser(), database: self.database()) }
    ///     }
    /// }
    ///
    /// let app = DependencyContainer()
    /// let request = DependencyContainer(scopeOf: app)
    /// request.override(\.currentUser) { "ada" }
    /// assert(request.handler().database === app.database())   // shared with the app
    /// ```
    ///
    /// An app-wide instance is built by the app container even when a scope asks for it
    /// first: what its closure resolves through `self`, on its own thread or task, comes
    /// from the app container, and it never keeps the scope. So an app-wide singleton never
    /// sees a scope's values; one that needs them is `scoped`. A thread, a dispatch queue
    /// or a task the closure hands work to resolves through `self` in the scope: resolve
    /// what that work needs first.
    ///
    /// A scope is made and dropped once per request: serving one request through a scope
    /// (make it, install a value, resolve a handler, drop it) costs about 14,000
    /// instructions, a little less than with a child made with ``init(parent:)``, which
    /// rebuilds the app's singletons (see <doc:Performance>). Like a child made with
    /// ``init(parent:)``, it reads its parent's stored values and overrides, and its
    /// parent's overrides and resets reach it.
    ///
    /// - Parameter parent: The container the scope belongs to: the app container, or an
    ///   enclosing scope (a request in a session).
    public convenience init(scopeOf parent: DependencyContainer) {
        self.init(parent: parent, appContainer: parent.appContainerOfScope ?? parent)
    }

    /// Whether this container is a scope, made with ``init(scopeOf:)``.
    ///
    /// ```swift
    /// let request = DependencyContainer(scopeOf: .main)
    /// assert(request.isScope && !DependencyContainer.main.isScope)
    /// ```
    public var isScope: Bool { appContainerOfScope != nil }

    /// What a scope found when it handed an app-wide registration to its app container,
    /// kept for ``afterHandover(_:_:asked:)``, which looks again at what the scope overrides
    /// only when it overrode something then, or its overrides changed since.
    ///
    /// Three words, returned in registers: every resolution of an app-wide registration
    /// in a scope makes one.
    @usableFromInline
    struct Handover {
        /// The app container, which resolves the registration.
        @usableFromInline let app: DependencyContainer
        /// What the scope found before it handed the registration over.
        let found: Found

        /// What a scope found before it handed a registration over, which decides whether
        /// ``afterHandover(_:_:asked:)`` looks again.
        enum Found {
            /// The resolution runs inside an app-wide construction the scope handed over.
            case served
            /// Neither the scope nor a scope between it and `app` overrode or decorated
            /// anything, when the scope's count of changes
            /// (``ContainerState/learnedOwnForgotten``) was `changes`.
            case nothingOverridden(changes: Int)
            /// The scope, or a scope between it and `app`, overrode or decorated something;
            /// the app container's ``ContainerState/drops`` were `appDrops`.
            case overrides(appDrops: Int)
        }
    }

    /// How many times a scope asks its app container for one instance, when the app
    /// container keeps dropping it: see ``afterHandover(_:_:asked:)``.
    ///
    /// Enough that changes of the app on other threads do not reach it: the last instance
    /// is handed out unchecked, and may be built from what the scope overrides. With two
    /// threads overriding and resetting, in a loop, the very registration a request
    /// overrides, a request met eight drops in a row about once in three thousand
    /// resolutions, and then held the app's instance of what it overrides.
    @usableFromInline static let handoversPerResolution = 64

    /// What a scope does with the instance its app container handed over.
    @usableFromInline
    enum AfterHandover {
        /// Returns it: the scope shares the app container's instance.
        case sharesAppInstance
        /// Builds its own: the instance was built from something the scope overrides.
        case buildsOwn
        /// Asks the app container again: a reset, override or shutdown there dropped the
        /// instance, with the record of what it was built from.
        case asksAgain
    }

    /// Where `key` is resolved for this container: `nil` when this container resolves it
    /// itself, else the app container, when this is a scope asking for an app-wide
    /// instance.
    ///
    /// ```swift
    /// var asked = 1
    /// while let handover = appContainer(resolving: provider.key, provider.scope) {
    ///     let value = handover.app.resolveSlowly(provider, servingScope: ObjectIdentifier(self))
    ///     switch afterHandover(provider.key, handover, asked: asked) {
    ///     case .sharesAppInstance: return value
    ///     case .buildsOwn: return resolveSlowly(provider, servingScope: nil)
    ///     case .asksAgain: asked += 1
    ///     }
    /// }
    /// ```
    @usableFromInline
    func appContainer(resolving key: RegistrationKey, _ scope: DependencyScope) -> Handover? {
        guard let app = appContainerOfScope else { return nil }
        // Inside an app-wide construction this scope handed over, what the construction
        // asks of the scope (`self` in its closure) it asks of the app container.
        let innermost = Frame.current
        if Frame.servedScope(from: innermost) == ObjectIdentifier(self) {
            noteServedUse(of: key, from: innermost, app)
            noteUseOfAppInstance(key)
            return Handover(app: app, found: .served)
        }
        guard scope == .singleton || scope == .shared else { return nil }
        // The use is noted here, on every handover, and before the overrides are read: an
        // override installed after the read, before the note, would not find this
        // construction among those to drop, and the scope would keep what it built from the
        // app's instance as its own.
        noteUseOfAppInstance(key)
        let read = overridesOfScope(upTo: app)
        if read.isEmpty { return Handover(app: app, found: .nothingOverridden(changes: read.changes)) }
        return appDrops(ifSharing: key, app, read).map { Handover(app: app, found: .overrides(appDrops: $0)) }
    }

    /// Whether this scope keeps its own instance of `key` rather than its app container's:
    /// a `scoped` or `factory` registration, or an app-wide one built from something the
    /// scope overrides (by the app container's record of what each construction used).
    func builds(_ key: RegistrationKey, _ scope: DependencyScope, _ app: DependencyContainer) -> Bool {
        guard scope == .singleton || scope == .shared else { return true }
        return buildsAppWide(key, app).buildsOwn
    }

    /// In a scope that built the app-wide `key` itself, what it overrides now, when that
    /// alone does not show it still builds its own (``builds(_:_:_:)``): its own record of
    /// uses decides then (``ContainerState/complete(_:keeping:weakly:teardown:checkingOwnAgainst:released:)``).
    /// `nil` when it does, and for what is not app-wide.
    func overridesToCheck(_ key: RegistrationKey, _ scope: DependencyScope) -> [RegistrationKey]? {
        guard scope == .singleton || scope == .shared, let app = appContainerOfScope else { return nil }
        let (buildsOwn, installed) = buildsAppWide(key, app)
        return buildsOwn ? nil : installed
    }

    /// Whether this scope builds its own instance of the app-wide `key`, with the
    /// registrations it overrides now (`installed`).
    private func buildsAppWide(_ key: RegistrationKey, _ app: DependencyContainer) -> (buildsOwn: Bool, installed: [RegistrationKey]) {
        let read = overridesOfScope(upTo: app)
        return (!read.isEmpty && appDrops(ifSharing: key, app, read) == nil, read.registrations)
    }

    /// The app container's ``ContainerState/drops``, read with its record of uses, when
    /// this scope shares the app-wide instance of `key` given what it overrides (`read`,
    /// not empty); `nil` when the scope builds its own.
    private func appDrops(ifSharing key: RegistrationKey, _ app: DependencyContainer, _ read: ScopeOverrides) -> Int? {
        if read.overrides(key) { return nil }
        if withStateLock({ $0.learnedOwn.contains(key) }) { return nil }
        let registrations = read.registrations
        return app.withStateLock { $0.built(key, fromAnyOf: registrations) ? nil : $0.drops }
    }

    /// An app-wide construction this scope handed over asks for `key`: when the scope
    /// overrides it, or the app container's instance of it was built from something the
    /// scope overrides, every such construction on the chain is built from what the scope
    /// overrides, and the scope remembers to build them itself. Its own record, unlike the
    /// app container's, survives the app container's resets.
    ///
    /// What it learns comes from the overrides read first: when they change before it
    /// records it (a session removing the override on another thread), the change has
    /// made the scope forget, and recording it after would keep it for good.
    private func noteServedUse(of key: RegistrationKey, from innermost: Frame?, _ app: DependencyContainer) {
        let forgotten = withStateLock { $0.learnedOwnForgotten }
        let read = overridesOfScope(upTo: app)
        guard !read.isEmpty else { return }
        let registrations = read.registrations
        guard read.overrides(key) || app.withStateLock({ $0.built(key, fromAnyOf: registrations) }) else { return }
        let owner = Owner.current
        var served: [RegistrationKey] = []
        var frame = innermost
        while let own = frame, own.owner == owner, own.isActive {
            if own.servesScope == ObjectIdentifier(self) { served.append(own.key) }
            frame = own.parent
        }
        withStateLock { state in
            guard state.learnedOwnForgotten == forgotten else { return }
            state.learnedOwn.formUnion(served)
        }
    }

    /// Whether this scope builds its own instance of the app-wide `key` after the app
    /// container's construction of it, which the scope handed over, failed: when the
    /// construction used something the scope overrides (the scope learned so as it ran,
    /// ``noteServedUse(of:from:_:)``), it failed with the app's values of it, which the
    /// scope's own construction does not use. What a construction the scope handed over
    /// asks of it (`served`) is the app container's, failure included. A task that was
    /// cancelled stops instead, and the scope forgets what it learned from the failed
    /// construction, as its own failure makes it forget: a scope that resolves many
    /// arguments, in tasks cancelled while they wait, would keep them all.
    ///
    /// It knows only what it learned: a scope that waited for a construction another scope,
    /// or the app container itself, started, learned nothing from it, and so does not.
    ///
    /// ```swift
    /// } catch {
    ///     guard buildsOwnAfterFailedHandover(provider.key, handover) else { throw error }
    ///     return try await resolve(provider, servingScope: nil)
    /// }
    /// ```
    func buildsOwnAfterFailedHandover(_ key: RegistrationKey, _ handover: Handover) -> Bool {
        if case .served = handover.found { return false }
        let isCancelled = Task.isCancelled
        return withStateLock(releasingAfter: { state, released in
            guard state.hasLearnedOwn, state.learnedOwn.contains(key) else { return false }
            if isCancelled { state.forgetLearned(key, released: &released) }
            return !isCancelled
        })
    }

    /// What this scope does with the instance of `key` its app container handed over.
    ///
    /// It shares it when the app container still keeps an instance whose record of uses
    /// shows nothing this scope overrides (checked under one lock). It builds its own,
    /// which is always built from the right values, when the record shows such a use. When
    /// the app container keeps no instance because it dropped it since the handover (a
    /// reset, an override or a shutdown there took the record with it), it asks the app
    /// container again: building its own then would give an app-wide instance the scope's
    /// values. It asks at most ``handoversPerResolution`` times: a container dropped that
    /// often during one resolution (a tracer that shuts it down after every build) must not
    /// hold the scope forever, and the scope then hands out the last instance the app
    /// container built, which nobody keeps.
    ///
    /// When the app container keeps no instance and dropped nothing (a `shared` value
    /// type, which is never kept), its record of uses, which survives the construction,
    /// decides.
    @usableFromInline
    func afterHandover(_ key: RegistrationKey, _ handover: Handover, asked: Int) -> AfterHandover {
        let appDrops: Int?
        switch handover.found {
        case .served:
            return .sharesAppInstance
        case .nothingOverridden(let changes):
            // It shares, unless its overrides (or an enclosing scope's) changed since: the
            // app container may have built the instance, from its own values, for a scope
            // that now overrides one of them.
            if withStateLock({ $0.learnedOwnForgotten }) == changes { return .sharesAppInstance }
            appDrops = nil
        case .overrides(let drops):
            appDrops = drops
        }
        // What the scope overrides now: an override removed while the app container built
        // must not make the scope build its own from the app's values.
        let read = overridesOfScope(upTo: handover.app)
        if read.isEmpty { return .sharesAppInstance }
        // An override of the key itself, installed meanwhile: the app's instance is never
        // the scope's, however it was built.
        if read.overrides(key) { return .buildsOwn }
        if withStateLock({ $0.learnedOwn.contains(key) }) { return .buildsOwn }
        let registrations = read.registrations
        // The app container's shared instance, if the look finds it alive: let go of after
        // unlocking, as the last reference to it may be.
        var lookedAt: AnyObject?
        defer { withExtendedLifetime(lookedAt) {} }
        return handover.app.withStateLock { state in
            // The record of uses is whole while the instance is kept, or when nothing was
            // dropped since the handover (a shared value type is never kept).
            if state.keepsInstance(of: key, lookedAt: &lookedAt) || appDrops == state.drops {
                return state.built(key, fromAnyOf: registrations) ? .buildsOwn : .sharesAppInstance
            }
            return asked < Self.handoversPerResolution ? .asksAgain : .sharesAppInstance
        }
    }

    /// The container whose stored values this scope reads now: `app` inside an app-wide
    /// construction this scope handed over, else the scope itself.
    func valuesReader(_ app: DependencyContainer) -> DependencyContainer {
        Frame.servedScope(from: Frame.current) == ObjectIdentifier(self) ? app : self
    }

    /// The container that answers ``instanceIfBuilt(_:)-(KeyPath<DependencyContainer,Provider<Value>>)``
    /// for `key`: the app container for an app-wide instance this scope shares.
    func keeper(of key: RegistrationKey, _ scope: DependencyScope) -> DependencyContainer {
        guard let app = appContainerOfScope, !builds(key, scope, app) else { return self }
        return app
    }

    /// Runs `handOver`, the app container's resolution of a registration this scope handed
    /// it, with the scope's inline cache set aside (``ContainerState/handovers``).
    @inlinable
    func handingOver<Value>(_ handOver: () throws -> Value) rethrows -> Value {
        beginHandover()
        defer { endHandover() }
        return try handOver()
    }

    /// The async form of ``handingOver(_:)``.
    func handingOver<Value>(isolation: isolated (any Actor)? = #isolation, _ handOver: () async throws -> Value) async rethrows -> Value {
        beginHandover()
        defer { endHandover() }
        return try await handOver()
    }

    /// Sets this scope's inline cache aside until the matching ``endHandover()``.
    @usableFromInline
    func beginHandover() { withStateLock { $0.handovers += 1 } }

    /// Ends what ``beginHandover()`` began.
    @usableFromInline
    func endHandover() { withStateLock { $0.handovers -= 1 } }

    /// Records, in this scope, that `key` was used while the scope builds something: the
    /// app container resolves it, but an override or reset of it there must still drop
    /// what this scope built from it. Called on every handover, by
    /// ``appContainer(resolving:_:)``.
    func noteUseOfAppInstance(_ key: RegistrationKey) {
        withStateLock(releasingAfter: { state, released in
            guard state.isBuilding else { return }
            state.recordUse(of: key)
        })
    }

    /// What this scope and the scopes between it and its app container override or
    /// decorate, as a resolution reads it: each container's list
    /// (``ContainerState/listedOverriddenKeys()``), read under its lock and asked outside it.
    ///
    /// ```swift
    /// let read = overridesOfScope(upTo: app)
    /// if read.overrides(key) { return .buildsOwn }
    /// app.withStateLock { $0.built(key, fromAnyOf: read.registrations) }
    /// ```
    struct ScopeOverrides {
        /// What this scope overrides or decorates.
        let own: OverriddenKeys
        /// What the scopes between it and the app container override or decorate, those
        /// that do: empty for a scope of the app container. Each scope's own list, not one
        /// made of them all: a request in a session that overrides thousands of arguments
        /// does not copy them on every resolution.
        var enclosing: [OverriddenKeys] = []
        /// This scope's count of changes (``ContainerState/learnedOwnForgotten``), read with
        /// its own list.
        let changes: Int

        /// Whether nothing is overridden or decorated there.
        var isEmpty: Bool { own.isEmpty && enclosing.isEmpty }

        /// The registrations overridden or decorated there: what the app container's
        /// record of uses, filed by registration, is asked about.
        var registrations: [RegistrationKey] {
            guard !enclosing.isEmpty else { return own.registrations }
            var registrations = own.registrations
            for outer in enclosing {
                // One at a time: appending an array goes through unspecialized code.
                for registration in outer.registrations { registrations.append(registration) }
            }
            return registrations
        }

        /// Whether `key`, or its family, is overridden or decorated there.
        func overrides(_ key: RegistrationKey) -> Bool {
            if own.overrides(key) { return true }
            if enclosing.isEmpty { return false }
            for outer in enclosing where outer.overrides(key) { return true }
            return false
        }
    }

    /// What this scope, and the scopes between it and `app`, override or decorate: for a
    /// scope of the app container, its own list, kept until its overrides change. The
    /// count of changes is read with it, under the same lock, before the enclosing
    /// scopes' lists: a change in an enclosing scope installs its override before it
    /// counts the change here, so what is read without the override comes with a count
    /// the change has yet to raise.
    private func overridesOfScope(upTo app: DependencyContainer) -> ScopeOverrides {
        var read = withStateLock { ScopeOverrides(own: $0.listedOverriddenKeys(), changes: $0.learnedOwnForgotten) }
        addOverridesOfEnclosingScopes(upTo: app, to: &read.enclosing)
        return read
    }

    /// Adds to `enclosing` what the scopes between this scope and `app` override or
    /// decorate, those that do, each read under its own lock: nothing for a scope made
    /// directly of `app`. Inlined: a call for the loop that ends at once cost a request's
    /// scope about 70 instructions.
    @inline(__always)
    func addOverridesOfEnclosingScopes(upTo app: DependencyContainer, to enclosing: inout [OverriddenKeys]) {
        var container = parent
        while let scope = container, scope !== app {
            let outer = scope.withStateLock { $0.listedOverriddenKeys() }
            if !outer.isEmpty { enclosing.append(outer) }
            container = scope.parent
        }
    }
}
