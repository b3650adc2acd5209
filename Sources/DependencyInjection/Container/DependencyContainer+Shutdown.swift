extension DependencyContainer {
    /// Tears down what this container built: runs the teardown of each singleton it
    /// keeps, most recently built first, and empties it.
    ///
    /// Call it where a container's life ends: when the app terminates, when a user signs
    /// out, at the end of a request or a test. Registrations declare their teardowns
    /// (``Provider/onShutdown(_:)-((Value)->Void)``), so the caller need not know
    /// which instances exist, and nothing is built just to be closed:
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
    ///
    /// let container = DependencyContainer()
    /// _ = container.database()
    /// container.shutdown()   // closes the database
    /// container.shutdown()   // nothing left to close
    /// ```
    ///
    /// A singleton built from another while it was being built finishes after it, so it is
    /// torn down before it (a dependency resolved later, lazily, is torn down first).
    /// The container is emptied first, at once, and then the teardowns run without any
    /// lock held: each instance is torn down exactly once, even when two shutdowns race,
    /// and a teardown or a `deinit` may use the container, where it builds anew. A later
    /// resolution builds anew too, and a later shutdown tears that down.
    ///
    /// A `shared` instance is not the container's: one that something still holds stays, and
    /// the next resolution serves it rather than building a second one, unless it was built
    /// from what shutdown tears down (a singleton, directly or through other instances):
    /// that one holds what was torn down, and the next resolution builds anew.
    ///
    /// Unlike ``reset()``, shutdown keeps the overrides and the stored values: a container
    /// configured with stubs is never left serving live services. A singleton still being
    /// built when shutdown starts is kept when it is done, for a later shutdown, even if
    /// shutdown tore down something it was built from. A container released without
    /// `shutdown()` runs no teardowns. Child
    /// containers are not shut down: each owns what it built, so shut a child down before
    /// its parent.
    ///
    /// > Important: This synchronous form cannot wait for an async teardown
    /// > (``AsyncProvider/onShutdown(_:)``): it releases that instance without it and
    /// > reports a ``DependencyIssue`` at this call. Use ``shutdown(isolation:)`` with
    /// > `await` in async code. A main-actor teardown needs this call on the main actor; off
    /// > it, it stops with a message naming the registration.
    ///
    /// - Parameters:
    ///   - fileID: Where the issue of a skipped async teardown points; leave the default.
    ///   - filePath: The path of that file, for the test runner; leave the default.
    ///   - line: The line of this call; leave the default.
    ///   - column: The column of this call; leave the default.
    public func shutdown(
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) {
        let teardowns = takeTeardowns()
        if let onMainActor = teardowns.first(where: \.isOnMainActor) {
            MainActorThread.check(
                "\(onMainActor.name) has a @MainActor teardown, and shutdown() was called off the main actor. "
                    + "Call it on the main actor, or await shutdown().")
        }
        for teardown in teardowns {
            switch teardown.run {
            case .anywhere(let body): body()
            case .onMainActor(let body): MainActor.assumeIsolated { body() }
            case .async:
                DependencyIssue(
                    dependency: teardown.name.description,
                    message: "\(teardown.name) has an async teardown, which shutdown() cannot wait for, so it did not "
                        + "run: await shutdown() instead.",
                    fileID: fileID, filePath: filePath, line: line, column: column, container: self
                ).report()
            }
        }
    }

    /// Tears down what this container built, waiting for async teardowns: the form of
    /// ``shutdown(fileID:filePath:line:column:)`` for async code.
    ///
    /// It runs every kind of teardown, most recently built first, one at a time: an async
    /// teardown is awaited before the next starts, and a main-actor teardown runs on the
    /// main actor, from wherever this is called:
    ///
    /// ```swift
    /// final class Connection: Sendable {
    ///     func close() async {}
    /// }
    ///
    /// extension DependencyContainer {
    ///     var connection: AsyncProvider<Connection> {
    ///         singleton { Connection() }.onShutdown { await $0.close() }
    ///     }
    /// }
    ///
    /// func signOut(_ session: DependencyContainer) async {
    ///     await session.shutdown()
    /// }
    /// ```
    ///
    /// In async code Swift picks this form, so `await` is needed and no async teardown is
    /// skipped by mistake. Otherwise it behaves as the synchronous form.
    ///
    /// - Parameter isolation: The actor the synchronous teardowns run on; inferred from
    ///   the caller.
    public func shutdown(isolation: isolated (any Actor)? = #isolation) async {
        for teardown in takeTeardowns() {
            switch teardown.run {
            case .anywhere(let body): body()
            case .onMainActor: await MainActor.run { teardown.runOnMainActor() }
            case .async(let body): await body()
            }
        }
    }

    /// Empties the container under its lock, keeping overrides, stored values and the
    /// constructions in flight, and hands out the teardowns of what it dropped.
    private func takeTeardowns() -> [PendingTeardown] {
        withStateLock(releasingAfter: { state, released in state.shutDown(released: &released) })
    }
}

