import Foundation
import Testing
@testable import DependencyInjection

// Attacks on the switch of a graph or shared instance's `@Dependency` holds to weak when a
// construction the container keeps takes the instance (StrongHolders).

/// A part whose property resolves a factory's object, which injects from the container too.
final class AdoptedPartWithHelper: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.ahaHelper) var helper
    init() {}
}

/// Keeps a part, whatever made it.
final class AdoptedPartKeeper: Sendable {
    let part: AdoptedPartWithHelper
    init(_ part: AdoptedPartWithHelper) { self.part = part }
}

extension DependencyContainer {
    /// A new object with a `@Dependency` each time.
    var ahaHelper: Provider<ReportingService> { factory { ReportingService() } }
    var ahaSharedPart: Provider<AdoptedPartWithHelper> { shared { AdoptedPartWithHelper() } }
    var ahaKeeperOfSharedPart: Provider<AdoptedPartKeeper> { singleton { AdoptedPartKeeper(self.ahaSharedPart()) } }
    var ahaGraphPart: Provider<AdoptedPartWithHelper> { graph { AdoptedPartWithHelper() } }
    var ahaKeeperOfGraphPart: Provider<AdoptedPartKeeper> { singleton { AdoptedPartKeeper(self.ahaGraphPart()) } }
    /// A factory that builds the graph part, reads its property, then has a singleton take it.
    var ahaReadPartThenKeeper: Provider<(AdoptedPartWithHelper, AdoptedPartKeeper)> {
        factory {
            let part = self.ahaGraphPart()
            _ = part.helper.client
            return (part, self.ahaKeeperOfGraphPart())
        }
    }

    /// A shared part whose construction waits at the container's gate the first time.
    var ahaGatedSharedPart: Provider<AdoptedPartWithHelper> {
        shared {
            (self.getValue(forKey: "aha.gate") as OnceGate?)?.pass()
            return AdoptedPartWithHelper()
        }
    }
    var ahaKeeperOfGatedPart: Provider<AdoptedPartKeeper> {
        singleton { AdoptedPartKeeper(self.ahaGatedSharedPart()) }
    }
    /// A singleton that takes the live shared part through `instanceIfBuilt`.
    var ahaKeeperOfBuiltPart: Provider<AdoptedPartKeeper> {
        singleton { AdoptedPartKeeper(self.instanceIfBuilt(\.ahaSharedPart) ?? self.ahaSharedPart()) }
    }
}

@Suite struct AdoptedHoldAttackTests {

