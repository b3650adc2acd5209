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
    @usableFromInline var cached: Value?
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
    }

    @inlinable
    var value: Value {
        lock.lock()
        if let cached {
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
