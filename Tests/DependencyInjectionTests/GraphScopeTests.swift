import DependencyInjection
import Foundation
import Testing

// One checkout: two repositories that must write to one unit of work.

final class UnitOfWork: Sendable {
    init() {}
}

final class OrderStore: Sendable {
    let work: UnitOfWork
    init(work: UnitOfWork) { self.work = work }
}

final class Checkout: Sendable {
    let orders: OrderStore
    let payments: OrderStore
    let work: UnitOfWork
    init(orders: OrderStore, payments: OrderStore, work: UnitOfWork) {
        (self.orders, self.payments, self.work) = (orders, payments, work)
    }
}

/// A screen that reads its unit of work through a `@Dependency` property.
final class ReceiptPrinter: @unchecked Sendable {
    @Dependency(\.unitOfWork) var work
    init() {}
}

final class Receipt: Sendable {
    let printer: ReceiptPrinter
    let work: UnitOfWork
    init(printer: ReceiptPrinter, work: UnitOfWork) { (self.printer, self.work) = (printer, work) }
}

/// Lets a test see whether an object is still alive, without keeping it.
final class Liveness: @unchecked Sendable {
    // @unchecked: `object` is only touched while holding `lock`.
    private let lock = NSLock()
    private weak var object: AnyObject?
    init() {}
    func watch(_ object: AnyObject) { lock.withLock { self.object = object } }
    var isAlive: Bool { lock.withLock { object != nil } }
}

extension DependencyContainer {
    var unitOfWork: Provider<UnitOfWork> {
        graph {
            self.count("unitOfWork")
            let work = UnitOfWork()
            (self.getValue(forKey: "liveness") as Liveness?)?.watch(work)
            return work
        }
    }
    subscript(draft id: Int) -> Provider<UnitOfWork> { graph(id) { UnitOfWork() } }
    var orderStore: Provider<OrderStore> { factory { OrderStore(work: self.unitOfWork()) } }
    var paymentStore: Provider<OrderStore> { factory { OrderStore(work: self.unitOfWork()) } }
    var checkout: Provider<Checkout> {
        factory { Checkout(orders: self.orderStore(), payments: self.paymentStore(), work: self.unitOfWork()) }
    }
    var keptCheckout: Provider<Checkout> {
        singleton { Checkout(orders: self.orderStore(), payments: self.paymentStore(), work: self.unitOfWork()) }
    }
    /// A singleton whose only use of `unitOfWork` may find it already built.
    var keptOrderStore: Provider<OrderStore> { singleton { OrderStore(work: self.unitOfWork()) } }
    /// The unit of work it resolved, and the singleton built from it, in one resolution.
    var workAndKeptStore: Provider<(UnitOfWork, OrderStore)> {
        factory { (self.unitOfWork(), self.keptOrderStore()) }
    }
    /// A receipt whose printer's `@Dependency` is first read while the receipt is built.
    var receipt: Provider<Receipt> {
        factory {
            let printer = ReceiptPrinter()
            _ = printer.work
            return Receipt(printer: printer, work: self.unitOfWork())
        }
    }
    /// A receipt whose printer's `@Dependency` is first read after the receipt is built.
    var lazyReceipt: Provider<Receipt> {
        factory { Receipt(printer: ReceiptPrinter(), work: self.unitOfWork()) }
    }
    /// Two units of work: this container's, and the one of the container stored as "other".
    var workHereAndThere: Provider<(UnitOfWork, UnitOfWork, UnitOfWork)> {
        factory {
            let other: DependencyContainer = self.getValue(forKey: "other")!
            return (self.unitOfWork(), other.unitOfWork(), self.unitOfWork())
        }
    }
    /// Resolves a unit of work, and waits for a task it starts to resolve one too.
    var workAndSpawned: Provider<(UnitOfWork, UnitOfWork)> {
        factory {
            let work = self.unitOfWork()
            let spawned = Collected<UnitOfWork>()
            let resolved = DispatchSemaphore(value: 0)
            Task {
                spawned.append(self.unitOfWork())
                resolved.signal()
            }
            resolved.wait()
            return (work, spawned.values[0])
        }
    }
    /// Uses a unit of work without keeping it.
    var workSummary: Provider<String> {
        factory {
            _ = self.unitOfWork()
            return "done"
        }
    }

