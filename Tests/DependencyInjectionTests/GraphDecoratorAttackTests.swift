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

/// The context of one request, shared by its parts, that reads a client through a
/// `@Dependency` property.
final class GraphContext: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    init() {}
}

final class ContextHolder: Sendable {
    let context: GraphContext
    init(context: GraphContext) { self.context = context }
}

extension DependencyContainer {
    var graphContext: Provider<GraphContext> { graph { GraphContext() } }
    var contextHolder: Provider<ContextHolder> { singleton { ContextHolder(context: self.graphContext()) } }
    /// The context, first built by the singleton's construction.
    var contextAfterSingleton: Provider<GraphContext> {
        factory {
            _ = self.contextHolder()
            return self.graphContext()
        }
    }
    /// The context, first built by this factory, then found by the singleton.
    var contextBeforeSingleton: Provider<GraphContext> {
        factory {
            let context = self.graphContext()
            _ = self.contextHolder()
            return context
        }
    }
}

extension DependencyContainer {
    var asyncScopedWork: AsyncProvider<AttackSink> { scoped { AttackSink(work: try await self.asyncWork()) } }
    /// One async request: its own unit of work, and a scoped object built from one.
    var asyncRequestWork: AsyncProvider<(UnitOfWork, AttackSink)> {
        factory { (try await self.asyncWork(), try await self.asyncScopedWork()) }
    }
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
    /// (`aSingletonBuiltInsideAResolutionSharesThatResolutionsInstance`). Graph instances
    /// are kept per container, and an app-wide singleton a scope asks for is built by the
    /// app container, so it gets the app container's instance, not the scope's (as the
    /// Scopes article says).
    @Test func anAppWideSingletonBuiltForAScopeGetsTheAppContainersGraphInstance() {
        let plain = DependencyContainer()
        let (plainHandler, plainSink) = plain.attackRequest()
        #expect(plainHandler.work === plainSink.work)

        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let (handler, sink) = request.attackRequest()
        #expect(handler.work !== sink.work)
    }

    /// A graph instance handed out by a factory resolves its `@Dependency` from the
    /// container that built it, whichever part of the resolution asked for it first; and
    /// whichever asked first, the singleton keeps it, so its property holds the container
    /// weakly once the singleton has taken it: built first for the factory, it held the
    /// container strongly, and kept the container alive for good. Reading it after the
    /// container is gone stops, as in the order below.
    @Test func aGraphInstanceFirstBuiltByTheFactoryHoldsItsContainerWeaklyOnceASingletonTakesIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = DependencyContainer().contextBeforeSingleton()
            precondition(context.client.name == "live")
        }
        #expect(standardError(of: result).contains("was released"), "\(standardError(of: result))")
    }

    /// The same graph, where the singleton's construction happens to build the context
    /// first: the singleton keeps the context, so the context's `@Dependency` holds the
    /// container weakly (a strong reference would keep the container forever), and reading
    /// it after the container is gone stops, as the Scopes article says.
    @Test func aGraphInstanceFirstBuiltByASingletonHoldsItsContainerWeakly() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let context = DependencyContainer().contextAfterSingleton()
            precondition(context.client.name == "live")
        }
        #expect(standardError(of: result).contains("was released"), "\(standardError(of: result))")
    }

    /// An async singleton, shared or scoped instance is built in a task of its own, whose
    /// construction is an outermost resolution (as the Scopes article says): an async
    /// `scoped` object does not share its request's unit of work.
    @Test func anAsyncScopedObjectIsBuiltInAnOutermostResolutionOfItsOwn() async throws {
        let request = DependencyContainer(scopeOf: DependencyContainer())
        let (work, scoped) = try await request.asyncRequestWork()
        #expect(work !== scoped.work)
    }

    // MARK: - Pins: graph instances and their lifetime

    /// A graph instance whose `deinit` resolves from its container, at the end of the
    /// outermost resolution: no lock may be held then.
    @Test func aGraphInstanceMayResolveWhenItGoes() async {
        let container = DependencyContainer()
        let flushed = Collected<String>()
        container.setValue(flushed, forKey: "flushed")
        let used = Collected<String>()
        #expect(await finishesWithoutHangingOffThePool { used.append(container.flushingLogUser()) })
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

    /// Requests through scopes while the app container decorates, overrides and resets:
    /// every request sees whole decorations and one unit of work per handler.
    @Test func requestsWhileTheAppDecoratesAndResetsAreSafe() async {
        let app = DependencyContainer()
        let names = Collected<String>()
        let threadsEnded = await concurrentlyOffThePool(threads: 6) { index in
            for round in 0..<150 {
                switch index % 3 {
                case 0:
                    app.decorate(\.httpClient) { WrappingHTTPClient(wrapping: $0) }
                    if round % 3 == 0 { app.reset(\.httpClient) }
                    if round % 7 == 0 { app.reset() }
                case 1:
                    let request = DependencyContainer(scopeOf: app)
                    request.decorate(\.unitOfWork) { $0 }
                    let (handler, sink) = request.attackRequest()
                    names.append(handler.client.name)
                    _ = sink
                default:
                    let work = app.checkout()
                    if work.orders.work !== work.payments.work { names.append("split") }
                    names.append(app.cachedFeedLoader().client.name)
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        let unwrapped = names.values.map {
            $0.replacingOccurrences(of: "logging(", with: "").replacingOccurrences(of: ")", with: "")
        }
        #expect(unwrapped.allSatisfy { $0 == "live" })
        #expect(names.values.count == 600)
    }

    @Test func aMainActorDecorationBuiltOffTheMainActorStopsNamingIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            await MainActor.run {
                container.decorate(\.httpClient) { @MainActor in WrappingHTTPClient(wrapping: $0) }
            }
            _ = await Task.detached { container.httpClient() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains("httpClient was decorated with a @MainActor closure"), "\(output)")
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
