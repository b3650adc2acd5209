/// A registered service: how to build it, and for how long the container keeps it.
///
/// A registration returns a provider from a computed property, and callers resolve it by
/// calling it:
///
/// ```swift
/// extension DependencyContainer {
///     var httpClient: Provider<any HTTPClient> { singleton { URLSessionHTTPClient() } }
///     var feedLoader: Provider<any FeedLoader> {
///         factory { RemoteFeedLoader(client: self.httpClient()) }
///     }
/// }
///
/// let loader = DependencyContainer.main.feedLoader()
/// ```
///
/// The provider's `Value` is the property's declared type, not the type the closure
/// builds. That is what lets a test replace `URLSessionHTTPClient` with any other
/// `HTTPClient` through ``DependencyContainer/override(_:_:)``, and every dependency
/// resolved through `self.httpClient()` then sees the replacement.
///
/// Create providers with ``DependencyContainer/factory(name:fileID:line:column:_:)``,
/// ``DependencyContainer/singleton(name:fileID:line:column:_:)`` and
/// ``DependencyContainer/shared(name:fileID:line:column:_:)``.
public struct Provider<Value> {
    @usableFromInline let container: DependencyContainer
    @usableFromInline let key: ProviderKey
    @usableFromInline let name: StaticString
    @usableFromInline let scope: DependencyScope
    @usableFromInline let make: () -> Value

    @inlinable
    init(
        container: DependencyContainer,
        key: ProviderKey,
        name: StaticString,
        scope: DependencyScope,
        make: @escaping () -> Value
    ) {
        self.container = container
        self.key = key
        self.name = name
        self.scope = scope
        self.make = make
    }

    /// A provider declared at a call site of `factory`, `singleton` or `shared`.
    @inlinable
    init(
        _ container: DependencyContainer, _ scope: DependencyScope, _ argument: ProviderKey.Argument?,
        _ name: StaticString, _ fileID: StaticString, _ line: UInt, _ column: UInt,
        _ make: @escaping () -> Value
    ) {
        self.init(
            container: container,
            key: ProviderKey(file: fileID, line: line, column: column, type: Value.self, argument: argument),
            name: name, scope: scope, make: make)
    }

    /// Resolves the dependency in the container the provider came from.
    ///
    /// The scope decides what happens: a factory builds a new instance, a singleton
    /// returns the container's instance (building it once), a shared provider returns
    /// the live instance if someone still holds one. An override installed in the
    /// container or one of its parents replaces the registration's closure.
    ///
    /// - Returns: The resolved instance.
    @inlinable
    public func callAsFunction() -> Value {
        container.resolve(self)
    }
}

/// How long a container keeps what a provider builds.
///
/// Reported in each ``ResolutionEvent`` of a trace.
public enum DependencyScope: String, Sendable, Hashable, CaseIterable {
    /// Built anew on every resolution: ``DependencyContainer/factory(name:fileID:line:column:_:)``.
    case factory
    /// Built once per container and kept until reset or overridden:
    /// ``DependencyContainer/singleton(name:fileID:line:column:_:)``.
    case singleton
    /// Held weakly and reused while something else holds it:
    /// ``DependencyContainer/shared(name:fileID:line:column:_:)``.
    case shared
}