    var asyncWork: AsyncProvider<UnitOfWork> { graph { UnitOfWork() } }
    var asyncCheckout: AsyncProvider<(UnitOfWork, UnitOfWork)> {
        factory { (try await self.asyncWork(), try await self.asyncWork()) }
    }
    /// Built in a task of its own, so its construction is an outermost resolution.
    var asyncKeptWork: AsyncProvider<UnitOfWork> { singleton { try await self.asyncWork() } }
    /// Resolves a unit of work, and awaits a task it starts that resolves one too.
    var asyncWorkAndSpawned: AsyncProvider<(UnitOfWork, UnitOfWork)> {
        factory {
            let work = try await self.asyncWork()
            return (work, try await Task { try await self.asyncWork() }.value)
        }
    }
    var asyncWorkAndKept: AsyncProvider<(UnitOfWork, UnitOfWork)> {
        factory { (try await self.asyncWork(), try await self.asyncKeptWork()) }
    }
    /// Starts a task that outlives the resolution, holding its frames until `latch` opens.
    var asyncWorkWithLingeringTask: AsyncProvider<String> {
        factory {
            let work = try await self.asyncWork()
            (self.getValue(forKey: "liveness") as Liveness?)?.watch(work)
            let latch: AsyncLatch = self.getValue(forKey: "latch")!
            let done: AsyncLatch = self.getValue(forKey: "done")!
            Task {
                await latch.wait()
                done.open()
            }
            return "done"
        }
    }
}

@Suite struct GraphScopeTests {
    // MARK: - One instance per outermost resolution

    @Test func everythingOneResolutionBuildsSharesOneInstance() {
        let container = DependencyContainer()
        let builds = container.counter("unitOfWork")
        let checkout = container.checkout()
        #expect(checkout.orders.work === checkout.work)
        #expect(checkout.payments.work === checkout.work)
        #expect(builds.count == 1)
    }

    @Test func eachOutermostResolutionGetsItsOwnInstance() {
        let container = DependencyContainer()
        let builds = container.counter("unitOfWork")
        let first = container.checkout()
        let second = container.checkout()
        #expect(first.work !== second.work)
        #expect(builds.count == 2)
    }

    @Test func outsideAnyResolutionItIsAFactory() {
        let container = DependencyContainer()
        #expect(container.unitOfWork() !== container.unitOfWork())
    }

    @Test func eachArgumentHasItsOwnInstanceInOneResolution() {
        let container = DependencyContainer()
        let (one, oneAgain, two) = container.drafts()
        #expect(one === oneAgain)
        #expect(one !== two)
        #expect(container[draft: 1]() !== container[draft: 1]())
    }

    @Test func eachContainerHasItsOwnInstanceInOneResolution() {
        let container = DependencyContainer()
        let child = DependencyContainer(parent: container)
        container.setValue(child, forKey: "other")
        let (here, there, hereAgain) = container.workHereAndThere()
        #expect(here === hereAgain)
        #expect(here !== there)
    }

    // MARK: - Singletons

    @Test func aSingletonsConstructionSharesOneInstance() {
        let container = DependencyContainer()
        let kept = container.keptCheckout()
        #expect(kept.orders.work === kept.work)
        #expect(kept.payments.work === kept.work)
        #expect(container.keptCheckout() === kept)
        #expect(container.checkout().work !== kept.work)
    }

    @Test func aSingletonBuiltInsideAResolutionSharesThatResolutionsInstance() {
        let container = DependencyContainer()
        let (work, store) = container.workAndKeptStore()
        #expect(store.work === work)
    }

    @Test func aSingletonThatFoundTheInstanceBuiltIsDroppedWhenItIsOverridden() {
        let container = DependencyContainer()
        let (_, store) = container.workAndKeptStore()
        container.override(\.unitOfWork) { UnitOfWork() }
        #expect(container.keptOrderStore() !== store)
    }

    // MARK: - @Dependency

