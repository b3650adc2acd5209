/// The place where an app registers its dependencies and resolves them.
///
/// Registration is an extension with a computed property. A dependency that has no
/// property does not compile, so a missing registration is found by the compiler, not by
/// a crash at launch:
///
/// ```swift
/// extension DependencyContainer {
///     var baseURL: String { isMocked ? "http://localhost:8080" : "https://api.example.com" }
///     var httpClient: Provider<any HTTPClient> { singleton { URLSessionHTTPClient() } }
/// }
///
/// let client = DependencyContainer.main.httpClient()
/// ```
///
/// A container also keeps a key-value storage, cached instances of its providers and the
/// overrides that tests install. Every piece of that mutable state is guarded by one lock
/// per container; no lock is held while a factory (user code) runs, and nothing is
/// released while one is held, so a container is safe to share between threads and tasks
/// and a `deinit` may use any container.
public final class DependencyContainer: @unchecked Sendable {
    // @unchecked: all mutable state lives in `storedState` behind its lock; `isMocked`,
    // `parentReference` and `appContainerOfScope` are immutable.

    // The lock and the state it guards: the first two stored properties, in this order
    // (``_LockedMemory``). Neither is touched as a property after `init`, only through
    // ``withStateLock(_:)`` and the methods beside it. Kept in the container's own object,
    // where a lock object of their own was a second allocation for every test's world and
    // every request's scope.
    private var storedLock: _LockPrimitive
    private var storedState: ContainerState

    /// Whether this container serves test doubles.
    ///
    /// Registrations branch on it to pick mocks, as in
    /// `var loginService: any LoginService { isMocked ? MockLoginService() : LoginService() }`.
    /// It is a property of the container, not a stored value: ``removeAll()`` leaves it
    /// as it is. A child container inherits it from its parent.
    public let isMocked: Bool

    /// Whether this is the private container of a linked provider
    /// (``Provider/linked(to:in:)``), in whose frame the provider's call reads its
    /// registration: an object created meanwhile takes the container the link reads
    /// (``SeldomUsedState/linkTarget``), not this one, which builds nothing.
    let isLinkHost: Bool

    /// The container this one falls back to for stored values and overrides, if any.
    ///
    /// Set by ``init(parent:)``; `nil` for a container made with ``init(isMocked:)``.
    /// Lookups of values and overrides walk from a container up through its parents, and
    /// the first one found wins. Cached instances are never taken from a parent.
    public var parent: DependencyContainer? { parentReference.container }

    /// For a scope container, the nearest ancestor that is not a scope: the app container,
    /// where app-wide instances live. `nil` for every other container.
    @usableFromInline let appContainerOfScope: DependencyContainer?

    /// Runs `body` with everything mutable, behind the container's one lock.
    ///
    /// A method of the container, not a value that holds it: the container is alive for
    /// the call, and reaching the lock takes no reference (a value holding the container
    /// retained and released it around every round of the lock that the optimizer could
    /// not see through, about 60 instructions on each app singleton a request resolves).
    ///
    /// ```swift
    /// let tracer = container.withStateLock { $0.tracer }
    /// ```
    @inlinable
    func withStateLock<Result>(_ body: (inout ContainerState) throws -> Result) rethrows -> Result {
        // The lock's round written out here rather than handed to the lock's `withLock`:
        // passing `body` on through a second generic function kept the optimizer from
        // inlining it into a first build's claim (about 130 instructions more).
        let lock = ContainerLock(self)
        lock.lock()
        defer { lock.unlock() }
        return try body(&lock.state.pointee)
    }

    /// Runs `body` under the container's lock, and releases what it moved into `released`
    /// only after unlocking (``_LockedMemory/withLock(releasingAfter:)``).
    @inlinable
    func withStateLock<Result>(
        releasingAfter body: (inout ContainerState, inout Released) throws -> Result
    ) rethrows -> Result {
        var released = Released()
        let result = try withStateLock { try body(&$0, &released) }
        withExtendedLifetime(released) {}
        return result
    }

    /// This child's slot among its parent's children (``ContainerState/children``);
    /// unused in a container without a parent. Set once, in `init`, after the container
    /// is whole (the parent's list refers to it); read only in `deinit`.
    @exclusivity(unchecked) private var slotInParent = 0

    /// The parent, kept: the last stored property, so that it goes after everything this
    /// container kept, and without nesting the `deinit`s of a chain of containers
    /// (``ParentReference``).
    private let parentReference: ParentReference

