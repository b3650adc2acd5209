/// The `#fileID` of a registration's call site in one word: what a ``RegistrationKey``
/// and a ``Site`` keep of it.
///
/// Why one word: a key is copied into every frame, table and override, and a struct of
/// more than four scalars is copied and destroyed out of line, its optional argument
/// through the value witness of `Optional`, with a metadata lookup (some 45 to 80
/// instructions a copy). A `StaticString` is three scalars: its address, its length and
/// its flags. A static string with a pointer representation points to null-terminated
/// UTF-8 (so its documentation of `utf8Start` says), so its address alone gives back the
/// rest: the length up to the terminator, and whether it is ASCII from its bytes. A name
/// with a NUL in it, which no `#fileID` has (only a literal a helper passes by hand),
/// comes back up to that NUL. The other representation, a single Unicode scalar, keeps
/// the scalar, with the top bit set, which no address of a literal's bytes has.
///
/// Two names are the same file when their words are equal, or when their bytes up to the
/// terminator are (``isSameFile(as:)``): a literal emitted twice (by inlined code) has two
/// addresses. So two hand-passed names that differ only after a NUL are one file.
///
/// ```swift
/// let file = FileName(#fileID)
/// file.string   // "DependencyInjection/FileName.swift"
/// ```
@usableFromInline
struct FileName: Sendable {
    /// The address of the name's bytes, or its scalar with ``scalarTag`` set.
    @usableFromInline let word: UInt64

    /// Marks a name kept as a single scalar rather than an address. No address of a
    /// literal's bytes has the top bit set: user-space addresses on the platforms this
    /// package supports are below it, and a literal's bytes are never a tagged pointer.
    @inlinable static var scalarTag: UInt64 { 1 << 63 }

    @inlinable
    init(_ string: StaticString) {
        let words = StaticStringWords(string)
        self.init(address: words.address, flags: UInt64(words.flags))
    }

    /// A name from its word, as ``RegistrationSite`` keeps it.
    @inlinable
    init(word: UInt64) { self.word = word }

    /// The name of a static string taken apart (``StaticStringWords``): its first word
    /// and its flags, whose lowest bit says it holds a scalar.
    @inlinable
    init(address: UInt64, flags: UInt64) {
        word = flags & 1 == 0 ? address : address | Self.scalarTag
    }

    /// Whether `other` names the same file: the same word, or the same bytes up to the
    /// terminator, compared as bytes (two names that are canonically equivalent but
    /// spelled with different bytes are two files, as a file system keeps them).
    func isSameFile(as other: FileName) -> Bool {
        if word == other.word { return true }
        guard word & Self.scalarTag == 0, other.word & Self.scalarTag == 0 else {
            // A scalar is the same file as another representation of its text.
            return Array(string.description.utf8) == Array(other.string.description.utf8)
        }
        let lhs = UnsafePointer<UInt8>(bitPattern: UInt(truncatingIfNeeded: word))!
        let rhs = UnsafePointer<UInt8>(bitPattern: UInt(truncatingIfNeeded: other.word))!
        var index = 0
        while lhs[index] == rhs[index] {
            if lhs[index] == 0 { return true }
            index += 1
        }
        return false
    }

    /// The name as the static string it was made from; for a pointer, its length is
    /// counted anew, so this is for messages, not for every resolution.
    var string: StaticString {
        if word & Self.scalarTag != 0 {
            let scalar = word & ~Self.scalarTag
            // A scalar literal's words: the scalar, no length, "is a scalar" and, for
            // ASCII, "is ASCII".
            return StaticStringWords(address: scalar, length: 0, flags: scalar < 0x80 ? 3 : 1).string
        }
        let start = UnsafePointer<UInt8>(bitPattern: UInt(truncatingIfNeeded: word))!
        var (length, isASCII) = (0, true)
        while start[length] != 0 {
            isASCII = isASCII && start[length] < 0x80
            length += 1
        }
        // A pointer's flags: "is ASCII", or none.
        return StaticStringWords(address: word, length: UInt64(length), flags: isASCII ? 2 : 0).string
    }
}
