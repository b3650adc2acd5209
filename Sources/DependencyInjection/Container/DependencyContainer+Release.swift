extension DependencyContainer {
    /// Notes that a `@Dependency` property holds this container weakly: one created while
    /// this container builds something it keeps. Only then does the container's `deinit`
    /// release what it kept itself (``releaseKeptInstances()``).
    func noteWeaklyHeldProperty() {
        state.withLock { $0.hasWeaklyHeldProperties = true }
    }

    /// Releases the instances this container kept, and their teardowns, while its state is
    /// whole, named as releasing on this thread, when a property holds this container
    /// weakly: a `deinit` among them may read such a property for the first time, as a
    /// request's handler that flushes to the app's pool when its request's scope goes, and
    /// it then resolves from this container (``ReleasingContainers``). When one did, what
    /// it resolved and this container keeps goes in a next round. Called from `deinit`,
    /// after the container left its parent.
    ///
    /// A container that no property holds weakly, a test's world whose singletons have no
    /// `@Dependency` properties, leaves what it kept to go with its state, after its
    /// `deinit`: it pays one lock round-trip. The table is moved out whole, not emptied
    /// into a bag.
    ///
    /// ```swift
    /// deinit {
    ///     parent?.removeChild(inSlot: slotInParent)
    ///     releaseKeptInstances()
    /// }
    /// ```
    ///
    /// Out of line, as the removal from the parent is, so that a `deinit` keeps a small
    /// frame.
    @inline(never)
    func releaseKeptInstances() {
        // A bound, not a promise: a `deinit` that builds another kept instance each round
        // would otherwise never end; what is left goes with the state.
        for _ in 0..<64 {
            var kept: _SingletonTable?
            var teardowns: [RegistrationKey: (order: Int, teardown: PendingTeardown)]?
            state.withLock { state in
                guard state.hasWeaklyHeldProperties else { return }
                if !state.singletons.isEmpty {
                    var taken = _SingletonTable()
                    swap(&taken, &state.singletons)
                    kept = taken
                }
                if state.hasTeardowns { (teardowns, state.teardowns) = (state.teardowns, [:]) }
            }
            if kept == nil && teardowns == nil { return }
            let wasFound = ReleasingContainers.whileReleasing(self) { (kept, teardowns) = (nil, nil) }
            if !wasFound { return }
        }
    }
}
