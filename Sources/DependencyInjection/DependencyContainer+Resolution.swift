import Dispatch

extension DependencyContainer {
    /// Resolves `provider` according to its scope.
    ///
    /// The cached-singleton path is inlined into the caller and costs one lock round-trip
    /// and a probe of a flat hash table, with no allocation and no dynamic cast: the key
    /// includes the value type, so the cached box is known to be a `Box<Value>`.
    @inlinable
    func resolve<Value>(_ provider: Provider<Value>) -> Value {
        switch provider.scope {
        case .singleton:
            lock.lock()
            // While a construction runs here or a tracer listens, take the full path: it
            // records the use under this same lock, so an override cannot slip between
            // serving the instance and noting who used it.
            if state.activeBuilds == 0, state.tracer == nil,
                let box = state.singletons.box(for: provider.key)
            {
                let value = box._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Box<Value>.self).value }
                lock.unlock()
                return value
            }
            lock.unlock()
            return unsafeDowncast(instance(of: provider), to: Box<Value>.self).value
        case .factory:
            return build(provider)
        case .shared:
            let found = instance(of: provider)
            if let box = found as? Box<Value> { return box.value }
            // A live shared instance is stored as itself, not boxed.
            return found as! Value
        }
    }

    /// Builds a factory's instance, using an override when one is installed.
    ///
    /// The bookkeeping (overrides, the construction stack, tracing) is non-generic and
    /// compiled once in this module; only the call of the closure is specialized at the
    /// call site.
    @inlinable
    func build<Value>(_ provider: Provider<Value>) -> Value {
        let construction = beginFactory(provider.key, provider.name)
        let value: Value
        if let override = construction.override {
            value = unsafeDowncast(override, to: Override<Value>.self).make()
        } else {
            value = provider.make()
        }
        endFactory(construction, provider.name, Value.self)
        return value
    }

    /// Starts a factory construction: finds the override, enters the construction stack.
    @usableFromInline
    func beginFactory(_ key: ProviderKey, _ name: StaticString) -> FactoryConstruction {
        let stack = ResolutionStack.current
        // A factory's instance is not cached, so nothing needs to learn what it used
        // unless a caching construction encloses it; that one keeps `activeBuilds` up.
        let (own, tracer): (AnyObject?, ResolutionTracer?) = lock.withLock {
            recordUse(of: key, stack: stack)
            return (state.overrides.isEmpty ? nil : state.overrides[key], state.tracer)
        }
        let override = own ?? parent?.installedOverride(for: key)
        let trace = TracedConstruction(tracer: tracer, stack: stack)
        stack.enter(self, key, name)
        return FactoryConstruction(override: override, stack: stack, trace: trace)
    }

    /// Ends a factory construction begun by ``beginFactory(_:_:)``.
    @usableFromInline
    func endFactory(_ construction: FactoryConstruction, _ name: StaticString, _ type: Any.Type) {
        construction.stack.leave()
        construction.trace.finish(
            name: name, type: type, scope: .factory, overridden: construction.override != nil,
            stack: construction.stack)
    }

    /// The singleton box, or the shared instance, for `provider`: cached, awaited from
    /// another thread, or built here.
    @usableFromInline
    func instance<Value>(of provider: Provider<Value>) -> AnyObject {
        let key = provider.key
        let stack = ResolutionStack.current
        lock.lock()
        recordUse(of: key, stack: stack)
        let tracer = state.tracer
        if let box = state.singletons.box(for: key) {
            let object = box.takeUnretainedValue()
            lock.unlock()
            traceServed(provider, outcome: .cached, tracer: tracer, stack: stack)
            return object
        }
        switch state.instances[key] {
        case .weak(let reference)?:
            if let object = reference.object {
                lock.unlock()
                traceServed(provider, outcome: .cached, tracer: tracer, stack: stack)
                return object
            }
        case .building(let construction)?:
            if construction.owner === stack {
                lock.unlock()
                CycleReport.stop(chain: stack.names(from: ObjectIdentifier(self), key) + [provider.name])
            }
            let signal = DispatchSemaphore(value: 0)
            construction.waiters.append(signal)
            lock.unlock()
            construction.wait(on: signal, as: stack, name: provider.name)
            let box = lock.withLock { construction.result! }
            traceServed(provider, outcome: .awaited, tracer: tracer, stack: stack)
            return box
        case .buildingAsync?, nil:
            // An async construction never shares a key with a synchronous one: their
            // registrations are different call sites.
            break
        }
        let construction = Construction(owner: stack, container: ObjectIdentifier(self), key: key)
        state.instances[key] = .building(construction)
        state.activeBuilds += 1
        lock.unlock()

        let override = overrideFactory(for: provider)
        let trace = TracedConstruction(tracer: tracer, stack: stack)
        stack.enter(self, key, provider.name)
        let box = Box((override ?? provider.make)())
        stack.leave()
        trace.finish(
            name: provider.name, type: Value.self, scope: provider.scope,
            overridden: override != nil, stack: stack)

        lock.lock()
        state.activeBuilds -= 1
        construction.result = box
        let waiters = construction.waiters
        construction.waiters = []
        // An override or reset of this key, or of anything this construction used, removed
        // the entry meanwhile: then the instance is handed out but not kept. (Uses are
        // recorded under the lock that serves them, so no such invalidation is missed.)
        if case .building(let current)? = state.instances[key], current === construction {
            if provider.scope == .shared {
                state.instances[key] = .weak(WeakObject(box.object))
            } else {
                state.instances[key] = nil
                state.singletons.insert(box, for: key)
            }
        }
        lock.unlock()
        if !waiters.isEmpty {
            WaitGraph.shared.finish(construction)
            for waiter in waiters { waiter.signal() }
        }
        return box
    }

    /// Notes that the construction running here on this thread (or in this task, for an
    /// async one) used `key`, so that overriding `key` drops what it builds. Call with
    /// `lock` held.
    private func recordUse(of key: ProviderKey, stack: ResolutionStack) {
        guard state.activeBuilds > 0 else { return }  // nothing is being built here
        let container = ObjectIdentifier(self)
        if let top = stack.top {
            if top.container == container { state.record(key, usedBy: top.key) }
        } else if let frame = AsyncFrame.current, frame.container == container, !frame.finished {
            state.record(key, usedBy: frame.key)
        }
    }
}

/// A factory construction between ``DependencyContainer/beginFactory(_:_:)`` and
/// ``DependencyContainer/endFactory(_:_:_:)``.
@usableFromInline
struct FactoryConstruction {
    /// The installed override's box, an `Override<Value>`, if any.
    @usableFromInline let override: AnyObject?
    let stack: ResolutionStack
    let trace: TracedConstruction
}
