import _DependencyInjectionShims

/// What one `@Dependency` declaration injects and where it is declared, in one word: its
/// key path and the ``Site`` that messages and cycle reports name, kept once per
/// declaration for the life of the process.
///
/// Apps keep thousands of objects with injected properties alive, and the key path and a
/// ``Site`` take eight words, the same for every object of one declaration. So the
/// storage of a property keeps the address of a record made the first time its
/// declaration creates an object, and never freed. There is one per declaration: per key
/// path, type, file and line. Code that builds key paths at run time, or passes its own
/// `line:`, gets one per distinct key path and line, equal key paths sharing one.
///
/// Finding the record is a cost of every injected object, so it is looked for first in a
/// cache of slots read without a lock, each holding the last record that hashed to it,
/// by the key path's identity; and only on a miss in the dictionary of all records, by
/// the key path's value, under a lock. A key path in a record lives as long as the
/// process, so its address is never another key path's.
///
/// ```swift
/// let declaration = PropertyDeclaration(\.httpClient, declaredIn: "FeedModel", fileID: #fileID, line: #line)
/// declaration.withKeyPath { print($0) }   // \DependencyContainer.httpClient
/// declaration.site      // "@Dependency in FeedModel (App/FeedModel.swift:12)"
/// ```
struct PropertyDeclaration {
    private let record: UnsafePointer<Record>

    init(_ keyPath: AnyKeyPath, declaredIn type: StaticString, fileID: StaticString, line: UInt) {
        let place = Place(type: type, fileID: fileID, line: line)
        let slot = Self.cache + place.slot(with: keyPath)
        if let cached = _di_load_acquire(slot)?.assumingMemoryBound(to: Record.self),
            cached.pointee.keyPathAddress == Self.address(of: keyPath), cached.pointee.place == place
        {
            record = UnsafePointer(cached)
        } else {
            record = Self.record(
                Record(keyPath: keyPath, place: place, site: Site(name: .property(in: type), fileID: fileID, line: line)),
                cachedIn: slot)
        }
    }

    /// Runs `body` with the registration the property injects, without counting a
    /// reference to it: the record keeps it for good.
    func withKeyPath<Result>(_ body: (AnyKeyPath) -> Result) -> Result {
        Unmanaged<AnyKeyPath>.fromOpaque(UnsafeRawPointer(bitPattern: record.pointee.keyPathAddress)!)
            ._withUnsafeGuaranteedRef(body)
    }

    /// The address of `keyPath`, which tells key path objects apart while they live, and
    /// for good once one is in a record.
    private static func address(of keyPath: AnyKeyPath) -> UInt {
        UInt(bitPattern: Int(bitPattern: ObjectIdentifier(keyPath)))
    }

    /// Where the property is declared, as frames and messages name it.
    var site: Site { record.pointee.site }

    /// Whether two declarations share one record.
    func sharesRecord(with other: PropertyDeclaration) -> Bool { record == other.record }

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

        /// The cache slot of this place with `keyPath`.
        func slot(with keyPath: AnyKeyPath) -> Int {
            let mixed = (PropertyDeclaration.address(of: keyPath) &* 0x9E37_79B9_7F4A_7C15) ^ (type &* 0xC2B2_AE3D_27D4_EB4F)
                ^ (fileID &* 0x1656_67B1_9E37_79F9) ^ (line &* 0x27D4_EB2F_1656_67C5)
            return Int(truncatingIfNeeded: mixed >> (UInt.bitWidth - PropertyDeclaration.cacheBits))
        }
    }

    private struct Record {
        let keyPath: AnyKeyPath
        /// The address of ``keyPath``, compared and read without a reference count.
        let keyPathAddress: UInt
        let place: Place
        let site: Site

        init(keyPath: AnyKeyPath, place: Place, site: Site) {
            (self.keyPath, keyPathAddress, self.place, self.site) = (keyPath, address(of: keyPath), place, site)
        }
    }

    /// What finds a record in the dictionary: the key path by value.
    private struct Key: Hashable {
        let keyPath: AnyKeyPath
        let place: Place
    }

    private static let cacheBits = 10
    /// The cache: `1 << cacheBits` slots, each nil or a record, written with a release
    /// store under ``records``' lock and read with an acquire load.
    // nonisolated(unsafe): the slots are only accessed through those atomic operations.
    nonisolated(unsafe) private static let cache: UnsafeMutablePointer<UnsafeMutableRawPointer?> = {
        let slots = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1 << cacheBits)
        slots.initialize(repeating: nil, count: 1 << cacheBits)
        return slots
    }()
    /// Every record, by key path and place.
    private static let records = _Locked([Key: UnsafeMutablePointer<Record>]())

    /// The record equal to `candidate`, made from it if there is none, and left in `slot`
    /// for the next object when it is of the same key path object.
    private static func record(_ candidate: Record, cachedIn slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>)
        -> UnsafePointer<Record>
    {
        let key = Key(keyPath: candidate.keyPath, place: candidate.place)
        return records.withLock { records in
            let record = records[key] ?? {
                let made = UnsafeMutablePointer<Record>.allocate(capacity: 1)
                made.initialize(to: candidate)
                records[key] = made
                return made
            }()
            if record.pointee.keyPathAddress == candidate.keyPathAddress {
                _di_store_release(slot, UnsafeMutableRawPointer(record))
            }
            return UnsafePointer(record)
        }
    }
}