    /// The app resolves the shared part and reads its property (a factory's object that
    /// injects too) before a singleton finds the part live and keeps it.
    @Test func aSharedInstanceWhosePropertyWasReadBeforeASingletonTookItDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.ahaSharedPart()
            let client = part.helper.client
            let keeper = container.ahaKeeperOfSharedPart()
            return keeper.part === part && client === container.httpClient()
        }
        #expect(result.served)
        // Known issue: what the part's property published before the singleton took the part
        // was created in the property's first read, after the part's construction ended.
        withKnownIssue("the object a shared part's property resolved before a singleton took the part keeps its container") {
            #expect(result.released, "the container was kept alive by the object the shared part's property resolved")
        }
    }

    /// The same with a graph part a factory built and read before a singleton of the same
    /// resolution took it.
    @Test func aGraphInstanceWhosePropertyWasReadBeforeASingletonTookItDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let (part, keeper) = container.ahaReadPartThenKeeper()
            return keeper.part === part && part.helper.client === container.httpClient()
        }
        #expect(result.served)
        withKnownIssue("the object a graph part's property resolved before a singleton took the part keeps its container") {
            #expect(result.released, "the container was kept alive by the object the graph part's property resolved")
        }
    }

    /// A singleton's construction waits for the shared part another thread is building,
    /// outside any construction the container keeps, and keeps it. The gate opens only once
    /// the keeper's construction waits in the part's room (read under the container's
    /// lock): a keeper that merely was about to ask could come after the part's end, on a
    /// slow machine in every round, and find it live instead.
    @Test func aSharedInstanceASingletonAwaitedDoesNotKeepItsContainer() async {
        var awaitedRounds = 0
        for _ in 0..<20 {
            let released = Liveness()
            let events = Collected<ResolutionEvent>()
            let finished = await finishesWithoutHangingOffThePool {
                let container = DependencyContainer()
                released.watch(container)
                let once = OnceGate()
                container.setValue(once, forKey: "aha.gate")
                container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
                joiningThreadsThatRun(3) { index in
                    switch index {
                    case 0:
                        _ = container.ahaGatedSharedPart()
                    case 1:
                        once.gate.entered.wait()
                        _ = container.ahaKeeperOfGatedPart()
                    default:
                        // The keeper's construction waits for the part in flight.
                        container.wraUntilWaitRoom(container.ahaGatedSharedPart.key)
                        once.gate.open()
                    }
                }
            }
            #expect(finished)
            let awaited = events.values.contains { $0.name == "ahaGatedSharedPart" && $0.outcome == .awaited }
            if awaited { awaitedRounds += 1 }
            // Known issue: a singleton that waits for a shared instance in flight takes it
            // without looking at its list.
            withKnownIssue("a shared part a singleton waited for keeps its container", isIntermittent: true) {
                #expect(!released.isAlive, "the container was kept alive by the shared part its singleton awaited (awaited: \(awaited))")
            }
        }
        #expect(awaitedRounds == 20, "the keeper waited in \(awaitedRounds) of 20 rounds")
    }

    /// A singleton takes the live shared part through `instanceIfBuilt`.
    @Test func aSharedInstanceASingletonTookThroughInstanceIfBuiltDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.ahaSharedPart()
            let keeper = container.ahaKeeperOfBuiltPart()
            return keeper.part === part && part.helper.client === container.httpClient()
        }
        #expect(result.served)
        withKnownIssue("a shared part a singleton takes through instanceIfBuilt keeps its container") {
            #expect(result.released, "the container was kept alive by the shared part its singleton took through instanceIfBuilt")
        }
    }
}

/// What a shared construction's child tasks made, in parallel.
final class ParallelParts: Sendable {
    let parts: [ReportingService]
    init(_ parts: [ReportingService]) { self.parts = parts }
}

/// Keeps the parallel parts.
final class ParallelPartsKeeper: Sendable {
    let parts: ParallelParts
    init(_ parts: ParallelParts) { self.parts = parts }
}

extension DependencyContainer {
    /// An async shared instance whose construction makes its parts in child tasks.
    var ahaParallelShared: AsyncProvider<ParallelParts> {
        shared {
            await withTaskGroup(of: [ReportingService].self) { group in
                for _ in 0..<8 { group.addTask { (0..<300).map { _ in self.ahaHelper() } } }
                var parts: [ReportingService] = []
                for await made in group { parts += made }
                return ParallelParts(parts)
            }
        }
    }
    var ahaKeeperOfParallelShared: AsyncProvider<ParallelPartsKeeper> {
        singleton { ParallelPartsKeeper(try await self.ahaParallelShared()) }
    }
}

extension AdoptedHoldAttackTests {
    /// The child tasks of an async shared construction make objects that inject, at once,
    /// on several threads; a singleton then takes the shared instance. In a process of its
    /// own: the construction's list of strong holds is appended to from every child task.
    @Test func anAsyncSharedInstanceMadeByChildTasksDoesNotKeepItsContainer() async {
        await #expect(processExitsWith: .success) {
            for _ in 0..<40 {
                weak var released: DependencyContainer?
                var served = false
                do {
                    let container = DependencyContainer()
                    released = container
                    let parts = try await container.ahaParallelShared()
                    let keeper = try await container.ahaKeeperOfParallelShared()
                    let client = container.httpClient()
                    served = keeper.parts === parts && parts.parts.count == 2_400
                        && parts.parts.allSatisfy { $0.client === client }
                }
                precondition(served, "a part was not served the container's client")
                precondition(released == nil, "the container was kept alive by a part made in a child task of the shared construction")
            }
        }
    }
}

extension DependencyContainer {
    var ahaScopedKeeperOfSharedPart: Provider<AdoptedPartKeeper> { scoped { AdoptedPartKeeper(self.ahaSharedPart()) } }
}

