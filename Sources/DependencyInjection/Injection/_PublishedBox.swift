/// The published value of one `@Dependency` property: a word that holds a retained
/// ``Box`` or nil, set under its owner's lock and read without any lock.
///
/// Reading a resolved property is the hot path of the whole package. The resolved value
/// sits in an immutable ``Box`` whose address is published with an atomic exchange and
/// read with an acquiring load, so a reader sees either nothing or a whole box. The word
/// is the first stored property of the object that owns it (a ``DependencyStorage``), so
/// the wrapper's getter reaches that owner from the word's address alone, for the slow
/// path, without retaining anything on the fast path.
///
/// ```swift
/// if let client = _PublishedBox.value(in: storage.published, as: HTTPClient.self) { return client }
/// ```
@usableFromInline
enum _PublishedBox {
    /// The published value, if any: one acquiring load, no lock, no reference counting.
    @inlinable
    static func value<Value>(in word: UnsafeMutablePointer<AnyBox?>, as type: Value.Type) -> Value? {
        guard let box = _stdlib_atomicAcquiringLoadARCRef(object: word) else { return nil }
        return box._withUnsafeGuaranteedRef { unsafeDowncast($0, to: Box<Value>.self).value }
    }

    /// The value in a box that a property published.
    @inlinable
    static func unbox<Value>(_ box: AnyBox, as type: Value.Type) -> Value {
        unsafeDowncast(box, to: Box<Value>.self).value
    }

    /// The published box, read with an acquiring load.
    static func published(in word: UnsafeMutablePointer<AnyBox?>) -> AnyBox? {
        _stdlib_atomicAcquiringLoadARCRef(object: word)?.takeUnretainedValue()
    }

    /// Runs `body` with the object whose first stored property is `word`.
    static func withOwner<Owner: AnyObject, Result>(
        of word: UnsafeMutablePointer<AnyBox?>, as type: Owner.Type, _ body: (Owner) -> Result
    ) -> Result {
        let owner = UnsafeRawPointer(word) - storedPropertiesOffset
        return Unmanaged<Owner>.fromOpaque(owner)._withUnsafeGuaranteedRef(body)
    }

    /// How far an object's first stored property lies from the object's address: the size
    /// of the object header, two words (its metadata and its reference counts) where
    /// pointers take 64 bits, written as a constant so that a first read reads no static
    /// (whose one-time initialization costs a call); measured once elsewhere.
    #if arch(x86_64) || arch(arm64)
    static let storedPropertiesOffset = 16
    #else
    static let storedPropertiesOffset = measuredStoredPropertiesOffset
    #endif

    /// The offset ``storedPropertiesOffset`` stands for, measured on an object: for
    /// platforms without the constant, and for the test that checks it.
    static let measuredStoredPropertiesOffset: Int = {
        final class Probe {}
        let probe = Probe()
        return withExtendedLifetime(probe) {
            _getUnsafePointerToStoredProperties(probe) - UnsafeMutableRawPointer(Unmanaged.passUnretained(probe).toOpaque())
        }
    }()
}
