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
    /// With ``several``: how many of its keys each registration has. A walk of the record
    /// of uses goes on from the registrations of the users it finds, and the users of one
    /// registration are often thousands of arguments of one family (the accounts a batch
    /// request built from the limits it overrides): the walk takes their registrations from
    /// here, once each, rather than going through every key on every step.
    private var perRegistration: [RegistrationKey: Int] = [:]

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

    /// The registrations of these keys, each once.
    ///
    /// ```swift
    /// users.registrations   // [account], for 3,000 accounts
    /// ```
    var registrations: [RegistrationKey] {
        if let only { return [only.registration] }
        return Array(perRegistration.keys)
    }

    var count: Int { only == nil ? several.count : 1 }

    func contains(_ key: RegistrationKey) -> Bool {
        if let only { return only == key }
        return several.contains(key)
    }

    mutating func insert(_ key: RegistrationKey) {
        if let only {
            guard only != key else { return }
            several = [only, key]
            perRegistration = [only.registration: 1]
            perRegistration[key.registration, default: 0] += 1
            self.only = nil
        } else if several.isEmpty {
            only = key
        } else if several.insert(key).inserted {
            perRegistration[key.registration, default: 0] += 1
        }
    }

    /// Removes `key`, if it is one of these.
    mutating func remove(_ key: RegistrationKey) {
        if only == key {
            only = nil
        } else if several.remove(key) != nil {
            if several.count == 1 {
                (only, several, perRegistration) = (several.first, [], [:])
            } else {
                let registration = key.registration
                let left = perRegistration[registration, default: 1] - 1
                perRegistration[registration] = left == 0 ? nil : left
            }
        }
    }

    /// These keys without those of `other`.
    func subtracting(_ other: DependentKeys) -> DependentKeys {
        DependentKeys(filter { !other.contains($0) })
    }

    /// Whether none of these keys is in `keys`.
    func isDisjoint(with keys: Set<RegistrationKey>) -> Bool {
        if let only { return !keys.contains(only) }
        return several.isDisjoint(with: keys)
    }

    /// These keys without those in `keys`.
    func subtracting(_ keys: Set<RegistrationKey>) -> DependentKeys {
        if let only { return keys.contains(only) ? DependentKeys() : self }
        return DependentKeys(several.subtracting(keys))
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
