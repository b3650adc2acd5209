import _DependencyInjectionShims

/// The word of state of a ``DependencyStorage``: an object, retained, whose address's two
/// lowest bits (clear in every object's address) say what the word holds, so that a first
/// read can tell the container alone from the rest without the lock and without touching
/// the object.
///
/// - **alone** (`00`): the property's container, with nothing in progress. Nearly every
///   property is in this state for its whole life.
/// - **looked at** (`10`): the container alone, and one first read using it without a
///   reference of its own, to look for what the container keeps (``beginLook()``). The
///   read marks the word without the lock, so that what changes the state meanwhile knows
///   the read is there: the change, under the lock, hands that read a reference of its own
///   (``PropertyState/lookersContainer``), which the read lets go when it ends
///   (``DependencyStorage``). Without it, a switch to another container would release the
///   container under the read.
/// - **busy** (`01`): a ``Frame`` (a first resolution in progress) or a ``PropertyState``
///   (everything else).
///
/// Every change is made under the storage's lock, with release ordering, but one: a read
/// marking the word looked at, which only a word alone allows. So a change of a word alone
/// first marks it itself (``seal()``), and every read of the word is atomic. The unsafe
/// part of the storage's state is here alone.
///
/// ```swift
/// let word = _PropertyStateWord(address: stateWordAddress)
/// if let container = word.beginLook() {       // no lock
///     // ... look in `container` ...
///     lock.withLock { _ in word.endLook(of: container) }   // false: the state changed
/// }
/// ```
struct _PropertyStateWord {
    /// Where the storage keeps the word.
    let address: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    private static let busyTag: UInt = 0b01
    private static let lookedTag: UInt = 0b10
    private static let tags: UInt = 0b11

    /// What the word holds.
    enum Content {
        /// The container, alone; `looked` when a first read uses it without the lock.
        case container(DependencyContainer, looked: Bool)
        /// A frame or a state in full.
        case busy(AnyObject)
    }

    /// `container`, retained, as the word keeps it alone: the caller's reference, which
    /// moves into the word.
    static func word(of container: consuming DependencyContainer) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(container).toOpaque()
    }

    /// `object`, a frame or a state in full, retained, as the word keeps it.
    static func word(ofBusy object: AnyObject) -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(object).toOpaque() + Int(busyTag)
    }

    /// The address of the object in `word`.
    private static func object(in word: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        word - Int(bitPattern: UInt(bitPattern: word) & tags)
    }

    private var current: UnsafeMutableRawPointer { _di_load_acquire(address).unsafelyUnwrapped }

    /// What the word holds, not retained; read under the lock.
    var content: Content {
        let word = current
        let object = Unmanaged<AnyObject>.fromOpaque(Self.object(in: word)).takeUnretainedValue()
        if UInt(bitPattern: word) & Self.busyTag != 0 { return .busy(object) }
        return .container(
            unsafeDowncast(object, to: DependencyContainer.self), looked: UInt(bitPattern: word) & Self.lookedTag != 0)
    }

    /// The object the word holds, not retained; read under the lock.
    var object: AnyObject { Unmanaged<AnyObject>.fromOpaque(Self.object(in: current)).takeUnretainedValue() }

    /// Whether the word holds the container alone, and no read looks at it; under the lock.
    var holdsContainerAlone: Bool { UInt(bitPattern: current) & Self.tags == 0 }

    /// Marks the word looked at, without the lock, and returns its container, not retained:
    /// or nil when the word holds more than the container alone, or another read looks.
    /// The container stays alive until ``endLook(of:)``: whatever takes it from the word
    /// meanwhile hands the read a reference of its own.
    func beginLook() -> Unmanaged<DependencyContainer>? {
        let word = current
        guard UInt(bitPattern: word) & Self.tags == 0 else { return nil }
        return mark(word) ? Unmanaged.fromOpaque(word) : nil
    }

    /// Ends the look ``beginLook()`` began, under the lock: true if the word still holds
    /// the container looked at, which it now holds alone again; false if the state changed
    /// meanwhile (it is then in full, with the reader's reference to the container).
    func endLook(of container: Unmanaged<DependencyContainer>) -> Bool {
        guard current == container.toOpaque() + Int(Self.lookedTag) else { return false }
        _di_store_release(address, container.toOpaque())
        return true
    }

    /// Readies a word that holds the container for ``store(_:)``, under the lock: marks it
    /// looked at, so that no read can begin to look meanwhile, and says whether a read
    /// looks at it already, which the change must hand a reference of its own.
    func seal() -> (container: DependencyContainer, lookedAt: Bool) {
        let word = current
        precondition(UInt(bitPattern: word) & Self.busyTag == 0, "only a word that holds the container is sealed")
        let container = Unmanaged<DependencyContainer>.fromOpaque(Self.object(in: word)).takeUnretainedValue()
        if UInt(bitPattern: word) & Self.lookedTag != 0 { return (container, true) }
        // Fails only when a read marked it first.
        return (container, !mark(word))
    }

    /// Puts `word` (``word(of:)``, ``word(ofBusy:)``, or a container's address with a
    /// reference to hand over) in place of a word that holds a frame or a state in full, or
    /// a sealed one, under the lock, and returns the address of the object it held, with
    /// the word's reference, for the caller to hand on, or release outside the lock.
    func store(_ word: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
        let old = current
        precondition(UInt(bitPattern: old) & Self.tags != 0, "a word that holds the container alone is sealed first")
        _di_store_release(address, word)
        return Self.object(in: old)
    }

    /// Marks `word`, a word alone, looked at; false if it changed meanwhile.
    private func mark(_ word: UnsafeMutableRawPointer) -> Bool {
        var expected: UnsafeRawPointer? = UnsafeRawPointer(word)
        return _stdlib_atomicCompareExchangeStrongPtr(
            object: UnsafeMutableRawPointer(address).assumingMemoryBound(to: UnsafeRawPointer?.self),
            expected: &expected, desired: UnsafeRawPointer(word + Int(Self.lookedTag)))
    }

    /// Releases the object the word holds: the storage's `deinit` calls it.
    static func release(_ word: UnsafeMutableRawPointer) {
        Unmanaged<AnyObject>.fromOpaque(object(in: word)).release()
    }
}
