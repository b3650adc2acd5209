extension Provider where Value: Sendable {
    /// The same registration, with a teardown that ``DependencyContainer/shutdown(fileID:filePath:line:column:)``
    /// runs for the instance the container built.
    ///
    /// Some singletons hold what must be given back before the app or the request ends: a
    /// connection to close, a file to flush, a session to end. Declare it where the
    /// singleton is registered, so that whoever shuts the container down does not have to
    /// know which instances exist:
    ///
    /// ```swift
    /// final class Database: Sendable {
    ///     func close() {}
    /// }
    ///
    /// extension DependencyContainer {
    ///     var database: Provider<Database> {
    ///         singleton { Database() }.onShutdown { $0.close() }
    ///     }
    /// }
    /// ```
    ///
    /// The teardown belongs to the registration, as its scope does: an override replaces
    /// how the instance is built, and its instance is torn down by this teardown too. It
    /// runs once per built instance, on the thread that calls `shutdown()`, without any
    /// container lock held; see <doc:Scopes#Shutting-down>.
    ///
    /// > Important: Only a singleton or a scoped instance is kept by its container, so only
    /// > those can be torn down: a `factory`, `shared` or `graph` registration with a teardown stops with a
    /// > message naming it as soon as its provider is made, instead of never running the
    /// > teardown. The container keeps the teardown until it is shut down, so a teardown
    /// > that captures the container keeps it alive: use only the instance it receives, or
    /// > capture `[unowned self]`.
    ///
    /// - Parameter teardown: Receives the instance; it may be called from any thread.
    /// - Returns: The same provider (same registration, same scope) with `teardown`.
    @inlinable
    public func onShutdown(_ teardown: @escaping @Sendable (Value) -> Void) -> Provider<Value> {
        PendingTeardown.check(scope, name, key)
        return Provider(self, teardown: teardown, runsOnMainActor: false)
    }
}

extension Provider {
    /// The same main-actor registration, with a teardown that runs on the main actor.
    ///
    /// A main-actor singleton (in an app module with main-actor default isolation, or a
    /// `@MainActor` property) usually closes with main-actor methods. Mark the closure
    /// `@MainActor` and it may call them; its value need not be `Sendable`:
    ///
    /// ```swift
    /// @MainActor final class PlayerSession {
    ///     func end() {}
    /// }
    ///
    /// extension DependencyContainer {
    ///     @MainActor var playerSession: Provider<PlayerSession> {
    ///         singleton { PlayerSession() }.onShutdown { @MainActor in $0.end() }
    ///     }
    /// }
    /// ```
    ///
    /// Without `@MainActor in`, Swift picks the teardown that any thread may call, and
    /// reports the main-actor call or the value that is not `Sendable`: it chooses before it
    /// looks at isolation, so the closure has to say it.
    ///
    /// > Important: Call ``DependencyContainer/shutdown(fileID:filePath:line:column:)`` on
    /// > the main actor when a main-actor teardown is due: off it, it stops with a message
    /// > naming the registration. ``DependencyContainer/shutdown(isolation:)`` (with
    /// > `await`) goes to the main actor for it from anywhere.
    ///
    /// - Parameter teardown: Receives the instance, on the main actor.
    /// - Returns: The same provider (same registration, same scope) with `teardown`.
    @MainActor @inlinable
    public func onShutdown(_ teardown: @escaping @MainActor (Value) -> Void) -> Provider<Value> {
        PendingTeardown.check(scope, name, key)
        // One closure type in the provider, with where it runs beside it: the isolation
        // changes neither the closure's representation nor its calling convention, and
        // `Provider.teardown` casts it back before anything calls it.
        return Provider(self, teardown: unsafeBitCast(teardown, to: ((Value) -> Void).self), runsOnMainActor: true)
    }

    /// The teardown of the instance in `box`, if it is kept and the registration declares
    /// one.
    @inlinable
    func pendingTeardown(of box: Box<Value>?) -> PendingTeardown? {
        guard let box, let teardown else { return nil }
        return PendingTeardown(teardown, of: box, name: name)
    }
}

