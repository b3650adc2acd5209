/// The constructions of cached instances running in one container, in no particular order,
/// each the resolution that builds it: where a resolution finds the construction to wait
/// for, and whose uses are recorded.
///
/// There are usually none to two: a container builds one singleton at a time unless several
/// threads or tasks build at once, or one builds a chain of singletons. So a construction
/// is looked for by walking them, which costs less than a hash table's insertion and
/// removal; and the first two are kept inline, so that only a third allocates an array. A
/// short-lived container (a test world, a request) then makes no array it drops right
/// after, even when its first construction builds a second inside it, as a request's
/// handler resolves the request's user: that array and its release cost a request about
/// 500 instructions. A long-lived container keeps its array's capacity once it has one.
///
/// An override or reset that drops what is being built marks the construction dropped: it
/// runs on and hands out its instance, but that instance is not kept, and later
/// resolutions build anew instead of waiting for it.
///
/// ```swift
/// var running = RunningConstructions()
/// running.append(construction)
/// running.construction(of: key)   // the construction, for another resolution to wait on
/// running.drop(key)               // an override: built, handed out, not kept
/// running.remove(construction)
/// ```
struct RunningConstructions: Sequence {
    // Filled in order: `second` only while `first` is set, `others` only while both are.
    // Read, not written, outside: a walk by hand (``ContainerState/recordUse(of:)``)
    // retains nothing that a `for` loop's iterator would.
    private(set) var first: Resolution?
    private(set) var second: Resolution?
    private(set) var others: [Resolution] = []

    var isEmpty: Bool { first == nil }

    /// Always inlined, as ``remove(_:)`` is: the one construction of a first build that
    /// nothing else runs beside is a store, where the call cost it about 40 instructions.
    @inline(__always)
    mutating func append(_ construction: Resolution) {
        if first == nil {
            first = construction
        } else {
            appendBesideOthers(construction)
        }
    }

    private mutating func appendBesideOthers(_ construction: Resolution) {
        if second == nil {
            second = construction
        } else {
            others.append(construction)
        }
    }

    /// Removes `construction`, if it runs here. The slot it leaves takes the last of the
    /// ones after it, so that they stay filled in order.
    @inline(__always)
    mutating func remove(_ construction: Resolution) {
        if first === construction && second == nil {
            first = nil
        } else {
            removeAmongOthers(construction)
        }
    }

    private mutating func removeAmongOthers(_ construction: Resolution) {
        if first === construction {
            guard let next = second else { return first = nil }
            first = next
            second = others.isEmpty ? nil : others.removeLast()
        } else if second === construction {
            second = others.isEmpty ? nil : others.removeLast()
        } else if let index = others.firstIndex(where: { $0 === construction }) {
            others.remove(at: index)
        }
    }

    /// The construction of `key` running here whose instance is still to be kept, if any.
    ///
    /// Walks the slots by hand: the sequence's iterator would copy, and so retain, each.
    func construction(of key: RegistrationKey) -> Resolution? {
        guard let first else { return nil }
        if first.key == key && !first.isDropped { return first }
        guard let second else { return nil }
        if second.key == key && !second.isDropped { return second }
        return others.first(where: { $0.key == key && !$0.isDropped })
    }

    /// Whether a construction of `key` runs here, dropped or not.
    func runs(_ key: RegistrationKey) -> Bool {
        var found = false
        visitEach { if !found && $0.key == key { found = true } }
        return found
    }

    /// Marks the constructions of `key` dropped.
    func drop(_ key: RegistrationKey) {
        visitEach { if $0.key == key { $0.isDropped = true } }
    }

    /// Marks every construction dropped.
    func dropAll() {
        visitEach { $0.isDropped = true }
    }

    /// Calls `body` with each construction, walking the slots by hand: the sequence's
    /// iterator would copy, and so retain, each slot, on every override's drop.
    private func visitEach(_ body: (Resolution) -> Void) {
        guard let first else { return }
        body(first)
        guard let second else { return }
        body(second)
        for construction in others { body(construction) }
    }

    /// The keys of the constructions whose instances are still to be kept.
    var keys: [RegistrationKey] {
        compactMap { $0.isDropped ? nil : $0.key }
    }

    func makeIterator() -> Iterator { Iterator(first: first, second: second, others: others.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Resolution?
        fileprivate var second: Resolution?
        fileprivate var others: IndexingIterator<[Resolution]>

        mutating func next() -> Resolution? {
            if let construction = first {
                (first, second) = (second, nil)
                return construction
            }
            return others.next()
        }
    }
}
