/// The identity of one registration: the place in source where its provider is declared,
/// the type it provides and, for parameterized providers, the argument.
///
/// Registrations are computed properties, so there is no registry to look names up in.
/// The call site of `factory`/`singleton`/`shared` is what stays the same each time the
/// property is evaluated, and it is cheap to compare: the file's static string, the line
/// and the column. The provided type is part of the key so that a generic registration
/// evaluated for two types yields two keys, which is what makes the unchecked downcast of
/// cached boxes safe.
@usableFromInline
struct ProviderKey: Hashable, @unchecked Sendable {
    // @unchecked: `file` is an immutable static string, `argument` holds only `Sendable`
    // values (enforced by the registration helpers).
    @usableFromInline let file: StaticString
    @usableFromInline let position: UInt64
    @usableFromInline let type: ObjectIdentifier
    @usableFromInline let argument: Argument?

    @inlinable
    init(file: StaticString, line: UInt, column: UInt, type: Any.Type, argument: Argument?) {
        self.file = file
        self.position = UInt64(truncatingIfNeeded: line) << 32 | UInt64(truncatingIfNeeded: column)
        self.type = ObjectIdentifier(type)
        self.argument = argument
    }

    /// The argument of a parameterized registration, boxed in a class so that copying a
    /// key is a single retain instead of an existential copy.
    @usableFromInline
    final class Argument: Hashable, @unchecked Sendable {
        // @unchecked: immutable; built only from `Sendable` arguments.
        @usableFromInline let value: AnyHashable

        @inlinable
        init<Value: Hashable & Sendable>(_ value: Value) { self.value = AnyHashable(value) }

        @usableFromInline
        static func == (lhs: Argument, rhs: Argument) -> Bool { lhs.value == rhs.value }

        @usableFromInline
        func hash(into hasher: inout Hasher) { hasher.combine(value) }
    }

    @inlinable
    static func == (lhs: ProviderKey, rhs: ProviderKey) -> Bool {
        guard lhs.position == rhs.position, lhs.type == rhs.type else { return false }
        if lhs.argument !== rhs.argument {
            guard let left = lhs.argument, let right = rhs.argument, left == right else { return false }
        }
        if lhs.file.utf8Start == rhs.file.utf8Start { return true }
        return sameFile(lhs.file, rhs.file)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(position)
        hasher.combine(type)
        if let argument { hasher.combine(argument) }
    }

    /// The hash that `Dictionary`, `Set` and ``SingletonTable`` use, computed without
    /// `Hasher`.
    ///
    /// Every resolution hashes a key, and SipHash would be most of a cached singleton's
    /// cost. A key is a handful of machine words that are unique per registration,
    /// so a multiply-xorshift mix of them (seeded like `Hasher`) spreads them well enough.
    /// Parameterized keys still hash their argument with `Hasher`.
    @inlinable
    func _rawHashValue(seed: Int) -> Int {
        var bits = position ^ UInt64(UInt(bitPattern: type)) &* 0x9E37_79B9_7F4A_7C15
        bits ^= UInt64(UInt(bitPattern: seed))
        if let argument { bits ^= UInt64(UInt(bitPattern: argument.hashValue)) }
        bits = (bits ^ (bits &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        bits = (bits ^ (bits &>> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: bits ^ (bits &>> 31))
    }

    /// Equal file names when the literals sit at different addresses (a literal is
    /// usually emitted once, but inlined code may carry a copy).
    @usableFromInline
    static func sameFile(_ lhs: StaticString, _ rhs: StaticString) -> Bool {
        lhs.description == rhs.description
    }
}
