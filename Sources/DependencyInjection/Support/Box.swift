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
    // @unchecked: immutable; the registration helpers that cache a value across threads
    // require it to be `Sendable`, or keep it on the main actor (`MainActorBox`). A graph
    // instance's box is read only by the owner of the resolution that built it.

    /// The value. Not optional: destroying a `Value?` of a generic type looks up the
    /// optional's metadata, which cost every dropped box some 500 instructions.
    @usableFromInline final let value: Value

    @usableFromInline init(_ value: Value) {
        self.value = value
        super.init()
    }

    override final var object: AnyObject { value as AnyObject }
}

/// The box of a value a main-actor registration cached, which may not be `Sendable`: it is
/// released on the main actor, wherever the container drops it (a `reset()` or an
/// `override` on another thread, a test's container at the end of the test).
///
/// ```swift
/// let box: AnyBox = MainActorBox(LiveFeedStore(), keptBy: container)   // its deinit runs on main
/// ```
///
/// Off the main thread, its `deinit` gives a copy of the value to a ``MainActorHandOff``
/// kept in ``handOff``. A class's stored properties are destroyed after its superclass's
/// (`ObjectLayoutTests` holds the compiler to that), so the box lets go of its own copy
/// first, and the hand-off, released last, sends the only copy left to the main queue.
///
/// The hand-off also takes the container that kept the value, while it lives (the box
/// holds it as an ``UnkeptContainer``, without keeping it), and lets go
/// of it on the main queue only after the value: the value's `deinit` may read a
/// `@Dependency` for the first time, which resolves from that container and holds it
/// weakly. So a container that drops the value off the main actor (an override, a reset,
/// a shutdown, its parent's reset) and is released right after stays until the value is
/// gone, as it does for a value released on the spot. One that is itself being released
/// when it drops the value is not kept: that first read stops, as it does off the main
/// actor (the `@Dependency` documentation). In a process whose main queue never runs (a
/// command-line tool that never starts it), the value is never released, and neither is
/// the living container that dropped it.
///
/// The container kept is the one that cached the value. A value that another container
/// built (an override that hands out another container's instance) has properties that
/// read that other one, which the hand-off does not keep: ended off the main actor and
/// released before the main queue runs, it is gone at that first read
/// (`MainActorKeeperTests` pins this as a known issue).
@usableFromInline
final class MainActorBox<Value>: Box<Value>, @unchecked Sendable {
    /// The container that keeps the value, held without keeping it: it keeps the box.
    private let keeper: UnkeptContainer
    /// Set only by `deinit`, off the main thread; destroyed after `value`.
    private var handOff: MainActorHandOff<Value>?

    @usableFromInline init(_ value: Value, keptBy keeper: DependencyContainer) {
        self.keeper = UnkeptContainer(keeper)
        super.init(value)
    }

    deinit {
        guard !MainActorThread.isCurrent else { return }
        handOff = MainActorHandOff(value, keeping: keeper.container)
    }
}

/// A main-actor value's last copy, on its way to the main queue with the container that
/// kept it: when it goes, it sends them to the main queue, where they are let go of.
private final class MainActorHandOff<Value> {
    private let release: MainActorRelease<Value>

    init(_ value: Value, keeping keeper: DependencyContainer?) {
        release = MainActorRelease(value, keeping: keeper)
    }

    deinit {
        let release = release
        DispatchQueue.main.async { release.run() }
    }
}

/// Carries the last reference of a main-actor value to the main queue, and drops it there,
/// in the block, before the container that kept it. Whichever thread lets go of this object
/// last, the value is gone by then, on the main queue.
private final class MainActorRelease<Value>: @unchecked Sendable {
    // @unchecked: set before the block is submitted, cleared once inside it.
    private var value: Value?
    private var keeper: DependencyContainer?

    init(_ value: Value, keeping keeper: DependencyContainer?) {
        (self.value, self.keeper) = (value, keeper)
    }

    func run() {
        value = nil
        keeper = nil
    }
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
