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
    // @unchecked: all mutable state lives in `state` behind its lock; `isMocked`,
    // `parent` and `appContainerOfScope` are immutable.

    // The lock and the state it guards: the first two stored properties, in this order
    // (``_LockedMemory``). Neither is touched as a property after `init`, only through
    // ``state``. Kept in the container's own object, where a lock object of their own was
    // a second allocation for every test's world and every request's scope.
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
    public let parent: DependencyContainer?

    /// For a scope container, the nearest ancestor that is not a scope: the app container,
    /// where app-wide instances live. `nil` for every other container.
    @usableFromInline let appContainerOfScope: DependencyContainer?

    /// Everything mutable, behind one lock.
    @inlinable
    var state: ContainerLock { ContainerLock(container: self) }

    /// This child's slot among its parent's children (``ContainerState/children``);
    /// unused in a container without a parent. Set once, in `init`, after the container
    /// is whole (the parent's list refers to it); read only in `deinit`.
    @exclusivity(unchecked) private var slotInParent = 0

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
        self.parent = nil
        self.appContainerOfScope = nil
        state.prepareLock()
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
        self.parent = nil
        self.appContainerOfScope = nil
        state.prepareLock()
        state.state.pointee.linkTarget = UnkeptContainer(target)
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
        self.parent = parent
        self.appContainerOfScope = appContainer
        let own = state
        own.prepareLock()
        // Registered and given the parent's tracer in one step under the parent's lock,
        // so that a tracer set meanwhile reaches this child too. Until it is registered,
        // no other thread can reach the new state: it is given the tracer without its lock.
        let entry = ChildList.Entry(self, isScope: appContainer != nil)
        slotInParent = parent.state.withLock { parentState in
            if let tracer = parentState.tracer { own.state.pointee.tracer = tracer }
            return parentState.children.add(entry)
        }
    }

    deinit {
        parent?.removeChild(inSlot: slotInParent)
        #if !canImport(Darwin) && !canImport(Glibc)
        state.endLock()
        #endif
    }

    /// Takes a child's slot back, under this container's lock, and releases what it kept
    /// of the child after unlocking.
    ///
    /// Out of line, so that a `deinit` keeps a small frame: a container releases its parent
    /// after its `deinit`'s body, inside that `deinit`, so releasing the innermost of
    /// thousands of nested scopes runs thousands of `deinit`s one inside the next, and a
    /// larger frame each (this body's, inlined) overflowed the stack of a thread under
    /// ThreadSanitizer at 20,000.
    @inline(never)
    private func removeChild(inSlot slot: Int) {
        let removed = state.withLock { $0.children.remove(at: slot) }
        withExtendedLifetime(removed) {}
    }
}

/// A container's lock and the state it guards, both in the container's own object: what
/// ``DependencyContainer/state`` gives, used as a ``_Locked`` value is.
///
/// It holds the container, so that the object stays while the lock or the state is used.
///
/// ```swift
/// let count = container.state.withLock { $0.children.count }
/// ```
@usableFromInline
struct ContainerLock: _LockedMemory {
    @usableFromInline typealias State = ContainerState

    /// The container whose object holds the lock and the state.
    @usableFromInline let container: DependencyContainer

    @inlinable
    init(container: DependencyContainer) {
        self.container = container
    }

    @inlinable
    var lockedMemory: UnsafeMutableRawPointer {
        _getUnsafePointerToStoredProperties(container)
    }
}
