/// App-wide instances that a change made stale, handed to the scopes the change reaches:
/// a scope shares its app container's instances, so each scope drops what it built from
/// them.
///
/// A scope drops the *users* of each key, by its record of uses, and never its own
/// instance of the key: that one was built from the scope's values, not the app's. A scope
/// that overrides every changed key itself built nothing from the app's instances of them,
/// and takes none, unless a change of its own is under way
/// (``ContainerState/changesUnderWay``): the app's change may have taken the record its
/// change reads.
///
/// ```swift
/// // The app built `timed` from `clock`, a request its handler from the app's `timed`;
/// // the app overrides `clock`:
/// let stale = StaleAppInstances(keys: [timed], origin: .appChange, changed: [clock])
/// // The request drops its handler; a session that overrides `clock` itself drops nothing.
/// ```
struct StaleAppInstances {
    /// Why the instances are stale, which decides what a scope spares.
    enum Origin {
        /// The app container (or a container above it) changed the keys the instances
        /// were built from. A scope that overrides every changed key itself built nothing
        /// from them, and takes none; a scope that keeps its own instance of a key keeps
        /// what it built from it.
        case appChange
        /// The app container was reset or shut down: every app-wide instance is gone,
        /// whatever it was built from. A scope that keeps its own instance of a key keeps
        /// what it built from it.
        case appReset
        /// A scope changed a key, and the instances are the app container's, built from
        /// it: the scope and the scopes inside it drop every user of their keys, even of a
        /// copy of their own, which may have been built while the change was under way,
        /// after what was built from the app's copy. Uses are recorded per registration,
        /// so they cannot be told apart: what is dropped needlessly is built again. Any
        /// stale instances reach a scope with a change of its own under way this way.
        case scopeChange
    }

    /// The keys of the stale app-wide instances.
    var keys: [RegistrationKey]
    /// Why they are stale.
    var origin: Origin
    /// The changed keys they were built from; empty for a reset or a shutdown, which
    /// drops them whatever they were built from.
    var changed: [RegistrationKey]

    /// None: what reaches a container that is not a scope, and a change that made no
    /// app-wide instance stale.
    static let none = StaleAppInstances(keys: [], origin: .appChange, changed: [])
}
