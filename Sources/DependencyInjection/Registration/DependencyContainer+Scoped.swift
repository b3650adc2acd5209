extension DependencyContainer {
    /// A provider whose instance is built once per scope (a session, a request, a screen)
    /// and lives as long as the scope.
    ///
    /// A scope container, made with ``init(scopeOf:)``, shares its app container's
    /// singletons and builds its own instance of each `scoped` registration. Use it for
    /// what belongs to one request or one signed-in user, and reads that scope's own
    /// values:
    ///
    /// ```swift
    /// final class RequestLog: Sendable {
    ///     let requestID: String
    ///     init(requestID: String) { self.requestID = requestID }
    /// }
    ///
    /// extension DependencyContainer {
    ///     var requestID: Provider<String> { unimplemented() }
    ///     var requestLog: Provider<RequestLog> { scoped { RequestLog(requestID: self.requestID()) } }
    /// }
    ///
    /// let app = DependencyContainer()
    /// let request = DependencyContainer(scopeOf: app)
    /// request.override(\.requestID) { "req-1" }
    /// assert(request.requestLog() === request.requestLog())   // one per scope
    /// ```
    ///
    /// In a container that is not a scope, it is kept like a singleton of that container.
    /// ``Provider/onShutdown(_:)-((Value)->Void)`` declares a teardown that the scope's
    /// ``shutdown(fileID:filePath:line:column:)`` runs.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; a main-actor registration is checked to
    ///     resolve on the main actor. Leave the default, or forward it from a helper.
    ///   - make: Builds the scope's instance. It runs without any container lock held.
    /// - Returns: A provider of the property's declared type.
    @inlinable
    public func scoped<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .scoped, nil, name, fileID, line, column, isolation, make)
    }

    /// A provider of one instance per scope and per distinct argument.
    ///
    /// ```swift
    /// final class Upload: Sendable {
    ///     let file: String
    ///     init(file: String) { self.file = file }
    /// }
    ///
    /// extension DependencyContainer {
    ///     subscript(upload file: String) -> Provider<Upload> { scoped(file) { Upload(file: file) } }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance within the scope.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - isolation: The registration's actor; leave the default, or forward it from a helper.
    ///   - make: Builds the scope's instance for `argument`.
    /// - Returns: A provider of the subscript's declared type.
    @inlinable
    public func scoped<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        isolation: (any Actor)? = #isolation,
        _ make: @escaping () -> Value
    ) -> Provider<Value> {
        Provider(self, .scoped, RegistrationKey.TypedArgument(argument), name, fileID, line, column, isolation, make)
    }

    /// An async provider whose instance is built once per scope.
    ///
    /// ```swift
    /// final class Profile: Sendable {}
    ///
    /// extension DependencyContainer {
    ///     var profile: AsyncProvider<Profile> { scoped { Profile() } }
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
    ///   - make: Builds the scope's instance; it may suspend and throw.
    /// - Returns: An async provider of the property's declared type.
    @inlinable
    public func scoped<Value: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .scoped, nil, name, fileID, line, column, make)
    }

    /// An async provider of one instance per scope and per distinct argument.
    ///
    /// ```swift
    /// final class Upload: Sendable {
    ///     let file: String
    ///     init(file: String) async { self.file = file }
    /// }
    ///
    /// extension DependencyContainer {
    ///     subscript(upload file: String) -> AsyncProvider<Upload> { scoped(file) { await Upload(file: file) } }
    /// }
    /// ```
    ///
    /// A construction that throws is not kept: the next resolution tries again.
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance within the scope.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the scope's instance for `argument`; it may suspend and throw.
    /// - Returns: An async provider of the subscript's declared type.
    @inlinable
    public func scoped<Value: Sendable, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () async throws -> Value
    ) -> AsyncProvider<Value> {
        AsyncProvider(self, .scoped, RegistrationKey.TypedArgument(argument), name, fileID, line, column, make)
    }

    /// A per-scope instance of a value that lives on the main actor, which need not be
    /// `Sendable`: a screen's model, say, in a scope per screen.
    ///
    /// ```swift
    /// final class ScreenState { var selection: Int? }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var screenState: Provider<ScreenState> { scoped { @MainActor in ScreenState() } }
    /// }
    /// ```
    ///
    /// As with main-actor singletons (see <doc:Apps>), the closure says `@MainActor in`.
    ///
    /// - Parameters:
    ///   - name: The registration's name in messages; the property's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the scope's instance on the main actor.
    /// - Returns: A provider of the property's declared type.
    @MainActor @inlinable
    public func scoped<Value>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .scoped, nil, name, fileID, line, column, MainActor.shared, { make() })
    }

    /// A per-scope instance for `argument` of a value that lives on the main actor, which
    /// need not be `Sendable`: a screen's model per item, say.
    ///
    /// ```swift
    /// protocol Editor: AnyObject { var text: String { get set } }
    /// final class DraftEditor: Editor { var text = "" }
    ///
    /// extension DependencyContainer {
    ///     @MainActor subscript(editor draft: Int) -> Provider<any Editor> {
    ///         scoped(draft) { @MainActor in DraftEditor() }
    ///     }
    /// }
    /// ```
    ///
    /// As with main-actor singletons (see <doc:Apps>), the closure says `@MainActor in`.
    ///
    /// - Parameters:
    ///   - argument: The value that identifies the instance within the scope.
    ///   - name: The registration's name in messages; the subscript's name by default.
    ///   - fileID: Part of the registration's identity; leave the default.
    ///   - line: Part of the registration's identity; leave the default.
    ///   - column: Part of the registration's identity; leave the default.
    ///   - make: Builds the scope's instance for `argument` on the main actor.
    /// - Returns: A provider of the subscript's declared type.
    @MainActor @inlinable
    public func scoped<Value, Argument: Hashable & Sendable>(
        _ argument: Argument,
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @MainActor () -> Value
    ) -> Provider<Value> {
        Provider(self, .scoped, RegistrationKey.TypedArgument(argument), name, fileID, line, column, MainActor.shared, { make() })
    }
}
