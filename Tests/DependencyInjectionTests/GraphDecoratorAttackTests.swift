import DependencyInjection
import Foundation
import Testing

// The graph scope and decorators, against scope containers, concurrency and cycles.

/// A graph instance that resolves from its container when it goes, as a log that flushes
/// to a singleton sink does.
final class FlushingLog: @unchecked Sendable {
    // @unchecked: `container` is immutable and Sendable; `flushed` is a Sendable box.
    let container: DependencyContainer
    let flushed: Collected<String>
    init(container: DependencyContainer, flushed: Collected<String>) { (self.container, self.flushed) = (container, flushed) }
    deinit {
        // Resolves a singleton and a graph registration: a lock held here would deadlock.
        flushed.append(container.httpClient().name)
        _ = container.unitOfWork()
    }
}

final class AttackHandler: Sendable {
    let client: any HTTPClient
    let work: UnitOfWork
    init(client: any HTTPClient, work: UnitOfWork) { (self.client, self.work) = (client, work) }
}

final class AttackSink: Sendable {
    let work: UnitOfWork
    init(work: UnitOfWork) { self.work = work }
}

extension DependencyContainer {
    /// Built once per scope from the app's `httpClient` singleton.
    var attackScopedHandler: Provider<AttackHandler> {
        scoped { AttackHandler(client: self.httpClient(), work: self.unitOfWork()) }
    }
    /// An app-wide singleton whose construction resolves the graph's unit of work.
    var attackSink: Provider<AttackSink> { singleton { AttackSink(work: self.unitOfWork()) } }
    /// One request: a scoped handler and an app-wide sink, each using the unit of work.
    var attackRequest: Provider<(AttackHandler, AttackSink)> {
        factory { (self.attackScopedHandler(), self.attackSink()) }
    }
    var attackSharedClient: Provider<any HTTPClient> { shared { LiveHTTPClient() } }
    var attackAsyncClient: AsyncProvider<any HTTPClient> { singleton { LiveHTTPClient() } }

    var flushingLog: Provider<FlushingLog> {
        graph { FlushingLog(container: self, flushed: self.getValue(forKey: "flushed")!) }
    }
    var flushingLogUser: Provider<String> {
        factory {
            _ = self.flushingLog()
            return "used"
        }
    }
    /// Thousands of graph instances, each asked for twice, in one resolution.
    var manyDrafts: Provider<Bool> {
        factory { (0..<3_000).allSatisfy { self[draft: $0]() === self[draft: $0]() } }
    }

    // An async cycle closed by a decoration: `left` is built from `right`, and `right`'s
    // decoration asks for `left`.
    var decoratedLeft: AsyncProvider<UnitOfWork> {
        singleton {
            _ = try await self.decoratedRight()
            return UnitOfWork()
        }
    }
    var decoratedRight: AsyncProvider<UnitOfWork> { singleton { UnitOfWork() } }
}

@Suite struct GraphDecoratorAttackTests {
    // MARK: - Decorations in scope containers

    /// `decorate` promises to work "in the container that declares and resolves the
    /// registration, and in any other"; a scope resolves an app-wide singleton through its
    /// app container, which never sees the scope's decorations.
    @Test func aScopesDecorationWrapsTheAppSingletonsItResolves() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }

        #expect(request.httpClient().name == "logging(live)")
        #expect(request.attackScopedHandler().client.name == "logging(live)")
        #expect(request.cachedFeedLoader().client.name == "logging(live)")
        // The scope's decoration is its own: the app keeps its undecorated instance.
        #expect(app.httpClient().name == "live")
    }

    @Test func aScopesDecorationWrapsAnAppSharedInstance() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.decorate(\.attackSharedClient) { WrappingHTTPClient(wrapping: $0) }
        let client = request.attackSharedClient()
        #expect(client.name == "logging(live)")
    }

    @Test func aScopesAsyncDecorationWrapsTheAppSingletonItResolves() async throws {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        request.decorate(\.attackAsyncClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(try await request.attackAsyncClient().name == "logging(live)")
    }

    /// Pin: the app's decoration reaches what its scopes resolve, app-wide or scoped.
    @Test func anAppsDecorationReachesWhatItsScopesResolve() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let before = request.attackScopedHandler()
        app.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        #expect(before.client.name == "live")
        #expect(request.httpClient().name == "logging(live)")
        #expect(request.attackScopedHandler().client.name == "logging(live)")
        #expect(DependencyContainer(scopeOf: app).attackScopedHandler().client.name == "logging(live)")
    }

    // MARK: - The graph scope in scope containers

    /// In a plain container, a singleton built inside a resolution shares its unit of work
    /// (`aSingletonBuiltInsideAResolutionSharesThatResolutionsInstance`); a scope resolving
    /// the same graph splits it in two, by which container happens to build each part.
    @Test func oneRequestThroughAScopeSharesOneGraphInstance() {
        let plain = DependencyContainer()
        let (plainHandler, plainSink) = plain.attackRequest()
        #expect(plainHandler.work === plainSink.work)

        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let (handler, sink) = request.attackRequest()
        #expect(handler.work === sink.work)
    }

    // MARK: - Pins: graph instances and their lifetime

    /// A graph instance whose `deinit` resolves from its container, at the end of the
    /// outermost resolution: no lock may be held then.
    @Test func aGraphInstanceMayResolveWhenItGoes() {
        let container = DependencyContainer()
        let flushed = Collected<String>()
        container.setValue(flushed, forKey: "flushed")
        let used = Collected<String>()
        #expect(finishesWithoutHanging { used.append(container.flushingLogUser()) })
        #expect(used.values == ["used"])
        #expect(flushed.values == ["live"])
    }

    @Test func thousandsOfGraphArgumentsInOneResolutionAreEachSharedOnce() {
        #expect(DependencyContainer().manyDrafts())
    }

    // MARK: - Pins: decorations, concurrency and cycles

    /// A decoration installed while the singleton is being built: the instance in flight
    /// is handed to its caller but never kept, so every later resolution is decorated.
    @Test func aSingletonInFlightWhenADecorationIsInstalledIsNotKeptUndecorated() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        let builds = Counter()
        container.override(\.httpClient) {
            builds.increment()
            if builds.count == 1 { gate.enterAndWait() }
            return LiveHTTPClient()
        }
        let handedOut = Collected<String>()
        let builderDone = DispatchSemaphore(value: 0)
        Thread {
            handedOut.append(container.httpClient().name)
            builderDone.signal()
        }.start()
        gate.entered.wait()
        container.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
        gate.open()
        builderDone.wait()
        #expect(handedOut.values == ["live"])
        // Every resolution from now on is decorated, and one instance is kept.
        #expect(container.httpClient().name == "logging(live)")
        #expect(container.httpClient() === container.httpClient())
    }

    @Test func anAsyncCycleClosedByADecorationStopsInsteadOfHanging() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("async decoration cycle")
            let container = DependencyContainer()
            container.decorate(\.decoratedRight) { [unowned container] right in
                _ = try await container.decoratedLeft()
                return right
            }
            _ = try await container.decoratedLeft()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("decoratedLeft") && output.contains("decoratedRight"), "\(output)")
    }
}
