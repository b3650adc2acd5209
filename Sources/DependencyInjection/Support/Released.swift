/// What a change under a lock takes out of the guarded state, to release after unlocking.
///
/// Releasing a value may run a `deinit`, which is user code and may use the very container
/// whose lock is held. So a change moves what it replaces or drops into this bag, and
/// ``_Locked/withLock(releasingAfter:)`` lets go of the bag once the lock is free.
///
/// Most changes take out one or two things (the override an override replaces, the
/// instance it drops), and most take out nothing. The first two are kept in the bag
/// itself, on the caller's stack; only a change that takes out more allocates an array,
/// which an array-only bag did for every change that took out anything, growing it twice
/// for two things.
///
/// ```swift
/// container.state.withLock(releasingAfter: { state, released in
///     released.keep(state.overrides.removeValue(forKey: key))
/// })
/// ```
@usableFromInline
struct Released {
    private var first: Any?
    private var second: Any?
    private var more: [Any] = []

    @usableFromInline
    init() {}

    /// Keeps `value` for release after unlocking.
    mutating func append(_ value: Any) {
        if first == nil {
            first = value
        } else if second == nil {
            second = value
        } else {
            more.append(value)
        }
    }

    /// Keeps `value`, if there is one, for release after unlocking.
    ///
    /// ```swift
    /// released.keep(state.values.removeValue(forKey: key))
    /// ```
    mutating func keep<Value>(_ value: Value?) {
        if let value { append(value) }
    }

    /// How many values the bag holds.
    var count: Int {
        (first == nil ? 0 : 1) + (second == nil ? 0 : 1) + more.count
    }
}