    @Test func aDependencyFirstReadInsideAResolutionSharesItsInstance() {
        let container = DependencyContainer()
        let receipt = container.receipt()
        #expect(receipt.printer.work === receipt.work)
    }

    @Test func aDependencyFirstReadAfterTheResolutionIsAResolutionOfItsOwn() {
        let container = DependencyContainer()
        let receipt = container.lazyReceipt()
        #expect(receipt.printer.work !== receipt.work)
    }

    @Test func aDependencyFirstReadIsAnOutermostResolution() {
        let container = DependencyContainer()
        let first = ScreenWithCheckout(container: container)
        let second = ScreenWithCheckout(container: container)
        #expect(first.checkout.orders.work === first.checkout.work)
        #expect(first.checkout.work !== second.checkout.work)
    }

    // MARK: - Overrides, tasks, tracing

    @Test func anOverrideKeepsTheGraphScope() {
        let container = DependencyContainer()
        let stubs = Counter()
        container.override(\.unitOfWork) {
            stubs.increment()
            return UnitOfWork()
        }
        let first = container.checkout()
        #expect(first.orders.work === first.work)
        #expect(container.checkout().work !== first.work)
        #expect(stubs.count == 2)
    }

    @Test func aTaskAConstructionStartsIsAnOutermostResolutionOfItsOwn() async throws {
        let container = DependencyContainer()
        let result = Collected<(UnitOfWork, UnitOfWork)>()
        // On a thread of its own, never one of the cooperative pool: the construction
        // blocks it until the task, which needs the pool, has resolved.
        #expect(await finishesWithoutHangingOffThePool { result.append(container.workAndSpawned()) })
        let (work, spawned) = try #require(result.values.first)
        #expect(spawned !== work)
    }

    @Test func anAsyncTaskAConstructionStartsIsAnOutermostResolutionOfItsOwn() async throws {
        let container = DependencyContainer()
        let (work, spawned) = try await container.asyncWorkAndSpawned()
        #expect(spawned !== work)
    }

    @Test func aHitIsTracedAsCached() throws {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        _ = container.checkout()
        let tree = try #require(batches.values.first)
        let work = tree.filter { $0.name == "unitOfWork" }
        #expect(work.map(\.outcome) == [.built, .cached, .cached])
        #expect(work.allSatisfy { $0.scope == .graph })
    }

    // MARK: - Lifetime

    @Test func theInstancesGoWhenTheOutermostResolutionEnds() {
        let container = DependencyContainer()
        let liveness = Liveness()
        container.setValue(liveness, forKey: "liveness")
        #expect(container.workSummary() == "done")
        #expect(!liveness.isAlive)
    }

    @Test func theInstancesGoEvenWhileATaskTheResolutionStartedRuns() async throws {
        let container = DependencyContainer()
        let liveness = Liveness()
        let latch = AsyncLatch()
        let done = AsyncLatch()
        container.setValue(liveness, forKey: "liveness")
        container.setValue(latch, forKey: "latch")
        container.setValue(done, forKey: "done")
        #expect(try await container.asyncWorkWithLingeringTask() == "done")
        #expect(!liveness.isAlive)
        latch.open()
        await done.wait()
    }

    // MARK: - Async

    @Test func asyncResolutionsShareOneInstance() async throws {
        let container = DependencyContainer()
        let (first, second) = try await container.asyncCheckout()
        #expect(first === second)
        let (third, _) = try await container.asyncCheckout()
        #expect(third !== first)
    }

    @Test func anAsyncSingletonsConstructionIsAnOutermostResolutionOfItsOwn() async throws {
        let container = DependencyContainer()
        let (work, kept) = try await container.asyncWorkAndKept()
        #expect(work !== kept)
    }
}

/// A screen whose checkout is resolved on the first read of its property.
final class ScreenWithCheckout: @unchecked Sendable {
    @Dependency(\.checkout) var checkout
    init(container: DependencyContainer) { $checkout.container = container }
}

extension DependencyContainer {
    /// Drafts 1, 1 and 2, resolved in one resolution.
    fileprivate var drafts: Provider<(UnitOfWork, UnitOfWork, UnitOfWork)> {
        factory { (self[draft: 1](), self[draft: 1](), self[draft: 2]()) }
    }
}
