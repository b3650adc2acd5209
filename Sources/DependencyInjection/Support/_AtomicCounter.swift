/// A count read and changed without a lock, for a cheap "has anything happened?" check on a
/// hot path.
///
/// Some work is needed only while, or once, a feature is in use somewhere in the process: a
/// task-local lookup of ``DependencyContainer/main`` only after the first
/// ``DependencyContainer/withMain(_:_:)``, a task-local lookup of the frame chain only while
/// some frame is bound as a task-local value. Reading a counter first keeps that cost off
/// everything else. The word lives in memory that never moves and is only touched by atomic
/// operations, so every thread sees a change once it is made.
///
/// ```swift
/// counter.increment()
/// defer { counter.decrement() }
/// if counter.isZero { /* nothing to look for */ }
/// ```
final class _AtomicCounter: @unchecked Sendable {
    // @unchecked: the word is only read and written atomically.
    private let word = UnsafeMutablePointer<UnsafeRawPointer?>.allocate(capacity: 1)

    init() { word.initialize(to: nil) }

    deinit { word.deallocate() }

    /// Whether the count is zero. A compare-and-exchange that never changes the word serves
    /// as the atomic load.
    var isZero: Bool {
        var seen: UnsafeRawPointer? = nil
        return _stdlib_atomicCompareExchangeStrongPtr(object: word, expected: &seen, desired: nil)
    }

    func increment() { add(1) }

    func decrement() { add(-1) }

    private func add(_ delta: Int) {
        var seen: UnsafeRawPointer? = nil
        while true {
            let desired = UnsafeRawPointer(bitPattern: Int(bitPattern: seen) &+ delta)
            if _stdlib_atomicCompareExchangeStrongPtr(object: word, expected: &seen, desired: desired) { return }
        }
    }
}
