import _DependencyInjectionShims

/// A reference to a container that does not keep it alive, as a `weak` one does, without
/// the side table a weak reference gives the container.
///
/// The runtime moves the reference counts of a weakly referenced object to a side table,
/// for good, and every later retain and release of it takes a slower path. A container
/// is retained and released on every resolution (its providers hold it), so one weak
/// reference, taken by the `@Dependency` property of a singleton the container built,
/// made each later cached resolution there cost about 130 instructions more: 281 where it
/// was 151. This reference keeps the container's memory (an `unowned` reference, counted
/// in the object itself) but not the container, and asks the runtime for a strong
/// reference only when it is read, which fails once the container's deinitialization has
/// begun, as a weak reference reads nil from then on.
///
/// ```swift
/// let reference = UnkeptContainer(container)
/// if let container = reference.container { ... }   // nil once it is being released
/// ```
///
/// A container no one keeps stays allocated, without its contents, until its last unkept
/// reference goes; a weak reference would keep only the side table.
struct UnkeptContainer: @unchecked Sendable {
    // @unchecked: both fields are immutable, and the address is only compared, or passed to
    // the runtime, which reads the reference counts atomically.

    /// Keeps the container's memory allocated. Never read: reading an `unowned` reference
    /// to an object whose deinitialization has begun stops the process.
    private unowned let memory: DependencyContainer
    /// The container's address, for the runtime's attempt at a strong reference.
    private let address: UnsafeMutableRawPointer

    init(_ container: DependencyContainer) {
        memory = container
        address = Unmanaged.passUnretained(container).toOpaque()
    }

    /// The container, as a strong reference, unless its deinitialization has begun.
    var container: DependencyContainer? {
        guard let retained = _di_try_retain(address) else { return nil }
        return Unmanaged<DependencyContainer>.fromOpaque(retained).takeRetainedValue()
    }

    /// Whether this refers to `container`. The memory stays allocated while this lives,
    /// so no other object can take the address.
    func refers(to container: DependencyContainer) -> Bool {
        address == Unmanaged.passUnretained(container).toOpaque()
    }
}
