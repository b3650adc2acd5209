/// What one container overrides or decorates, listed for the questions its scope asks on
/// every app-wide resolution: whether it overrides a key (or the key's family), and which
/// registrations the app container's record of uses must be asked about.
///
/// A container lists them once, under its lock, when a scope first asks, and keeps the
/// list until its overrides or decorations change
/// (``ContainerState/listedOverriddenKeys()``). The list is read outside the lock: a key's
/// argument compares with its own `==`, which is the app's code. So it is never changed in
/// place, only replaced: a reader may still hold it.
///
/// A scope may override thousands of arguments of one family (a batch request preloading
/// the accounts it was sent): its keys are then looked up in a set, and its registrations
/// are listed once each, so that neither question goes through every argument.
///
/// ```swift
/// let listed = OverriddenKeys(keys: [userKey, accountKey(1), accountKey(2)])
/// listed.registrations            // [userKey, account]
/// listed.overrides(accountKey(2)) // true
/// ```
struct OverriddenKeys: Sendable {
    /// The registrations of the keys, each once: what the record of uses is filed by.
    let registrations: [RegistrationKey]
    /// The keys, compared one by one while they are few, as a request's are.
    private let few: [RegistrationKey]
    /// The keys, once they are more than ``fewest``; empty otherwise.
    private let many: Set<RegistrationKey>

    /// Up to how many keys are compared one by one.
    private static let fewest = 16

    static let none = OverriddenKeys(keys: [])

    init(keys: [RegistrationKey]) {
        guard keys.count > Self.fewest else {
            var registrations: [RegistrationKey] = []
            for key in keys where !registrations.contains(key.registration) { registrations.append(key.registration) }
            (self.registrations, few, many) = (registrations, keys, [])
            return
        }
        var registrations: [RegistrationKey] = []
        var seen = Set<RegistrationKey>()
        for key in keys where seen.insert(key.registration).inserted { registrations.append(key.registration) }
        (self.registrations, few, many) = (registrations, [], Set(keys))
    }

    var isEmpty: Bool { registrations.isEmpty }

    /// Whether `key` is one of these, or, for a member of a family, the whole family is.
    /// Only a key whose registration is listed is compared: the others' arguments, and the
    /// app's `==`, are never reached.
    func overrides(_ key: RegistrationKey) -> Bool {
        let registration = key.registration
        guard registrations.contains(registration) else { return false }
        if contains(key) { return true }
        return key.argument != nil && contains(registration)
    }

    private func contains(_ key: RegistrationKey) -> Bool {
        many.isEmpty ? few.contains(key) : many.contains(key)
    }
}
