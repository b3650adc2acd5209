import DependencyInjection
import Dispatch
import Testing

struct OpenFailed: Error {}

final class Database: Sendable {
    let url: String
    init(url: String) { self.url = url }
}

actor Store {
    private(set) var items: [String] = []
    func add(_ item: String) { items.append(item) }
}

extension DependencyContainer {
    var databaseURL: String { isMocked ? "memory://" : "file:///db.sqlite" }

    /// Opens once the stored gate "database.gate" (if any) opens, so that a test can keep
    /// the construction in flight; fails while the stored value "failures" is below 2.
    var database: AsyncProvider<Database> {
        singleton {
            self.count("database")
            await (self.getValue(forKey: "database.gate") as AsyncLatch?)?.wait()
            if let failures: Counter = self.getValue(forKey: "failures"), failures.count < 2 {
                failures.increment()
                throw OpenFailed()
            }
            // Had the construction been cancelled along with a waiter, this would throw.
            try Task.checkCancellation()
            return Database(url: self.databaseURL)
        }
    }
    var report: AsyncProvider<String> {
        factory {
            await Task.yield()
            return "report over \(self.httpClient().name)"
        }
    }
    var databaseClient: AsyncProvider<any HTTPClient> {
        singleton {
            self.count("databaseClient")
            _ = try await self.database()
            return self.httpClient()
        }
    }
    var asyncImageCache: AsyncProvider<ImageCache> { shared { ImageCache() } }
    var asyncSignalledCache: AsyncProvider<SignalledCache> {
        shared { SignalledCache(released: self.getValue(forKey: "signalledCache.released")!) }
    }
    subscript(account id: Int) -> AsyncProvider<UserSession> {
        singleton(id) { UserSession(id: "\(id)") }
    }
    subscript(preview page: Int) -> AsyncProvider<UserSession> {
        shared(page) { UserSession(id: "preview \(page)") }
    }
    subscript(signalledPreview page: Int) -> AsyncProvider<SignalledCache> {
        shared(page) { SignalledCache(released: self.getValue(forKey: "signalledCache.released")!) }
    }
    subscript(upload file: String) -> AsyncProvider<UserSession> {
        scoped(file) { UserSession(id: "upload \(file)") }
    }
    var store: Provider<Store> { singleton { Store() } }
    var asyncStore: AsyncProvider<Store> { singleton { Store() } }
}

@Suite struct AsyncProviderTests {
    // MARK: - Scopes

    @Test func asyncSingletonIsBuiltOnceAndReused() async throws {
        let container = DependencyContainer()
        let opens = container.counter("database")
        let first = try await container.database()
        let second = try await container.database()
        #expect(first === second)
        #expect(first.url == "file:///db.sqlite")
        #expect(opens.count == 1)
    }

    @Test func asyncFactoryBuildsEachTimeAndMayResolveSyncDependencies() async throws {
        let container = DependencyContainer()
        #expect(try await container.report() == "report over live")
    }

    @Test func parameterizedAsyncSingleton() async throws {
        let container = DependencyContainer()
        let one = try await container[account: 1]()
        #expect(try await container[account: 1]() === one)
        #expect(try await container[account: 2]() !== one)
    }

    @Test func asyncSharedIsReusedWhileHeld() async throws {
        let container = DependencyContainer()
        let held = try await container.asyncImageCache()
        #expect(try await container.asyncImageCache() === held)
        // One that nobody holds is released: its deinit says so. Waited for, not read from
        // a weak reference at once: the task that built it lets go of it some time after
        // its waiters wake.
        let released = DispatchSemaphore(value: 0)
        do {
            let other = DependencyContainer()
            other.setValue(released, forKey: "signalledCache.released")
            _ = try await other.asyncSignalledCache()
        }
        #expect(await finishesWithoutHangingOffThePool { released.wait() }, "an instance nobody holds is kept")
    }

    @Test func parameterizedAsyncSharedIsOnePerArgumentWhileHeld() async throws {
        let container = DependencyContainer()
        let one = try await container[preview: 1]()
        #expect(one.id == "preview 1")
        #expect(try await container[preview: 1]() === one)
        #expect(try await container[preview: 2]().id == "preview 2")
        // One that nobody holds is released, per argument as without one.
        let released = DispatchSemaphore(value: 0)
        do {
            let other = DependencyContainer()
            other.setValue(released, forKey: "signalledCache.released")
            _ = try await other[signalledPreview: 7]()
        }
        #expect(await finishesWithoutHangingOffThePool { released.wait() }, "an instance nobody holds is kept")
    }

    @Test func parameterizedAsyncScopedIsOnePerScopeAndArgument() async throws {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let other = DependencyContainer(scopeOf: app)
        let photo = try await request[upload: "photo"]()
        #expect(photo.id == "upload photo")
        #expect(try await request[upload: "photo"]() === photo)
        #expect(try await request[upload: "video"]() !== photo)
        #expect(try await other[upload: "photo"]() !== photo)
        #expect(request.instanceIfBuilt(\.[upload: "photo"]) === photo)
        #expect(app.instanceIfBuilt(\.[upload: "photo"]) == nil)
    }

    // MARK: - Concurrency