extension AdoptedHoldAttackTests {
    /// A request's scoped instance takes the app's live shared part: the request does not
    /// keep the part's container, so the part keeps holding the app container, and works
    /// after the app lets go of it.
    @Test func anAppSharedInstanceARequestsScopedInstanceTookStillHoldsTheApp() {
        weak var releasedApp: DependencyContainer?
        weak var releasedRequest: DependencyContainer?
        var part: AdoptedPartWithHelper?
        var tookIt = false
        do {
            let app = DependencyContainer()
            releasedApp = app
            part = app.ahaSharedPart()
            do {
                let request = DependencyContainer(scopeOf: app)
                releasedRequest = request
                tookIt = request.ahaScopedKeeperOfSharedPart().part === part
            }
        }
        #expect(tookIt)
        #expect(releasedRequest == nil)
        #expect(releasedApp != nil, "the app's shared part no longer holds the app")
        #expect(part?.helper.client.name == "live")
    }
}

/// Keeps a keeper.
final class OuterPartKeeper: Sendable {
    let inner: AdoptedPartKeeper
    init(_ inner: AdoptedPartKeeper) { self.inner = inner }
}

extension DependencyContainer {
    /// A shared instance that takes the shared part.
    var ahaSharedOfShared: Provider<AdoptedPartKeeper> { shared { AdoptedPartKeeper(self.ahaSharedPart()) } }
    var ahaKeeperOfSharedOfShared: Provider<OuterPartKeeper> { singleton { OuterPartKeeper(self.ahaSharedOfShared()) } }
    /// A graph instance that takes the shared part.
    var ahaGraphOfShared: Provider<AdoptedPartKeeper> { graph { AdoptedPartKeeper(self.ahaSharedPart()) } }
    var ahaKeeperOfGraphOfShared: Provider<OuterPartKeeper> { singleton { OuterPartKeeper(self.ahaGraphOfShared()) } }
    var ahaGraphOfSharedThenKeeper: Provider<(AdoptedPartKeeper, OuterPartKeeper)> {
        factory { (self.ahaGraphOfShared(), self.ahaKeeperOfGraphOfShared()) }
    }
}

extension AdoptedHoldAttackTests {
    /// The app resolves the shared part, then a shared instance that takes it; a singleton
    /// then finds that outer instance live and keeps it, and the part through it.
    @Test func aSharedPartTakenLiveByASharedInstanceASingletonKeepsDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.ahaSharedPart()
            let outer = container.ahaSharedOfShared()
            let keeper = container.ahaKeeperOfSharedOfShared()
            return keeper.inner === outer && outer.part === part && part.helper.client === container.httpClient()
        }
        #expect(result.served)
        // Known issue: the lists are per construction, and a part taken live from the cache
        // is on none of them.
        withKnownIssue("a shared part inside a shared instance a singleton takes keeps its container") {
            #expect(result.released, "the container was kept alive by the shared part inside its singleton's shared instance")
        }
    }

    /// The app resolves the shared part; a factory's graph instance takes it, and a
    /// singleton of the same resolution takes the graph instance.
    @Test func aSharedPartTakenLiveByAGraphInstanceASingletonKeepsDoesNotKeepItsContainer() {
        let result = isReleased { container in
            let part = container.ahaSharedPart()
            let (graph, keeper) = container.ahaGraphOfSharedThenKeeper()
            return keeper.inner === graph && graph.part === part && part.helper.client === container.httpClient()
        }
        #expect(result.served)
        withKnownIssue("a shared part inside a graph instance a singleton takes keeps its container") {
            #expect(result.released, "the container was kept alive by the shared part inside its singleton's graph instance")
        }
    }
}

extension AdoptedHoldAttackTests {
    /// With a tracer, a graph part a factory built and a singleton of the same resolution
    /// took, and a shared part the app resolved and a singleton took, let the container go.
    @Test func tracedAdoptionsDoNotKeepTheContainer() {
        let events = Collected<ResolutionEvent>()
        let result = isReleased { container in
            container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
            let (part, keeper) = container.adoptPartThenHolder()
            let shared = container.adoptSharedPart()
            let sharedKeeper = container.holderOfASharedPart()
            return keeper.part === part && sharedKeeper.part === shared && shared.client === container.httpClient()
        }
        #expect(result.served)
        #expect(result.released, "a traced adoption kept the container alive")
        #expect(events.values.contains { $0.name == "adoptGraphPart" && $0.outcome == .cached })
    }
}
