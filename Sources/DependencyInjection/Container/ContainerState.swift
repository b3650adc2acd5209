/// The mutable state of one ``DependencyContainer``, always accessed under its lock.
///
/// Besides the stored values and overrides, it decides every resolution in one place,
/// ``claim(_:scope:)``: serve what is cached, wait for what is in flight, or
/// build here. It also remembers which cached instance was built from what, so that an
/// override drops exactly what it makes stale, in time proportional to what it drops.
@usableFromInline
struct ContainerState {
    // Empty tables are made with `.init()`, not `[:]`: a literal goes through
    // `init(dictionaryLiteral:)` and the runtime's metadata of its element type, about 30
    // instructions a table, which every new container (a test's world) paid nine times.

    /// Replacement closures, each an `Override<Value>` or `AsyncOverride<Value>` for its
    /// key's value type. Changed only by ``DependencyContainer/change(_:named:at:_:)`` and
    /// ``DependencyContainer/reset()``, which drop what they decided
    /// (``forgetWhatOverridesDecided(released:)``).
    var overrides = OverrideTable()
    /// The keys of ``overrides`` and ``decorations``, listed when a scope first needs them
    /// (``listedOverriddenKeys()``) and kept until they change
    /// (``forgetWhatOverridesDecided(released:)``): a scope looks at them on
    /// every app-wide resolution, and listing them each time cost a request about 1,300
    /// instructions.
    var overriddenKeys: OverriddenKeys?
    /// Built singletons, looked up on every cached resolution.
    @usableFromInline var singletons = _SingletonTable()
    /// What most containers never use (the key-value storage, decorations, shared
    /// instances, teardowns, arguments and what scopes learn), made on its first change
    /// (``SeldomUsedState``), and emptied in place, never made, by a reset, a shutdown
    /// or ``DependencyContainer/removeAll()``. A reference in a value: a copy of this
    /// state would share it, so a state is never copied, only changed where its lock
    /// keeps it.
    var seldom: SeldomUsedState?
    /// Constructions of cached instances running here, on any thread or task: where a
    /// resolution finds the construction to wait for. While one runs, every resolution in
    /// this container counts as a use of it, wherever it comes from (a helper queue, a
    /// detached task): so no use is missed, and an override of anything resolved meanwhile
    /// drops the instance being built.
    var building = RunningConstructions() {
        didSet { isBuilding = !building.isEmpty || handovers > 0 }
    }
    /// In a scope: how many resolutions are handing an app-wide registration to the app
    /// container now, and how many async constructions the app container runs for this
    /// scope (counted until they end, even when every waiter was cancelled). Meanwhile the
    /// construction there may resolve through the scope (`self` in its closure is the
    /// scope), and must get the app container's instances: so the scope's inline cache
    /// steps aside, and every resolution here, on any thread, takes the road that sees the
    /// construction (``DependencyContainer/appContainer(resolving:_:)``). That costs a
    /// cached resolution in the scope a few hundred instructions while it lasts.
    var handovers = 0 {
        didSet { isBuilding = !building.isEmpty || handovers > 0 }
    }
    /// Whether `building` has any construction, or a handover is under way: read on every
    /// cached resolution, which then takes the slow road.
    @usableFromInline var isBuilding = false
    /// For each registration, the keys whose cached instances were built while it was
    /// resolved (with any argument).
    var dependents = UsesRecord()
    /// How many teardowns have been kept: the place of the next one.
    var teardownsKept = 0
    /// How many times ``learnedOwn`` was forgotten: in a scope, how many times its
    /// overrides, or those of a scope enclosing it, changed. A scope learns from the
    /// overrides it read some time before it records what it learned; when this count
    /// changed meanwhile, those overrides may be gone, and it records nothing
    /// (`DependencyContainer.noteServedUse(of:from:_:)`). A scope that handed a
    /// registration over to its app container looks again at what it overrides when this
    /// count changed meanwhile (`DependencyContainer.afterHandover(_:_:asked:)`).
    var learnedOwnForgotten = 0
    /// Receives resolutions while tracing; checked on every cached resolution.
    @usableFromInline var tracer: ResolutionTracer?
    /// Each child, so that a change here reaches what the children built; each child
    /// removes itself in its `deinit`. The children are not held (a child holds its
    /// parent), and not referred to weakly either: a weak reference would give every child
    /// a side table, and every retain and release of the child would take the runtime's
    /// slow path.
    var children = ChildList()
    /// How many shared instances there may be before dead ones are swept out.
    var sweepThreshold = 16
    /// How many times a reset, override or shutdown may have dropped kept instances or
    /// constructions in flight here: a scope that finds no instance of what this container
    /// handed it, and this count changed meanwhile, asks again rather than building an
    /// app-wide instance itself (``DependencyContainer/afterHandover(_:_:asked:)``).
    var drops = 0
    /// In a scope: how many changes of its own overrides have begun and not yet reached
    /// everything they drop. Meanwhile an app change of a key the scope overrides may
    /// have taken the app's record that the scope's change reads, so the scope takes the
    /// app's stale instances (``StaleAppInstances``) rather than skip them.
    var changesUnderWay = 0
    /// How many changes here have handed stale instances to the scopes: the number of the
    /// last entry of ``staleUnderWay``.
    var staleHandings = 0

