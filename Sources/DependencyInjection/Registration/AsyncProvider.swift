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
    /// Where the provider resolves: the container and closure of its registration, or
    /// the link of a property that published it.
    @usableFromInline let origin: Origin
    @usableFromInline let key: RegistrationKey
    @usableFromInline let name: StaticString
    @usableFromInline let scope: DependencyScope
    /// What shutdown runs for the instance, set by `onShutdown` on a singleton (a `let`,
    /// as in ``Provider``).
    @usableFromInline let teardown: (@Sendable (Value) async -> Void)?

    /// Where an async provider resolves.
    @usableFromInline
    enum Origin: Sendable {
        /// A registration's provider: the container that made it, and its closure.
        case registration(DependencyContainer, make: @Sendable () async throws -> Value)
        /// A provider that a `@Dependency` property of an instance its container keeps
        /// published: it holds neither the container nor the closure, which captures the
        /// container, and reads the registration anew on every call (``PropertyLink``).
        case property(PropertyLink)
    }

    /// A provider declared at a call site of `factory`, `singleton`, `shared` or `graph`.
    @inlinable
    init(
        _ container: DependencyContainer, _ scope: DependencyScope, _ argument: RegistrationKey.Argument?,
        _ name: StaticString, _ fileID: StaticString, _ line: UInt, _ column: UInt,
        _ make: @escaping @Sendable () async throws -> Value
    ) {
        self.origin = .registration(container, make: make)
        self.key = RegistrationKey(file: fileID, line: line, column: column, type: Value.self, argument: argument)
        self.name = name
        self.scope = scope
        self.teardown = nil
    }

    /// `provider` with `teardown`.
    @inlinable
    init(_ provider: AsyncProvider<Value>, teardown: @escaping @Sendable (Value) async -> Void) {
        (origin, key, name, scope) = (provider.origin, provider.key, provider.name, provider.scope)
        self.teardown = teardown
    }

    /// `provider` from another origin, with no teardown: a linked provider runs none,
    /// the registration it reads does.
    init(_ provider: AsyncProvider<Value>, origin: Origin) {
        (self.origin, key, name, scope, teardown) = (origin, provider.key, provider.name, provider.scope, nil)
    }

    /// The registration's closure. Only a registration's provider comes to its container
    /// to be resolved: a linked one resolves the provider its link reads.
    var make: @Sendable () async throws -> Value {
        guard case .registration(_, let make) = origin else { preconditionFailure("a linked provider resolved itself") }
        return make
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
        switch origin {
        case .registration(let container, _): return try await container.resolve(self)
        case .property(let link):
            // Read where the property's first read read it: this function runs on no actor,
            // and the registration's property may be isolated to the main actor.
            let key = key
            let provider =
                link.readsOnMainActor
                ? await MainActor.run { link.providerRead(as: AsyncProvider.self, registeredAt: key) }
                : link.providerRead(as: AsyncProvider.self, registeredAt: key)
            return try await provider()
        }
    }
}

extension AsyncProvider: LinkedProvider {
    func linked(to keyPath: AnyKeyPath, in container: DependencyContainer) -> AsyncProvider {
        AsyncProvider(self, origin: .property(PropertyLink(to: keyPath, in: container, name: name)))
    }
}

// Every stored property is `Sendable` whatever `Value` is: the closure is `@Sendable`.
extension AsyncProvider: Sendable {}
