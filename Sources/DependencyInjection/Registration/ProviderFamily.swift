/// One registration for every value of an argument: a provider per argument, under one
/// key path.
///
/// A service that exists once per user, per document or per account takes an argument.
/// Declared as a family, it is a single property, so a test can name it with a key path
/// and replace it for every argument at once, with a closure that receives the argument:
///
/// ```swift
/// struct UserID: Hashable, Sendable { let raw: String }
/// protocol Session: Sendable { var user: UserID { get } }
/// struct LiveSession: Session { let user: UserID }
/// struct StubSession: Session { let user: UserID }
///
/// extension DependencyContainer {
///     var session: ProviderFamily<UserID, any Session> {
///         singleton { (user: UserID) in LiveSession(user: user) }
///     }
/// }
///
/// let alice = UserID(raw: "alice")
/// let session = DependencyContainer.main.session(alice)          // one per user
///
/// let container = DependencyContainer(parent: .mocks)
/// container.override(\.session) { user in StubSession(user: user) }   // every user
/// container.override(\.session[alice]) { StubSession(user: alice) }   // alice only
/// container.reset(\.session)                                          // every user again
/// ```
///
/// Applied to an argument, a family is an ordinary ``Provider`` whose identity is the
/// family's registration with that argument: each argument is cached, overridden, traced
/// and checked for cycles on its own, as with the argument forms of `factory`, `singleton`
/// and `shared` in a subscript. What the family adds is the whole registration as one
/// key path: ``DependencyContainer/override(_:_:)-(KeyPath<DependencyContainer,ProviderFamily<Argument,Value>>,_)``
/// reaches every argument, including instances already built for some of them, and
/// ``DependencyContainer/reset(_:)-(KeyPath<DependencyContainer,ProviderFamily<Argument,Value>>)``
/// removes the family's override and every per-argument override of it.
///
/// Create families with the forms of
/// ``DependencyContainer/factory(name:fileID:line:column:isolation:_:)->ProviderFamily<Argument,Value>``,
/// ``DependencyContainer/singleton(name:fileID:line:column:isolation:_:)->ProviderFamily<Argument,Value>``
/// and ``DependencyContainer/shared(name:fileID:line:column:isolation:_:)->ProviderFamily<Argument,Value>``
/// whose closure takes the argument; see <doc:RegisteringDependencies#Provider-families>.
public struct ProviderFamily<Argument: Hashable & Sendable, Value>: ProviderFamilyType {
    /// Where the family resolves: the container and closure of its registration, or the
    /// link of a property that published it.
    @usableFromInline let origin: Origin
    /// The family's registration: its call site and type, without an argument. The type is
    /// the family's, so that two families that differ only in their argument's type (a
    /// generic helper's) never share a key, and an argument always has the family's type.
    @usableFromInline let key: RegistrationKey
    @usableFromInline let name: StaticString
    @usableFromInline let scope: DependencyScope
    /// Whether the registration is isolated to the main actor, as in ``Provider``.
    @usableFromInline let isMainActor: Bool

    /// Where a family resolves, as for ``AsyncProvider/Origin``.
    @usableFromInline
    enum Origin {
        /// A registration's family: the container that made it, and its closure.
        case registration(DependencyContainer, make: (Argument) -> Value)
        /// A family that a `@Dependency` property of an instance its container keeps
        /// published: it holds neither the container nor the closure, which captures the
        /// container, and reads the registration anew on every call (``PropertyLink``).
        case property(PropertyLink)
    }

    /// A family declared at a call site of `factory`, `singleton` or `shared`.
    @inlinable
    init(
        _ container: DependencyContainer, _ scope: DependencyScope, _ name: StaticString, _ fileID: StaticString,
        _ line: UInt, _ column: UInt, _ isolation: (any Actor)?, _ make: @escaping (Argument) -> Value
    ) {
        self.origin = .registration(container, make: make)
        self.key = RegistrationKey(file: fileID, line: line, column: column, type: Self.self, argument: nil)
        self.name = name
        self.scope = scope
        self.isMainActor = MainActorThread.isMainActor(isolation, registration: name)
    }

    /// `family`, published through `link`.
    init(_ family: ProviderFamily, linkedThrough link: PropertyLink) {
        (origin, key, name, scope, isMainActor) = (.property(link), family.key, family.name, family.scope, family.isMainActor)
    }

    /// The provider of the family's instance for `argument`.
    ///
    /// It is the registration for that one argument, so a key path through it names that
    /// argument alone, for an override, a reset, `instanceIfBuilt` or `@Dependency`:
    ///
    /// ```swift
    /// container.override(\.session[alice]) { StubSession(user: alice) }
    /// let session = container.session[alice]()
    /// final class ProfileModel { @Dependency(\.session[alice]) var session }
    /// ```
    ///
    /// An override of one argument wins over an override of the whole family installed in
    /// the same container.
    ///
    /// - Parameter argument: The value that identifies the instance.
    /// - Returns: A provider whose identity is the family's registration and `argument`.
    @inlinable
    public subscript(argument: Argument) -> Provider<Value> {
        switch origin {
        case .registration(let container, let make): Provider(member: self, of: container, make, argument)
        case .property(let link): link.providerRead(as: ProviderFamily.self, registeredAt: key)[argument]
        }
    }

    /// Resolves the family's instance for `argument` in the container the family came from.
    ///
    /// ```swift
    /// let session = DependencyContainer.main.session(alice)
    /// var inbox: ProviderFamily<UserID, Inbox> {
    ///     factory { (user: UserID) in Inbox(session: self.session(user)) }
    /// }
    /// ```
    ///
    /// The scope decides what happens, for each argument on its own: a factory builds a new
    /// instance, a singleton returns the container's instance for `argument` (building it
    /// once), a shared family returns the live instance for `argument`, if any.
    ///
    /// - Parameter argument: The value that identifies the instance.
    /// - Returns: The resolved instance.
    @inlinable
    public func callAsFunction(_ argument: Argument) -> Value {
        self[argument]()
    }
}

extension ProviderFamily: LinkedProvider {
    func linked(to keyPath: AnyKeyPath, in container: DependencyContainer) -> ProviderFamily {
        ProviderFamily(self, linkedThrough: PropertyLink(to: keyPath, in: container, name: name))
    }
}

extension Provider {
    /// The provider of `family`'s instance for `argument`.
    @inlinable
    init<Argument>(
        member family: ProviderFamily<Argument, Value>, of container: DependencyContainer, _ make: @escaping (Argument) -> Value,
        _ argument: Argument
    ) {
        let site = RegistrationSite(
            scope: family.scope, name: family.name, fileName: family.key.fileName, position: family.key.position,
            type: family.key.type, isMainActor: family.isMainActor)
        self.init(container, site, RegistrationKey.TypedArgument(argument), nil, { make(argument) })
    }
}

/// Tells a provider family's type from a provider's where only the type is at hand: the
/// value type of a key path, for a message.
protocol ProviderFamilyType {}
