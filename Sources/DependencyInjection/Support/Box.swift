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
final class Box<Value>: AnyBox, @unchecked Sendable {
    // @unchecked: immutable after init; the registration helpers that cache a value across
    // threads require it to be `Sendable`.
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) {
        self.value = value
        super.init()
    }

    override var object: AnyObject { value as AnyObject }
}

/// A replacement closure installed by
/// ``DependencyContainer/override(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``.
@usableFromInline
final class Override<Value>: Sendable {
    @usableFromInline let make: @Sendable () -> Value
    init(_ make: @escaping @Sendable () -> Value) { self.make = make }
}

/// A replacement closure for an async registration.
final class AsyncOverride<Value>: Sendable {
    let make: @Sendable () async throws -> Value
    init(_ make: @escaping @Sendable () async throws -> Value) { self.make = make }
}
