extension DependencyContainer {
    /// Stores `value` under `key`, replacing what was there.
    ///
    /// The storage keeps small pieces of runtime state that registrations read, such as a
    /// token or data loaded at launch:
    ///
    /// ```swift
    /// container.setValue("Test!", forKey: "string")
    /// let string: String? = container.getValue(forKey: "string") // "Test!"
    /// ```
    ///
    /// - Parameters:
    ///   - value: The value to store. It must be `Sendable` because any thread may read it.
    ///   - key: The key to store it under.
    public func setValue<Value: Sendable>(_ value: Value, forKey key: String) {
        withStateLock(releasingAfter: { state, released in
            released.keep(state.values.updateValue(value, forKey: key))
        })
    }

    /// Returns the value stored under `key`, looking in the parent when this container
    /// has none.
    ///
    /// The result type decides what is accepted: a value stored as another type reads as
    /// `nil`. A registration typically wraps the lookup in a computed property:
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     var token: String? { getValue(forKey: "token") }
    /// }
    /// ```
    ///
    /// - Parameter key: The key the value was stored under.
    /// - Returns: The value, or `nil` when there is none or it is not a `Value`.
    public func getValue<Value>(forKey key: String) -> Value? {
        // An app-wide construction a scope handed over reads the app container's values.
        var container: DependencyContainer? = appContainerOfScope.map(valuesReader) ?? self
        while let current = container {
            if let value = current.withStateLock({ $0.values[key] }) {
                return value as? Value
            }
            container = current.parent
        }
        return nil
    }

    /// Removes the value stored under `key` in this container.
    ///
    /// A parent's value under the same key stays visible through ``getValue(forKey:)``.
    ///
    /// - Parameter key: The key to remove.
    public func removeValue(forKey key: String) {
        withStateLock(releasingAfter: { state, released in
            released.keep(state.values.removeValue(forKey: key))
        })
    }

    /// Removes every value stored in this container.
    ///
    /// Cached instances and overrides are not values: use ``reset()`` for those.
    /// ``isMocked`` is not stored either, so `DependencyContainer.mocks.removeAll()`
    /// leaves `mocks` mocked.
    public func removeAll() {
        withStateLock(releasingAfter: { state, released in
            guard let seldom = state.seldom else { return }
            released.append(seldom.values)
            seldom.values = [:]
        })
    }
}
