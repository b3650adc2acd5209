import Dispatch

extension DependencyContainer {
    /// Resolves an async `provider` according to its scope.
    func resolve<Value>(_ provider: AsyncProvider<Value>) async throws -> Value {
        switch provider.scope {
        case .factory:
            return try await buildAsync(provider)
        case .singleton, .shared:
            let found = try await asyncInstance(of: provider)
            if let box = found as? Box<Value> { return box.value }
            // A live shared instance is stored as itself, not boxed.
            return found as! Value
        }
    }

    /// Builds a factory's instance in the current task.
    private func buildAsync<Value>(_ provider: AsyncProvider<Value>) async throws -> Value {
        AsyncFrame.checkNoCycle(in: self, key: provider.key, name: provider.name)
        let parent = AsyncFrame.current
        let (override, tracer) = beginAsyncConstruction(of: provider, usedBy: parent)
        let frame = AsyncFrame(
            container: self, key: provider.key, name: provider.name, construction: nil, parent: parent)
        let start = DispatchTime.now().uptimeNanoseconds
        defer { frame.finish() }
        let value = try await AsyncFrame.$current.withValue(frame) {
            try await (override ?? provider.make)()
        }
        trace(provider, override != nil ? .builtFromOverride : .built, depth: frame.depth, since: start, to: tracer)
        return value
    }

    /// The box or shared instance for `provider`: cached, awaited, or built in a task of
    /// its own that every caller awaits.
    private func asyncInstance<Value>(of provider: AsyncProvider<Value>) async throws -> AnyObject {
        let key = provider.key
        let parent = AsyncFrame.current
        lock.lock()
        if let parent, parent.container == ObjectIdentifier(self), !parent.finished {
            state.record(key, usedBy: parent.key)
        }
        let tracer = state.tracer
        let depth = (parent?.depth ?? -1) + 1
        if let box = state.singletons.box(for: key) {
            let object = box.takeUnretainedValue()
            lock.unlock()
            trace(provider, .cached, depth: depth, since: nil, to: tracer)
            return object
        }
        switch state.instances[key] {
        case .weak(let reference)?:
            if let object = reference.object {
                lock.unlock()
                trace(provider, .cached, depth: depth, since: nil, to: tracer)
                return object
            }
        case .buildingAsync(let construction)?:
            lock.unlock()
            let box = try await construction.valueWithoutDeadlock()
            trace(provider, .awaited, depth: depth, since: nil, to: tracer)
            return box
        case .building?, nil:
            break
        }
        // About to build: stop if this chain is already building it. (Waiting on a
        // construction of one's own is caught by the wait graph instead.) Frame locks are
        // never held while a container lock is taken, so checking under ours is safe.
        AsyncFrame.checkNoCycle(in: self, key: key, name: provider.name)
        let construction = AsyncConstruction(name: provider.name)
        state.instances[key] = .buildingAsync(construction)
        state.activeBuilds += 1
        lock.unlock()

        let override = asyncOverrideFactory(for: provider)
        let frame = AsyncFrame(
            container: self, key: key, name: provider.name, construction: construction, parent: parent)
        // Its own task, so that no waiter's cancellation reaches it. It inherits this
        // task's task-local values: `withMain` and the chain of frames.
        Task {
            let start = DispatchTime.now().uptimeNanoseconds
            let outcome: Result<AnyBox, any Error>
            do {
                let value = try await AsyncFrame.$current.withValue(frame) {
                    try await (override ?? provider.make)()
                }
                outcome = .success(Box(value))
            } catch {
                outcome = .failure(error)
            }
            frame.finish()
            self.finishAsyncConstruction(construction, key: key, outcome: outcome,
                                         weakly: provider.scope == .shared)
            if case .success = outcome {
                self.trace(provider, override != nil ? .builtFromOverride : .built,
                           depth: frame.depth, since: start, to: tracer)
            }
            construction.finish(outcome)
        }
        return try await construction.valueWithoutDeadlock()
    }

    private func beginAsyncConstruction<Value>(
        of provider: AsyncProvider<Value>, usedBy builder: AsyncFrame?
    ) -> ((@Sendable () async throws -> Value)?, ResolutionTracer?) {
        let (own, tracer): (AnyObject?, ResolutionTracer?) = lock.withLock {
            if let builder, builder.container == ObjectIdentifier(self), !builder.finished {
                state.record(provider.key, usedBy: builder.key)
            }
            return (state.overrides[provider.key], state.tracer)
        }
        let override = own.map { unsafeDowncast($0, to: AsyncOverride<Value>.self).make }
            ?? parent?.asyncOverrideFactory(for: provider)
        return (override, tracer)
    }

    private func finishAsyncConstruction(
        _ construction: AsyncConstruction, key: ProviderKey,
        outcome: Result<AnyBox, any Error>, weakly: Bool
    ) {
        lock.withLock {
            state.activeBuilds -= 1
            guard case .buildingAsync(let current)? = state.instances[key], current === construction
            else { return }
            switch outcome {
            case .success(let box):
                if weakly {
                    state.instances[key] = .weak(WeakObject(box.object))
                } else {
                    state.instances[key] = nil
                    state.singletons.insert(box, for: key)
                }
            default:
                // A failure is not cached.
                state.instances[key] = nil
            }
        }
    }

    private func trace<Value>(
        _ provider: AsyncProvider<Value>, _ outcome: ResolutionEvent.Outcome, depth: Int,
        since start: UInt64?, to tracer: ResolutionTracer?
    ) {
        guard let tracer else { return }
        let duration = start.map { DispatchTime.now().uptimeNanoseconds &- $0 } ?? 0
        tracer.deliver([
            ResolutionEvent(
                name: provider.name.description, type: String(describing: Value.self),
                scope: provider.scope, outcome: outcome, depth: depth, duration: duration)
        ])
    }
}
