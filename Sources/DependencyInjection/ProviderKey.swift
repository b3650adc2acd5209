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
    @usableFromInline let argument: AnyHashable?

    @inlinable
    init(file: StaticString, line: UInt, column: UInt, type: Any.Type, argument: AnyHashable?) {
        self.file = file
        self.position = UInt64(truncatingIfNeeded: line) << 32 | UInt64(truncatingIfNeeded: column)
        self.type = ObjectIdentifier(type)
        self.argument = argument
    }

    @usableFromInline
    static func == (lhs: ProviderKey, rhs: ProviderKey) -> Bool {
        lhs.position == rhs.position && lhs.type == rhs.type && lhs.argument == rhs.argument
            && sameFile(lhs.file, rhs.file)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(position)
        hasher.combine(type)
        if let argument { hasher.combine(argument) }
    }

    /// Equal file names, comparing addresses first: a literal is usually emitted once.
    private static func sameFile(_ lhs: StaticString, _ rhs: StaticString) -> Bool {
        guard lhs.hasPointerRepresentation, rhs.hasPointerRepresentation else {
            return lhs.description == rhs.description
        }
        if lhs.utf8Start == rhs.utf8Start { return true }
        return lhs.utf8CodeUnitCount == rhs.utf8CodeUnitCount
            && lhs.description == rhs.description
    }
}
