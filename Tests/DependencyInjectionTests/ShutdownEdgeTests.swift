import DependencyInjection
import Foundation
import Testing

/// Holds the database it was built from.
final class MailDatabaseUser: Sendable {
    let database: MailResource
    init(database: MailResource) { self.database = database }
}

extension DependencyContainer {
    /// A teardown that reaches the container through a strong capture of `self`, as a
    /// `make` closure may.
    var strongTeardownMailbox: Provider<MailResource> {
        singleton { MailResource("strongTeardownMailbox", log: nil) }
            .onShutdown { mailbox in
                mailbox.close()
                _ = self.instanceIfBuilt(\.mailDatabase)
            }
    }
    /// The same with a `make` closure that captures `self` and a teardown that does not.
    var strongMakeMailbox: Provider<MailResource> {
        singleton { _ = self.instanceIfBuilt(\.mailDatabase); return MailResource("strongMakeMailbox", log: nil) }
            .onShutdown { $0.close() }
    }
    /// Resolves `mailDatabase`, then waits at the gate stored under "edgeGate".
    var gatedDatabaseUser: Provider<MailDatabaseUser> {
        singleton {
            let database = self.mailDatabase()
            (self.getValue(forKey: "edgeGate") as ConstructionGate?)?.enterAndWait()
            return MailDatabaseUser(database: database)
        }.onShutdown { _ in }
    }
    /// Resolves `mailDatabase` after it is built (lazily), not while it is built.
    var lazyDatabaseUser: Provider<LazyDatabaseUser> {
        singleton { LazyDatabaseUser(container: self) }.onShutdown { user in
            self.shutdownLog?.append("lazyDatabaseUser(database closed: \(user.used.values[0].closeCount > 0))")
        }
    }
}

final class LazyDatabaseUser: Sendable {
    unowned let container: DependencyContainer
    init(container: DependencyContainer) { self.container = container }
    let used = Collected<MailResource>()
    /// Resolves the database and remembers it.
    func useDatabase() { used.append(container.mailDatabase()) }
}

@Suite struct ShutdownEdgeTests {
    /// A `make` closure may capture the container strongly: it is not kept. A teardown is
    /// kept by the container, so the same capture makes a cycle that only shutdown breaks.
    @Test func aMakeClosureCapturingTheContainerDoesNotLeakIt() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.strongMakeMailbox()
        }
        #expect(released == nil)
    }

    /// As documented: the container keeps a teardown until it is shut down.
    @Test func aTeardownCapturingTheContainerKeepsItUntilShutDown() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.strongTeardownMailbox()
        }
        #expect(released != nil, "container -> teardowns -> closure -> container")
        released?.shutdown()   // breaks the cycle
        #expect(released == nil)
    }

    /// As documented: a singleton being built at shutdown is kept when it is done, even if
    /// it already took an instance that shutdown tears down.
    @Test func aConstructionInFlightIsKeptEvenWithAnInstanceThatShutdownClosed() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "edgeGate")
        let built = Collected<MailDatabaseUser>()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            built.append(container.gatedDatabaseUser())
            finished.signal()
        }.start()
        gate.entered.wait()
        container.shutdown()   // closes the database the user already holds
        gate.open()
        finished.wait()
        let user = built.values[0]
        #expect(user.database.closeCount == 1)
        #expect(container.instanceIfBuilt(\.gatedDatabaseUser) === user)
        // Every later resolution is served the user of a closed database.
        #expect(container.gatedDatabaseUser() === user)
        #expect(container.gatedDatabaseUser().database.closeCount == 1)
    }

    /// Teardown follows build order: a dependency resolved only after the singleton was
    /// built is torn down first.
    @Test func aDependencyResolvedAfterConstructionIsTornDownFirst() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        let user = container.lazyDatabaseUser()
        user.useDatabase()
        container.shutdown()
        // The user's teardown sees its database already closed.
        #expect(log.values == ["mailDatabase", "lazyDatabaseUser(database closed: true)"])
    }

    /// instanceIfBuilt never builds, even for a registration whose provider is overridden
    /// in a parent.
    @Test func instanceIfBuiltInAChildDoesNotBuildFromAParentOverride() {
        let parent = DependencyContainer()
        parent.override(\.mailDatabase) { MailResource("stub", log: nil) }
        let child = DependencyContainer(parent: parent)
        let builds = child.counter("mailDatabase")
        #expect(child.instanceIfBuilt(\.mailDatabase) == nil)
        _ = child.mailDatabase()
        #expect(child.instanceIfBuilt(\.mailDatabase)?.name == "stub")
        #expect(parent.instanceIfBuilt(\.mailDatabase) == nil)
        #expect(builds.count == 0)
        child.shutdown()
        #expect(child.instanceIfBuilt(\.mailDatabase) == nil)
    }
}
