/// A container's record of uses: for each registration, the keys of the cached instances
/// whose construction used it (``DependentKeys``). What ``ContainerState/dependents`` and
/// ``SeldomUsedState/windowOnlyUses`` keep.
///
/// Most containers that record a use record a few: a request's handler uses the request's
/// user and the app's client. So the first few registrations are kept in an array, searched
/// in order, and a dictionary only from the ninth on. A dictionary for the first cost every
/// request about 1,100 instructions to make and free: `Dictionary(minimumCapacity:)` and
/// its growth are not specialized outside the standard library, and look up the metadata
/// of their storage at run time, where an array's code is specialized here.
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
    }

    /// How many registrations the array holds before they move to ``many``.
    private static let fewest = 8

    /// The entries, while there are at most ``fewest``; empty once ``many`` holds them.
    private var few: [Entry] = []
    /// Every entry, by registration, once there were more than ``fewest``; empty before.
    private var many: [RegistrationKey: DependentKeys] = .init()

    init() {}

    var isEmpty: Bool { few.isEmpty && many.isEmpty }

    /// How many registrations were used.
    var count: Int { few.isEmpty ? many.count : few.count }

    /// The keys that used `used`, if any did.
    subscript(used: RegistrationKey) -> DependentKeys? {
        if !few.isEmpty { return position(of: used).map { few[$0].users } }
        return many.isEmpty ? nil : many[used]
    }

    /// Records that the construction of `user` used `used`.
    mutating func insert(_ user: RegistrationKey, using used: RegistrationKey) {
        if many.isEmpty {
            if let found = position(of: used) {
                few[found].users.insert(user)
                return
            }
            if few.count < Self.fewest {
                // Room for the usual few at once: growing one by one allocated three times.
                if few.isEmpty { few.reserveCapacity(4) }
                var users = DependentKeys()
                users.insert(user)
                few.append(Entry(used: used, users: users))
                return
            }
            moveFewToMany()
        }
        many[used, default: DependentKeys()].insert(user)
    }

    /// Takes `user` out of the users of `used`, and `used` out of the record when no user
    /// is left.
    mutating func remove(_ user: RegistrationKey, using used: RegistrationKey) {
        guard var users = self[used], users.contains(user) else { return }
        users.remove(user)
        replace(used, with: users)
    }

    /// Takes `used` out of the record; returns its users.
    mutating func removeValue(forKey used: RegistrationKey) -> DependentKeys? {
        if !few.isEmpty {
            guard let found = position(of: used) else { return nil }
            return few.remove(at: found).users
        }
        return many.isEmpty ? nil : many.removeValue(forKey: used)
    }

    /// The users of every registration, one list per registration.
    var allUsers: [DependentKeys] {
        if !few.isEmpty { return few.map(\.users) }
        var lists: [DependentKeys] = []
        for users in many.values { lists.append(users) }
        return lists
    }

    /// Takes the keys of `dropped` out of every list of users, and the registrations that
    /// have no user left out of the record; hands what the changed lists held references
    /// to, to release after unlocking.
    mutating func forget(_ dropped: Set<RegistrationKey>, released: inout Released) {
        var changed: [(used: RegistrationKey, users: DependentKeys)] = []
        if !few.isEmpty {
            for entry in few where !entry.users.isDisjoint(with: dropped) { changed.append((entry.used, entry.users)) }
        } else {
            for (used, users) in many where !users.isDisjoint(with: dropped) { changed.append((used, users)) }
        }
        for (used, users) in changed {
            users.keepReferences(in: &released)
            replace(used, with: users.subtracting(dropped))
        }
    }

    /// Hands what the record holds references to, to release after unlocking.
    func keepReferences(in released: inout Released) {
        if !few.isEmpty { released.append(few) }
        if !many.isEmpty { released.append(many) }
    }

    /// Sets the users of `used`, which the record holds, or takes it out when there are
    /// none.
    private mutating func replace(_ used: RegistrationKey, with users: DependentKeys) {
        if !few.isEmpty, let found = position(of: used) {
            if users.isEmpty { few.remove(at: found) } else { few[found].users = users }
        } else if !many.isEmpty {
            many[used] = users.isEmpty ? nil : users
        }
    }

    private func position(of used: RegistrationKey) -> Int? {
        for index in few.indices where few[index].used == used { return index }
        return nil
    }

    /// Moves the entries of the array to the dictionary, when one more does not fit.
    private mutating func moveFewToMany() {
        many = .init(minimumCapacity: few.count * 2)
        for entry in few { many[entry.used] = entry.users }
        few = []
    }
}