extension AsyncProvider {
    /// The same async registration, with a teardown that may suspend, which
    /// ``DependencyContainer/shutdown(isolation:)`` runs for the instance the container
    /// built.
    ///
    /// ```swift
    /// final class Connection: Sendable {
    ///     static func open() async throws -> Connection { Connection() }
    ///     func close() async {}
    /// }
    ///
    /// extension DependencyContainer {
    ///     var connection: AsyncProvider<Connection> {
    ///         singleton { try await Connection.open() }.onShutdown { await $0.close() }
    ///     }
    /// }
    ///
    /// func stop(_ container: DependencyContainer) async {
    ///     await container.shutdown()   // closes the connection, if one was opened
    /// }
    /// ```
    ///
    /// Only `await shutdown()` runs an async teardown. The synchronous
    /// ``DependencyContainer/shutdown(fileID:filePath:line:column:)`` cannot wait for it:
    /// it releases the instance without it and reports a ``DependencyIssue`` that names the
    /// registration. As for ``Provider/onShutdown(_:)-((Value)->Void)``, the teardown
    /// belongs to the registration (an override's instance gets it too), and a `factory` or
    /// `shared` registration with a teardown stops as soon as its provider is made.
    ///
    /// - Parameter teardown: Receives the instance; it may be called from any task.
    /// - Returns: The same provider (same registration, same scope) with `teardown`.
    @inlinable
    public func onShutdown(_ teardown: @escaping @Sendable (Value) async -> Void) -> AsyncProvider<Value> {
        PendingTeardown.check(scope, name, key)
        return AsyncProvider(self, teardown: teardown)
    }

    /// The teardown of the instance in `box`, if the registration declares one.
    func pendingTeardown(of box: Box<Value>) -> PendingTeardown? {
        teardown.map { PendingTeardown(.async($0), of: box, name: name) }
    }
}

/// What a registration declares to run at shutdown, and where it may run.
@usableFromInline
enum Teardown<Value> {
    case anywhere(@Sendable (Value) -> Void)
    case onMainActor(@MainActor (Value) -> Void)
    case async(@Sendable (Value) async -> Void)
}

/// A kept singleton's teardown, bound to the box of its instance: what
/// ``DependencyContainer/shutdown(fileID:filePath:line:column:)`` takes out of the
/// container and runs.
///
/// It holds the box, not the value, so that a main-actor value is still released on the
/// main actor (by its `MainActorBox`) wherever the teardown is dropped.
@usableFromInline
final class PendingTeardown: @unchecked Sendable {
    // @unchecked: immutable; a main-actor teardown is only called on the main actor (the
    // shutdown functions check or hop), the others are `@Sendable`.
    enum Run {
        case anywhere(@Sendable () -> Void)
        case onMainActor(@MainActor () -> Void)
        case async(@Sendable () async -> Void)
    }

    let run: Run
    /// The registration's name, for messages.
    let name: StaticString

    @usableFromInline
    init<Value>(_ teardown: Teardown<Value>, of box: Box<Value>, name: StaticString) {
        self.name = name
        switch teardown {
        case .anywhere(let body): run = .anywhere { body(box.value) }
        case .onMainActor(let body): run = .onMainActor { body(box.value) }
        case .async(let body): run = .async { await body(box.value) }
        }
    }

    /// Stops unless `scope` keeps its instance (a singleton, or a scoped registration):
    /// only a kept instance is torn down, and a teardown that never ran would leave a
    /// connection or a file open without a word.
    @inlinable
    static func check(_ scope: DependencyScope, _ name: StaticString, _ key: RegistrationKey) {
        if !scope.isKeptByContainer { refuse(name, scope, key) }
    }

    @usableFromInline @inline(never)
    static func refuse(_ name: StaticString, _ scope: DependencyScope, _ key: RegistrationKey) -> Never {
        fatalError(
            "\(name) declares onShutdown but is a \(scope) registration. Only a singleton or a scoped instance is kept "
                + "by its container, so only those are torn down at shutdown: register it with singleton { … } or "
                + "scoped { … }, or drop onShutdown.",
            file: key.file, line: key.line)
    }

    var isOnMainActor: Bool {
        if case .onMainActor = run { true } else { false }
    }

    /// Runs a main-actor teardown.
    @MainActor
    func runOnMainActor() {
        if case .onMainActor(let body) = run { body() }
    }
}
