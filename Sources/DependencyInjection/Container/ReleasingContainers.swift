import _DependencyInjectionShims

/// The containers that are releasing what they kept, each in its own `deinit`, on this
/// thread: where a `@Dependency` property that holds its container weakly still finds
/// it.
///
/// A property of an instance that a container keeps (a singleton, a scoped instance)
/// holds that container weakly: the container keeps the instance, so a strong reference
/// would keep both forever. A weak reference reads nil from the moment the container's
/// `deinit` begins. The container used to release what it kept only after its `deinit`,
/// with its state, so an instance whose `deinit` read such a property for the first time,
/// as a request's handler that flushes to the app's pool when the request's scope goes,
/// stopped: its container was gone. Now the container's `deinit` releases what it kept
/// itself, while its state is whole, and names itself here meanwhile; a property whose
/// weak reference reads nil looks for its container's address among them, and resolves
/// from it as from a live container. Only for as long as the release runs, and only on
/// its thread: a property first read later, or elsewhere, still stops.
///
/// Each container is named by a node on its `deinit`'s stack, which also names the
/// container released around it, so that a release inside another's (a scope that a
/// request's handler held) finds both.
///
/// ```swift
/// ReleasingContainers.whileReleasing(self) { kept = _SingletonTable() }   // in a deinit
/// ReleasingContainers.container(at: address)   // inside it, on this thread: the container
/// ```
enum ReleasingContainers {
    /// One releasing container, and the node of the one released around it, if any.
    private struct Node {
        let container: UnsafeRawPointer
        let outer: UnsafeMutableRawPointer?
        /// Whether a property found the container here: only then may what it resolved
        /// have left the container something more to release.
        var wasFound = false
    }

    /// Runs `body`, which releases what `container` kept, with `container` named as
    /// releasing on this thread. Called from the container's `deinit`.
    ///
    /// - Returns: Whether a property found the container meanwhile
    ///   (``container(at:)``), and so may have resolved something it keeps.
    static func whileReleasing(_ container: DependencyContainer, _ body: () -> Void) -> Bool {
        let outer = _di_releasing_containers()
        var node = Node(container: UnsafeRawPointer(Unmanaged.passUnretained(container).toOpaque()), outer: outer)
        withUnsafeMutablePointer(to: &node) { named in
            _di_set_releasing_containers(UnsafeMutableRawPointer(named))
            defer { _di_set_releasing_containers(outer) }
            body()
        }
        return node.wasFound
    }

    /// The container at `address`, if it is releasing what it kept on this thread now.
    ///
    /// The reference is the container's own, in its `deinit`: the caller uses it and lets
    /// go of it before the `deinit` ends, as any resolution does.
    static func container(at address: UnsafeRawPointer) -> DependencyContainer? {
        var current = _di_releasing_containers()
        while let node = current?.assumingMemoryBound(to: Node.self) {
            if node.pointee.container == address {
                node.pointee.wasFound = true
                return Unmanaged<DependencyContainer>.fromOpaque(address).takeUnretainedValue()
            }
            current = node.pointee.outer
        }
        return nil
    }
}
