extension DependencyContainer {
    /// Begins a synchronous factory resolution that nothing replaces, filed as its thread's
    /// innermost construction, or returns `nil` when it needs the whole road of
    /// ``resolveSlowly(_:servingScope:)``.
    ///
    /// Most resolutions an app makes all day are factories that no override, decoration or
    /// tracer touches, in a container that is not a scope. Such a resolution needs only what
    /// every construction needs: its use recorded while something is built here, its cycle
    /// check, and a frame, so that what it creates knows who builds it. This road does just
    /// that, under one lock round-trip per container on the way up, and leaves the claim,
    /// the override lookup and the tracing of the whole road to the resolutions that need
    /// them:
    ///
    /// ```swift
    /// if let entry = beginPlainFactory(provider.key, provider.name) {
    ///     defer { ThreadFrames.leave(entry) }
    ///     return provider.make()
    /// }
    /// ```
    ///
    /// Its frame is a ``PlainFrame``, a few words in the thread's slot, not an object.
    @usableFromInline
    func beginPlainFactory(_ key: RegistrationKey, _ name: StaticString) -> ThreadFrames.Entry? {
        guard appContainerOfScope == nil else { return nil }
        let plain = withStateLock { state in
            guard state.tracer == nil else { return false }
            if state.isBuilding { state.recordUse(of: key) }
            return !state.replacesAny || !state.replaces(key)
        }
        guard plain else { return nil }
        // Only a container with a parent walks: a nil parent copied into a variable still
        // costs a retain and a release.
        if var container = parent {
            while true {
                guard !container.withStateLock({ $0.replacesAny && $0.replaces(key) }) else { return nil }
                guard let next = container.parent else { break }
                container = next
            }
        }
        if key.argument != nil { key.checkArgument(of: name) }
        // The thread's slot, fetched once for every look at this thread's frames below.
        let thread = ThreadFrames.slot
        let owner = Owner.current
        let id = ObjectIdentifier(self)
        let bucket = Frame.bucket(of: key, in: id)
        let enclosing: ThreadFrames.Word?
        if let innermost = thread.innermostWord {
            // Another owner's frames on this thread: the whole road binds this one as a
            // task-local value instead.
            guard ThreadFrames.owner(of: innermost) == owner else { return nil }
            // The frames filed in this bucket, nearly always none or one of another key.
            // Walked here rather than through `Frame.checkFiled`, whose site the compiler
            // builds for the call (measured: a five-level chain 3,759 through it, 3,428 here).
            var candidate = thread.firstInBucket(bucket)
            while let word = candidate {
                if ThreadFrames.builds(word, key, in: id) {
                    Frame.stopCycle(in: thread, from: word, to: innermost, closing: key, named: name)
                }
                candidate = ThreadFrames.nextInBucket(after: word)
            }
            // Frames this thread's frames started in, when they started inside a bound one.
            if thread.base != nil {
                Frame.checkThreadBase(thread, building: key, named: name, in: id, owner: owner, innermost: innermost)
            }
            enclosing = innermost
        } else if let bound = Frame.innermostBound {
            Frame.checkOwnChain(
                from: bound, building: key, in: id, site: Site(name: .registration(name), file: key.fileName, line: key.line),
                owner: owner, innermost: bound)
            enclosing = Unmanaged.passUnretained(bound).toOpaque()
        } else {
            enclosing = nil
        }
        return thread.file(parent: enclosing, owner: owner, building: self, key: key, name: name, bucket: bucket)
    }
}

extension ContainerState {
    /// Whether any override or decoration is installed here: read before ``replaces(_:)``.
    ///
    /// Nearly always neither is, and this reads that from the state in place. Calling
    /// `override(for:)` on the table makes the compiler copy the table (64 bytes) first, and
    /// it hoists the copy above a check inside ``replaces(_:)`` (measured: a factory 7 or
    /// more instructions dearer, in each way of writing the check inside that was tried).
    var replacesAny: Bool { !overrides.isEmpty || hasDecorations }

    /// Whether an override or a decoration installed here changes how `key` is built.
    func replaces(_ key: RegistrationKey) -> Bool {
        (!overrides.isEmpty && override(for: key) != nil) || (hasDecorations && decorations[key] != nil)
    }
}
