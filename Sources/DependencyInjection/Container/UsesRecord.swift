/// A container's record of uses: for each registration, the keys of the cached instances
/// whose construction used it (``DependentKeys``). What ``ContainerState/dependents`` and
/// ``SeldomUsedState/windowOnlyUses`` keep.
///
/// Most containers that record a use record one or two: a request's handler uses the
/// request's user and the app's client. So the first two registrations are kept in the
/// record itself, and a dictionary only from the third on. A dictionary for the first cost
/// every request about 1,100 instructions to make and free (`Dictionary(minimumCapacity:)`
/// and its growth are not specialized outside the standard library, and look up the
/// metadata of their storage at run time), and an array for the first few one allocation
/// and its release, about 280.
///
/// ```swift
/// var record = UsesRecord()
/// record.insert(handlerKey, using: userKey)   // building the handler resolved the user
/// record[userKey]?.contains(handlerKey)       // true: an override of the user drops it
/// ```
struct UsesRecord {
    /// One registration and the keys that used it.
    private struct Entry {
        let used: RegistrationKey
        var users: DependentKeys

        init(_ used: RegistrationKey, usedBy user: RegistrationKey) {
            self.used = used
            users = DependentKeys()
            users.insert(user)
        }
    }

    // Filled in order: `second` only while `first` is set; `many` only once a third
    // registration came, and then it holds every entry and neither slot is set.
    private var first: Entry?
    private var second: Entry?
    private var many: [RegistrationKey: DependentKeys] = .init()

    init() {}

    var isEmpty: Bool { first == nil && many.isEmpty }

    /// How many registrations were used.
    var count: Int { first == nil ? many.count : (second == nil ? 1 : 2) }

    /// The keys that used `used`, if any did.
    subscript(used: RegistrationKey) -> DependentKeys? {
        if let first {
            if first.used == used { return first.users }
            if let second, second.used == used { return second.users }
            return nil
        }
        return many.isEmpty ? nil : many[used]
    }

    /// Whether any construction used `used`: the question the subscript answers, without
    /// copying the users out. The slots' keys are read through `map`: compared as
    /// optionals (`second?.used == used`), the key was copied out of line, and a request in
    /// the scope of an app container that had built something cost about 100 instructions
    /// more.
    func contains(_ used: RegistrationKey) -> Bool {
        if let first = first.map({ $0.used }) {
            return first == used || second.map { $0.used == used } ?? false
        }
        return !many.isEmpty && many.index(forKey: used) != nil
    }

    /// Records that the construction of `user` used `used`.
    mutating func insert(_ user: RegistrationKey, using used: RegistrationKey) {
        if many.isEmpty {
            switch first.map({ $0.used == used }) {
            case nil:
                first = Entry(used, usedBy: user)
                return
            case true?:
                first?.users.insert(user)
                return
            case false?:
                break
            }
            switch second.map({ $0.used == used }) {
            case nil:
                second = Entry(used, usedBy: user)
                return
            case true?:
                second?.users.insert(user)
                return
            case false?:
                break
            }
            moveSlotsToMany()
        }
        many[used, default: DependentKeys()].insert(user)
    }

    /// Takes `user` out of the users of `used`, and `used` out of the record when no user
    /// is left.
    mutating func remove(_ user: RegistrationKey, using used: RegistrationKey) {
        guard contains(used) else { return }
        changeUsers(of: used) { $0.remove(user) }
    }

    /// Takes `used` out of the record; returns its users.
    mutating func removeValue(forKey used: RegistrationKey) -> DependentKeys? {
        guard let first else { return many.isEmpty ? nil : many.removeValue(forKey: used) }
        if first.used == used {
            defer { (self.first, second) = (second, nil) }
            return first.users
        }
        guard let second, second.used == used else { return nil }
        defer { self.second = nil }
        return second.users
    }

    /// The users of every registration, one list per registration.
    var allUsers: [DependentKeys] {
        if let first { return second.map { [first.users, $0.users] } ?? [first.users] }
        var lists: [DependentKeys] = []
        for users in many.values { lists.append(users) }
        return lists
    }

    /// Takes the keys of `dropped` out of every list of users, and the registrations that
    /// have no user left out of the record; hands what the changed lists held references
    /// to, to release after unlocking.
    mutating func forget(_ dropped: Set<RegistrationKey>, released: inout Released) {
        forget(dropped, leavingGoneInstances: false, released: &released)
    }

    /// Replaces the keys of `gone`, instances that died, in every list of users by the key
    /// that stands for the gone instances of their family (``RegistrationKey/goneInstances``):
    /// a change of what they were built from still reaches what was built from them, and a
    /// family's arguments that come and go do not pile up. Hands what the changed lists
    /// held references to, to release after unlocking.
    mutating func replace(byTheirFamilies gone: Set<RegistrationKey>, released: inout Released) {
        forget(gone, leavingGoneInstances: true, released: &released)
    }

    /// Each list of users is changed in place: a list is not copied while the record
    /// holds it, so that dropping one of thousands of users costs a lookup, not a copy of
    /// the list (``DependentKeys/remove(_:released:)``).
    private mutating func forget(
        _ dropped: Set<RegistrationKey>, leavingGoneInstances: Bool, released: inout Released
    ) {
        var changed: [RegistrationKey] = []
        if let first {
            if !first.users.isDisjoint(with: dropped) { changed.append(first.used) }
            if let second, !second.users.isDisjoint(with: dropped) { changed.append(second.used) }
        } else {
            for (used, users) in many where !users.isDisjoint(with: dropped) { changed.append(used) }
        }
        for used in changed {
            changeUsers(of: used) { users in
                let removed = users.remove(dropped, released: &released)
                if leavingGoneInstances {
                    for user in removed { users.insert(user.goneInstances) }
                }
            }
        }
    }

    /// Hands what the record holds references to, to release after unlocking: what the
    /// users in its slots hold, and its dictionary's storage. A registration is filed
    /// without an argument, so its key holds nothing.
    func keepReferences(in released: inout Released) {
        first?.users.keepReferences(in: &released)
        second?.users.keepReferences(in: &released)
        if !many.isEmpty { released.append(many) }
    }

    /// Changes the users of `used`, which the record holds, in place, and takes `used`
    /// out when none is left.
    private mutating func changeUsers(of used: RegistrationKey, _ change: (inout DependentKeys) -> Void) {
        if first.map({ $0.used == used }) ?? false {
            change(&first!.users)
            if first!.users.isEmpty { _ = removeValue(forKey: used) }
        } else if second.map({ $0.used == used }) ?? false {
            change(&second!.users)
            if second!.users.isEmpty { _ = removeValue(forKey: used) }
        } else if let index = many.index(forKey: used) {
            change(&many.values[index])
            if many.values[index].isEmpty { many.remove(at: index) }
        }
    }

    /// Moves the entries of the two slots to the dictionary, when a third does not fit.
    private mutating func moveSlotsToMany() {
        many = .init(minimumCapacity: 4)
        if let first { many[first.used] = first.users }
        if let second { many[second.used] = second.users }
        (first, second) = (nil, nil)
    }
}
