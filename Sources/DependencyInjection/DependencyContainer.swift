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
/// per container, and no lock is held while a factory (user code) runs, so a container is
/// safe to share between threads and tasks.
public final class DependencyContainer: @unchecked Sendable {
    // @unchecked Sendable: all mutable state lives in `state` and is only touched while
    // holding `lock`; `isMocked` and `parent` are immutable.

    /// Whether this container serves test doubles.
    ///
    /// Registrations branch on it to pick mocks, as in
    /// `var loginService: any LoginService { isMocked ? MockLoginService() : LoginService() }`.
    /// It is a property of the container, not a stored value: ``removeAll()`` leaves it
    /// as it is. A child container inherits it from its parent.
    public let isMocked: Bool

    /// The container this one falls back to for stored values and overrides, if any.
    ///
    /// Set by ``init(parent:)``; `nil` for a container made with ``init(isMocked:)``.
    /// Lookups of values and overrides walk from a container up through its parents, and
    /// the first one found wins. Cached instances are never taken from a parent.
    public let parent: DependencyContainer?

    @usableFromInline
    let lock = Lock()

    /// Everything mutable, guarded by `lock`. Kept behind a pointer so that reads on the
    /// hot path skip the dynamic exclusivity checks of a class's stored `var`: the lock
    /// already makes every access exclusive.
    @usableFromInline let statePointer: UnsafeMutablePointer<ContainerState>

    /// Everything mutable; only touch it while holding `lock`.
    @inlinable
    var state: ContainerState {
        unsafeAddress { UnsafePointer(statePointer) }
        unsafeMutableAddress { statePointer }
    }

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
        self.isMocked = isMocked
        self.parent = nil
        self.statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: ContainerState())
    }

    /// Creates a child container: an isolated world layered over `parent`.
    ///
    /// The child reads its parent's stored values and overrides (its own first) and
    /// inherits ``isMocked``, but builds and caches its own instances. Nothing it
    /// stores, overrides or caches reaches the parent, which makes a child the natural
    /// scope for one test or one signed-in user:
    ///
    /// ```swift
    /// let testWorld = DependencyContainer(parent: .mocks)
    /// testWorld.override(\.httpClient) { StubHTTPClient() }
    /// ```
    ///
    /// An override or reset in the parent also drops what the child cached from the
    /// overridden dependency, so the child never serves a stale instance.
    ///
    /// - Parameter parent: The container to layer over.
    public init(parent: DependencyContainer) {
        self.isMocked = parent.isMocked
        self.parent = parent
        self.statePointer = .allocate(capacity: 1)
        statePointer.initialize(to: ContainerState())
        parent.adopt(self)
    }

    deinit {
        statePointer.pointee.singletons.deallocate()
        statePointer.deinitialize(count: 1)
        statePointer.deallocate()
    }

    /// Registers `child` and gives it this container's tracer, in one step under this
    /// container's lock, so a tracer set meanwhile reaches the child too. Until it is
    /// registered nobody else can reach the child, so writing its state here is safe.
    private func adopt(_ child: DependencyContainer) {
        lock.withLock {
            child.statePointer.pointee.tracer = state.tracer
            state.children.removeAll { $0.container == nil }
            state.children.append(WeakContainer(child))
        }
    }
}

/// A weak reference to a child container, so that a parent never keeps children alive.
struct WeakContainer {
    weak var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
}
