/// A property that resolves a dependency from a container the first time it is read.
///
/// ```swift
/// final class FeedViewModel {
///     @Dependency(\.feedLoader) var loader     // a Provider: yields the service
///     @Dependency(\.baseURL) var baseURL       // a plain property: yields its value
/// }
/// ```
///
/// The container is chosen when the owning object is created, first match wins:
///
/// 1. the container passed as `container:`;
/// 2. the container building the object, if a registration's closure is creating it (on
///    that thread, or in that task; a task the closure starts is not part of it);
/// 3. ``DependencyContainer/main`` at that moment, which inside
///    ``DependencyContainer/withMain(_:_:)`` is that call's container.
///
/// So an object built by `container.feedScreen()` resolves from `container` whatever
/// `main` is, and a singleton's properties from the container that keeps it. The value is
/// resolved on first access and then kept.
///
/// A container never keeps itself alive through what it caches: when the owning object is
/// a singleton the container is building, or is created while a property of such an
/// object is first resolved, the property holds the container weakly. A graph or shared
/// instance built elsewhere first (by a factory, or for app code) holds its container
/// strongly until such a singleton takes it, and weakly from then on. So does the provider
/// such a property keeps when it injects an ``AsyncProvider`` or a ``ProviderFamily``, or a
/// ``Provider`` declared as its value (`var makeItem: Provider<Item>`), which reads the
/// registration anew on each call. Reading the property for the first
/// time after the container is gone, or calling that provider then, stops with a message;
/// so does a first read in the owning object's `deinit` when the container releases it,
/// unless the container is ended with
/// ``DependencyContainer/shutdown(fileID:filePath:line:column:)`` or
/// ``DependencyContainer/reset()``, which release what it kept while it lives. A main-actor
/// value that a living container drops off the main actor (a shutdown, a reset, an
/// override) is released on the main queue, and the container stays until then. Reading
/// the property from many threads at once is safe: the
/// dependency is resolved once and every reader sees the same value.
///
/// A class whose only mutable state is `@Dependency` properties may be declared
/// `@unchecked Sendable`: the wrapper's storage is guarded by its own lock. (Swift
/// stores every property wrapper in a `var`, so a plain `Sendable` class cannot hold one.)
///
/// The projected value switches the container or forgets the value:
///
/// ```swift
/// viewModel.$loader.container = .mocks   // resolve from `mocks` next time
/// viewModel.$loader.reset()              // resolve again on next access
/// ```
@propertyWrapper
public struct Dependency<Value> {
    @usableFromInline let storage: DependencyStorage
    /// The storage's published slot and the property's site: the two words a read uses,
    /// carried here so that reading a resolved value touches neither the storage object
    /// nor its reference count.
    @usableFromInline let words: PropertyWords

    /// Injects a plain registration: a computed property of any type.
    ///
    /// The container is taken now, when the owning object is created (see ``Dependency``
    /// for which); the property is
    /// read from it on first access:
    ///
    /// ```swift
    /// @Dependency(\.baseURL) var baseURL
    /// @Dependency(\.baseURL, container: .mocks) var mockBaseURL
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The registration, such as `\.baseURL`.
    ///   - container: Where to resolve it; by default the container building the owning
    ///     object, else ``DependencyContainer/main`` as it is now.
    ///   - function: The type that declares the property, for messages; leave the default.
    ///   - fileID: Where the property is declared, for messages; leave the default.
    ///   - line: Where the property is declared, for messages; leave the default.
    @_disfavoredOverload
    @inlinable @inline(__always)  // where the key path is a literal: see ``PropertyGetter``
    public init(
        _ keyPath: KeyPath<DependencyContainer, Value>,
        container: DependencyContainer? = nil,
        function: StaticString = #function,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) {
        let site = PropertySite(declaredIn: function, fileID: fileID, line: line)
        // Captures the key path and nothing else, so that it compiles to the getter's call.
        // Made in the argument, after the site: a copy of the closure kept past the call, or
        // a call between the two, kept the key path alive beside the closure, and the
        // optimizer then left it captured.
        storage = DependencyStorage(
            PropertyGetter { container, step in
                guard let container else { return keyPath }
                return Self.resolve(valueAt: keyPath, in: container, &step)
            }, container: container)
        words = PropertyWords(published: storage.published, site: site)
    }

