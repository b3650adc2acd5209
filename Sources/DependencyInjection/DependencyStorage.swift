/// The state behind one `@Dependency` property.
///
/// A class with its own lock rather than a `mutating get` on the wrapper: two threads
/// reading a lazy property for the first time must not race on its storage.
@usableFromInline
final class DependencyStorage<Value>: @unchecked Sendable {
    // @unchecked: `cached`, `currentContainer`, `generation` and `resolver` are only
    // accessed while holding `lock`. `resolution` serialises first resolutions so the
    // dependency resolves once; it is never held while `lock` is wanted by its owner.
    @usableFromInline let lock = Lock()
    /// The resolved value. Behind a pointer so reads skip the exclusivity checks of a
    /// class's stored `var`; `lock` already makes every access exclusive.
    @usableFromInline let cachedValue: UnsafeMutablePointer<Value?>
    private var currentContainer: DependencyContainer
    private var generation: UInt64 = 0
    private var resolvingThread: ResolutionStack?
    private let resolution = Lock()
    private let resolve: (DependencyContainer) -> Value
    private let label: String

    init(
        container: DependencyContainer,
        label: String,
        resolve: @escaping (DependencyContainer) -> Value
    ) {
        self.currentContainer = container
        self.label = label
        self.resolve = resolve
        self.cachedValue = .allocate(capacity: 1)
        cachedValue.initialize(to: nil)
    }

    deinit {
        cachedValue.deinitialize(count: 1)
        cachedValue.deallocate()
    }

    private var cached: Value? {
        get { cachedValue.pointee }
        set { cachedValue.pointee = newValue }
    }

    @inlinable
    var value: Value {
        lock.lock()
        if let cached = cachedValue.pointee {
            lock.unlock()
            return cached
        }
        lock.unlock()
        return resolveOnce()
    }

    @usableFromInline
    func resolveOnce() -> Value {
        let stack = ResolutionStack.current
        if lock.withLock({ resolvingThread === stack }) {
            fatalError("Circular dependency: \(label) is read while it is being resolved")
        }
        resolution.lock()
        defer { resolution.unlock() }
        let (existing, container, started) = lock.withLock {
            if cached == nil { resolvingThread = stack }
            return (cached, currentContainer, generation)
        }
        if let existing { return existing }
        let resolved = resolve(container)
        return lock.withLock {
            resolvingThread = nil
            if generation == started { cached = resolved }
            return resolved
        }
    }

    var container: DependencyContainer {
        lock.withLock { currentContainer }
    }

    @usableFromInline
    func replace(with value: Value) {
        lock.withLock {
            cached = value
            generation &+= 1
        }
    }

    func switchContainer(to container: DependencyContainer) {
        lock.withLock {
            currentContainer = container
            cached = nil
            generation &+= 1
        }
    }

    func reset() {
        lock.withLock {
            cached = nil
            generation &+= 1
        }
    }
}
