extension DependencyContainer {
    /// A singleton of a value that lives on the main actor, which need not be `Sendable`.
    ///
    /// In main-actor code (an app module with main-actor default isolation, or a
    /// `@MainActor` registration) a singleton may hold what main-actor code holds: a plain
    /// protocol existential, a non-`Sendable` class. Mark the closure `@MainActor`, and every
    /// resolution of the instance stays on the main actor: the compiler rejects other code
    /// that reads the property, a key path or `@Dependency` carried to another thread stops
    /// there with a message naming the registration, and what the container drops of the
    /// instance is released on the main actor:
    ///
    /// ```swift
    /// protocol FeedStore { func load() -> [String] }
    /// final class LiveFeedStore: FeedStore { func load() -> [String] { ["a"] } }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var feedStore: Provider<any FeedStore> {
    ///         singleton { @MainActor in LiveFeedStore() }
    ///     }
    /// }
    /// ```
    ///
    /// Without `@MainActor in`, Swift picks the
    /// ``singleton(name:fileID:line:column:isolation:_:)->Provider<Value>`` that any thread may
    /// resolve, and asks for a `Sendable` value (`type 'any FeedStore' does not conform to
    /// the 'Sendable' protocol`): the compiler chooses between the two before it looks at
    /// isolation, so the closure has to say it. A nonisolated registration cannot call this
    /// one (`call to main actor-isolated instance method 'singleton'`).
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance on the main actor.
    /// - Returns: A provider of the property's declared type.
    @MainActor @inlinable
    public func singleton<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .singleton, nil, name, fileID, line, column, MainActor.shared, { make() })
    }

    /// A singleton per distinct argument, of a value that lives on the main actor.
    ///
    /// ```swift
    /// protocol Draft { var text: String { get set } }
    /// final class LocalDraft: Draft { var text = "" }
    ///
    /// extension DependencyContainer {
    ///     @MainActor subscript(draft id: Int) -> Provider<any Draft> {
    ///         singleton(id) { @MainActor in LocalDraft() }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for `argument` on the main actor.
    /// - Returns: A provider of the subscript's declared type.
    @MainActor @inlinable
    public func singleton<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .singleton, RegistrationKey.TypedArgument(argument), name, fileID, line, column, MainActor.shared, { make() })
    }

    /// A weakly held instance that lives on the main actor, which need not be `Sendable`.
    ///
    /// ```swift
    /// protocol ImageCache: AnyObject { func image(named: String) -> [UInt8]? }
    /// final class MemoryImageCache: ImageCache { func image(named: String) -> [UInt8]? { nil } }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var imageCache: Provider<any ImageCache> {
    ///         shared { @MainActor in MemoryImageCache() }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance on the main actor.
    /// - Returns: A provider of the property's declared type.
    @MainActor @inlinable
    public func shared<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .shared, nil, name, fileID, line, column, MainActor.shared, { make() })
    }

    /// A weakly held instance per distinct argument, that lives on the main actor.
    ///
    /// ```swift
    /// protocol Thumbnails: AnyObject { var size: Int { get } }
    /// final class ThumbnailCache: Thumbnails {
    ///     let size: Int
    ///     init(size: Int) { self.size = size }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor subscript(thumbnails size: Int) -> Provider<any Thumbnails> {
    ///         shared(size) { @MainActor in ThumbnailCache(size: size) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for `argument` on the main actor.
    /// - Returns: A provider of the subscript's declared type.
    @MainActor @inlinable
    public func shared<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .shared, RegistrationKey.TypedArgument(argument), name, fileID, line, column, MainActor.shared, { make() })
    }

    /// A provider family of one instance per distinct argument, of a value that lives on
    /// the main actor, which need not be `Sendable`.
    ///
    /// ```swift
    /// protocol Draft { var text: String { get set } }
    /// final class LocalDraft: Draft {
    ///     let id: Int
    ///     var text = ""
    ///     init(id: Int) { self.id = id }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var draft: ProviderFamily<Int, any Draft> {
    ///         singleton { @MainActor (id: Int) in LocalDraft(id: id) }
    ///     }
    /// }
    /// ```
    ///
    /// As with ``singleton(name:fileID:line:column:_:)->Provider<Value>``, the closure says
    /// `@MainActor`, or Swift picks the form that asks for a `Sendable` value.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for an argument on the main actor.
    /// - Returns: A provider family of the property's declared argument and value types.
    @MainActor @inlinable
    public func singleton<Argument: Hashable & Sendable, Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor (Argument) -> Value
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .singleton, name, fileID, line, column, MainActor.shared, { make($0) })
    }

    /// A provider family of one weakly held instance per distinct argument, that lives on
    /// the main actor.
    ///
    /// ```swift
    /// protocol Thumbnails: AnyObject { var size: Int { get } }
    /// final class ThumbnailCache: Thumbnails {
    ///     let size: Int
    ///     init(size: Int) { self.size = size }
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var thumbnails: ProviderFamily<Int, any Thumbnails> {
    ///         shared { @MainActor (size: Int) in ThumbnailCache(size: size) }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for an argument on the main actor.
    /// - Returns: A provider family of the property's declared argument and value types.
    @MainActor @inlinable
    public func shared<Argument: Hashable & Sendable, Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor (Argument) -> Value
    ) -> ProviderFamily<Argument, Value> {
        ProviderFamily(self, .shared, name, fileID, line, column, MainActor.shared, { make($0) })
    }
}
