/// What a provider that a `@Dependency` property publishes holds in place of its
/// container: the container, weakly, and the key path to read there on every call.
///
/// An ``AsyncProvider`` or a ``ProviderFamily`` is a value the property keeps, unlike a
/// ``Provider``, whose service the property keeps, except where the property's type is the
/// provider itself (`var makeItem: Provider<Item>`, to build many). A registration's provider holds its
/// container, and its closure captures it (`self` in `singleton { … self.baseURL … }`).
/// Kept by the property of an instance the container itself keeps (a singleton, a
/// scope's scoped instance), it would keep the container alive, and with it the instance:
/// a request scope or a test world never freed. Such a property holds its container
/// weakly, so it publishes a provider that does the same (``LinkedProvider``): each call
/// reads the key path in the container, if it still lives, and resolves the provider it
/// gets there. Overrides installed after the first read apply, as they do to a provider
/// resolved from the container.
///
/// ```swift
/// final class Importer {
///     @Dependency(\.database) var database   // an AsyncProvider<Database>
///     func run() async throws { _ = try await database() }
/// }
/// extension DependencyContainer {
///     var importer: Provider<Importer> { singleton { Importer() } }
/// }
/// // `container.importer().database` holds `container` weakly, through a link.
/// ```
@usableFromInline
final class PropertyLink: Sendable {
    /// The container the property resolved from, which keeps the property's owner: held
    /// without keeping it, as the property holds it.
    private let unkeptContainer: UnkeptContainer
    /// The property's key path, to a provider of the linked provider's type. Unchecked: a
    /// key path is an immutable object, which the property shares across threads too.
    private nonisolated(unsafe) let keyPath: AnyKeyPath
    /// The registration's name, for the message when the container is gone.
    private let name: StaticString
    /// Whether the property's first read ran on the main actor, where an async provider's
    /// call reads the key path again: the registration's property may be isolated to it
    /// (in a module with main-actor default isolation, every one is).
    let readsOnMainActor: Bool

    /// The container in whose frame a call reads the registration: it builds nothing,
    /// nothing else reaches it, and an object created in its frame takes ``container``
    /// (``DependencyContainer/init(linkingTo:)``). One per link: two links to one
    /// registration, in two containers, may call each other, which in one container would
    /// read as a cycle.
    let host: DependencyContainer

    /// The link of a property at `keyPath`, read now, in `container`.
    init(to keyPath: AnyKeyPath, in container: DependencyContainer, name: StaticString) {
        (unkeptContainer, self.keyPath, self.name) = (UnkeptContainer(container), keyPath, name)
        readsOnMainActor = MainActorThread.isCurrent
        host = DependencyContainer(linkingTo: container)
    }

    /// The provider the key path leads to in the container, read now.
    ///
    /// Stops with a message when the container is gone: a property of an instance the
    /// container kept holds it weakly, as its published providers do.
    @usableFromInline
    func provider<Provider>(as type: Provider.Type) -> Provider {
        guard let container = unkeptContainer.container else {
            fatalError("\(name): the container this provider resolves in was released. A @Dependency property "
                + "of an instance its container keeps (a singleton, a scoped instance) holds the container weakly, "
                + "and so does the provider it publishes: call it while the container lives (keep a scope alive "
                + "until its request ends, for example with withExtendedLifetime(scope)), or end the container "
                + "with shutdown(), which releases what it kept while it lives")
        }
        return container[keyPath: unsafeDowncast(keyPath, to: KeyPath<DependencyContainer, Provider>.self)]
    }

    /// The provider the key path leads to in the container, read now in a frame of
    /// ``host``, where the registration's getter runs as in a factory of the registration
    /// at `key`: an object the getter creates (a helper its closure captures, with a
    /// `@Dependency` of its own) takes the container, as on the property's first read, not
    /// `main`.
    ///
    /// ```swift
    /// // In a kept instance: `@Dependency(\.sessions) var sessions: ProviderFamily<UserID, Session>`
    /// let family = link.providerRead(as: ProviderFamily<UserID, Session>.self, registeredAt: key)
    /// ```
    @usableFromInline
    func providerRead<Provider>(as type: Provider.Type, registeredAt key: RegistrationKey) -> Provider {
        let site = RegistrationSite(
            scope: .factory, name: name, fileName: key.fileName, position: key.position, type: key.type,
            isMainActor: false)
        return DependencyInjection.Provider(host, site, nil, nil) { self.provider(as: Provider.self) }()
    }

    /// What a property at `keyPath` whose owner `container` keeps publishes for `value`,
    /// which the key path led to there: `value`, linked if its type is a provider that the
    /// property keeps (``LinkedProvider``).
    ///
    /// The type, not the value: a key path to an optional provider, or to `Any` holding
    /// one, leads to something else than the provider its link would read.
    @usableFromInline
    static func published<Value>(_ value: Value, at keyPath: AnyKeyPath, in container: DependencyContainer) -> Value {
        guard Value.self is any LinkedProvider.Type, let provider = value as? any LinkedProvider else { return value }
        return provider.linked(to: keyPath, in: container) as! Value
    }
}

/// A provider that a `@Dependency` property of an instance its container keeps publishes
/// linked (``PropertyLink``) rather than as the registration made it: ``AsyncProvider``,
/// ``ProviderFamily`` and ``Provider``, the providers a property keeps as its value.
protocol LinkedProvider {
    /// This provider, as a property at `keyPath` in `container` publishes it: holding the
    /// container weakly, re-reading the key path on every call.
    func linked(to keyPath: AnyKeyPath, in container: DependencyContainer) -> Self
}