    /// Creates an empty container.
    ///
    /// Create your own containers for previews or special builds and switch to them
    /// with ``main`` or ``withMain(_:_:)``:
    ///
    /// ```swift
    /// extension DependencyContainer {
    ///     static let preview = DependencyContainer(isMocked: true)
    /// }
    /// ```
    ///
    /// - Parameter isMocked: Whether registrations should serve their test doubles.
    public init(isMocked: Bool = false) {
        self.storedLock = _LockPrimitive()
        self.storedState = ContainerState()
        self.isMocked = isMocked
        self.isLinkHost = false
        self.parentReference = ParentReference(nil)
        self.appContainerOfScope = nil
        ContainerLock(self).prepareLock()
    }

    /// The private container of a provider linked to `target`'s registration
    /// (``Provider/linked(to:in:)``): it has no parent and builds nothing, and an object
    /// created in its frame takes `target`, which it holds weakly, as the link does.
    ///
    /// ```swift
    /// let host = DependencyContainer(linkingTo: container)
    /// ```
    init(linkingTo target: DependencyContainer) {
        self.storedLock = _LockPrimitive()
        self.storedState = ContainerState()
        self.isMocked = target.isMocked
        self.isLinkHost = true
        self.parentReference = ParentReference(nil)
        self.appContainerOfScope = nil
        ContainerLock(self).prepareLock()
        ContainerLock(self).state.pointee.linkTarget = UnkeptContainer(target)
    }

    /// Creates a child container: an isolated world layered over `parent`.
    ///
    /// The child reads its parent's stored values and overrides (its own first) and
    /// inherits ``isMocked`` and ``tracer``, but builds and caches its own instances, its
    /// own singletons included. Nothing it stores, overrides or caches reaches the parent,
    /// which makes a child the natural world for one test. For a session or a request,
    /// which share the app's singletons, use ``init(scopeOf:)``:
    ///
    /// ```swift
    /// let testWorld = DependencyContainer(parent: .mocks)
    /// testWorld.override(\.httpClient) { StubHTTPClient() }
    /// ```
    ///
    /// An override or reset in the parent also drops what the child cached from the
    /// overridden dependency, unless the child overrides it itself, so the child never
    /// serves a stale instance.
    ///
    /// - Parameter parent: The container to layer over.
    public convenience init(parent: DependencyContainer) {
        self.init(parent: parent, appContainer: nil)
    }

    /// Creates a child of `parent`: an isolated world when `appContainer` is `nil`, else a
    /// scope whose app-wide instances live in `appContainer`.
    init(parent: DependencyContainer, appContainer: DependencyContainer?) {
        self.storedLock = _LockPrimitive()
        self.storedState = ContainerState()
        self.isMocked = parent.isMocked
        self.isLinkHost = false
        self.parentReference = ParentReference(parent)
        self.appContainerOfScope = appContainer
        let own = ContainerLock(self)
        own.prepareLock()
        // Registered and given the parent's tracer in one step under the parent's lock,
        // so that a tracer set meanwhile reaches this child too. Until it is registered,
        // no other thread can reach the new state: it is given the tracer without its lock.
        let entry = ChildList.Entry(self, isScope: appContainer != nil)
        slotInParent = parent.withStateLock { parentState in
            if let tracer = parentState.tracer { own.state.pointee.tracer = tracer }
            return parentState.children.add(entry)
        }
    }

    deinit {
        parentReference.container?.removeChild(inSlot: slotInParent)
        #if !canImport(Darwin) && !canImport(Glibc)
        ContainerLock(self).endLock()
        #endif
    }

    /// Takes a child's slot back, under this container's lock, and releases what it kept
    /// of the child after unlocking.
    ///
    /// Out of line, so that a `deinit` keeps a small frame. A chain of nested containers
    /// ends one `deinit` after another (``ParentReference``), but one that another thread
    /// let go of between the count and the release still ends inside this one.
    @inline(never)
    private func removeChild(inSlot slot: Int) {
        let removed = withStateLock { $0.children.remove(at: slot) }
        withExtendedLifetime(removed) {}
    }
}

/// A container's lock and the state it guards, both in the container's own object, used
/// as a ``_Locked`` value is, for as long as the caller keeps the container alive: only
/// inside the container's own methods (``DependencyContainer/withStateLock(_:)``), where
/// the container is alive for the call. It holds no reference.
///
/// ```swift
/// ContainerLock(self).withLock { $0.handovers += 1 }
/// ```
@usableFromInline
struct ContainerLock: _LockedMemory {
    @usableFromInline typealias State = ContainerState

    /// The container's first stored property.
    @usableFromInline let lockedMemory: UnsafeMutableRawPointer

    @inlinable @inline(__always)
    init(_ container: DependencyContainer) {
        lockedMemory = _getUnsafePointerToStoredProperties(container)
    }
}
