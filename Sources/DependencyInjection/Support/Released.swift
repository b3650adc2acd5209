/// What a change under a lock takes out of the guarded state, to release after unlocking.
///
/// Releasing a value may run a `deinit`, which is user code and may use the very container
/// whose lock is held. So a change moves what it replaces or drops into this bag, and
/// ``_Locked/withLock(releasingAfter:)`` lets go of the bag once the lock is free.
///
/// Most changes take out a few things (the override an override replaces, the instance
/// it drops, the record of what that instance used), and most take out nothing. Objects go
/// into four slots and other values into two, all in the bag itself, on the caller's
/// stack; only a change that takes out more allocates an array. An object is kept as
/// `AnyObject`, not boxed as `Any`: a boxed value is copied and destroyed through value
/// witnesses, and a bag of two `Any` slots, whose third thing grew an array, cost an
/// override some 800 instructions.
///
/// ```swift
/// container.state.withLock(releasingAfter: { state, released in
///     released.keep(state.overrides.removeValue(forKey: key))
/// })
/// ```
@usableFromInline
struct Released {
    private var object1: AnyObject?
    private var object2: AnyObject?
    private var object3: AnyObject?
    private var object4: AnyObject?
    private var value1: Any?
    private var value2: Any?
    private var more: [Any] = []

    @usableFromInline
    init() {}

    /// Takes `object`, to release after unlocking.
    mutating func append(_ object: AnyObject) {
        if object1 == nil {
            object1 = object
        } else if object2 == nil {
            object2 = object
        } else if object3 == nil {
            object3 = object
        } else if object4 == nil {
            object4 = object
        } else {
            more.append(object)
        }
    }

    /// Takes `value` (a collection, a record), to release after unlocking.
    mutating func append(_ value: Any) {
        if value1 == nil {
            value1 = value
        } else if value2 == nil {
            value2 = value
        } else {
            more.append(value)
        }
    }

    /// Takes `object`, if there is one.
    mutating func keep(_ object: AnyObject?) {
        if let object { append(object) }
    }

    /// Takes `value`, if there is one.
    ///
    /// ```swift
    /// released.keep(state.values.removeValue(forKey: key))
    /// ```
    mutating func keep<Value>(_ value: Value?) {
        if let value { append(value) }
    }

    /// How many things the bag holds.
    var count: Int {
        let objects = (object1 == nil ? 0 : 1) + (object2 == nil ? 0 : 1) + (object3 == nil ? 0 : 1)
            + (object4 == nil ? 0 : 1)
        return objects + (value1 == nil ? 0 : 1) + (value2 == nil ? 0 : 1) + more.count
    }
}
