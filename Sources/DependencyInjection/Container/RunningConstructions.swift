/// The constructions of cached instances running in one container, in no particular order,
/// each the resolution that builds it: where a resolution finds the construction to wait
/// for, and whose uses are recorded.
///
/// There is usually none or one: a container builds one singleton at a time unless several
/// threads or tasks build at once, or one builds a chain of singletons. So a construction
/// is looked for by walking them, which costs less than a hash table's insertion and
/// removal; and the first is kept inline, so that only a second allocates an array, and a
/// container's first construction (a test world's, a request's) makes no array it drops
/// right after.
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
    private var first: Resolution?
    private var others: [Resolution] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ construction: Resolution) {
        if first == nil { first = construction } else { others.append(construction) }
    }

    /// Removes `construction`, if it runs here.
    mutating func remove(_ construction: Resolution) {
        if first === construction {
            first = others.popLast()
        } else if let index = others.firstIndex(where: { $0 === construction }) {
            others.remove(at: index)
        }
    }

    /// The construction of `key` running here whose instance is still to be kept, if any.
    func construction(of key: RegistrationKey) -> Resolution? {
        first(where: { $0.key == key && !$0.isDropped })
    }

    /// Marks the constructions of `key` dropped.
    func drop(_ key: RegistrationKey) {
        for construction in self where construction.key == key { construction.isDropped = true }
    }

    /// Marks every construction dropped.
    func dropAll() {
        for construction in self { construction.isDropped = true }
    }

    /// The keys of the constructions whose instances are still to be kept.
    var keys: [RegistrationKey] {
        compactMap { $0.isDropped ? nil : $0.key }
    }

    func makeIterator() -> Iterator { Iterator(first: first, others: others.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Resolution?
        fileprivate var others: IndexingIterator<[Resolution]>

        mutating func next() -> Resolution? {
            if let construction = first {
                first = nil
                return construction
            }
            return others.next()
        }
    }
}