    /// A change's stale instances on their way to the scopes: see ``staleUnderWay``.
    struct StaleHanding {
        /// Which handing it is, of ``staleHandings``.
        let number: Int
        /// The keys the change changed; none for a reset.
        let changed: [RegistrationKey]
        /// The keys of the instances it dropped.
        let keys: [RegistrationKey]
    }

    /// A child, held while a change reaches it (``liveChildren``).
    struct Child {
        /// The child, held: its state lives in its object.
        let container: DependencyContainer
        /// Whether the child is a scope, which shares this container's instances.
        let isScope: Bool
    }

    /// What a resolution does next.
    enum Claim {
        case cached(AnyObject)
        /// Wait for the construction running here, in the room its first waiter made.
        case await(InFlight)
        /// Build here. What the container keeps is then listed among the constructions
        /// running here (``startBuilding(_:)``) until it ends.
        case build
    }

    /// An empty state. Always inlined, so that a new container's lock object is filled in
    /// place: built out of line, the state was written to the stack and then copied into
    /// the object, about 95 instructions per container.
    @inline(__always) init() {}

    /// The cached singleton for `key`, when nothing needs the slow path: no construction
    /// running here (whose uses must be recorded) and no tracer.
    ///
    /// Always inlined: an out-of-line call, made on the `inout` state under the lock, was
    /// given a copy of the whole state (some 400 bytes, about 120 instructions).
    @inlinable @inline(__always)
    func cachedSingleton<Value>(_ key: RegistrationKey, as type: Value.Type) -> Value? {
        guard !isBuilding, tracer == nil else { return nil }
        return singletons.value(for: key, as: type)
    }

    /// The box of the singleton kept for `key`, on the terms of
    /// ``cachedSingleton(_:as:)``, always inlined as it is.
    @inlinable @inline(__always)
    func cachedSingletonBox(_ key: RegistrationKey) -> AnyBox? {
        guard !isBuilding, tracer == nil, let box = singletons.box(for: key) else { return nil }
        return unsafeDowncast(box, to: AnyBox.self)
    }

    /// Decides how to resolve `key`. When this caller is to build what the container
    /// keeps, it lists its resolution with ``startBuilding(_:)`` under the same lock.
    ///
    /// A construction in flight is found among the few running here, not in a table: a
    /// table entry cost every first build an insertion and a removal, and every new
    /// container (a test's world, a request's scope) a table. The first resolution that
    /// waits for it makes the room where it waits (``Resolution/waitRoom()``).
    mutating func claim(_ key: RegistrationKey, scope: DependencyScope) -> Claim {
        // Checked here, not only inside the calls: a first build, which records and waits
        // for nothing, would pay for the calls alone.
        if isBuilding { recordUse(of: key) }
        guard scope.isBuiltOnceByContainer else { return .build }
        if let box = singletons.box(for: key) { return .cached(box) }
        if scope == .shared, hasSharedInstances, let object = sharedInstances[key]?.object {
            return .cached(object)
        }
        if !building.isEmpty, let running = building.construction(of: key) { return .await(running.waitRoom()) }
        return .build
    }

    /// Lists `construction`, which ``claim(_:scope:)`` told to build what this container
    /// keeps, among the constructions running here, until ``complete(_:keeping:weakly:teardown:checkingOwnAgainst:released:)``.
    @inline(__always)
    mutating func startBuilding(_ construction: Resolution) {
        building.append(construction)
    }

