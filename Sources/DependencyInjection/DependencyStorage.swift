import Dispatch

/// The state behind one `@Dependency` property.
///
/// Reading a resolved property is the hot path of the whole package, so it takes no lock:
/// the resolved value sits in an immutable box whose address is published with an
/// atomic store and read with an acquiring load. Everything else (resolving, switching
/// the container, resetting, setting) is serialised by `lock`. A replaced box is kept
/// until the storage is released, because a reader may still be copying its value; this
/// is why a class box is used rather than a `mutating get` on the wrapper, which would
/// race when two threads read the property for the first time.
///
/// The storage is not generic: it holds type-erased boxes, and the wrapper, inlined and
/// specialized where it is used, creates and opens them. Generic class code compiled
/// once in this module would ask the runtime for `Box<Value>`'s metadata on every
/// resolution and release.
@usableFromInline
final class DependencyStorage: @unchecked Sendable {
    // @unchecked: `published` is only written under `lock` with an atomic exchange and
    // read with an atomic load; every other mutable property is only touched under `lock`.
    // A first resolution is claimed through `resolvingThread`, so the dependency resolves
    // once; other readers wait on a semaphore of their own.

    /// The published box, or nil when the property must resolve on next access. The
    /// word after it holds an unretained reference back to this storage, so that the
    /// wrapper's getter can reach the slow path from the slot alone, without loading (and
    /// so retaining) the storage on the fast path.
    @usableFromInline let published: UnsafeMutablePointer<AnyBox?>
    private let lock = Lock()
    private var currentContainer: DependencyContainer
    private var generation: UInt64 = 0
    private var resolvingThread: ResolutionStack?
    /// How many constructions were running on `resolvingThread` when it began resolving.
    private var resolvingDepth = 0
    private var retired: [AnyBox] = []
    /// Threads waiting for another thread's first resolution.
    private var waiters: [DispatchSemaphore] = []
    /// The resolution in progress as a node of the wait graph, created by the first thread
    /// that waits for it, so that a cycle across threads through this property stops with
    /// a message instead of deadlocking.
    private var claim: Construction?
    private let resolve: (DependencyContainer) -> AnyBox
    /// For messages only: describing a key path is expensive, so it waits until needed.
    private let keyPath: AnyKeyPath

    @usableFromInline
    init(
        container: DependencyContainer,
        keyPath: AnyKeyPath,
        resolve: @escaping (DependencyContainer) -> AnyBox
    ) {
        self.currentContainer = container
        self.keyPath = keyPath
        self.resolve = resolve
        let slot = UnsafeMutableRawPointer.allocate(
            byteCount: 2 * MemoryLayout<UnsafeRawPointer>.stride,
            alignment: MemoryLayout<UnsafeRawPointer>.alignment)
        self.published = slot.bindMemory(to: AnyBox?.self, capacity: 1)
        published.initialize(to: nil)
        slot.storeBytes(
            of: Unmanaged<AnyObject>.passUnretained(self as AnyObject).toOpaque(),
            toByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
    }

    deinit {
        published.deinitialize(count: 1)
        UnsafeMutableRawPointer(published).deallocate()
    }

    /// Stands for "this property's first resolution" in the wait graph.
    private static let claimKey = ProviderKey(
        file: #fileID, line: 0, column: 0, type: AnyBox.self, argument: nil)

    /// The slow path of a wrapper read: resolves through the storage that owns `slot`.
    @usableFromInline @inline(never)
    static func resolveOnce(from slot: UnsafeMutablePointer<AnyBox?>) -> AnyBox {
        let owner = UnsafeMutableRawPointer(slot).load(
            fromByteOffset: MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
        return Unmanaged<DependencyStorage>.fromOpaque(owner)
            ._withUnsafeGuaranteedRef { $0.resolveOnce() }
    }

    func resolveOnce() -> AnyBox {
        let stack = ResolutionStack.current
        lock.lock()
        while true {
            if let existing = published.pointee {
                lock.unlock()
                return existing
            }
            guard let resolver = resolvingThread else { break }
            if resolver === stack {
                let (container, depth) = (currentContainer, resolvingDepth)
                lock.unlock()
                // Evaluating the registration runs user code: never under the lock.
                let property = registrationName(in: container)
                let chain = [property] + stack.frames.dropFirst(depth).map(\.name.description)
                fatalError("Circular dependency: " + (chain + [property]).joined(separator: " -> "))
            }
            // Another thread is resolving: wait for it, then look again.
            let signal = DispatchSemaphore(value: 0)
            waiters.append(signal)
            let node = claim ?? Construction(
                owner: resolver, container: ObjectIdentifier(self), key: Self.claimKey,
                property: ("@Dependency", resolvingDepth))
            claim = node
            lock.unlock()
            node.wait(on: signal, as: stack, name: "@Dependency")
            lock.lock()
        }
        resolvingThread = stack
        resolvingDepth = stack.frames.count
        let container = currentContainer
        let started = generation
        lock.unlock()

        let resolved = resolve(container)

        let (waiting, node): ([DispatchSemaphore], Construction?) = lock.withLock {
            resolvingThread = nil
            if generation == started { publish(resolved) }
            defer {
                waiters = []
                claim = nil
            }
            return (waiters, claim)
        }
        if let node { WaitGraph.shared.finish(node) }
        for waiter in waiting { waiter.signal() }
        return resolved
    }

    var container: DependencyContainer {
        lock.withLock { currentContainer }
    }

    /// The registration's name for messages: a provider's own name, else the key path.
    private func registrationName(in container: DependencyContainer) -> String {
        if let named = container[keyPath: keyPath] as? any NamedRegistration {
            return named.registrationName
        }
        return "\(keyPath)"
    }

    @usableFromInline
    func replace(with box: AnyBox) {
        lock.withLock { publish(box) }
    }

    func switchContainer(to container: DependencyContainer) {
        let replaced = lock.withLock {
            defer {
                currentContainer = container
                publish(nil)
            }
            return currentContainer
        }
        withExtendedLifetime(replaced) {}  // released after unlocking: a `deinit` may run
    }

    func reset() {
        lock.withLock { publish(nil) }
    }

    /// Swaps the published box; call with `lock` held. The old box is retired, not
    /// released: a reader that loaded it before the swap may still be reading it.
    private func publish(_ box: AnyBox?) {
        generation &+= 1
        let slot = UnsafeMutableRawPointer(published).assumingMemoryBound(to: UnsafeRawPointer?.self)
        var expected = slot.pointee
        let desired = box.map { UnsafeRawPointer(Unmanaged.passRetained($0).toOpaque()) }
        let swapped = _stdlib_atomicCompareExchangeStrongPtr(
            object: slot, expected: &expected, desired: desired)
        precondition(swapped, "the published value changed outside the lock")
        if let expected {
            retired.append(Unmanaged<AnyBox>.fromOpaque(expected).takeRetainedValue())
        }
    }
}
