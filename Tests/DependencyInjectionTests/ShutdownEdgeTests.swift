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

/// Holds a reader of the database, which holds the database.
final class MailIndex: Sendable {
    let reader: MailDatabaseUser
    init(reader: MailDatabaseUser) { self.reader = reader }
}

extension DependencyContainer {
    /// A shared instance built from another registration.
    var sharedFeedLoader: Provider<RemoteFeedLoader> { shared { RemoteFeedLoader(client: self.httpClient()) } }
    /// A shared instance built from a singleton that shutdown tears down.
    var sharedMailReader: Provider<MailDatabaseUser> { shared { MailDatabaseUser(database: self.mailDatabase()) } }
    /// A shared instance built from that one.
    var sharedMailIndex: Provider<MailIndex> { shared { MailIndex(reader: self.sharedMailReader()) } }
}

/// A shared instance whose `deinit` resolves from the container that built it: released
/// under that container's lock, it would wait for the lock its own thread holds.
final class ResolvingWhenReleased: Sendable {
    weak let container: DependencyContainer?
    init(container: DependencyContainer) { self.container = container }
    deinit { _ = container?.imageCache() }
}

extension DependencyContainer {
    var sharedResolvingWhenReleased: Provider<ResolvingWhenReleased> {
        shared { ResolvingWhenReleased(container: self) }
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

    // MARK: - Shared instances belong to their holders

    /// Shutdown tears down what the container keeps: a shared instance is its holders',
    /// so one still held is served again, not built a second time.
    @Test func aSharedInstanceStillHeldIsServedAgainAfterShutdown() {
        let container = DependencyContainer()
        let builds = container.counter("imageCache")
        let held = container.imageCache()
        container.shutdown()
        #expect(container.instanceIfBuilt(\.imageCache) === held)
        #expect(container.imageCache() === held, "shutdown made a second live instance")
        #expect(builds.count == 1)
        withExtendedLifetime(held) {}
    }

    /// The same in the app container of a scope, which keeps the scope's shared instances.
    @Test func aSharedInstanceAScopeHoldsIsServedAgainAfterTheAppShutsDown() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let held = request.imageCache()
        request.shutdown()
        app.shutdown()
        #expect(request.imageCache() === held)
        #expect(app.imageCache() === held, "the app's shutdown made a second live instance")
        withExtendedLifetime(held) {}
    }

    /// A shared instance with an argument stays filed under its argument: served again,
    /// and dropped by a change of its whole provider family.
    @Test func aSharedInstanceOfAnArgumentStillHeldStaysFiledAfterShutdown() {
        let container = DependencyContainer()
        let thumbnails = container[thumbnails: 64]()
        let argument = ComboArg(1)
        let held = container.comboSharedFamily(argument)
        container.shutdown()
        #expect(container[thumbnails: 64]() === thumbnails)
        #expect(container.comboSharedFamily(argument) === held)
        container.override(\.comboSharedFamily) { _ in ComboObj("stub") }
        #expect(container.comboSharedFamily(argument).tag == "stub", "a family override served the instance it replaced")
        withExtendedLifetime((thumbnails, held)) {}
    }

    /// A shared instance still held after shutdown keeps its record of uses: overriding
    /// what it was built from drops it, so the next resolution builds from the override.
    @Test func aSharedInstanceStillHeldAfterShutdownIsDroppedByAChangeOfWhatItUsed() {
        let container = DependencyContainer()
        let held = container.sharedFeedLoader()
        container.shutdown()
        container.override(\.httpClient) { StubHTTPClient() }
        let next = container.sharedFeedLoader()
        #expect(next !== held, "a change of what the shared instance was built from served it")
        #expect(next.client is StubHTTPClient)
        withExtendedLifetime(held) {}
    }

    /// One that died is forgotten: the next resolution builds a new one.
    @Test func aSharedInstanceThatDiedIsBuiltAnewAfterShutdown() {
        let container = DependencyContainer()
        let builds = container.counter("imageCache")
        weak var first: ImageCache?
        do {
            let held = container.imageCache()
            first = held
        }
        #expect(first == nil)
        container.shutdown()
        _ = container.imageCache()
        #expect(builds.count == 2)
    }

    /// Shutdowns race threads that resolve a shared instance and let it go, whose `deinit`
    /// resolves from the container: the look that finds a shared instance alive never lets
    /// it go under the lock, and a holder that keeps one across a shutdown gets it again.
    @Test func shutdownsRacingHoldersOfASharedInstanceReleaseNothingUnderTheLock() async {
        let container = DependencyContainer()
        let ok = await concurrentlyOffThePool(threads: 4) { index in
            for _ in 0..<500 {
                if index < 2 {
                    container.shutdown()
                } else {
                    let held = container.sharedResolvingWhenReleased()
                    container.shutdown()
                    precondition(container.sharedResolvingWhenReleased() === held, "a second live instance")
                }
            }
        }
        #expect(ok)
    }

    /// A shared instance still held that was built from a singleton shutdown tears down
    /// holds what was torn down: the container forgets it, and the next resolution builds
    /// one from the singleton built anew, which what is built later shares.
    @Test func aSharedInstanceBuiltFromATornDownSingletonIsBuiltAnewAfterShutdown() {
        let container = DependencyContainer()
        let held = container.sharedMailReader()
        let index = container.sharedMailIndex()
        container.shutdown()
        #expect(held.database.closeCount == 1)
        let reader = container.sharedMailReader()
        #expect(reader !== held, "a shared instance built from a torn-down singleton was served after shutdown")
        #expect(reader.database.closeCount == 0)
        #expect(reader.database === container.mailDatabase(), "two databases after shutdown")
        let nextIndex = container.sharedMailIndex()
        #expect(nextIndex !== index, "a shared instance built through another from a torn-down singleton was served")
        #expect(nextIndex.reader === reader)
        withExtendedLifetime((held, index)) {}
    }
}