    /// Ends a construction: keeps what it built, with its teardown, unless an override or
    /// reset dropped it meanwhile, in which case the instance is handed out but not kept
    /// (and never torn down).
    ///
    /// With `installed`, what a scope overrides now, the scope built an app-wide instance
    /// itself and keeps it only if it still builds its own: it learned so
    /// (``learnedOwn``), or the construction used one of `installed`, directly or through
    /// instances the scope built from them. Otherwise the constructions still in flight
    /// that resolved the instance are dropped too: they hold a copy nobody keeps.
    ///
    /// A scope forgets that it builds the key of a construction that failed
    /// (``forgetLearned(_:released:)``).
    ///
    /// Returns the room where others wait for the construction, if any waited: no one can
    /// find the construction here any longer, so the caller opens it after unlocking.
    mutating func complete(
        _ construction: Resolution, keeping object: AnyObject?, weakly: Bool, teardown: PendingTeardown?,
        checkingOwnAgainst installed: [RegistrationKey]?, released: inout Released
    ) -> InFlight? {
        building.remove(construction)
        let room = construction.takeWaitRoom()
        // Read once: each read of the frame's key copies it.
        let key = construction.key
        guard !construction.isDropped, let object else {
            if !weakly { forgetUses(ofUnkept: key, released: &released) }
            // A scope's failed construction teaches it nothing: it learns again next time.
            if object == nil { forgetLearned(key, released: &released) }
            return room
        }
        if let installed, !builtOwn(key, fromAnyOf: installed) {
            dropConstructions(using: key)
            forgetUses(by: [key], released: &released)
            return room
        }
        if weakly {
            released.keep(sharedInstances.updateValue(SharedInstance(object, holders: construction.strongHolders), forKey: key))
            if key.argument != nil { noteArgument(of: key) }
            sweepDeadSharedInstances(released: &released)
        } else {
            released.keep(singletons.insert(object, for: key))
            if key.argument != nil { noteArgument(of: key) }
            if let teardown {
                teardownsKept += 1
                released.keep(teardowns.updateValue((teardownsKept, teardown), forKey: key))
            }
        }
        return room
    }

    /// What a parent's change does here, in the container of a child: drops what was built
    /// from the changed `keys`, except those this container overrides itself, whose
    /// instances here come from its own override; in a scope, also what was built from
    /// the app-wide instances `stale` names (``dropUsers(of:)``).
    ///
    /// A container that built nothing and has no children returns at once: an app change
    /// hands every idle request of a server the app's stale keys, maybe thousands.
    ///
    /// - Returns: The keys and stale app-wide instances that reach this container's
    ///   children; when it is not a scope itself, the keys of the instances it dropped that
    ///   its scopes shared (``keysSharedWithScopes(in:builtFrom:)``); and its children.
    mutating func invalidate(
        _ keys: [RegistrationKey], stale: StaleAppInstances, isScope: Bool, released: inout Released
    ) -> (reaching: [RegistrationKey], stale: StaleAppInstances, shared: [RegistrationKey], children: [Child]) {
        let children = liveChildren
        if children.isEmpty && hasNothingToDrop { return ([], .none, [], []) }
        let reaching = keys.filter { !overridesItself($0) }
        var stale = stale
        if changesUnderWay > 0 {
            stale.origin = .scopeChange
        } else if !stale.changed.isEmpty && stale.changed.allSatisfy(overridesItself) {
            stale.keys = []  // built here, and below, from this container's own overrides
        }
        if !stale.keys.isEmpty { stale.keys = stale.keys.filter { !overridesItself($0) } }
        let shared = isScope || reaching.isEmpty ? [] : keysSharedWithScopes(in: children, builtFrom: reaching)
        if reaching.count == 1 {
            invalidate(reaching[0], keepingOwnOverrides: true, released: &released)
        } else if !reaching.isEmpty && !hasNothingToDrop {
            drops &+= 1
            dropTransitively(reaching, visited: [], keepingOwnOverrides: true, released: &released)
        }
        if !stale.keys.isEmpty { dropUsers(of: stale, released: &released) }
        return (reaching, stale, shared, children)
    }

    /// In a scope, drops what it built from the stale app-wide instances: the users of
    /// each key by the record of uses, and transitively theirs, but not the scope's own
    /// instance of the key, nor its construction in flight, which come from the scope's
    /// values. Unless the change was a scope's own, the users of a key the scope keeps or
    /// builds itself stay: they were built from the scope's copy.
    private mutating func dropUsers(of stale: StaleAppInstances, released: inout Released) {
        guard !dependents.isEmpty else { return }
        var users: [RegistrationKey] = []
        // Uses are filed per registration: the thousands of arguments of one family are
        // one list of users, taken once.
        var taken = Set<RegistrationKey>()
        for key in stale.keys {
            var lookedAt: AnyObject?
            defer { released.keep(lookedAt) }
            if stale.origin != .scopeChange && (keepsInstance(of: key, lookedAt: &lookedAt) || building.construction(of: key) != nil) {
                continue
            }
            if let found = dependents[key.registration], taken.insert(key.registration).inserted {
                users.append(contentsOf: found)
            }
        }
        guard !users.isEmpty else { return }
        drops &+= 1
        dropTransitively(users, visited: [], keepingOwnOverrides: true, released: &released)
    }

