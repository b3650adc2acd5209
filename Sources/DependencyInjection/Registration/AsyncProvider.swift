/// A registered service that is built asynchronously, and may fail to build.
///
/// Some dependencies need `await` to exist: a database that must be opened, a
/// configuration that must be loaded, a session that must be authenticated. Declare them
/// with an `AsyncProvider` and an `async` closure, and resolve them with `try await`:
///
/// ```swift
/// extension DependencyContainer {
///     var database: AsyncProvider<Database> {
///         singleton { try await Database.open(at: self.databaseURL) }
///     }
/// }
///
/// let database = try await DependencyContainer.main.database()
/// ```
///
/// The scopes mean what they mean for ``Provider``. An async singleton is built exactly
/// once per container even when many tasks ask at the same time: they all await the one
/// construction in flight, which runs in its own task so that cancelling one waiter does
/// not cancel it for the others (the cancelled waiter itself stops waiting and throws
/// `CancellationError`). A construction that throws is not cached; the next
/// resolution tries again. A synchronous ``Provider`` cannot resolve an async one: its
/// closure cannot `await`, so the compiler refuses rather than blocking a thread.
///
/// Create async providers with the overloads of
/// ``DependencyContainer/factory(name:fileID:line:column:_:)->AsyncProvider<Value>``,
/// ``DependencyContainer/singleton(name:fileID:line:column:_:)->AsyncProvider<Value>``,
/// ``DependencyContainer/shared(name:fileID:line:column:_:)->AsyncProvider<Value>`` and
/// ``DependencyContainer/graph(name:fileID:line:column:_:)->AsyncProvider<Value>`` that
/// take an `async` closure, and replace them in tests with
/// ``DependencyContainer/override(_:_:)-(KeyPath<DependencyContainer,AsyncProvider<Value>>,_)``.
public struct AsyncProvider<Value> {
    @usableFromInline let container: DependencyContainer
    @usableFromInline let key: RegistrationKey
    @usableFromInline let name: StaticString
    @usableFromInline let scope: DependencyScope
    @usableFromInline let make: @Sendable () async throws -> Value
    /// What shutdown runs for the instance, set by `onShutdown` on a singleton (a `let`,
    /// as in ``Provider``).
    @usableFromInline let teardown: (@Sendable (Value) async -> Void)?

    /// A provider declared at a call site of `factory`, `singleton`, `shared` or `graph`.
    @inlinable
    init(
        _ container: DependencyContainer, _ scope: DependencyScope, _ argument: RegistrationKey.Argument?,
        _ name: StaticString, _ fileID: StaticString, _ line: UInt, _ column: UInt,
        _ make: @escaping @Sendable () async throws -> Value
    ) {
        self.container = container
        self.key = RegistrationKey(file: fileID, line: line, column: column, type: Value.self, argument: argument)
        self.name = name
        self.scope = scope
        self.make = make
        self.teardown = nil
    }

    /// `provider` with `teardown`.
    @inlinable
    init(_ provider: AsyncProvider<Value>, teardown: @escaping @Sendable (Value) async -> Void) {
        (container, key, name, scope, make) = (provider.container, provider.key, provider.name, provider.scope, provider.make)
        self.teardown = teardown
    }

    /// Resolves the dependency in the container the provider came from.
    ///
    /// Await it wherever the instance is needed, including inside another async
    /// registration:
    ///
    /// ```swift
    /// let database = try await DependencyContainer.main.database()
    /// var feedStore: AsyncProvider<FeedStore> {
    ///     singleton { FeedStore(database: try await self.database()) }
    /// }
    /// ```
    ///
    /// Tasks that resolve the same singleton while it is being built all await that one
    /// construction. Cancelling a waiting task makes it throw `CancellationError` without
    /// cancelling the construction for the others.
    ///
    /// - Returns: The resolved instance.
    /// - Throws: What the registration's (or the override's) closure throws, or
    ///   `CancellationError` when this task is cancelled while it waits. A failed
    ///   construction is not cached: the next call tries again.
    public func callAsFunction() async throws -> Value {
        try await container.resolve(self)
    }
}

// Every stored property is `Sendable` whatever `Value` is: the closure is `@Sendable`.
extension AsyncProvider: Sendable {}
