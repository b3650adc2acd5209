/// The identity of one registration: the place in source where its provider is declared,
/// the type it provides and, for parameterized providers, the argument.
///
/// Registrations are computed properties, so there is no registry to look names up in.
/// The call site of `factory`/`singleton`/`shared` is what stays the same each time the
/// property is evaluated, and it is cheap to compare: the address of the file's name, the line
/// and the column. The provided type is part of the key so that a generic registration
/// evaluated for two types yields two keys, which is what makes the unchecked downcast of
/// cached boxes safe. A helper that creates providers for several properties forwards its
/// caller's `fileID`, `line` and `column`, or all of them would share one key.
@usableFromInline
struct RegistrationKey: Hashable, @unchecked Sendable {
    // @unchecked: `fileName` is an immutable static string's, `argument` holds only
    // `Sendable` values (enforced by the registration helpers).

    /// The file, in one word (see ``FileName`` for why): a key is four scalars, and
    /// copying one is a retain of its argument, inline. With the file's static string in
    /// it, a key was six, and the compiler copied and destroyed it out of line.
    @usableFromInline let fileName: FileName
    @usableFromInline let position: UInt64
    @usableFromInline let type: ObjectIdentifier
    @usableFromInline let argument: Argument?

    @inlinable
    init(file: StaticString, line: UInt, column: UInt, type: Any.Type, argument: Argument?) {
        self.init(
            fileName: FileName(file), position: Self.position(line: line, column: column), type: ObjectIdentifier(type),
            argument: argument)
    }

    @usableFromInline
    init(file: StaticString, position: UInt64, type: ObjectIdentifier, argument: Argument? = nil) {
        self.init(fileName: FileName(file), position: position, type: type, argument: argument)
    }

    @inlinable
    init(fileName: FileName, position: UInt64, type: ObjectIdentifier, argument: Argument?) {
        (self.fileName, self.position, self.type, self.argument) = (fileName, position, type, argument)
    }

    /// The `#fileID` of the registration's call site, for messages: its length is counted
    /// anew each time.
    var file: StaticString { fileName.string }

    var line: UInt { UInt(truncatingIfNeeded: position >> 32) }

    /// The column of the registration's call site.
    var column: UInt { UInt(truncatingIfNeeded: position & 0xFFFF_FFFF) }

    /// The line in the high 32 bits and the column in the low 32 bits, each truncated.
    @inlinable
    static func position(line: UInt, column: UInt) -> UInt64 {
        UInt64(truncatingIfNeeded: line) << 32 | UInt64(truncatingIfNeeded: column)
    }

    /// The registration this key belongs to, whatever its argument.
    var registration: RegistrationKey {
        argument == nil ? self : RegistrationKey(fileName: fileName, position: position, type: type, argument: nil)
    }

    /// The key that stands, in a record of uses, for the instances of this key's
    /// registration that are gone (shared instances that died and were swept, what a
    /// shutdown emptied): what they were built from still reaches what was built from them
    /// through it, and a family's thousands of arguments that come and go leave this one
    /// key behind, not one each.
    ///
    /// ```swift
    /// handlerKey.goneInstances == otherHandlerKey.goneInstances   // same family: true
    /// ```
    var goneInstances: RegistrationKey { registration.with(.gone) }

    /// This registration with `argument`: the key of one argument of a provider family.
    @inlinable
    func with(_ argument: Argument) -> RegistrationKey {
        RegistrationKey(fileName: fileName, position: position, type: type, argument: argument)
    }