    /// Drops `key` and, transitively, every cached instance built while it was resolved;
    /// the key of a whole provider family drops each of its arguments. With
    /// `keepingOwnOverrides`, the arguments this container overrides itself are left alone.
    /// The usual change, with no list of keys to build or to walk.
    mutating func invalidate(_ key: RegistrationKey, keepingOwnOverrides: Bool, released: inout Released) {
        guard !hasNothingToDrop else { return }
        drops &+= 1
        var pending: [RegistrationKey] = []
        drop(key, keepingOwnOverrides: keepingOwnOverrides, into: &pending, released: &released)
        // An override of one key that nothing here was built from drops that key alone: it
        // needs no table of visited keys, which cost an override about 1,000 instructions.
        guard !pending.isEmpty else {
            if !dependents.isEmpty { forgetUses(by: [key], released: &released) }
            return
        }
        dropTransitively(pending, visited: [key], keepingOwnOverrides: keepingOwnOverrides, released: &released)
    }

    /// Whether this container has built nothing (a test's new world): nothing to drop.
    /// Inlined: a call was given a copy of the whole state (264 bytes), on every override.
    @inline(__always)
    var hasNothingToDrop: Bool {
        singletons.isEmpty && building.isEmpty && dependents.isEmpty && (seldom?.holdsNothingToDrop ?? true)
    }

    /// Drops `pending` and what they drop in turn, skipping `visited`, then forgets the
    /// uses of everything dropped.
    private mutating func dropTransitively(
        _ pending: [RegistrationKey], visited: Set<RegistrationKey>, keepingOwnOverrides: Bool,
        released: inout Released
    ) {
        var (pending, visited) = (pending, visited)
        while let key = pending.popLast() {
            guard visited.insert(key).inserted else { continue }
            drop(key, keepingOwnOverrides: keepingOwnOverrides, into: &pending, released: &released)
        }
        forgetUses(by: visited, released: &released)
    }

    /// Drops what is kept for `key` and adds to `pending` the keys this drops in turn: the
    /// cached instances built while it was resolved and, for the key of a whole provider
    /// family, each of its arguments.
    private mutating func drop(
        _ key: RegistrationKey, keepingOwnOverrides: Bool, into pending: inout [RegistrationKey],
        released: inout Released
    ) {
        singletons.remove(key, into: &released)
        if hasSharedInstances { released.keep(sharedInstances.removeValue(forKey: key)) }
        building.drop(key)
        if hasTeardowns { released.keep(teardowns.removeValue(forKey: key)) }
        // Each table is looked at only when it holds something: a key's registration is a
        // copy of the key, an empty table still hashes it, and appending an empty list
        // still goes through the array's growth path. The usual override, of a key nothing
        // here was built from, finds all of them empty: with the one-key `invalidate`,
        // this saved an override about 950 instructions.
        if !dependents.isEmpty, let users = dependents.removeValue(forKey: key.registration) {
            pending.append(contentsOf: users)
            users.keepReferences(in: &released)
            if hasWindowOnlyUses { released.keep(windowOnlyUses.removeValue(forKey: key.registration)) }
        }
        if key.argument == nil {
            if hasArguments || !building.isEmpty {
                let taken = takeArguments(of: key, keepingOwnOverrides: keepingOwnOverrides, released: &released)
                if !taken.isEmpty { pending.append(contentsOf: taken) }
            }
        } else if hasArguments {
            forgetArgument(of: key, released: &released)
        }
    }

    /// Forgets what the dropped constructions used: a later instance is built anew, maybe
    /// from an override that uses nothing, and must not inherit their record.
    mutating func forgetUses(by dropped: Set<RegistrationKey>, released: inout Released) {
        guard !dependents.isEmpty, !dropped.isEmpty else { return }
        dependents.forget(dropped, released: &released)
        if hasWindowOnlyUses { windowOnlyUses.forget(dropped, released: &released) }
    }


