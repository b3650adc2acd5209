extension DependencyContainer {
    /// An async provider that builds a new instance on every resolution.
    ///
    /// ```swift
    /// var report: AsyncProvider<Report> { factory { try await Report.generate() } }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds an instance; it may suspend and throw.
    /// - Returns: An async provider of the property's declared type.
    @inlinable
    public func factory<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .factory, nil, name, fileID, line, column, make)
    }

    /// An async provider that builds a new instance on every resolution, identified by an
    /// argument: each argument is its own registration, as with the synchronous
    /// `factory(_:name:fileID:line:column:isolation:_:)`.
    ///
    /// ```swift
    /// subscript(report id: Report.ID) -> AsyncProvider<Report> {
    ///     factory(id) { try await Report.generate(id) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the registration.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds an instance for `argument`; it may suspend and throw.
    /// - Returns: An async provider of the subscript's declared type.
    @inlinable
    public func factory<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .factory, RegistrationKey.TypedArgument(argument), name, fileID, line, column, make)
    }

    /// An async provider whose instance is built once per container, however many tasks
    /// ask for it at the same time.
    ///
    /// ```swift
    /// var database: AsyncProvider<Database> {
    ///     singleton { try await Database.open(at: self.databaseURL) }
    /// }
    /// ```
    ///
    /// A construction that throws is not kept: the next resolution tries again.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance; it may suspend and throw.
    /// - Returns: An async provider of the property's declared type.
    @inlinable
    public func singleton<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .singleton, nil, name, fileID, line, column, make)
    }

    /// An async provider of one instance per distinct argument, kept like a singleton.
    ///
    /// ```swift
    /// subscript(account id: Account.ID) -> AsyncProvider<Account> {
    ///     singleton(id) { try await Account.load(id) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for `argument`.
    /// - Returns: An async provider of the subscript's declared type.
    @inlinable
    public func singleton<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .singleton, RegistrationKey.TypedArgument(argument), name, fileID, line, column, make)
    }

    /// An async provider whose instance is reused while something else holds it.
    ///
    /// ```swift
    /// var thumbnails: AsyncProvider<ThumbnailCache> { shared { await ThumbnailCache.warm() } }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance; it may suspend and throw.
    /// - Returns: An async provider of the property's declared type.
    @inlinable
    public func shared<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .shared, nil, name, fileID, line, column, make)
    }

    /// An async provider of one instance per distinct argument, reused while something
    /// else holds it.
    ///
    /// ```swift
    /// final class Preview: Sendable {
    ///     let page: Int
    ///     init(page: Int) async { self.page = page }
    /// }
    ///
    /// extension DependencyContainer {
    ///     subscript(preview page: Int) -> AsyncProvider<Preview> { shared(page) { await Preview(page: page) } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for `argument`; it may suspend and throw.
    /// - Returns: An async provider of the subscript's declared type.
    @inlinable
    public func shared<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .shared, RegistrationKey.TypedArgument(argument), name, fileID, line, column, make)
    }

    /// An async provider whose instance is built once per outermost resolution, as with the
    /// synchronous ``graph(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    ///
    /// ```swift
    /// var unitOfWork: AsyncProvider<UnitOfWork> { graph { try await UnitOfWork.begin() } }
    /// ```
    ///
    /// The instance is shared by what one top-level resolution resolves on its own task. An
    /// async singleton or shared instance is built in a task of its own, so its construction
    /// is a top-level resolution of its own, and so is a child task (`async let`, a task
    /// group) that a construction starts. A construction that throws keeps nothing.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance; it may suspend and throw.
    /// - Returns: An async provider of the property's declared type.
    @inlinable
    public func graph<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .graph, nil, name, fileID, line, column, make)
    }

    /// An async provider of one instance per distinct argument and outermost resolution.
    ///
    /// ```swift
    /// subscript(ledger id: Account.ID) -> AsyncProvider<Ledger> {
    ///     graph(id) { try await Ledger.open(id) }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the instance for `argument`; it may suspend and throw.
    /// - Returns: An async provider of the subscript's declared type.
    @inlinable
    public func graph<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .graph, RegistrationKey.TypedArgument(argument), name, fileID, line, column, make)
    }
}