    /// Injects the service of a ``Provider`` registration.
    ///
    /// The wrapped value is what the provider resolves, not the provider, so the
    /// property reads as the service itself:
    ///
    /// ```swift
    /// @Dependency(\.httpClient) var client   // an `any HTTPClient`
    /// ```
    ///
    /// - Parameters:
    ///   - keyPath: The registration, such as `\.httpClient`.
    ///   - container: Where to resolve it; by default the container building the owning
    ///     object, else ``DependencyContainer/main`` as it is now.
    ///   - function: The type that declares the property, for messages; leave the default.
    ///   - fileID: Where the property is declared, for messages; leave the default.
    ///   - line: Where the property is declared, for messages; leave the default.
    @inlinable @inline(__always)  // where the key path is a literal: see ``PropertyGetter``
    public init(
        _ keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        container: DependencyContainer? = nil,
        function: StaticString = #function,
        fileID: StaticString = #fileID,
        line: UInt = #line
    ) {
        let site = PropertySite(declaredIn: function, fileID: fileID, line: line)
        // Captures the key path and nothing else, so that it compiles to the getter's call.
        // Made in the argument, after the site: a copy of the closure kept past the call, or
        // a call between the two, kept the key path alive beside the closure, and the
        // optimizer then left it captured.
        storage = DependencyStorage(
            PropertyGetter { container, step in
                guard let container else { return keyPath }
                return Self.resolve(container[keyPath: keyPath], at: keyPath, in: container, &step)
            }, container: container)
        words = PropertyWords(published: storage.published, site: site)
    }

