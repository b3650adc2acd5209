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
/// `HTTPClient` through
/// ``DependencyContainer/override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``,
/// and every dependency resolved through `self.httpClient()` then sees the replacement.
///
/// Create providers with
/// ``DependencyContainer/factory(name:fileID:line:column:isolation:_:)->Provider<Value>``,
/// ``DependencyContainer/singleton(name:fileID:line:column:isolation:_:)->Provider<Value>``,
/// ``DependencyContainer/shared(name:fileID:line:column:isolation:_:)->Provider<Value>`` and
/// ``DependencyContainer/graph(name:fileID:line:column:isolation:_:)->Provider<Value>``, or their
/// parameterized forms, and read <doc:RegisteringDependencies> and <doc:Scopes> for when to
/// use which.
public struct Provider<Value> {
    // Seven scalars, the most that is destroyed inline: see `RegistrationSite` for why the
    // rest is packed, and keep it so.
    @usableFromInline let container: DependencyContainer
    @usableFromInline let make: () -> Value
    /// The argument of a family's member, `nil` for a plain registration.
    @usableFromInline let argument: RegistrationKey.Argument?
    /// What shutdown runs for the instance, set by `onShutdown` on a singleton; the site
    /// says whether it runs on the main actor. The closure itself, not an enum of the
    /// kinds (three more scalars) or an object (an allocation each time the property is
    /// evaluated, on every resolution). A `let`: with a `var` here, the optimizer keeps a
    /// copy of every provider it makes, which costs a cached resolution some 240
    /// instructions.
    @usableFromInline let teardownBody: ((Value) -> Void)?
    @usableFromInline let site: RegistrationSite

    /// The registration's identity, for the container's tables.
    @inlinable
    var key: RegistrationKey {
        RegistrationKey(fileName: site.fileName, position: site.position, type: site.type, argument: argument)
    }

    @inlinable
    var name: StaticString { site.name }

    @inlinable
    var scope: DependencyScope { site.scope }

    /// Whether the registration is isolated to the main actor (a `@MainActor` property, or
    /// any property of a module with main-actor default isolation): a key path can carry
    /// it off the main actor where the compiler cannot see it, so the provider checks it
    /// when it is made, and a cached value is released on the main actor.
    @inlinable
    var isMainActor: Bool { site.isMainActor }

    /// A provider declared at a call site of `factory`, `singleton`, `shared` or `graph`.
    @inlinable
    init(
        _ container: DependencyContainer, _ scope: DependencyScope, _ argument: RegistrationKey.Argument?,
        _ name: StaticString, _ fileID: StaticString, _ line: UInt, _ column: UInt, _ isolation: (any Actor)?,
        _ make: @escaping () -> Value
    ) {
        let site = RegistrationSite(
            scope: scope, name: name, fileID: fileID, line: line, column: column, type: ObjectIdentifier(Value.self),
            isMainActor: MainActorThread.isMainActor(isolation, registration: name))
        self.init(container, site, argument, nil, make)
    }

    /// `provider` with `teardown`, which runs on the main actor if `runsOnMainActor`.
    @inlinable
    init(_ provider: Provider<Value>, teardown: @escaping (Value) -> Void, runsOnMainActor: Bool) {
        let site = provider.site.withTeardown(onMainActor: runsOnMainActor)
        self.init(provider.container, site, provider.argument, teardown, provider.make)
    }

    /// The teardown `onShutdown` set, as the kind it was declared.
    @inlinable
    var teardown: Teardown<Value>? {
        guard let teardownBody else { return nil }
        if site.teardownRunsOnMainActor {
            return .onMainActor(unsafeBitCast(teardownBody, to: (@MainActor (Value) -> Void).self))
        }
        return .anywhere(unsafeBitCast(teardownBody, to: (@Sendable (Value) -> Void).self))
    }

    @inlinable
    init(
        _ container: DependencyContainer, _ site: RegistrationSite, _ argument: RegistrationKey.Argument?,
        _ teardown: ((Value) -> Void)?, _ make: @escaping () -> Value
    ) {
        (self.container, self.site, self.argument, self.teardownBody, self.make) = (container, site, argument, teardown, make)
    }

    /// Resolves the dependency in the container the provider came from.
    ///
    /// Calling the provider is how a dependency is resolved, both by app code and inside
    /// other registrations, so that every resolution goes through the container's scope,
    /// override and cycle checks:
    ///
    /// ```swift
    /// let client = DependencyContainer.main.httpClient()
    /// var feedLoader: Provider<any FeedLoader> {
    ///     factory { RemoteFeedLoader(client: self.httpClient()) }
    /// }
    /// ```
    ///
    /// The scope decides what happens: a factory builds a new instance, a singleton
    /// returns the container's instance (building it once), a shared provider returns
    /// the live instance if someone still holds one, a graph provider returns the
    /// instance of the outermost resolution in progress. An override installed in the
    /// container or one of its parents replaces the registration's closure, and
    /// decorations wrap what it builds.
    ///
    /// - Returns: The resolved instance.
    @inlinable
    public func callAsFunction() -> Value {
        container.resolve(self)
    }
}

