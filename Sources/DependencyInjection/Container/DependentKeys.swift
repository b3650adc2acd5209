/// The keys of the cached instances whose construction used one registration: what a
/// container's record of uses keeps for each registration, and what an override of that
/// registration drops.
///
/// Most registrations are used by one construction in a container (a request's handler
/// uses the request's user once), so one key is kept inline, and a set only from the
/// second key on. A set for every used registration cost a first build some 600
/// instructions per registration it used, and as much again to free.
///
/// ```swift
/// var users = DependentKeys()
/// users.insert(handlerKey)
/// users.contains(handlerKey)   // true
/// ```
struct DependentKeys: Sequence {
    /// The one key, while there is exactly one.
    private var only: RegistrationKey?
    /// Every key, once there are two or more; empty otherwise.
    private var several: Set<RegistrationKey> = []
    /// Once ``several`` has more than ``fewest`` keys: how many of them each registration
    /// has; empty otherwise. A walk of the record of uses goes on from the registrations of
    /// the users it finds, and the users of one registration may be thousands of arguments
    /// of one family (the accounts a batch request built from the limits it overrides):
    /// the walk takes their registrations from here, once each, rather than going through
    /// every key on every step. Kept only for many: a table for two users cost every
    /// request that made one about 200 instructions.
    private var perRegistration: [RegistrationKey: Int] = .init()

    /// Up to how many keys ``several`` keeps no ``perRegistration``.
    private static let fewest = 8

    init() {}

    init(_ keys: some Sequence<RegistrationKey>) {
        for key in keys { insert(key) }
    }

    var isEmpty: Bool { only == nil && several.isEmpty }

    /// Hands what this record holds references to, to release after unlocking: the one
    /// key's argument and the set's storage, each only if there is one. A record dropped
    /// with one key and no argument, the usual one, hands nothing; given whole, it was
    /// boxed as `Any` (a key does not fit an existential's buffer), an allocation on every
    /// override that dropped an instance.
    func keepReferences(in released: inout Released) {
        released.keep(only?.argument)
        // Not ``perRegistration``: its keys carry no argument, and freeing it runs no deinit.
        if !several.isEmpty { released.append(several) }
    }

    /// Calls `body` with the registration of each of these keys: once each when they are
    /// many, once per key when they are few.
    ///
    /// ```swift
    /// users.forEachRegistration { pending.append($0) }   // account, once for 3,000 accounts
    /// ```
    func forEachRegistration(_ body: (RegistrationKey) -> Void) {
        if let only { return body(only.registration) }
        if perRegistration.isEmpty {
            for key in several { body(key.registration) }
        } else {
            for registration in perRegistration.keys { body(registration) }
        }
    }

    var count: Int { only == nil ? several.count : 1 }

    /// How many of these keys are of `registration`: looked up when they are many, counted
    /// when they are few.
    func count(of registration: RegistrationKey) -> Int {
        if let only { return only.registration == registration ? 1 : 0 }
        if !perRegistration.isEmpty { return perRegistration[registration] ?? 0 }
        var count = 0
        for key in several where key.registration == registration { count += 1 }
        return count
    }

    func contains(_ key: RegistrationKey) -> Bool {
        if let only { return only == key }
        return several.contains(key)
    }

    mutating func insert(_ key: RegistrationKey) {
        if let only {
            guard only != key else { return }
            several = [only, key]
            self.only = nil
        } else if several.isEmpty {
            only = key
        } else if several.insert(key).inserted {
            if !perRegistration.isEmpty {
                perRegistration[key.registration, default: 0] += 1
            } else if several.count > Self.fewest {
                for each in several { perRegistration[each.registration, default: 0] += 1 }
            }
        }
    }

    /// Removes `key`, if it is one of these; returns the key as it was kept, whose
    /// argument the caller lets go of after unlocking.
    @discardableResult
    mutating func remove(_ key: RegistrationKey) -> RegistrationKey? {
        if only == key {
            defer { only = nil }
            return only
        }
        guard let removed = several.remove(key) else { return nil }
        if several.count == 1 {
            (only, several, perRegistration) = (several.first, [], [:])
        } else if several.count <= Self.fewest {
            perRegistration = [:]
        } else {
            let registration = key.registration
            let left = perRegistration[registration, default: 1] - 1
            perRegistration[registration] = left == 0 ? nil : left
        }
        return removed
    }

    /// Removes those of `keys` that are among these; returns them as they were kept.
    ///
    /// In place, looking up each of `keys`, when they are fewer than these: a change
    /// that drops one of a family's members, each built from one shared client, must not
    /// copy the client's thousands of other users, under the container's lock. When
    /// `keys` are more, the rest is built anew, and the keys it no longer holds go with
    /// the old storage, which `released` takes.
    ///
    /// ```swift
    /// let gone = users.remove([sessionKey], released: &released)   // one lookup
    /// ```
    mutating func remove(_ keys: Set<RegistrationKey>, released: inout Released) -> [RegistrationKey] {
        var removed: [RegistrationKey] = []
        if keys.count <= count {
            for key in keys {
                guard let kept = remove(key) else { continue }
                released.keep(kept.argument)
                removed.append(kept)
            }
            return removed
        }
        for key in self where keys.contains(key) { removed.append(key) }
        guard !removed.isEmpty else { return [] }
        keepReferences(in: &released)
        self = only != nil ? DependentKeys() : DependentKeys(several.subtracting(keys))
        return removed
    }

    /// Whether none of these keys is in `keys`: the fewer of the two are looked up in
    /// the other.
    func isDisjoint(with keys: Set<RegistrationKey>) -> Bool {
        if let only { return !keys.contains(only) }
        if keys.count < several.count {
            for key in keys where several.contains(key) { return false }
            return true
        }
        return several.isDisjoint(with: keys)
    }

    func makeIterator() -> Iterator { Iterator(only: only, several: several.makeIterator()) }

    struct Iterator: IteratorProtocol {
        fileprivate var only: RegistrationKey?
        fileprivate var several: Set<RegistrationKey>.Iterator

        mutating func next() -> RegistrationKey? {
            if let key = only {
                only = nil
                return key
            }
            return several.next()
        }
    }
}
