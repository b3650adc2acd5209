import DependencyInjection
import Foundation
import Testing

/// Something to give back at shutdown: it writes its name to the container's shutdown
/// log when closed, and counts its own closes.
final class MailResource: Sendable {
    let name: String
    private let log: Collected<String>?
    private let closes = Counter()
    init(_ name: String, log: Collected<String>?) { (self.name, self.log) = (name, log) }

    var closeCount: Int { closes.count }
    func close() {
        closes.increment()
        log?.append(name)
    }
    func closeAfterSuspending() async {
        await Task.yield()
        close()
    }
}

/// Resolves from its container when it goes away.
final class ResolvesWhenReleased: Sendable {
    unowned let container: DependencyContainer
    init(container: DependencyContainer) { self.container = container }
    deinit { _ = container.mailDatabase() }
}

/// A main-actor object that is not `Sendable`.
final class PlayerSession {
    var hasEnded = false
    func end() { hasEnded = true }
}

extension DependencyContainer {
    var shutdownLog: Collected<String>? { getValue(forKey: "shutdownLog") }

    /// A chain: `mailSync` is built from `mailRepository`, built from `mailDatabase`.
    var mailDatabase: Provider<MailResource> {
        singleton {
            self.count("mailDatabase")
            return MailResource("mailDatabase", log: self.shutdownLog)
        }.onShutdown { $0.close() }
    }
    var mailRepository: Provider<MailResource> {
        singleton {
            _ = self.mailDatabase()
            self.count("mailRepository")
            return MailResource("mailRepository", log: self.shutdownLog)
        }.onShutdown { $0.close() }
    }
    var mailSync: Provider<MailResource> {
        singleton {
            _ = self.mailRepository()
            return MailResource("mailSync", log: self.shutdownLog)
        }.onShutdown { $0.close() }
    }
    /// Independent of the chain.
    var attachmentCache: Provider<MailResource> {
        singleton { MailResource("attachmentCache", log: self.shutdownLog) }.onShutdown { $0.close() }
    }
    /// Resolves `mailDatabase` while it is torn down.
    var outbox: Provider<MailResource> {
        singleton { MailResource("outbox", log: self.shutdownLog) }.onShutdown { [unowned self] outbox in
            outbox.close()
            _ = self.mailDatabase()
        }
    }
    var releaseWatcher: Provider<ResolvesWhenReleased> {
        singleton { ResolvesWhenReleased(container: self) }.onShutdown { _ in }
    }
    /// Waits at the gate stored in the container while it is built.
    var gatedMailbox: Provider<MailResource> {
        singleton {
            (self.getValue(forKey: "gate") as ConstructionGate?)?.enterAndWait()
            return MailResource("gatedMailbox", log: self.shutdownLog)
        }.onShutdown { $0.close() }
    }
    /// `gatedMailbox` after resolving `mailDatabase`.
    var gatedRepository: Provider<MailResource> {
        singleton {
            _ = self.mailDatabase()
            (self.getValue(forKey: "gate") as ConstructionGate?)?.enterAndWait()
            return MailResource("gatedRepository", log: self.shutdownLog)
        }.onShutdown { $0.close() }
    }
    /// Every instance it builds goes to the `Collected` stored under "built".
    var trackedMailbox: Provider<MailResource> {
        singleton {
            let mailbox = MailResource("trackedMailbox", log: nil)
            (self.getValue(forKey: "built") as Collected<MailResource>?)?.append(mailbox)
            return mailbox
        }.onShutdown { $0.close() }
    }
    var draftFactory: Provider<MailResource> {
        factory { MailResource("draft", log: nil) }.onShutdown { $0.close() }
    }
    var composer: Provider<MailResource> { factory { MailResource("composer", log: nil) } }
    var previewCache: Provider<ImageCache> { shared { ImageCache() } }

    var asyncMailDatabase: AsyncProvider<MailResource> {
        singleton { MailResource("asyncMailDatabase", log: self.shutdownLog) }
            .onShutdown { await $0.closeAfterSuspending() }
    }
    var asyncMailRepository: AsyncProvider<MailResource> {
        singleton {
            _ = try await self.asyncMailDatabase()
            return MailResource("asyncMailRepository", log: self.shutdownLog)
        }.onShutdown { await $0.closeAfterSuspending() }
    }

    @MainActor var playerSession: Provider<PlayerSession> {
        singleton { @MainActor in PlayerSession() }.onShutdown { @MainActor in $0.end() }
    }

    /// Installs a fresh shutdown log and returns it.
    func installShutdownLog() -> Collected<String> {
        let log = Collected<String>()
        setValue(log, forKey: "shutdownLog")
        return log
    }
}

