/// The users of one registration that a walk of a container's record of uses reaches:
/// every user, or, for the question what a construction resolved itself, every user but
/// those recorded by time window only (``SeldomUsedState/windowOnlyUses``).
///
/// The window-only users are set aside by looking, not by making a list without them. The
/// users of one registration may be thousands of arguments of one family (the accounts a
/// batch request built from limits it overrides), and a list made anew on each step of
/// each walk made such a request's resolutions grow as the square of their number, once
/// the app container had recorded a single use by time window.
///
/// ```swift
/// let users = ReachedUsers(all: accountUsers, windowOnly: accountUsersByTimeWindow)
/// users.contains(auditKey)                        // false if only a time window saw it
/// users.forEachRegistration { pending.append($0) }  // the audit registration, once
/// ```
struct ReachedUsers {
    /// Every user of the registration the record holds.
    let all: DependentKeys
    /// Those of ``all`` set aside: the users recorded by time window only, or none.
    let windowOnly: DependentKeys?

    func contains(_ key: RegistrationKey) -> Bool {
        all.contains(key) && windowOnly?.contains(key) != true
    }

    /// Calls `body` with the registration of each user not set aside; once each, when the
    /// users are many.
    func forEachRegistration(_ body: (RegistrationKey) -> Void) {
        guard let windowOnly else { return all.forEachRegistration(body) }
        // The window-only users are some of all of them (the record drops a key from both
        // at once): a registration has a user not set aside when it has more users.
        all.forEachRegistration { registration in
            if windowOnly.count(of: registration) < all.count(of: registration) { body(registration) }
        }
    }
}