    /// Forgets what the construction of `key` that just ended used, when it kept nothing
    /// (an override or reset dropped it, or it failed) and it builds what the container
    /// keeps strongly: a later instance of `key` is built anew, maybe from an override
    /// that uses nothing, and must not inherit that record, and a family's arguments that
    /// fail one after another must not pile up in it. The record under such a key is this
    /// construction's own: an earlier instance's went when it was dropped, or was named
    /// by its family at a shutdown (``shutDown(released:)``). A `shared` instance dies
    /// without a drop, and its record stays, for what was derived from it, so the record
    /// of a `shared` key is never forgotten here. While an instance of `key` is kept or
    /// another construction of it runs, the record is theirs and stays. A dropped
    /// construction records nothing after the drop (``recordUse(of:)``).
    ///
    /// ```swift
    /// _ = try? await container.session(token)      // fails after resolving the clock
    /// _ = try await container.session(token)       // built from a stub clock
    /// container.override(\.clock) { FixedClock() }  // keeps the session
    /// ```
    @inline(never)
    private mutating func forgetUses(ofUnkept key: RegistrationKey, released: inout Released) {
        guard !dependents.isEmpty, !building.runs(key), singletons.box(for: key) == nil else { return }
        forgetUses(by: [key], released: &released)
    }

    /// Replaces `gone`, keys of which no instance is kept, by their
    /// families' keys (``RegistrationKey/goneInstances``) in the record of uses, and takes
    /// them out of ``windowOnlyUses``: a change of what they were built from still reaches
    /// what was built from them, and their arguments go.
    mutating func nameUsesByFamily(of gone: Set<RegistrationKey>, released: inout Released) {
        dependents.replace(byTheirFamilies: gone, released: &released)
        if hasWindowOnlyUses { windowOnlyUses.forget(gone, released: &released) }
    }

    /// Records that `key` is used by every construction in flight here (by time window:
    /// see ``claim(_:scope:)``); by those the resolving code does not run inside, as a use
    /// by time window only (``windowOnlyUses``). A parameterized use is filed under its
    /// registration, all arguments together, so that arguments resolved while something is
    /// built cannot pile up.
    ///
    /// The constructions are walked by hand, each key read once: a `for` loop over the
    /// list made its iterator, which retained each construction, and every read of a
    /// frame's key copied it, about 150 instructions of each use a request notes.
    mutating func recordUse(of key: RegistrationKey) {
        guard isBuilding, let first = building.first else { return }
        let used = key.registration
        var code = ResolvingCode()
        recordUse(of: key, as: used, by: first, code: &code)
        guard let second = building.second else { return }
        recordUse(of: key, as: used, by: second, code: &code)
        for construction in building.others { recordUse(of: key, as: used, by: construction, code: &code) }
    }

    /// Records the use of `key`, filed as `used`, by one construction in flight here.
    private mutating func recordUse(
        of key: RegistrationKey, as used: RegistrationKey, by construction: Resolution, code: inout ResolvingCode
    ) {
        // A dropped construction's instance is not kept: what it uses builds nothing here.
        guard !construction.isDropped else { return }
        let user = construction.key
        guard user != key else { return }
        if code.runsInside(construction) {
            dependents.insert(user, using: used)
            if hasWindowOnlyUses { windowOnlyUses.remove(user, using: used) }
        } else if dependents[used]?.contains(user) != true {
            dependents.insert(user, using: used)
            windowOnlyUses.insert(user, using: used)
        }
    }

    /// The users of `used`; with `ownOnly`, those that resolved it themselves, or through
    /// tasks they started.
    private func users(of used: RegistrationKey, ownOnly: Bool) -> ReachedUsers? {
        guard let users = dependents[used] else { return nil }
        return ReachedUsers(all: users, windowOnly: ownOnly && hasWindowOnlyUses ? windowOnlyUses[used] : nil)
    }

    /// Whether this scope builds its own instance of the app-wide `key`, by what it learned
    /// or by its record of uses: its construction of `key` used one of `installed`, or an
    /// instance built here from one of them, at any depth.
    private mutating func builtOwn(_ key: RegistrationKey, fromAnyOf installed: [RegistrationKey]) -> Bool {
        learnedOwn.contains(key) || built(key, fromAnyOf: installed)
    }

    /// Marks dropped the constructions in flight here that resolved `key`, and those that
    /// resolved them, by the record of uses. Instances already kept stay: they were not
    /// built from the construction of `key` that just ended.
    ///
    /// Uses are filed by registration, so the walk visits each registration once, and
    /// looks at each running construction once per registration: a 500-deep chain of one
    /// provider family in flight is one step, not 500 of them over 500 constructions.
    private func dropConstructions(using key: RegistrationKey) {
        var pending = [key.registration]
        var visited = Set<RegistrationKey>()
        while let used = pending.popLast() {
            guard visited.insert(used).inserted, let users = users(of: used, ownOnly: true) else { continue }
            for running in building where !running.isDropped && users.contains(running.key) {
                running.isDropped = true
                pending.append(running.key.registration)
            }
        }
    }

