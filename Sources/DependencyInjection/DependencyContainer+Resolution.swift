extension DependencyContainer {
    /// Resolves `provider` according to its scope.
    ///
    /// The cached-singleton path is inlined into the caller and costs one lock round-trip
    /// and a dictionary lookup, with no allocation and no dynamic cast: the key includes
    /// the value type, so the cached box is known to be a `Box<Value>`.
    @inlinable
    func resolve<Value>(_ provider: Provider<Value>) -> Value {
        switch provider.scope {
        case .singleton:
            if let box = cachedInstance(for: provider.key) {
                return unsafeDowncast(box, to: Box<Value>.self).value
            }
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

    /// The cached singleton box for `key`, or `nil` when it must be built.
    @usableFromInline
    func cachedInstance(for key: ProviderKey) -> AnyObject? {
        lock.lock()
        guard case .strong(let box)? = state.instances[key] else {
            lock.unlock()
            return nil
        }
        lock.unlock()
        if let stack = ResolutionStack.currentIfExists, stack.isBuilding {
            noteUse(of: key, by: stack.top)
        }
        return box
    }

    /// Builds a factory's instance, using an override when one is installed.
    @usableFromInline
    func build<Value>(_ provider: Provider<Value>) -> Value {
        let make = overrideFactory(for: provider) ?? provider.make
        let stack = ResolutionStack.current
        noteUse(of: provider.key, by: stack.top)
        stack.enter(self, provider.key, provider.name)
        defer { stack.leave() }
        return make()
    }

    /// The singleton box, or the shared instance, for `provider`: cached, awaited from
    /// another thread, or built here.
    @usableFromInline
    func instance<Value>(of provider: Provider<Value>) -> AnyObject {
        let key = provider.key
        let stack = ResolutionStack.current
        let builder = stack.top
        lock.lock()
        if let builder, builder.container == ObjectIdentifier(self) {
            state.record(key, usedBy: builder.key)
        }
        switch state.instances[key] {
        case .strong(let box)?:
            lock.unlock()
            return box
        case .weak(let reference)?:
            if let object = reference.object {
                lock.unlock()
                return object
            }
        case .building(let construction)?:
            lock.unlock()
            if construction.owner === stack {
                CycleReport.stop(chain: stack.names(from: ObjectIdentifier(self), key) + [provider.name])
            }
            return construction.wait(as: stack, name: provider.name)
        case nil:
            break
        }
        let construction = Construction(owner: stack, container: ObjectIdentifier(self), key: key)
        state.instances[key] = .building(construction)
        let epoch = state.epoch
        lock.unlock()

        let make = overrideFactory(for: provider) ?? provider.make
        stack.enter(self, key, provider.name)
        let box = Box(make())
        stack.leave()

        lock.lock()
        if case .building(let current)? = state.instances[key], current === construction {
            if state.epoch != epoch {
                // An override or reset happened meanwhile: hand out, but do not keep.
                state.instances[key] = nil
            } else if provider.scope == .shared {
                state.instances[key] = .weak(WeakObject(box.object))
            } else {
                state.instances[key] = .strong(box)
            }
        }
        lock.unlock()
        construction.finish(box)
        return box
    }

    private func noteUse(of key: ProviderKey, by builder: ResolutionStack.Frame?) {
        guard let builder, builder.container == ObjectIdentifier(self) else { return }
        lock.withLock { state.record(key, usedBy: builder.key) }
    }
}