    /// The argument of a parameterized registration, boxed in a class so that copying a
    /// key is a single retain instead of an existential copy. Its hash is computed once,
    /// so every table probes with the same one.
    ///
    /// Two arguments are one when they have the same type and are equal by that type's
    /// `==`. `AnyHashable` alone is not enough: it takes numbers of different types with
    /// equal values for one value, so a generic registration
    /// (`subscript<ID: Hashable & Sendable>(cache id: ID)`) would serve `1 as UInt8` the
    /// instance built for `1 as Int`, and an override of one would replace the other:
    ///
    /// ```swift
    /// TypedArgument(1 as Int) == TypedArgument(1 as UInt8)   // false
    /// TypedArgument(1 as Int) == TypedArgument(1 as Int)     // true
    /// ```
    ///
    /// The value is kept by ``TypedArgument``, with its type: a family's member is resolved
    /// with a new argument each time, and the tables it probes compare that argument with
    /// the one they keep. Compared as `AnyHashable`, each comparison cast both values
    /// through the runtime, some 1,000 instructions for an `Int`.
    @usableFromInline
    class Argument: Hashable, @unchecked Sendable {
        // @unchecked: immutable; built only from `Sendable` arguments.
        @usableFromInline let hash: Int
        /// The argument's type, as the registration declares it.
        @usableFromInline let valueType: ObjectIdentifier

        @usableFromInline
        init(hash: Int, valueType: ObjectIdentifier) {
            (self.hash, self.valueType) = (hash, valueType)
        }

        /// The value, for messages and for a family's override, which takes it back as
        /// its argument's type.
        var value: AnyHashable { preconditionFailure("an argument is a TypedArgument") }

        /// Whether `other`, an argument of the same type, has an equal value.
        @usableFromInline
        func hasValue(equalTo other: Argument) -> Bool { preconditionFailure("an argument is a TypedArgument") }

        /// Whether the value is equal to itself, and hashes as it did when the argument
        /// was made: what a key needs of its argument to find its instance again.
        var checkedAgain: (equalToItself: Bool, sameHash: Bool) { preconditionFailure("an argument is a TypedArgument") }

        /// The argument of ``RegistrationKey/goneInstances``, equal to no value a caller
        /// passes: its type is private.
        static let gone: Argument = TypedArgument(GoneInstances())

        private struct GoneInstances: Hashable, Sendable {}

        /// Compares the types and kept hashes before the values: equal values have equal
        /// hashes, and the value's `==` is the caller's code, run under a container's lock.
        /// A container compares an argument with each construction in flight and each frame
        /// of a chain that shares its bucket, so a recursive family of 300 levels called it
        /// about 117,000 times; arguments with different hashes now never reach it.
        @usableFromInline
        static func == (lhs: Argument, rhs: Argument) -> Bool {
            lhs.valueType == rhs.valueType && lhs.hash == rhs.hash && lhs.hasValue(equalTo: rhs)
        }

        @usableFromInline
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    }

    /// An argument of type `Value`.
    @usableFromInline
    final class TypedArgument<Value: Hashable & Sendable>: Argument, @unchecked Sendable {
        // @unchecked: immutable, and `Value` is `Sendable`.
        @usableFromInline let typedValue: Value

        @inlinable
        init(_ value: Value) {
            typedValue = value
            super.init(hash: value.hashValue, valueType: ObjectIdentifier(Value.self))
        }

        override var value: AnyHashable { AnyHashable(typedValue) }

        override var checkedAgain: (equalToItself: Bool, sameHash: Bool) {
            (typedValue == typedValue, typedValue.hashValue == hash)
        }

        /// `other` has this argument's type (``Argument/==(_:_:)`` compares the types
        /// first), so it is a `TypedArgument<Value>`.
        @usableFromInline
        override func hasValue(equalTo other: Argument) -> Bool {
            typedValue == unsafeDowncast(other, to: TypedArgument<Value>.self).typedValue
        }
    }

    /// Compares the words of two keys, and their arguments and file names, out of line,
    /// only when those are not the same objects: every probe of a table of instances
    /// compares a key, and a comparison that carried the rare paths with it cost an
    /// override or a first build about 40 instructions per key compared.
    @inlinable
    static func == (lhs: RegistrationKey, rhs: RegistrationKey) -> Bool {
        guard lhs.position == rhs.position, lhs.type == rhs.type else { return false }
        if lhs.argument === rhs.argument && lhs.fileName.word == rhs.fileName.word { return true }
        return sameRegistration(lhs.argument, lhs.fileName, rhs.argument, rhs.fileName)
    }

