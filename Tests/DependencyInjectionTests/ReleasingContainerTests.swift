import DependencyInjection
import Foundation
import Testing

// A container that nothing holds any more releases what it kept in its own `deinit`, while
// its state is whole: a `deinit` among those instances may read a `@Dependency` property
// for the first time, and it resolves from that container, with its overrides and its
// scope's, as a request's handler that flushes to the app's pool when its request ends.

/// The app-wide pool a request's objects flush to.
final class RCPool: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// What the objects of these tests saw in their `deinit`, kept in the app container's
/// stored values under `"rc.seen"`.
typealias RCSeen = Collected<String>

/// A per-request object that reads its properties for the first time in its `deinit`.
final class RCFlushOnRelease: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` properties, which guard themselves.
    @Dependency(\.rcPool) var pool
    @Dependency(\.rcUser) var user
    private let seen: RCSeen?
    init(seen: RCSeen?) { self.seen = seen }
    deinit { seen?.append("\(user) flushed to \(pool.name)") }
}

/// An object a container keeps that holds another container, which it releases with it.
final class RCHoldsAWorld: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.rcUser) var user
    private let world: DependencyContainer
    private let seen: RCSeen?
    init(world: DependencyContainer, seen: RCSeen?) { (self.world, self.seen) = (world, seen) }
    deinit { seen?.append("outer \(user)") }
}

/// An object whose `deinit` reads another object's property on another thread, and waits.
final class RCReadsElsewhere: @unchecked Sendable {
    private let other: RCFlushOnRelease?
    init(other: RCFlushOnRelease?) { self.other = other }
    deinit {
        guard let other else { return }
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = other.user
            done.signal()
        }.start()
        done.wait()
    }
}

extension DependencyContainer {
    var rcPool: Provider<RCPool> { singleton { RCPool(name: "app pool") } }
    var rcUser: Provider<String> { unimplemented() }
    var rcSeen: RCSeen? { getValue(forKey: "rc.seen") }
    var rcFlush: Provider<RCFlushOnRelease> { scoped { RCFlushOnRelease(seen: self.rcSeen) } }
    var rcKeptFlush: Provider<RCFlushOnRelease> { singleton { RCFlushOnRelease(seen: self.rcSeen) } }
    /// A singleton holding a world of its own (a child of `mocks`, not of this container,
    /// which it would keep), with a kept object of the world's.
    var rcHoldsAWorld: Provider<RCHoldsAWorld> {
        singleton {
            let world = DependencyContainer(parent: .mocks)
            if let seen = self.rcSeen { world.setValue(seen, forKey: "rc.seen") }
            world.override(\.rcUser) { "inner" }
            _ = world.rcKeptFlush()
            return RCHoldsAWorld(world: world, seen: self.rcSeen)
        }
    }
    var rcReadsElsewhere: Provider<RCReadsElsewhere> {
        singleton { RCReadsElsewhere(other: self.getValue(forKey: "rc.other")) }
    }
}

@Suite struct ReleasingContainerTests {
    // MARK: - A deinit that runs as its container releases it

    /// The server's case: a request's object first reads its properties as the request's
    /// scope goes, and gets the request's user and the app's pool. Before, the read stopped:
    /// the scope was gone. In an exit test, since a regression would stop the process.
    @Test func aScopedObjectFirstReadingItsPropertiesInItsDeinitResolvesFromItsScope() async {
        await #expect(processExitsWith: .success) {
            let app = DependencyContainer()
            let seen = RCSeen()
            app.setValue(seen, forKey: "rc.seen")
            do {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.rcUser) { "ada" }
                _ = request.rcFlush()
            }
            precondition(seen.values == ["ada flushed to app pool"], "\(seen.values)")
            precondition(app.instanceIfBuilt(\.rcPool) != nil, "the pool was not the app's")
        }
    }

    /// A test's world: a singleton first reads what the world overrides as the world goes,
    /// and sees the world's overrides, not its parent's registrations.
    @Test func aWorldsSingletonFirstReadingInItsDeinitSeesTheWorldsOverrides() async {
        await #expect(processExitsWith: .success) {
            let seen = RCSeen()
            do {
                let world = DependencyContainer(parent: .mocks)
                world.setValue(seen, forKey: "rc.seen")
                world.override(\.rcUser) { "grace" }
                world.override(\.rcPool) { RCPool(name: "stub pool") }
                _ = world.rcKeptFlush()
            }
            precondition(seen.values == ["grace flushed to stub pool"], "\(seen.values)")
        }
    }

    /// A container released while another releases what it kept (a world an instance held)
    /// names itself inside the other: each `deinit` resolves from its own container.
    @Test func aReleaseInsideAnotherFindsEachItsOwnContainer() async {
        await #expect(processExitsWith: .success) {
            let seen = RCSeen()
            do {
                let outer = DependencyContainer()
                outer.setValue(seen, forKey: "rc.seen")
                outer.override(\.rcUser) { "outer" }
                _ = outer.rcHoldsAWorld()
            }
            precondition(seen.values == ["outer outer", "inner flushed to app pool"], "\(seen.values)")
        }
    }

    /// What a `deinit` resolves while its container releases it is not kept past the
    /// release: the container is freed, and its `deinit` ends with no reference to it left
    /// (the runtime stops a process whose object outlives its `deinit`).
    @Test func theReleasingContainerIsFreedAfterItsDeinitsResolvedFromIt() async {
        await #expect(processExitsWith: .success) {
            weak var weakRequest: DependencyContainer?
            let app = DependencyContainer()
            app.setValue(RCSeen(), forKey: "rc.seen")
            do {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.rcUser) { "ada" }
                _ = request.rcFlush()
                weakRequest = request
            }
            precondition(weakRequest == nil, "the request's scope outlived its release")
            precondition(app.instanceIfBuilt(\.rcPool) != nil, "the deinit did not resolve the pool")
        }
    }

    // MARK: - Where the release does not reach

    /// Only the thread that releases finds the container: a `deinit` that hands the read to
    /// another thread still stops, with the message that says to keep the container.
    @Test func aReadOnAnotherThreadDuringTheReleaseStillStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let kept: RCFlushOnRelease = {
                let container = DependencyContainer()
                container.override(\.rcUser) { "ada" }
                let kept = container.rcKeptFlush()
                container.setValue(kept, forKey: "rc.other")
                _ = container.rcReadsElsewhere()
                return kept
            }()
            withExtendedLifetime(kept) {}
        }
        #expect(standardError(of: result).contains("was released before the property was first read"))
    }

    /// After the release, a property first read stops as before.
    @Test func aReadAfterTheReleaseStillStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let kept: RCFlushOnRelease = {
                let container = DependencyContainer()
                container.override(\.rcUser) { "ada" }
                return container.rcKeptFlush()
            }()
            _ = kept.user
        }
        #expect(standardError(of: result).contains("was released before the property was first read"))
    }

    // MARK: - Under load

    /// Requests end on eight threads at once, each releasing its scope: every handler's
    /// `deinit` finds its own request's user, and the one app pool.
    @Test func requestsEndingOnManyThreadsEachFindTheirOwnScope() async {
        let app = DependencyContainer()
        let seen = RCSeen()
        app.setValue(seen, forKey: "rc.seen")
        let requestsPerThread = 100
        let finished = await concurrentlyOffThePool(threads: 8) { thread in
            for request in 0..<requestsPerThread {
                let scope = DependencyContainer(scopeOf: app)
                scope.override(\.rcUser) { "user \(thread)-\(request)" }
                _ = scope.rcFlush()
            }
        }
        #expect(finished, "the requests hung")
        let expected = (0..<8).flatMap { thread in
            (0..<requestsPerThread).map { "user \(thread)-\($0) flushed to app pool" }
        }
        #expect(seen.values.sorted() == expected.sorted())
    }
}
