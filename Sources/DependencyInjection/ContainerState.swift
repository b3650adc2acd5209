/// The mutable state of one ``DependencyContainer``, always accessed under its lock.
@usableFromInline
struct ContainerState {
    /// The key-value storage of the original API.
    var values: [String: any Sendable] = [:]
    /// Replacement factories, each an `Override<Value>` for its key's value type.
    var overrides: [ProviderKey: AnyObject] = [:]
    /// Built singletons, looked up on every cached resolution.
    @usableFromInline var singletons = SingletonTable()
    /// In-flight constructions and shared instances.
    var instances: [ProviderKey: CachedInstance] = [:]
    /// For each key, the keys whose construction resolved it in this container.
    var dependents: [ProviderKey: Set<ProviderKey>] = [:]
    /// Singleton and shared constructions running in this container, on any thread. While
    /// it is zero, no resolution here can be part of a construction whose result is
    /// cached, so none needs to record what it used and the thread-local lookup is skipped.
    @usableFromInline var activeBuilds = 0
    /// Receives resolutions while tracing; checked on every cached resolution.
    @usableFromInline var tracer: ResolutionTracer?
    /// Children, to drop what they cached when an override of this container changes.
    var children: [WeakContainer] = []

    /// Notes that the construction of `dependent` used `dependency`.
    mutating func record(_ dependency: ProviderKey, usedBy dependent: ProviderKey) {
        if dependency == dependent { return }
        // Most resolutions repeat an edge already known: look before inserting, which
        // avoids copying the set out of the dictionary and back.
        if dependents[dependency]?.contains(dependent) == true { return }
        dependents[dependency, default: []].insert(dependent)
    }

    /// Drops `keys` and, transitively, every cached instance built from them.
    ///
    /// - Returns: What was dropped, for the caller to release after unlocking: releasing
    ///   an instance may run its `deinit`, which may use this container.
    mutating func invalidate(_ keys: [ProviderKey]) -> [Any] {
        var dropped: [Any] = []
        func drop(_ key: ProviderKey) {
            if let entry = instances.removeValue(forKey: key) { dropped.append(entry) }
            if let box = singletons.remove(key) { dropped.append(box) }
        }
        if keys.count == 1, dependents[keys[0]] == nil {
            drop(keys[0])  // the common case: nothing was built from it
            return dropped
        }
        var pending = keys
        var visited = Set<ProviderKey>()
        while let key = pending.popLast() {
            guard visited.insert(key).inserted else { continue }
            drop(key)
            if let users = dependents.removeValue(forKey: key) {
                pending.append(contentsOf: users)
            }
        }
        return dropped
    }

    var liveChildren: [DependencyContainer] {
        children.isEmpty ? [] : children.compactMap(\.container)
    }
}

/// What a container remembers for a key besides its built singletons.
enum CachedInstance {
    /// A shared instance, held weakly: the instance itself.
    case weak(WeakObject)
    /// A construction in flight on some thread; others wait for it.
    case building(Construction)
    /// An async construction in flight; other tasks await it.
    case buildingAsync(AsyncConstruction)
}

/// A weak reference to a shared instance.
final class WeakObject {
    weak var object: AnyObject?
    init(_ object: AnyObject) { self.object = object }
}

/// The type-erased face of a ``Box``.
@usableFromInline
class AnyBox: @unchecked Sendable {
    @usableFromInline init() {}

    /// The value as a class instance, for weak references.
    var object: AnyObject { fatalError("overridden by Box") }
}

/// A value boxed so that it can be stored as `AnyObject` and read back without a
/// dynamic cast: the key of every cache entry includes the value type.
@usableFromInline
final class Box<Value>: AnyBox, @unchecked Sendable {
    // @unchecked: immutable after init; singletons and shared values are `Sendable`.
    @usableFromInline let value: Value
    @usableFromInline init(_ value: Value) {
        self.value = value
        super.init()
    }

    override var object: AnyObject { value as AnyObject }
}

/// A replacement for an async registration.
final class AsyncOverride<Value>: Sendable {
    let make: @Sendable () async throws -> Value
    init(_ make: @escaping @Sendable () async throws -> Value) { self.make = make }
}

/// A replacement factory installed by ``DependencyContainer/override(_:_:)``.
@usableFromInline
final class Override<Value>: Sendable {
    @usableFromInline let make: @Sendable () -> Value
    init(_ make: @escaping @Sendable () -> Value) { self.make = make }
}