extension ContainerState {
    /// Drops every cached instance and hands out their teardowns, most recently built
    /// first. A construction in flight runs on, so that it keeps its instance (with its
    /// teardown) when it is done.
    ///
    /// The record of uses stays: it names registrations, not instances, and a scope reads
    /// it to find what it built from the app's instances. Forgetting it here let a later
    /// change of a key miss what a request built before the shutdown from an app-wide
    /// instance that used the key. A rebuilt instance files the same uses again; one that
    /// no longer makes them is rebuilt once more by a change of the key, as for any use
    /// the record over-approximates. The instances it names are gone, so it names them by
    /// their families (``RegistrationKey/goneInstances``), as a sweep names dead shared
    /// instances: a later construction of one of their keys that keeps nothing forgets
    /// what it used, and must not take their record with it. The constructions in flight
    /// keep their record under their own keys.
    ///
    /// A shared instance is not the container's to drop: it belongs to whoever still holds
    /// it. One that is alive stays filed, with its argument and its record of uses, so that
    /// the next resolution serves it rather than a second live instance, and a change of
    /// what it was built from still drops it; the dead ones are forgotten. So is one built,
    /// directly or through others, from an instance this shutdown drops: it holds what
    /// was torn down, and the next resolution builds anew from what replaces it, as after
    /// an override.
    mutating func shutDown(released: inout Released) -> [PendingTeardown] {
        if seldom?.sharedInstances.isEmpty == false { forgetDeadSharedInstances(released: &released) }
        var liveShared = Set(sharedInstances.keys)
        if !liveShared.isEmpty, !dependents.isEmpty {
            let stale = liveShared.intersection(keysBuilt(fromAnyOf: singletons.cachedKeys))
            for key in stale { released.keep(sharedInstances.removeValue(forKey: key)) }
            liveShared.subtract(stale)
        }
        if !dependents.isEmpty {
            let running = Set(building.keys)
            var gone = Set<RegistrationKey>()
            for users in dependents.allUsers {
                for user in users where !running.contains(user) && !liveShared.contains(user) {
                    gone.insert(user)
                }
            }
            if !gone.isEmpty {
                nameUsesByFamily(of: gone, released: &released)
                released.append(gone)
            }
        }
        singletons.removeAll(into: &released)
        released.append(teardowns)
        drops &+= 1
        guard let seldom else { return [] }
        let arguments = seldom.arguments
        released.append(arguments)
        seldom.arguments = liveShared.isEmpty ? [:] : arguments.compactMapValues { keys in
            let kept = keys.intersection(liveShared)
            return kept.isEmpty ? nil : kept
        }
        defer { seldom.teardowns = [:] }
        return seldom.teardowns.values.sorted { $0.order > $1.order }.map(\.teardown)
    }
}