    /// Whether an instance of `key` is kept here now: a singleton, or a live shared one.
    ///
    /// A shared instance is held weakly, and telling whether it lives takes a strong
    /// reference to it. That reference goes to `lookedAt`, for the caller to let go after
    /// unlocking: another thread may drop the instance's last other reference meanwhile,
    /// and ours, released here, would run its `deinit` under the lock, where a `deinit`
    /// that uses this container waits forever.
    ///
    /// ```swift
    /// var lookedAt: AnyObject?
    /// let kept = app.withStateLock { $0.keepsInstance(of: key, lookedAt: &lookedAt) }
    /// withExtendedLifetime(lookedAt) {}   // released here, after unlocking
    /// ```
    ///
    /// Inlined, as ``built(_:fromAnyOf:)`` is: a scope's handover asks both of the app
    /// container's state inside its lock, and for an out-of-line call of a method that
    /// does not mutate, made on the `inout` state, the compiler copied the whole state to
    /// the stack first.
    @inline(__always)
    func keepsInstance(of key: RegistrationKey, lookedAt: inout AnyObject?) -> Bool {
        if singletons.box(for: key) != nil { return true }
        lookedAt = sharedInstances[key]?.object
        return lookedAt != nil
    }

    /// Whether the construction of `key` used any of `overridden`, directly or through
    /// other constructions, by the record of uses this container keeps.
    ///
    /// A scope that overrides something asks it inside the app container's lock on every
    /// handover (``DependencyContainer/afterHandover(_:_:asked:)``), and what a scope
    /// overrides (a request's user) is seldom used by what its app container built. So the
    /// question whether any of `overridden` was used here at all is inlined, and the walk
    /// runs out of line only when one was. With the walk inlined too, the compiler copied
    /// the whole state to the stack before the question, about 150 instructions a request.
    ///
    /// Usable from inlinable code too: a scope's look at its app container's cached
    /// instance (``DependencyContainer/appInstanceShared(_:overriddenInScope:)``) asks it.
    @usableFromInline @inline(__always)
    mutating func built(_ key: RegistrationKey, fromAnyOf overridden: [RegistrationKey]) -> Bool {
        guard !dependents.isEmpty, wasUsed(anyOf: overridden) else { return false }
        return walkedToBuilt(key, fromAnyOf: overridden)
    }

    /// The walk of ``built(_:fromAnyOf:)``, once one of `overridden` was used here.
    /// `mutating`, though it changes nothing, so that the call takes the state in place:
    /// for an out-of-line method that does not mutate, called on the `inout` state, the
    /// compiler copied all of the state to the stack, before the inlined question too.
    @inline(never)
    private mutating func walkedToBuilt(_ key: RegistrationKey, fromAnyOf overridden: [RegistrationKey]) -> Bool {
        var found = false
        forEachUse(ofAnyOf: overridden, ownOnly: true) { users in
            found = users.contains(key)
            return !found
        }
        return found
    }

    /// The keys of every instance kept here, and every construction running here, built
    /// from any of `keys`, directly or through other constructions, by the record of uses:
    /// what a scope that shares this container's instances must no longer build from when
    /// `keys` change for it.
    ///
    /// ```swift
    /// // The app built `timed` from `clock`, and a request its handler from `timed`:
    /// let stale = appState.keysBuilt(fromAnyOf: [clock])   // [timed]
    /// ```
    func keysBuilt(fromAnyOf keys: [RegistrationKey]) -> [RegistrationKey] {
        var found: [RegistrationKey] = []
        forEachUse(ofAnyOf: keys) { users in
            found.append(contentsOf: users.all)
            return true
        }
        // A key used two ways appears once: every scope looks at each under its lock.
        return found.count > 1 ? Array(Set(found)) : found
    }

    /// Notes that a change of `changed` (none for a reset) is handing the scopes among the
    /// children the stale instances of `keys`, until ``forgetStaleUnderWay(_:released:)``
    /// with what this returns.
    mutating func noteStaleUnderWay(_ keys: [RegistrationKey], changed: [RegistrationKey]) -> Int? {
        guard !keys.isEmpty else { return nil }
        staleHandings &+= 1
        staleUnderWay.append(StaleHanding(number: staleHandings, changed: changed, keys: keys))
        return staleHandings
    }

    /// Ends what ``noteStaleUnderWay(_:changed:)`` began, once the change reached every
    /// scope.
    mutating func forgetStaleUnderWay(_ handing: Int, released: inout Released) {
        guard let index = staleUnderWay.firstIndex(where: { $0.number == handing }) else { return }
        released.append(staleUnderWay.remove(at: index))
    }

