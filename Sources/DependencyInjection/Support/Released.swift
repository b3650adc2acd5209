/// What a change under a lock takes out of the guarded state, to release after unlocking.
///
/// Releasing a value may run a `deinit`, which is user code and may use the very container
/// whose lock is held. So a change moves what it replaces or drops into this bag, and
/// ``_Locked/withLock(releasingAfter:)`` lets go of the bag once the lock is free.
///
/// Most changes take out a few things (the override an override replaces, the instance
/// it drops, the record of what that instance used), and most take out nothing. Objects go
/// into four slots in the bag itself, on the caller's stack; values (a collection, a
/// record) and a fifth object go into an object of the bag's, made for the first of them
/// (one allocation for up to two, which the rare changes that take out values pay).
/// So the bag is five references, which are released inline when it goes, a few
/// instructions each when empty: with two values beside the objects, it was destroyed
/// through its type's value witness, some 80 instructions for every change under a lock,
/// however little it took out. An object is kept as `AnyObject`, not boxed as `Any`: a
/// boxed value is copied and destroyed through value witnesses, and a bag of two `Any`
/// slots, whose third thing grew an array, cost an override some 800 instructions.
///
/// ```swift
/// container.withStateLock(releasingAfter: { state, released in
///     released.keep(state.overrides.removeValue(forKey: key))
/// })
/// ```
@usableFromInline
struct Released {
    private var object1: AnyObject?
    private var object2: AnyObject?
    private var object3: AnyObject?
    private var object4: AnyObject?
    /// The values, and the objects past the fourth, once there is one.
    private var more: More?

    /// What does not fit in the bag's own slots: two things in the object itself, an
    /// array only from the third.
    private final class More {
        var first: Any?
        var second: Any?
        var rest: [Any] = []

        var count: Int { (first == nil ? 0 : 1) + (second == nil ? 0 : 1) + rest.count }

        func append(_ thing: Any) {
            if first == nil {
                first = thing
            } else if second == nil {
                second = thing
            } else {
                rest.append(thing)
            }
        }
    }

    @usableFromInline
    init() {}

    /// Takes `object`, to release after unlocking.
    ///
    /// Consuming: what a table hands back is moved into the bag, where taking it borrowed
    /// cost a retain here and a release at the caller, about 70 instructions an override.
    mutating func append(_ object: consuming AnyObject) {
        if object1 == nil {
            object1 = object
        } else if object2 == nil {
            object2 = object
        } else if object3 == nil {
            object3 = object
        } else if object4 == nil {
            object4 = object
        } else {
            appendMore(object)
        }
    }

    /// Takes `value` (a collection, a record), to release after unlocking.
    mutating func append(_ value: consuming Any) {
        appendMore(value)
    }

    private mutating func appendMore(_ thing: Any) {
        if more == nil { more = More() }
        more!.append(thing)
    }

    /// Takes `object`, if there is one.
    mutating func keep(_ object: consuming AnyObject?) {
        if let object { append(object) }
    }

    /// Takes `value`, if there is one.
    ///
    /// ```swift
    /// released.keep(state.values.removeValue(forKey: key))
    /// ```
    mutating func keep<Value>(_ value: consuming Value?) {
        if let value { append(value) }
    }

    /// How many things the bag holds.
    var count: Int {
        let objects = (object1 == nil ? 0 : 1) + (object2 == nil ? 0 : 1) + (object3 == nil ? 0 : 1)
            + (object4 == nil ? 0 : 1)
        return objects + (more?.count ?? 0)
    }
}
