/// Everything a provider knows about its registration except the closure and the objects:
/// the file, line and column of the call to `factory`, `singleton` and the others, the
/// provided type, the registration's name, its scope, and whether it is isolated to the
/// main actor, packed into one 64-byte vector.
///
/// Why a vector: every resolution creates a ``Provider`` and destroys it. A struct of more
/// than seven scalars is, in the compiler's code generation, kept in memory and destroyed
/// out of line through its type's value witness, with a metadata lookup, however few of
/// its fields hold references. Written out, these fields are nine scalars (a
/// `StaticString` is three, a ``FileName`` one); packed, they are one, so a provider is six, and its
/// destruction is a release of each reference, inline. A cached singleton cost 267
/// instructions with the fields written out and 161 packed.
///
/// ```swift
/// let site = RegistrationSite(
///     scope: .singleton, name: "client", fileID: #fileID, line: #line, column: #column,
///     type: ObjectIdentifier(Int.self), isMainActor: false)
/// site.scope   // .singleton
/// site.fileName.string  // "DependencyInjection/RegistrationSite.swift"
/// ```
@usableFromInline
struct RegistrationSite {
    /// The lanes, in order: the file name (``FileName``), one unused lane, the name's flags
    /// with the scope, the main-actor flag and where a teardown runs, the position (line
    /// and column), the type, the name's address and length, and one more unused lane.
    @usableFromInline let lanes: SIMD8<UInt64>

    @inlinable
    init(
        scope: DependencyScope, name: StaticString, fileID: StaticString, line: UInt, column: UInt,
        type: ObjectIdentifier, isMainActor: Bool
    ) {
        self.init(
            scope: scope, name: name, fileID: fileID, position: RegistrationKey.position(line: line, column: column),
            type: type, isMainActor: isMainActor)
    }

    @inlinable
    init(
        scope: DependencyScope, name: StaticString, fileID: StaticString, position: UInt64,
        type: ObjectIdentifier, isMainActor: Bool
    ) {
        self.init(
            scope: scope, name: name, fileName: FileName(fileID), position: position, type: type,
            isMainActor: isMainActor)
    }

    @inlinable
    init(
        scope: DependencyScope, name: StaticString, fileName: FileName, position: UInt64,
        type: ObjectIdentifier, isMainActor: Bool
    ) {
        let name = StaticStringWords(name)
        let flags = UInt64(name.flags) << 8 | UInt64(scope.code) << 16 | (isMainActor ? 1 << 24 : 0)
        // A tuple cast, not `SIMD8(_:_:…)`: the initializer sets the lanes one by one, and
        // the getters that create providers grew past what the optimizer inlines.
        lanes = unsafeBitCast(
            (fileName.word, UInt64(0), flags, position, UInt64(UInt(bitPattern: type)), name.address, name.length,
             UInt64(0)),
            to: SIMD8<UInt64>.self)
    }

    /// The `#fileID` of the call that declared the registration, as ``RegistrationKey``
    /// keeps it.
    @inlinable
    var fileName: FileName { FileName(word: lanes[0]) }

    /// The line in the high 32 bits and the column in the low 32 bits, as in ``RegistrationKey``.
    @inlinable
    var position: UInt64 { lanes[3] }

    /// The provided type.
    @inlinable
    var type: ObjectIdentifier { unsafeBitCast(UInt(truncatingIfNeeded: lanes[4]), to: ObjectIdentifier.self) }

    /// The registration's name: the property's, unless the call passed another.
    @inlinable
    var name: StaticString { StaticStringWords(address: lanes[5], length: lanes[6], flags: lanes[2] >> 8).string }

    @inlinable
    var scope: DependencyScope { DependencyScope(code: UInt8(truncatingIfNeeded: lanes[2] >> 16)) }

    @inlinable
    var isMainActor: Bool { lanes[2] >> 24 & 1 != 0 }

    /// Whether the provider's teardown, if it has one, runs on the main actor.
    @inlinable
    var teardownRunsOnMainActor: Bool { lanes[2] >> 25 & 1 != 0 }

    /// This site, with a teardown that runs on the main actor if `onMainActor`.
    @inlinable
    func withTeardown(onMainActor: Bool) -> RegistrationSite {
        var lanes = lanes
        lanes[2] = lanes[2] & ~(1 << 25) | (onMainActor ? 1 << 25 : 0)
        return RegistrationSite(lanes: lanes)
    }

    @inlinable
    init(lanes: SIMD8<UInt64>) { self.lanes = lanes }
}

/// The three stored words of a `StaticString`: the address of its UTF-8 bytes (or its
/// scalar), their count, and its flags.
///
/// `StaticString` is a frozen type of the standard library, so its layout is part of the
/// ABI and cannot change: an address-sized word, a count-sized word and a flags byte, in
/// that order, which is also the layout of the tuple it is cast to and from here. This is
/// the only place the package takes a `StaticString` apart.
@usableFromInline
struct StaticStringWords {
    @usableFromInline let address: UInt64
    @usableFromInline let length: UInt64
    @usableFromInline let flags: UInt8

    @inlinable
    init(_ string: StaticString) {
        let words = unsafeBitCast(string, to: (UInt, UInt, UInt8).self)
        (address, length, flags) = (UInt64(words.0), UInt64(words.1), words.2)
    }

    @inlinable
    init(address: UInt64, length: UInt64, flags: UInt64) {
        (self.address, self.length, self.flags) = (address, length, UInt8(truncatingIfNeeded: flags))
    }

    @inlinable
    var string: StaticString {
        unsafeBitCast(
            (UInt(truncatingIfNeeded: address), UInt(truncatingIfNeeded: length), flags), to: StaticString.self)
    }
}

extension DependencyScope {
    /// A byte for ``RegistrationSite``: the raw values are strings.
    @inlinable
    var code: UInt8 {
        switch self {
        case .factory: return 0
        case .singleton: return 1
        case .shared: return 2
        case .graph: return 3
        case .scoped: return 4
        }
    }

    @inlinable
    init(code: UInt8) {
        switch code {
        case 0: self = .factory
        case 1: self = .singleton
        case 2: self = .shared
        case 3: self = .graph
        default: self = .scoped
        }
    }
}
