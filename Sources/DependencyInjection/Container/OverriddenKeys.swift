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
///
/// A class, immutable: a scope's look copies it on every app-wide resolution, one
/// reference rather than each of its collections.
final class OverriddenKeys: @unchecked Sendable {
    // @unchecked: immutable, and built only from a container's keys, whose arguments are
    // `Sendable`.

    /// The registrations of the keys, each once: what the record of uses is filed by. The
    /// keys themselves, sharing their storage, when none has an argument and none repeats
    /// (a request's user): no second list.
    let registrations: [RegistrationKey]
    /// The keys, compared one by one while they are few, as a request's are.
    private let few: [RegistrationKey]
    /// The keys, once they are more than ``fewest``; empty otherwise.
    private let many: Set<RegistrationKey>

    /// Up to how many keys are compared one by one.
    private static let fewest = 16

    /// What a container that overrides and decorates nothing lists.
    static let none = OverriddenKeys(keys: [])

    init(keys: [RegistrationKey]) {
        guard keys.count > Self.fewest else {
            (few, many) = (keys, [])
            if keys.count == 1 && keys[0].argument == nil {
                registrations = keys
                return
            }
            var registrations: [RegistrationKey] = []
            for key in keys where !registrations.contains(key.registration) { registrations.append(key.registration) }
            let sameAsKeys = registrations.count == keys.count && !keys.contains { $0.argument != nil }
            self.registrations = sameAsKeys ? keys : registrations
            return
        }
        var registrations: [RegistrationKey] = []
        var seen = Set<RegistrationKey>()
        for key in keys where seen.insert(key.registration).inserted { registrations.append(key.registration) }
        (self.registrations, few, many) = (registrations, [], Set(keys))
    }

    var isEmpty: Bool { registrations.isEmpty }

    /// Whether `key` is one of these, or, for a member of a family, the whole family is.
    /// Among many, only a key whose registration is listed is looked up.
    @inline(__always)
    func overrides(_ key: RegistrationKey) -> Bool {
        if many.isEmpty {
            return few.contains(key) || key.argument != nil && few.contains(key.registration)
        }
        let registration = key.registration
        guard registrations.contains(registration) else { return false }
        return many.contains(key) || key.argument != nil && many.contains(registration)
    }
}
