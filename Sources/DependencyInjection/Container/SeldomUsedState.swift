/// The parts of a container's state that most containers never change: the key-value
/// storage of the original API, decorations, shared instances, the arguments and
/// teardowns of what is kept, and what scopes learn and hand on. A test's world and a
/// request's scope use none of them, and as fields of ``ContainerState`` each was an
/// empty table made with every container and released with it: one object made on
/// the first change instead saves each such container about 200 instructions.
///
/// It belongs to one ``ContainerState`` and is only touched under its container's lock,
/// through the state's properties of the same names, which read an empty table while
/// there is none:
///
/// ```swift
/// state.values[key] = value            // makes the object, once
/// let users = state.sharedInstances    // empty, and makes nothing, in most containers
/// ```
final class SeldomUsedState {
    // @exclusivity(unchecked): the container's lock makes every access exclusive.

    /// The key-value storage of the original API.
    @exclusivity(unchecked) var values: [String: any Sendable] = .init()
    /// Wrappers of registrations, each a `Decoration<Value>` or `AsyncDecoration<Value>`,
    /// in the order they were installed. Changed only where ``ContainerState/overrides`` is.
    @exclusivity(unchecked) var decorations: [RegistrationKey: [AnyObject]] = .init()
    /// Shared instances, held weakly: each is kept while something else holds it.
    @exclusivity(unchecked) var sharedInstances: [RegistrationKey: SharedInstance] = .init()
    /// For each registration, the keys among its ``ContainerState/dependents`` filed only because their
    /// construction was in flight while another thread or task resolved it
    /// (``ResolvingCode``): a helper the construction waited for, or a bystander. An
    /// override of the registration drops them as it drops the others, but a scope does
    /// not build or keep a copy of its own for them (``ContainerState/built(_:fromAnyOf:)``). Empty
    /// unless constructions overlap resolutions on other threads.
    @exclusivity(unchecked) var windowOnlyUses = UsesRecord()
    /// For each parameterized registration, the keys (one per argument) of the instances
    /// kept here, singletons and shared ones: what a change of a whole provider family drops.
    @exclusivity(unchecked) var arguments: [RegistrationKey: Set<RegistrationKey>] = .init()
    /// The teardowns of the kept singletons that declare one, each with its place in
    /// build order; dropped with their instances.
    @exclusivity(unchecked) var teardowns: [RegistrationKey: (order: Int, teardown: PendingTeardown)] = .init()
    /// In a scope: app-wide registrations found to be built from what the scope overrides,
    /// which the scope builds itself. Unlike the app container's record of uses, it
    /// survives the app container's resets; it is forgotten when the overrides of the scope
    /// or of a scope enclosing it change (``ContainerState/forgetLearnedOwn(released:)``).
    @exclusivity(unchecked) var learnedOwn: Set<RegistrationKey> = .init()
    /// In a container with scopes: the keys of the instances each change or reset here
    /// dropped, with the keys it changed (none for a reset), while the change is still
    /// reaching the scopes. A scope's own change of the same keys
    /// reads them with the record of uses, which the drop forgot.
    @exclusivity(unchecked) var staleUnderWay: [ContainerState.StaleHanding] = .init()
    /// In the private container of a linked provider: the container whose registration
    /// the link reads (``DependencyContainer/isLinkHost``), held without keeping it, as the
    /// link holds it.
    @exclusivity(unchecked) var linkTarget: UnkeptContainer?

    /// Whether it keeps no instance, argument or teardown: what
    /// ``ContainerState/hasNothingToDrop`` asks of it.
    var holdsNothingToDrop: Bool { sharedInstances.isEmpty && arguments.isEmpty && teardowns.isEmpty }
}

extension ContainerState {
    /// ``SeldomUsedState/values``: empty until the first change.
    var values: [String: any Sendable] {
        get { seldom?.values ?? .init() }
        _modify { yield &madeSeldom.values }
    }

    /// ``SeldomUsedState/decorations``: empty until the first change.
    var decorations: [RegistrationKey: [AnyObject]] {
        get { seldom?.decorations ?? .init() }
        _modify { yield &madeSeldom.decorations }
    }

    /// ``SeldomUsedState/sharedInstances``: empty until the first change.
    var sharedInstances: [RegistrationKey: SharedInstance] {
        get { seldom?.sharedInstances ?? .init() }
        _modify { yield &madeSeldom.sharedInstances }
    }

    /// ``SeldomUsedState/windowOnlyUses``: empty until the first change.
    var windowOnlyUses: UsesRecord {
        get { seldom?.windowOnlyUses ?? .init() }
        _modify { yield &madeSeldom.windowOnlyUses }
    }

    /// ``SeldomUsedState/arguments``: empty until the first change.
    var arguments: [RegistrationKey: Set<RegistrationKey>] {
        get { seldom?.arguments ?? .init() }
        _modify { yield &madeSeldom.arguments }
    }

    /// ``SeldomUsedState/teardowns``: empty until the first change.
    var teardowns: [RegistrationKey: (order: Int, teardown: PendingTeardown)] {
        get { seldom?.teardowns ?? .init() }
        _modify { yield &madeSeldom.teardowns }
    }

    /// ``SeldomUsedState/learnedOwn``: empty until the first change.
    var learnedOwn: Set<RegistrationKey> {
        get { seldom?.learnedOwn ?? .init() }
        _modify { yield &madeSeldom.learnedOwn }
    }

    /// ``SeldomUsedState/staleUnderWay``: empty until the first change.
    var linkTarget: UnkeptContainer? {
        get { seldom?.linkTarget }
        set { madeSeldom.linkTarget = newValue }
    }

    var staleUnderWay: [ContainerState.StaleHanding] {
        get { seldom?.staleUnderWay ?? .init() }
        _modify { yield &madeSeldom.staleUnderWay }
    }

    // Whether each table holds anything, read without making an empty one: an empty
    // table made on every read cost an override about 100 instructions.
    var hasDecorations: Bool { seldom.map { !$0.decorations.isEmpty } ?? false }
    var hasSharedInstances: Bool { seldom.map { !$0.sharedInstances.isEmpty } ?? false }
    var hasWindowOnlyUses: Bool { seldom.map { !$0.windowOnlyUses.isEmpty } ?? false }
    var hasArguments: Bool { seldom.map { !$0.arguments.isEmpty } ?? false }
    var hasTeardowns: Bool { seldom.map { !$0.teardowns.isEmpty } ?? false }
    var hasLearnedOwn: Bool { seldom.map { !$0.learnedOwn.isEmpty } ?? false }
    var hasStaleUnderWay: Bool { seldom.map { !$0.staleUnderWay.isEmpty } ?? false }

    /// ``seldom``, made on the first change of one of its tables.
    private var madeSeldom: SeldomUsedState {
        mutating get {
            if let seldom { return seldom }
            let made = SeldomUsedState()
            seldom = made
            return made
        }
    }
}
