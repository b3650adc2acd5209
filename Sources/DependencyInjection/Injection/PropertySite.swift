import _DependencyInjectionShims

/// Where a `@Dependency` property is declared, in one word: the ``Site`` that messages and
/// cycle reports name, kept once per declaration for the life of the process.
///
/// Apps keep thousands of objects with injected properties alive, and a ``Site`` takes
/// seven words (two `StaticString`s and a line), the same for every object of one
/// declaration. So the property keeps the address of a record made the first time its
/// declaration creates an object, and never freed. A record holds only the literals'
/// addresses and a line, no object: there is one per type, file and line that declares a
/// property (more only for code that passes `line:` values of its own, one per line).
///
/// Finding the record is a cost of every injected object, so it is looked for first in a
/// cache of slots read without a lock, each holding the last record that hashed to it,
/// and only on a miss in the dictionary of all records, under a lock.
///
/// The record also keeps one hint for the declaration's first reads: whether the last one
/// found its instance kept by the container (``lastReadFoundItKept``), read and written
/// without ordering, since either value gives a correct read (see
/// ``DependencyStorage/resolveOnce(declaredAt:_:)``).
///
/// ```swift
/// let site = PropertySite(declaredIn: "FeedModel", fileID: #fileID, line: #line)
/// print(site.site)   // "@Dependency in FeedModel (App/FeedModel.swift:12)"
/// ```
@usableFromInline
struct PropertySite {
    private let record: UnsafePointer<Record>

    @usableFromInline
    init(declaredIn type: StaticString, fileID: StaticString, line: UInt) {
        let place = Place(type: type, fileID: fileID, line: line)
        let slot = _di_property_site_slot(place.slot)
        if let cached = _di_load_acquire(slot)?.assumingMemoryBound(to: Record.self), cached.pointee.place == place {
            record = UnsafePointer(cached)
        } else {
            record = Self.record(
                Record(place: place, site: Site(name: .property(in: type), fileID: fileID, line: line)), cachedIn: slot)
        }
    }

    /// Where the property is declared, as frames and messages name it.
    var site: Site { record.pointee.site }

    /// Whether the last first read of a property of this declaration found what it
    /// resolves kept by its container: a singleton, not a factory or a plain property.
    var lastReadFoundItKept: Bool { _di_load_relaxed(hint) != 0 }

    /// Notes what a first read of this declaration found, written only when it changes, so
    /// that the reads of a declaration's objects on many threads share the line unwritten.
    func noteFirstRead(foundItKept: Bool) {
        guard lastReadFoundItKept != foundItKept else { return }
        _di_store_relaxed(hint, foundItKept ? 1 : 0)
    }

    private var hint: UnsafeMutablePointer<Int> { UnsafeMutablePointer(mutating: record).pointer(to: \.foundItKept)! }

    /// Whether two properties share one record.
    func sharesRecord(with other: PropertySite) -> Bool { record == other.record }

    /// The literals and the line of a declaration, as words.
    private struct Place: Hashable {
        let type: UInt
        let typeFlags: UInt8
        let fileID: UInt
        let fileIDFlags: UInt8
        let line: UInt

        init(type: StaticString, fileID: StaticString, line: UInt) {
            // A literal is its bytes' address or its scalar, a count and flags (its frozen
            // layout); the first and the flags name it.
            let typeWords = unsafeBitCast(type, to: (UInt, UInt, UInt8).self)
            let fileWords = unsafeBitCast(fileID, to: (UInt, UInt, UInt8).self)
            (self.type, typeFlags, self.fileID, fileIDFlags) = (typeWords.0, typeWords.2, fileWords.0, fileWords.2)
            self.line = line
        }

        /// The cache slot of this place.
        var slot: Int {
            let mixed = (type &* 0x9E37_79B9_7F4A_7C15) ^ (fileID &* 0xC2B2_AE3D_27D4_EB4F) ^ (line &* 0x1656_67B1_9E37_79F9)
            return Int(truncatingIfNeeded: mixed >> (UInt.bitWidth - Int(_DI_PROPERTY_SITE_SLOT_BITS)))
        }
    }

    private struct Record {
        let place: Place
        let site: Site
        /// ``lastReadFoundItKept``, as a word; a new declaration's first read looks.
        var foundItKept = 1
    }

    // The cache is `_di_property_site_cache`, in the C target: a slot is written with a
    // release store under ``records``' lock and read with an acquire load.
    /// Every record, by place.
    private static let records = _Locked([Place: UnsafeMutablePointer<Record>]())

    /// The record of `candidate`'s place, made from it if there is none, and left in
    /// `slot` for the next object.
    private static func record(_ candidate: Record, cachedIn slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>)
        -> UnsafePointer<Record>
    {
        records.withLock { records in
            let record = records[candidate.place] ?? {
                let made = UnsafeMutablePointer<Record>.allocate(capacity: 1)
                made.initialize(to: candidate)
                records[candidate.place] = made
                return made
            }()
            _di_store_release(slot, UnsafeMutableRawPointer(record))
            return UnsafePointer(record)
        }
    }
}