    @Test func manyTasksShareOneConstruction() async throws {
        let container = DependencyContainer()
        let opens = container.counter("database")
        let gate = AsyncLatch()
        container.setValue(gate, forKey: "database.gate")
        let identities = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
            for _ in 0..<1_000 {
                group.addTask { ObjectIdentifier(try await container.database()) }
            }
            gate.open()
            return try await group.reduce(into: Set()) { $0.insert($1) }
        }
        #expect(identities.count == 1)
        #expect(opens.count == 1)
    }

    @Test func aFailedConstructionIsNotCachedAndTheNextOneRetries() async throws {
        let container = DependencyContainer()
        let opens = container.counter("database")
        container.setValue(Counter(), forKey: "failures")
        await #expect(throws: OpenFailed.self) { try await container.database() }
        await #expect(throws: OpenFailed.self) { try await container.database() }
        let database = try await container.database()
        #expect(try await container.database() === database)
        #expect(opens.count == 3)
    }

    @Test func concurrentWaitersAllSeeTheSameFailure() async {
        let container = DependencyContainer()
        let failures = Counter()
        failures.increment()  // exactly one failure left
        container.setValue(failures, forKey: "failures")
        let gate = AsyncLatch()
        container.setValue(gate, forKey: "database.gate")
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await container.database()) != nil }
            }
            gate.open()
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        // All 20 asked while the first (failing) construction was in flight, or after the
        // retry succeeded; none got a half-built value.
        #expect(outcomes.count == 20)
        #expect(outcomes.contains(false))
        let database = try? await container.database()
        #expect(database?.url == "file:///db.sqlite")
    }

    @Test func cancellingOneWaiterDoesNotCancelTheConstruction() async throws {
        let container = DependencyContainer()
        let opens = container.counter("database")
        let gate = AsyncLatch()
        container.setValue(gate, forKey: "database.gate")
        // The task that starts the construction is the one cancelled, while it runs: the
        // gate holds the construction until then.
        let cancelled = Task { try await container.database() }
        while opens.count == 0 { await Task.yield() }
        let other = Task { try await container.database() }
        cancelled.cancel()
        gate.open()
        let database = try await other.value
        #expect(database.url == "file:///db.sqlite")
        // The cancelled task stopped waiting; the construction went on for the other.
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(try await container.database() === database)
        #expect(opens.count == 1)
    }

    // MARK: - Overrides, reset, children

    @Test func asyncOverrideReplacesAndResetRestores() async throws {
        let container = DependencyContainer()
        container.override(\.database) { Database(url: "stub://") }
        #expect(try await container.database().url == "stub://")
        container.reset(\.database)
        #expect(try await container.database().url == "file:///db.sqlite")
    }

    @Test func overridingASyncDependencyDropsAsyncSingletonsBuiltFromIt() async throws {
        let container = DependencyContainer()
        #expect(try await container.databaseClient().name == "live")
        container.override(\.httpClient) { StubHTTPClient() }
        #expect(try await container.databaseClient().name == "stub")
    }

    @Test func overridingAnAsyncDependencyDropsWhatWasBuiltFromIt() async throws {
        let container = DependencyContainer()
        let builds = container.counter("databaseClient")
        _ = try await container.databaseClient()
        _ = try await container.databaseClient()
        #expect(builds.count == 1)
        container.override(\.database) { Database(url: "stub://") }
        _ = try await container.databaseClient()
        #expect(builds.count == 2)
    }

    @Test func childSeesParentAsyncOverridesAndKeepsItsOwnInstances() async throws {
        let parent = DependencyContainer(isMocked: true)
        let child = DependencyContainer(parent: parent)
        #expect(try await child.database().url == "memory://")
        #expect(try await child.database() !== (try await parent.database()))

        parent.override(\.database) { Database(url: "parent://") }
        #expect(try await child.database().url == "parent://")
        child.override(\.database) { Database(url: "child://") }
        #expect(try await child.database().url == "child://")
        #expect(try await parent.database().url == "parent://")
    }

    @Test func withMainReachesAsyncConstructions() async throws {
        let mocked = DependencyContainer(isMocked: true)
        let url = try await DependencyContainer.withMain(mocked) {
            try await DependencyContainer.main.database().url
        }
        #expect(url == "memory://")
    }

    // MARK: - Trace

    @Test func asyncResolutionsAreTraced() async throws {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        _ = try await container.databaseClient()
        _ = try await container.databaseClient()
        // One batch per outermost resolution, in start order: a parent before its children.
        let seen = batches.values.map { $0.map { "\($0.name) \($0.depth) \($0.outcome.rawValue)" } }
        #expect(seen == [
            ["databaseClient 0 built", "database 1 built", "httpClient 1 built"],
            ["databaseClient 0 cached"],
        ])
    }

    // MARK: - Actors

    @Test func actorsAreRegisteredAndAwaited() async throws {
        let container = DependencyContainer()
        await container.store().add("one")
        await container.store().add("two")
        #expect(await container.store().items == ["one", "two"])
        let asyncStore = try await container.asyncStore()
        await asyncStore.add("three")
        #expect(await (try await container.asyncStore()).items == ["three"])
    }
}

/// A cache that signals its release.
final class SignalledCache: Sendable {
    let released: DispatchSemaphore
    init(released: DispatchSemaphore) { self.released = released }
    deinit { released.signal() }
}
