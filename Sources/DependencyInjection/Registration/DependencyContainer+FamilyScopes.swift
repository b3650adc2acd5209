extension DependencyContainer {
    /// A provider family that builds a new instance for an argument on every resolution.
    ///
    /// The closure takes the argument; its arity is what picks this form over
    /// ``factory(name:fileID:line:column:isolation:_:)->Provider<Value>``. The property is
    /// one registration for every argument, so a test replaces it for all of them with one
    /// override that receives the argument:
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     var profileScreen: ProviderFamily<UserID, ProfileScreenModel> {
    ///         factory { (user: UserID) in ProfileScreenModel(session: self.session(user)) }
    ///     }
    /// }
    /// let model = container.profileScreen(alice)
    /// container.override(\.profileScreen) { user in ProfileScreenModel(session: StubSession(user: user)) }
    /// ```
    ///
    /// Each argument is its own registration for cycles, as with
    /// ``factory(_:name:fileID:line:column:isolation:_:)->Provider<Value>``: a family that resolves itself
    /// with another argument is recursion, not a cycle.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds an instance for an argument. It runs without any container lock
    ///     held and may resolve other dependencies through `self`.
    /// - Returns: A provider family of the property's declared argument and value types.
    @inlinable
    public func factory<Argument: Hashable & Sendable, Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping (Argument) -> Value
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .factory, name, fileID, line, column, isolation, make)
    }

    /// A provider family of one instance per distinct argument, each kept like a singleton.
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     var session: ProviderFamily<UserID, any Session> {
    ///         singleton { (user: UserID) in LiveSession(user: user) }
    ///     }
    /// }
    /// let session = container.session(alice)   // built once for alice
    /// ```
    ///
    /// Each argument's instance is built once per container, even when many threads ask at
    /// once, and lives until ``reset()``, an override of the family, of that argument or of
    /// something it was built from. Arguments are told apart by their full `Hashable`
    /// equality.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance for an argument. It runs without any container lock held.
    /// - Returns: A provider family of the property's declared argument and value types.
    @inlinable
    public func singleton<Argument: Hashable & Sendable, Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping (Argument) -> Value
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .singleton, name, fileID, line, column, isolation, make)
    }

    /// A provider family of one weakly held instance per distinct argument, reused while
    /// something else holds it.
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     var thumbnails: ProviderFamily<Int, ThumbnailCache> {
    ///         shared { (size: Int) in ThumbnailCache(size: size) }
    ///     }
    /// }
    /// let cache = container.thumbnails(64)
    /// ```
    ///
    /// > Important: Only class instances can be held weakly. A value type resolved through
    /// > a shared family is built anew each time, as with a factory family.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the instance for an argument.
    /// - Returns: A provider family of the property's declared argument and value types.
    @inlinable
    public func shared<Argument: Hashable & Sendable, Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping (Argument) -> Value
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .shared, name, fileID, line, column, isolation, make)
    }
}
