extension DependencyContainer {
    /// Not available: only a `Provider` registration can be overridden.
    ///
    /// A plain computed property (`var baseURL: String { … }`) is evaluated on every read
    /// and has no closure to replace. This overload exists so that the compiler says how
    /// to fix the call instead of finding no `override` at all: make the property a
    /// `Provider` (`var baseURL: Provider<String> { factory { … } }`), or read a stored
    /// value that the test sets with ``setValue(_:forKey:)``.
    @available(
        *, unavailable,
        message: "only a Provider can be overridden: declare the property as 'Provider<Value>' (for example 'var x: Provider<T> { factory { … } }'), or read a stored value and set it with setValue(_:forKey:)"
    )
    public func override<Value>(_ keyPath: KeyPath<DependencyContainer, Value>, _ make: @escaping @Sendable () -> Value) {
        fatalError("unavailable")
    }

    /// Not available: only a `Provider` registration can be reset.
    ///
    /// A plain computed property keeps nothing to drop. Make it a `Provider` to cache
    /// and reset it, or remove a stored value with ``removeValue(forKey:)``.
    @available(
        *, unavailable,
        message: "only a Provider can be reset: declare the property as 'Provider<Value>', or remove a stored value with removeValue(forKey:)"
    )
    public func reset<Value>(_ keyPath: KeyPath<DependencyContainer, Value>) {
        fatalError("unavailable")
    }
}