    /// What a scope's change of `keys` must drop in the scope, read from its app
    /// container: the instances built from them (``keysBuilt(fromAnyOf:)``), and those a
    /// change of the same keys here, or a reset, is still handing to the scopes, whose
    /// record it forgot.
    func keysStaleForScopes(changing keys: [RegistrationKey]) -> [RegistrationKey] {
        let built = keysBuilt(fromAnyOf: keys)
        guard hasStaleUnderWay else { return built }
        var stale = Set(built)
        for handing in staleUnderWay where handing.changed.isEmpty || handing.changed.contains(where: keys.contains) {
            stale.formUnion(handing.keys)
        }
        return Array(stale)
    }

    /// The keys of every instance kept here, every construction running here, and every
    /// construction the record of uses names, such as a shared instance that died and was
    /// swept: what a reset takes from the scopes that share this container's instances.
    var keysOfEverythingBuilt: [RegistrationKey] {
        var keys = Set(singletons.cachedKeys)
        keys.formUnion(sharedInstances.keys)
        keys.formUnion(building.keys)
        for users in dependents.allUsers { keys.formUnion(users) }
        return Array(keys)
    }

    /// In a container that is not a scope, the keys of what it built from `keys`
    /// (``keysBuilt(fromAnyOf:)``) when any of its `children` is a scope, which shares
    /// those instances; else none. Read before the change drops them, with the record.
    @inline(never)
    func keysSharedWithScopes(in children: [Child], builtFrom keys: [RegistrationKey]) -> [RegistrationKey] {
        children.contains { $0.isScope } ? keysBuilt(fromAnyOf: keys) : []
    }

    /// Calls `body` with the constructions that used each registration of `keys`, then
    /// with those that used theirs, and so on, by the record of uses, until `body` returns
    /// false; with `ownOnly`, only the uses the constructions made themselves
    /// (``windowOnlyUses``). Inlined, so that `body` is: through a closure, which copies
    /// what it is given, the walk cost some 200 instructions more.
    ///
    /// The walk's list and its set of visited registrations are made only when one of
    /// `keys` was used here at all: making both for a scope's question about what it
    /// overrides (a request's user), which its app container's constructions never use,
    /// cost a request about 3,400 instructions in an app container that had built
    /// anything from anything.
    @inline(__always)
    private func forEachUse(
        ofAnyOf keys: [RegistrationKey], ownOnly: Bool = false, _ body: (ReachedUsers) -> Bool
    ) {
        guard !dependents.isEmpty, wasUsed(anyOf: keys) else { return }
        var pending = keys.map(\.registration)
        var visited = Set<RegistrationKey>()
        while let used = pending.popLast() {
            guard visited.insert(used).inserted,
                let users = users(of: used, ownOnly: ownOnly)
            else { continue }
            guard body(users) else { return }
            users.forEachRegistration { if !visited.contains($0) { pending.append($0) } }
        }
    }

    /// Whether any construction here used a registration of `keys`. A loop rather than
    /// `contains(where:)`: the closure captured the whole state, and the compiler copied
    /// it to the stack on every handover of a scope.
    @inline(__always)
    private func wasUsed(anyOf keys: [RegistrationKey]) -> Bool {
        for key in keys where dependents.contains(key.registration) { return true }
        return false
    }

    /// What ``overrides`` and ``decorations`` hold, listed once until they change.
    mutating func listedOverriddenKeys() -> OverriddenKeys {
        if let overriddenKeys { return overriddenKeys }
        var keys = overrides.keys
        // One key at a time: appending the keys view goes through unspecialized code.
        for key in decorations.keys { keys.append(key) }
        let listed = OverriddenKeys(keys: keys)
        overriddenKeys = listed
        return listed
    }

    /// Drops what this container's ``overrides`` and ``decorations`` decided, before they
    /// change: the list of ``listedOverriddenKeys()``, and, in a scope, the app-wide
    /// registrations it learned to build itself (``learnedOwn``), which it learns again
    /// from what it overrides next. Both are released after unlocking.
    mutating func forgetWhatOverridesDecided(released: inout Released) {
        if let listed = overriddenKeys {
            released.append(listed)
            overriddenKeys = nil
        }
        forgetLearnedOwn(released: &released)
    }

    /// Forgets ``learnedOwn``, when what this scope or an enclosing scope overrides changes,
    /// releasing it after unlocking.
    mutating func forgetLearnedOwn(released: inout Released) {
        learnedOwnForgotten &+= 1
        guard hasLearnedOwn else { return }
        released.append(learnedOwn)
        learnedOwn = []
    }

