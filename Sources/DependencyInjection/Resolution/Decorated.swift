/// A wrapper installed by
/// ``DependencyContainer/decorate(_:_:)-(KeyPath<DependencyContainer,Provider<Value>>,_)``.
final class Decoration<Value>: Sendable {
    let wrap: @Sendable (Value) -> Value
    init(_ wrap: @escaping @Sendable (Value) -> Value) { self.wrap = wrap }
}

/// A wrapper of an async registration.
final class AsyncDecoration<Value>: Sendable {
    let wrap: @Sendable (Value) async throws -> Value
    init(_ wrap: @escaping @Sendable (Value) async throws -> Value) { self.wrap = wrap }
}

/// What a resolution builds when decorations apply: the instance of an override, or of the
/// registration, passed through each decoration in turn.
///
/// A resolution looks for what replaces a registration from its container up through the
/// parents. The nearest override wins, as without decorations; the decorations of every
/// container on the way, up to and including the one that overrides, wrap what it builds,
/// the outermost container's first and each container's in the order they were installed.
/// A container whose override is found stops the walk, so a child's own override replaces
/// its parents' decorations along with their overrides, and a parent's change never reaches
/// what a child builds from its own override. Without any decoration the walk finds a plain
/// override box (or nothing), exactly as before, and this type is never made.
///
/// ```swift
/// let value = Decorated.value(from: provider.make, replacedBy: resolution.override)
/// ```
@usableFromInline
final class Decorated: @unchecked Sendable {
    // @unchecked: immutable; holds `Override`/`AsyncOverride` and `Decoration`/
    // `AsyncDecoration` boxes, which are `Sendable`, as `AnyObject`.

    /// The override that builds the instance; nil for the registration's own closure.
    let base: AnyObject?
    /// `Decoration<Value>` or `AsyncDecoration<Value>` boxes, innermost first.
    let decorations: [AnyObject]

    init(base: AnyObject?, decorations: [AnyObject]) {
        (self.base, self.decorations) = (base, decorations)
    }

    /// Whether `entry` still lacks what builds the instance: nothing was found, or only
    /// decorations, so the walk goes on to the parent.
    @inline(__always)
    static func isOpen(_ entry: AnyObject?) -> Bool {
        guard let entry else { return true }
        // The class is final: comparing the entry's class costs a first build from an
        // override less than a dynamic cast, twice.
        guard ObjectIdentifier(type(of: entry)) == ObjectIdentifier(Decorated.self) else { return false }
        return unsafeDowncast(entry, to: Decorated.self).base == nil
    }

    /// `entry`, an open entry of a container, completed with `next`, its parent's entry.
    static func stack(_ entry: AnyObject?, over next: AnyObject?) -> AnyObject? {
        guard let open = entry as? Decorated, let next else { return entry ?? next }
        guard let below = next as? Decorated else { return Decorated(base: next, decorations: open.decorations) }
        return Decorated(base: below.base, decorations: below.decorations + open.decorations)
    }

    /// Builds with `registration`, or with what replaces it: an `Override<Value>` or a
    /// `Decorated` entry.
    @inlinable
    static func value<Value>(from registration: () -> Value, replacedBy entry: AnyObject?) -> Value {
        guard let entry else { return registration() }
        if let override = entry as? Override<Value> { return override.make() }
        return unsafeDowncast(entry, to: Decorated.self).value(from: registration)
    }

    @usableFromInline
    func value<Value>(from registration: () -> Value) -> Value {
        var value = base.map { ($0 as! Override<Value>).make() } ?? registration()
        for decoration in decorations { value = (decoration as! Decoration<Value>).wrap(value) }
        return value
    }

    /// What builds an async registration's instance: `registration`, or what replaces it, an
    /// `AsyncOverride<Value>` or a `Decorated` entry.
    static func make<Value>(
        from registration: @escaping @Sendable () async throws -> Value, replacedBy entry: AnyObject?
    ) -> @Sendable () async throws -> Value {
        guard let entry else { return registration }
        if let override = entry as? AsyncOverride<Value> { return override.make }
        let decorated = unsafeDowncast(entry, to: Decorated.self)
        return {
            var value = try await (decorated.base.map { ($0 as! AsyncOverride<Value>).make } ?? registration)()
            for decoration in decorated.decorations {
                value = try await (decoration as! AsyncDecoration<Value>).wrap(value)
            }
            return value
        }
    }
}

extension ContainerState {
    /// What this container installs for `key`: its override, or, when it decorates the
    /// registration, a ``Decorated`` entry with the override (if any) and the decorations.
    @inline(__always)
    func replacement(for key: RegistrationKey) -> AnyObject? {
        guard hasDecorations, let own = decorations[key] else { return override(for: key) }
        return Decorated(base: override(for: key), decorations: own)
    }
}