extension Provider: LinkedProvider {
    /// This provider, as a `@Dependency` of an instance its container keeps publishes it
    /// when the property's value is the provider itself
    /// (`@Dependency(\.makeItem) var makeItem: Provider<Item>`): it holds that container
    /// weakly, through a ``PropertyLink``, and each call reads the registration there
    /// anew, so an override installed since applies.
    ///
    /// A provider resolves in the container it holds, strongly, and calling it runs
    /// `container.resolve(self)`, the road of every resolution, which must not test for a
    /// link. So the linked provider holds a container of its own, which builds nothing
    /// and which nothing else reaches, and resolves there a factory whose closure reads
    /// the link: the call is a factory's, filed for cycles in that container, and the
    /// registration is resolved in its own container inside it. An object created while
    /// the call reads the registration (in its getter, or a `deinit` run there) takes that
    /// container, not the private one (``Frame/building(from:owner:)``). One such container per
    /// link, not one for all: two links to one registration, in two containers, may call
    /// each other, which in one container would read as a cycle. That factory's frame is
    /// no construction (``LinkCallFrame``): outside every construction, a tracer hears of
    /// what the call resolves as of a direct call, once the frame has ended, so that the
    /// tracer does not run inside the call; inside a traced construction, the frame passes
    /// the construction's trace through, and the call's events join its batch.
    ///
    /// ```swift
    /// final class Importer {
    ///     @Dependency(\.makeParser) var makeParser: Provider<Parser>   // a factory
    /// }
    /// // In `container.importer()`, a singleton, `makeParser()` builds in `container`,
    /// // and `makeParser` does not keep `container` alive.
    /// ```
    func linked(to keyPath: AnyKeyPath, in container: DependencyContainer) -> Provider {
        let link = PropertyLink(to: keyPath, in: container, name: name)
        let site = RegistrationSite(
            scope: .factory, name: name, fileName: site.fileName, position: site.position, type: site.type,
            isMainActor: false)
        return Provider(link.host, site, argument, nil) { link.provider(as: Provider.self)() }
    }
}

/// How long a container keeps what a provider builds.
///
/// A registration picks its scope by the function that makes its provider (`factory`,
/// `singleton`, `shared`, `scoped` or `graph`); this type names that choice where the library reports it,
/// in each ``ResolutionEvent`` of a trace:
///
/// ```swift
/// container.tracer = ResolutionTracer { events in
///     let built = events.filter { $0.scope == .singleton && $0.outcome == .built }
///     print("singletons built:", built.map(\.name))
/// }
/// ```
///
/// See <doc:Scopes> for what each scope means in child containers and after a reset.
public enum DependencyScope: String, Sendable, Hashable, CaseIterable {
    /// Built anew on every resolution:
    /// ``DependencyContainer/factory(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    case factory
    /// Built once per container and kept until reset or overridden:
    /// ``DependencyContainer/singleton(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    case singleton
    /// Held weakly and reused while something else holds it:
    /// ``DependencyContainer/shared(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    case shared
    /// Built once per outermost resolution, and shared by everything that resolution
    /// builds: ``DependencyContainer/graph(name:fileID:line:column:isolation:_:)->Provider<Value>``.
    case graph
    /// Built once per scope container (a session, a request) and kept until the scope goes:
    /// ``DependencyContainer/scoped(name:fileID:line:column:isolation:_:)->Provider<Value>``. Outside any
    /// scope it is kept like a singleton.
    case scoped

    /// Whether the container that builds an instance keeps it in its cache.
    @inlinable
    var isKeptByContainer: Bool {
        // A switch, not `self == .singleton || self == .scoped`: the comparisons kept the
        // getter out of line at some of the resolution road's call sites, and the switch
        // is inlined everywhere (measured: a five-level chain 116 instructions cheaper).
        switch self {
        case .singleton, .scoped: true
        default: false
        }
    }

    /// Whether the container builds an instance once for all who ask meanwhile (a
    /// singleton, scoped or shared instance), so that its construction is listed in the
    /// container while it runs and others wait for it. A factory's instance is not kept,
    /// and a graph instance is kept by the outermost resolution.
    var isBuiltOnceByContainer: Bool {
        switch self {
        case .singleton, .scoped, .shared: true
        case .factory, .graph: false
        }
    }
}