    /// Forgets that this scope builds the app-wide `key` itself, after its own construction
    /// of it failed or its own shared instance of it died, releasing the key after
    /// unlocking. Learned per argument, such keys would stay, with their arguments, until
    /// the scope's overrides change: a scope that resolves many arguments of a family would
    /// keep them all. The next resolution of `key` learns it again, from the app
    /// container's construction it hands over, or from the app container's record of uses.
    mutating func forgetLearned(_ key: RegistrationKey, released: inout Released) {
        guard hasLearnedOwn, let removed = learnedOwn.remove(key) else { return }
        released.append(removed)
    }

    /// Whether this container's own overrides decide how `key` is built: an override of
    /// the key, or of the provider family it is an argument of.
    func overridesItself(_ key: RegistrationKey) -> Bool {
        overrides[key] != nil || (key.argument != nil && overrides[key.registration] != nil)
    }

    /// Files a kept instance's key under its registration, if it has an argument.
    private mutating func noteArgument(of key: RegistrationKey) {
        guard key.argument != nil else { return }
        arguments[key.registration, default: []].insert(key)
    }

    /// Unfiles the key of an instance that is no longer kept.
    private mutating func forgetArgument(of key: RegistrationKey, released: inout Released) {
        let registration = key.registration
        guard let filed = arguments[registration]?.remove(key) else { return }
        released.append(filed)  // it may hold the last reference to its argument
        if arguments[registration]?.isEmpty == true { arguments[registration] = nil }
    }

    /// The keys of `registration`'s arguments with an instance here, kept or being built,
    /// unfiled: what a change of the whole registration drops. With `keepingOwnOverrides`,
    /// not those this container overrides itself, which stay filed.
    private mutating func takeArguments(
        of registration: RegistrationKey, keepingOwnOverrides: Bool, released: inout Released
    ) -> [RegistrationKey] {
        var kept = arguments.removeValue(forKey: registration) ?? []
        if keepingOwnOverrides {
            let own = kept.filter { overrides[$0] != nil }
            if !own.isEmpty { (arguments[registration], kept) = (own, kept.subtracting(own)) }
        }
        if !kept.isEmpty { released.append(kept) }
        var taken = Array(kept)
        for construction in building where construction.key.argument != nil {
            let key = construction.key
            if key.registration == registration && !(keepingOwnOverrides && overrides[key] != nil) { taken.append(key) }
        }
        return taken
    }

    /// The children now, each held, for the caller to reach after unlocking. A child whose
    /// `deinit` has begun is left out: what it built goes with it.
    ///
    /// The caller releases them after unlocking, as anything taken from a state: the last
    /// reference to a child runs its `deinit`, which takes this lock.
    var liveChildren: [Child] {
        children.live
    }

    /// Forgets shared instances that died, once they have doubled in number since the last
    /// sweep: amortized O(1) per entry, so distinct arguments cannot pile up, neither in the
    /// table, nor in the record of uses, which names the dead ones by their family, nor in
    /// what a scope learned to build itself.
    private mutating func sweepDeadSharedInstances(released: inout Released) {
        guard sharedInstances.count > sweepThreshold else { return }
        forgetDeadSharedInstances(released: &released)
    }

    /// Unfiles every shared instance that died, with its argument and what a scope learned
    /// of it, and names its uses by its family; the live ones stay, retained in `released`
    /// by the look that found them alive, so that none is released under the lock.
    mutating func forgetDeadSharedInstances(released: inout Released) {
        var dead: [RegistrationKey] = []
        sharedInstances = sharedInstances.filter { key, reference in
            guard let object = reference.object else {
                if key.argument != nil { dead.append(key) }
                return false
            }
            released.append(object)
            return true
        }
        for key in dead {
            forgetArgument(of: key, released: &released)
            // A scope that built its own learns again, should the argument come back.
            forgetLearned(key, released: &released)
        }
        if !dead.isEmpty && !dependents.isEmpty {
            // The record keeps what the dead instances were built from, for what was built
            // from them (a scope's copy of a string one derived), under their family's key.
            let gone = Set(dead)
            nameUsesByFamily(of: gone, released: &released)
            released.append(gone)
        }
        released.append(dead)
        sweepThreshold = Swift.max(16, sharedInstances.count * 2)
    }
}

/// A weak reference to a shared instance, which lives while something else holds it. Never
/// to a container: a weak reference gives its object a side table, and a container is
/// retained and released on every resolution (``UnkeptContainer``).
struct Weak<Object: AnyObject> {
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// A shared instance the container hands out while something else holds it, with the
/// `@Dependency` properties its construction created holding the container strongly
/// (``StrongHolders``): a construction the container keeps that takes the instance makes
/// them hold it weakly.
struct SharedInstance {
    weak var object: AnyObject?
    let holders: StrongHolders?

    init(_ object: AnyObject, holders: StrongHolders?) {
        self.object = object
        self.holders = holders
    }
}