    /// Resolves the property's key path in `container`, into a box, as far as `step` allows
    /// (``DependencyStorage/FirstReadStep``): the slow path of a read whose storage kept the
    /// key path rather than the getter (``PropertyGetter``), compiled where the wrapper is
    /// used, so that no storage keeps a function for it. One function serves both
    /// initializers, so that the wrapper keeps no word to tell them apart.
    ///
    /// Key paths are invariant in their value type, so one whose value is `Value` came
    /// through ``init(_:container:function:fileID:line:)-(KeyPath<DependencyContainer,Value>,_,_,_,_)``
    /// and any other is a provider's.
    @inlinable
    static func resolve(
        _ keyPath: AnyKeyPath, in container: DependencyContainer, _ step: inout DependencyStorage.FirstReadStep
    ) -> AnyBox? {
        if type(of: keyPath).valueType == Value.self {
            return resolve(valueAt: unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, Value>.self), in: container, &step)
        }
        let keyPath = unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, Provider<Value>>.self)
        return resolve(container[keyPath: keyPath], at: keyPath, in: container, &step)
    }

    /// Resolves `provider`, which `keyPath` led to in `container`, as far as `step` allows:
    /// a provider's getter only makes the provider, so even a look reads it, and finds the
    /// instance the container keeps.
    @inlinable
    static func resolve(
        _ provider: Provider<Value>, at keyPath: KeyPath<DependencyContainer, Provider<Value>>,
        in container: DependencyContainer, _ step: inout DependencyStorage.FirstReadStep
    ) -> AnyBox? {
        // Only where the check runs: in a release build, passing the key path to the empty
        // function would make the key path object the getter's call does without.
        #if DEBUG
        RegistrationIdentity.note(keyPath, leadsTo: provider.key, name: provider.name, in: container)
        #endif
        if let box = container.cachedBox(provider) {
            step = .foundKept
            return box
        }
        if step == .look { return nil }
        step = .built
        return Box(container.resolveSlowly(provider))
    }

    /// Reads the plain property at `keyPath` in `container` into a box, unless `step` is a
    /// look: a plain property's getter is its construction, which a look does not run.
    /// A property whose owner the container keeps publishes a provider it reads linked
    /// (``PropertyLink``), so that the provider does not keep the container.
    @inlinable
    static func resolve(
        valueAt keyPath: KeyPath<DependencyContainer, Value>, in container: DependencyContainer,
        _ step: inout DependencyStorage.FirstReadStep
    ) -> AnyBox? {
        switch step {
        case .look:
            return nil
        case .resolveForKeptOwner:
            step = .built
            return Box(PropertyLink.published(container[keyPath: keyPath], at: keyPath, in: container))
        default:
            step = .built
            return Box(container[keyPath: keyPath])
        }
    }

    /// The dependency, resolved on first access.
    ///
    /// Setting it replaces the value for this property only, until ``reset()``, which is
    /// handy for one object in a test:
    ///
    /// ```swift
    /// model.client = StubHTTPClient()   // this model only; the container is untouched
    /// ```
    @inlinable
    public var wrappedValue: Value {
        get {
            let words = self.words
            if let value = _PublishedBox.value(in: words.published, as: Value.self) { return value }
            let box = DependencyStorage.resolveOnce(from: words.published, declaredAt: words.site) {
                container, keyPath, step in
                Self.resolve(keyPath, in: container, &step)
            }
            return _PublishedBox.unbox(box.takeRetainedValue(), as: Value.self)
        }
        nonmutating set { storage.replace(with: Box(newValue)) }
    }

    /// The property wrapper itself, to reach ``container`` and ``reset()`` through `$name`.
    ///
    /// ```swift
    /// model.$loader.container = .mocks
    /// model.$loader.reset()
    /// ```
    public var projectedValue: Dependency<Value> { self }

    /// The container the property resolves from.
    ///
    /// It is ``DependencyContainer/main`` as it was when the owning object was created,
    /// or the container passed to the initializer. Setting it forgets the current value,
    /// so the next access resolves from the new container:
    ///
    /// ```swift
    /// viewModel.$loader.container = .mocks
    /// ```
    ///
    /// A first read that another thread started before, from the old container, ends with
    /// the old container's value: its reader gets it, and the property does not keep it.
    /// An access that starts after the switch does not wait for that read.
    ///
    /// The property holds the container it is switched to, except the one that keeps the
    /// owning object (a singleton's, a scoped instance's), which it holds weakly, as it did
    /// before any switch: pointing such a property elsewhere in a test, then back, does not
    /// keep the container alive.
    ///
    /// A value read while the property pointed elsewhere stays with the property until the
    /// owning object goes, since a reader may still be copying it. If that value holds the
    /// container that keeps the object (a child of it holds it as its parent, and so does
    /// what the child built), the object and the container keep each other: `reset()` or
    /// `shutdown()` of that container releases what it keeps, and ends that. The testing
    /// product's trait and `DependencyTestCase` reset each test's container when the test
    /// ends, which ends it for what that container keeps (not for what its parent keeps).
    ///
    /// ```swift
    /// let child = DependencyContainer(parent: container)
    /// container.importer().$makeParser.container = child
    /// _ = container.importer().makeParser()   // a provider of `child`, kept by the property
    /// container.reset()                       // releases the importer, and with it `child`
    /// ```
    public var container: DependencyContainer {
        get { storage.resolvingContainer(declaredAt: words.site) }
        nonmutating set { storage.switchContainer(to: newValue) }
    }

    /// Forgets the resolved value, so the next access resolves again.
    ///
    /// Use it after an override, or when a stored value the registration reads has
    /// changed, to pick up the new dependency:
    ///
    /// ```swift
    /// container.setValue("new-token", forKey: "token")
    /// model.$token.reset()   // the next read sees "new-token"
    /// ```
    ///
    /// A value set through ``wrappedValue`` is forgotten too. As after a container switch,
    /// a first read already running ends for its own reader, and the next access resolves
    /// again without waiting for it.
    ///
    /// The value forgotten stays with the property until the owning object goes, since a
    /// reader on another thread may still be copying it: its `deinit` runs then. An object
    /// that lives long and resets a property over and over (a read of a factory, then a
    /// reset, in a loop) keeps every value it read; make a new object instead.
    public func reset() {
        storage.replace(with: nil)
    }
}

// @unchecked: `storage` is thread-safe, `words.published` points into it and is only read
// with an atomic load, and `words.site` is an immutable record.
extension Dependency: @unchecked Sendable where Value: Sendable {}

/// The two plain words a `@Dependency` read uses: the storage's published slot, which
/// the storage (kept alive by the wrapper) owns and which holds a `Box<Value>`, and the
/// site its messages name.
///
/// One field of the wrapper rather than two: a wrapper of three fields was copied whole
/// from the object that declares it on every read, retaining and releasing its storage;
/// one of two fields is read field by field.
///
/// ```swift
/// let words = PropertyWords(published: storage.published, site: site)
/// ```
@usableFromInline
struct PropertyWords {
    @usableFromInline let published: UnsafeMutablePointer<AnyBox?>
    @usableFromInline let site: PropertySite

    @inlinable
    init(published: UnsafeMutablePointer<AnyBox?>, site: PropertySite) {
        (self.published, self.site) = (published, site)
    }
}