    /// Whether this key is a copy of `other`: the same words, the same file name's word and
    /// the very same argument object. Unlike ``==(_:_:)``, it never compares arguments by
    /// value, which runs their `==`, user code.
    ///
    /// ```swift
    /// let copy = key
    /// copy.isCopy(of: key)                                   // true
    /// key.with(TypedArgument(7)).isCopy(of: key.with(TypedArgument(7)))   // false: two arguments
    /// ```
    func isCopy(of other: RegistrationKey) -> Bool {
        position == other.position && type == other.type && argument === other.argument
            && fileName.word == other.fileName.word
    }

    /// The rest of ``==(_:_:)``, for keys whose positions and types match: equal arguments,
    /// and the same file name (a literal is usually emitted once, but inlined code may
    /// carry a copy). It takes the two parts it compares, not the keys: a key is too large
    /// for registers, and passing two made every probe copy both to memory first, even
    /// when this rare path did not run.
    @usableFromInline @inline(never)
    static func sameRegistration(
        _ argument: Argument?, _ file: FileName, _ otherArgument: Argument?, _ otherFile: FileName
    ) -> Bool {
        if argument !== otherArgument {
            guard let argument, let otherArgument, argument == otherArgument else { return false }
        }
        return file.isSameFile(as: otherFile)
    }

    @usableFromInline
    func hash(into hasher: inout Hasher) {
        hasher.combine(position)
        hasher.combine(type)
        if let argument { hasher.combine(argument.hash) }
    }

    /// The hash that `Dictionary`, `Set` and ``_SingletonTable`` use, computed without
    /// `Hasher`.
    ///
    /// Every resolution hashes a key, and SipHash would be most of a cached singleton's
    /// cost. A key is a handful of machine words that are unique per registration,
    /// so a multiply-xorshift mix of them (seeded like `Hasher`) spreads them well enough.
    @inlinable
    func _rawHashValue(seed: Int) -> Int {
        var bits = position ^ UInt64(UInt(bitPattern: type)) &* 0x9E37_79B9_7F4A_7C15
        if let argument { bits ^= UInt64(UInt(bitPattern: argument.hash)) }
        return _mixHash(bits, seed: seed)
    }

    /// The key's home slot in a table of `mask + 1` slots (a power of two) that no
    /// outside input fills: one multiply, whose middle bits depend on every bit of the
    /// position and of the type's address below them.
    ///
    /// ``_SingletonTable`` probes with it on every cached resolution, where the two mixing
    /// rounds of ``_rawHashValue(seed:)`` cost a tenth of the whole resolution. Its keys
    /// come from source positions and type addresses, not from input an attacker
    /// chooses, so a seed buys nothing there.
    ///
    /// ```swift
    /// var slot = key.slot(mask: 7)   // 0...7
    /// ```
    @inlinable
    func slot(mask: Int) -> Int {
        var bits = position ^ UInt64(UInt(bitPattern: type))
        if let argument { bits ^= UInt64(UInt(bitPattern: argument.hash)) }
        return Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) &>> 32) & mask
    }

    /// Stops with a message when the argument cannot identify an instance: one that is
    /// not equal to itself (`Double.nan`) would never be found again, and one whose hash
    /// changes would be filed under a new slot each time. Checked once per construction.
    func checkArgument(of name: StaticString) {
        guard let argument else { return }
        // Named only to stop: building the name counts the file's length.
        var site: String { "\(name) (\(file):\(line))" }
        let (equalToItself, sameHash) = argument.checkedAgain
        if !equalToItself {
            fatalError("The argument \(argument.value) of \(site) is not equal to itself, so it cannot "
                + "identify an instance: pass a value whose == is reflexive (not Double.nan)", file: file, line: line)
        }
        if !sameHash {
            fatalError("The hash value of the argument \(argument.value) of \(site) changed between two "
                + "calls: hash(into:) must depend only on what == compares", file: file, line: line)
        }
    }
}
