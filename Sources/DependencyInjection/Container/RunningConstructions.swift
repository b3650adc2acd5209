/// The constructions of cached instances running in one container, in no particular order.
///
/// There is usually none or one: a container builds one singleton at a time unless several
/// threads or tasks build at once. The first is kept inline and only a second allocates an
/// array, so a container's first construction (a test world's, a request's) makes no
/// array it drops right after.
///
/// ```swift
/// var running = RunningConstructions()
/// running.append(construction)
/// for other in running where other.key != key { /* record the use */ }
/// running.remove(construction)
/// ```
struct RunningConstructions: Sequence {
    private var first: InFlight?
    private var others: [InFlight] = []

    var isEmpty: Bool { first == nil }

    mutating func append(_ construction: InFlight) {
        if first == nil { first = construction } else { others.append(construction) }
    }

    /// Removes `construction`, if it runs here.
    mutating func remove(_ construction: InFlight) {
        if first === construction {
            first = others.popLast()
        } else if let index = others.firstIndex(where: { $0 === construction }) {
            others.remove(at: index)
        }
    }

    func makeIterator() -> Iterator { Iterator(first: first, others: others.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var first: InFlight?
        fileprivate var others: IndexingIterator<[InFlight]>

        mutating func next() -> InFlight? {
            if let construction = first {
                first = nil
                return construction
            }
            return others.next()
        }
    }
}