/// Starts `resolve` on a thread of its own and returns once the construction it starts
/// waits at the gate stored in `container`. The function it returns lets the construction go on and returns
/// what it built.
private func buildBehindAGate(
    in container: DependencyContainer, _ resolve: @escaping @Sendable () -> MailResource
) -> () -> MailResource {
    let gate = ConstructionGate()
    container.setValue(gate, forKey: "gate")
    let held = onThread(resolve)
    gate.entered.wait()
    return {
        gate.open()
        return held()
    }
}

/// The synchronous form, called from code that is not async.
private func shutDownSynchronously(_ container: DependencyContainer) {
    container.shutdown()
}

@Suite struct ShutdownTests {
    // MARK: - Order

    @Test func aSingletonBuiltFromAnotherIsTornDownFirst() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        _ = container.mailSync()
        container.shutdown()
        #expect(log.values == ["mailSync", "mailRepository", "mailDatabase"])
    }

    @Test func independentSingletonsAreTornDownInReverseBuildOrderNotDeclarationOrder() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        _ = container.attachmentCache()
        _ = container.mailDatabase()
        container.shutdown()
        #expect(log.values == ["mailDatabase", "attachmentCache"])
    }

    // MARK: - What is torn down

    @Test func shutdownBuildsNothing() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        let repositories = container.counter("mailRepository")
        _ = container.mailDatabase()
        container.shutdown()
        #expect(log.values == ["mailDatabase"])
        #expect(repositories.count == 0)
    }

    @Test func shuttingDownTwiceTearsDownOnce() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        let database = container.mailDatabase()
        container.shutdown()
        container.shutdown()
        #expect(database.closeCount == 1)
        #expect(log.values == ["mailDatabase"])
    }

    @Test func aLaterResolutionBuildsAnewAndTheNextShutdownTearsItDown() {
        let container = DependencyContainer()
        let first = container.mailDatabase()
        container.shutdown()
        let second = container.mailDatabase()
        #expect(second !== first)
        container.shutdown()
        #expect(first.closeCount == 1)
        #expect(second.closeCount == 1)
    }

    @Test func overridesAndStoredValuesStayAndTheRegistrationTearsDownTheOverridesInstance() {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        container.override(\.mailDatabase) { MailResource("stubDatabase", log: log) }
        _ = container.mailDatabase()
        container.shutdown()
        #expect(log.values == ["stubDatabase"])
        #expect(container.mailDatabase().name == "stubDatabase")
        #expect(container.shutdownLog === log)
    }

    @Test func whatAnOverrideOrResetDropsIsReleasedWithoutTeardown() {
        let container = DependencyContainer()
        let replaced = container.mailDatabase()
        container.override(\.mailDatabase) { MailResource("stubDatabase", log: nil) }
        container.shutdown()
        #expect(replaced.closeCount == 0)
        let reset = container.mailDatabase()
        container.reset()
        container.shutdown()
        #expect(reset.closeCount == 0)
    }

    @Test func aChildIsNotShutDownWithItsParent() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let parentDatabase = parent.mailDatabase()
        let childDatabase = child.mailDatabase()
        parent.shutdown()
        #expect(parentDatabase.closeCount == 1)
        #expect(childDatabase.closeCount == 0)
        #expect(child.instanceIfBuilt(\.mailDatabase) === childDatabase)
    }

    @Test func aSingletonStillBeingBuiltIsKeptForTheNextShutdown() {
        let container = DependencyContainer()
        let built = buildBehindAGate(in: container) { container.gatedMailbox() }
        container.shutdown()
        let mailbox = built()
        #expect(container.instanceIfBuilt(\.gatedMailbox) === mailbox)
        #expect(mailbox.closeCount == 0)
        container.shutdown()
        #expect(mailbox.closeCount == 1)
    }

    @Test func anOverrideAfterShutdownStillDropsWhatAConstructionInFlightBuiltFromTheOldDependency() {
        let container = DependencyContainer()
        let built = buildBehindAGate(in: container) { container.gatedRepository() }
        container.shutdown()
        container.override(\.mailDatabase) { MailResource("stubDatabase", log: nil) }
        _ = built()
        #expect(container.instanceIfBuilt(\.gatedRepository) == nil)
    }

    @Test func aSingletonInFlightDuringResetIsHandedOutButNotKept() {
        let container = DependencyContainer()
        let built = buildBehindAGate(in: container) { container.gatedRepository() }
        container.reset()
        #expect(built().name == "gatedRepository")
        #expect(container.instanceIfBuilt(\.gatedRepository) == nil, "reset() kept the instance it found being built")
    }

    // MARK: - Re-entrance

    @Test func aTeardownThatResolvesFromTheContainerFinishes() async {
        let container = DependencyContainer()
        let databases = container.counter("mailDatabase")
        #expect(await finishesWithoutHangingOffThePool {
            _ = container.outbox()
            container.shutdown()
        })
        #expect(databases.count == 1)   // built anew by the teardown, after the container emptied
        #expect(container.instanceIfBuilt(\.mailDatabase) != nil)
    }

    @Test func aDeinitThatResolvesFromTheContainerFinishes() async {
        let container = DependencyContainer()
        let databases = container.counter("mailDatabase")
        #expect(await finishesWithoutHangingOffThePool {
            _ = container.releaseWatcher()
            container.shutdown()
        })
        #expect(databases.count == 1)
    }

    // MARK: - Async

    @Test func awaitedShutdownRunsAsyncTeardownsInReverseBuildOrder() async throws {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        _ = try await container.asyncMailRepository()
        _ = container.attachmentCache()
        await container.shutdown()
        #expect(log.values == ["attachmentCache", "asyncMailRepository", "asyncMailDatabase"])
    }

    @Test func synchronousShutdownSkipsAnAsyncTeardownAndSaysSo() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let database = try await container.asyncMailDatabase()
            shutDownSynchronously(container)
            precondition(database.closeCount == 0 && container.instanceIfBuilt(\.asyncMailDatabase) == nil)
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "asyncMailDatabase has an async teardown, which shutdown() cannot wait for, so it did not run: "
                + "await shutdown() instead."), "\(output)")
        #expect(output.contains("DependencyInjectionTests/ShutdownTests.swift:"), "\(output)")
    }

    // MARK: - Main actor

    @MainActor @Test func aMainActorTeardownRunsInASynchronousShutdownOnTheMainActor() {
        let container = DependencyContainer()
        let session = container.playerSession()
        container.shutdown()
        #expect(session.hasEnded)
    }

    @MainActor @Test func anAwaitedShutdownGoesToTheMainActorForAMainActorTeardown() async {
        let container = DependencyContainer()
        let session = container.playerSession()
        await Task.detached { await container.shutdown() }.value
        #expect(session.hasEnded)
    }

    @Test func aSynchronousShutdownOffTheMainActorStopsForAMainActorTeardown() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = await MainActor.run { container.playerSession() === container.playerSession() }
            await Task.detached { shutDownSynchronously(container) }.value
        }
        #expect(standardError(of: result).contains(
            "playerSession has a @MainActor teardown, and shutdown() was called off the main actor."),
            "\(standardError(of: result))")
    }

    // MARK: - Misuse

    @Test func aFactoryWithATeardownStopsWithItsName() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().draftFactory()
        }
        let output = standardError(of: result)
        #expect(output.contains("draftFactory declares onShutdown but is a factory registration"), "\(output)")
        #expect(output.contains("ShutdownTests.swift"), "\(output)")
    }

    // MARK: - instanceIfBuilt

    @Test func instanceIfBuiltNeverBuilds() {
        let container = DependencyContainer()
        let builds = container.counter("mailDatabase")
        #expect(container.instanceIfBuilt(\.mailDatabase) == nil)
        #expect(builds.count == 0)
        let database = container.mailDatabase()
        #expect(container.instanceIfBuilt(\.mailDatabase) === database)
        container.shutdown()
        #expect(container.instanceIfBuilt(\.mailDatabase) == nil)
        #expect(builds.count == 1)
    }

    @Test func instanceIfBuiltSeesNoFactoryInstanceAndALiveSharedOne() {
        let container = DependencyContainer()
        _ = container.composer()
        #expect(container.instanceIfBuilt(\.composer) == nil)
        let cache = container.previewCache()
        #expect(container.instanceIfBuilt(\.previewCache) === cache)
    }

    @Test func instanceIfBuiltOfAnAsyncRegistration() async throws {
        let container = DependencyContainer()
        #expect(container.instanceIfBuilt(\.asyncMailDatabase) == nil)
        let database = try await container.asyncMailDatabase()
        #expect(container.instanceIfBuilt(\.asyncMailDatabase) === database)
        await container.shutdown()
        #expect(container.instanceIfBuilt(\.asyncMailDatabase) == nil)
    }

    // MARK: - Concurrency

    @Test func concurrentShutdownsAndResolutionsTearDownEachInstanceExactlyOnce() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let built = Collected<MailResource>()
            container.setValue(built, forKey: "built")
            let threadsEnded = await concurrentlyOffThePool { index in
                for _ in 0..<10 {
                    if index.isMultiple(of: 2) { _ = container.trackedMailbox() } else { container.shutdown() }
                }
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            shutDownSynchronously(container)
            #expect(!built.values.isEmpty)
            #expect(built.values.allSatisfy { $0.closeCount == 1 })
        }
    }

    @Test func concurrentShutdownsTearDownTheChainOnceInOrder() async {
        for _ in 0..<100 {
            let container = DependencyContainer()
            let log = container.installShutdownLog()
            _ = container.mailSync()
            #expect(await concurrentlyOffThePool { _ in container.shutdown() })
            #expect(log.values == ["mailSync", "mailRepository", "mailDatabase"])
        }
    }
}
