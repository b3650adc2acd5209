import Dispatch

/// The type-erased face of a ``Box``: what caches, in-flight constructions and
/// `@Dependency` properties store.
@usableFromInline
class AnyBox: @unchecked Sendable {
    @usableFromInline init() {}

    /// The value as a class instance, for the weak reference of a `shared` registration.
    var object: AnyObject { fatalError("overridden by Box") }
}

/// A resolved value in a class box, so that it can be stored as `AnyObject` and read back
/// without a dynamic cast: every cache key includes the value type.
///
/// ```swift
/// let box: AnyBox = Box(URLSessionHTTPClient())
/// ```
@usableFromInline
class Box<Value>: AnyBox, @unchecked Sendable {
    // @unchecked: set once in init (and emptied only by `MainActorBox`'s deinit, when no one
    // else can read it); the registration helpers that cache a value across threads require
    // it to be `Sendable`, or keep it on the main actor (`MainActorBox`). A graph instance's
    // box is read only by the owner of the resolution that built it.
    @exclusivity(unchecked) @usableFromInline final var stored: Value?
    @usableFromInline init(_ value: Value) {
        self.stored = value
        super.init()
    }

    /// The value; present until the box is released.
    @inlinable final var value: Value { stored.unsafelyUnwrapped }

    override final var object: AnyObject { value as AnyObject }
}

/// The box of a value a main-actor registration cached, which may not be `Sendable`: it is
/// released on the main actor, wherever the container drops it (a `reset()` or an
/// `override` on another thread, a test's container at the end of the test).
///
/// ```swift
/// let box: AnyBox = MainActorBox(LiveFeedStore())   // LiveFeedStore's deinit runs on main
/// ```
@usableFromInline
final class MainActorBox<Value>: Box<Value>, @unchecked Sendable {
    @usableFromInline override init(_ value: Value) { super.init(value) }

    deinit {
        guard !MainActorThread.isCurrent else { return }
        // Moves the value out, so that the block holds its only reference: whichever of
        // this thread and the main queue let go last would otherwise run its deinit.
        let last = MainActorRelease(stored.take())
        DispatchQueue.main.async { last.release() }
    }
}

/// Carries the last reference of a main-actor value to the main queue, and drops it there,
/// in the block: the block itself may be freed by the thread that submitted it.
private final class MainActorRelease<Value>: @unchecked Sendable {
    // @unchecked: set before the block is submitted, cleared once inside it.
    private var value: Value?
    init(_ value: Value?) { self.value = value }
    func release() { value = nil }
}

/// A replacement closure installed by
/// ``DependencyContainer/override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``.
@usableFromInline
final class Override<Value>: Sendable {
    @usableFromInline let make: @Sendable () -> Value
    @usableFromInline init(_ make: @escaping @Sendable () -> Value) { self.make = make }
}

/// A replacement closure for an async registration.
@usableFromInline
final class AsyncOverride<Value>: Sendable {
    let make: @Sendable () async throws -> Value
    @usableFromInline init(_ make: @escaping @Sendable () async throws -> Value) { self.make = make }
}
