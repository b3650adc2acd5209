// An app module with main-actor default isolation, written as an app is.
import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Observation
import Testing

// MARK: - App code (plain protocols, classes with initializers, no Sendable, no nonisolated)

protocol UsageProfileStore {
    func name(of user: String) -> String
}

final class UsageLiveProfileStore: UsageProfileStore {
    func name(of user: String) -> String { "live \(user)" }
}

final class UsageStubProfileStore: UsageProfileStore {
    let prefix: String
    init(prefix: String) { self.prefix = prefix }
    func name(of user: String) -> String { "\(prefix) \(user)" }
}

/// A session's cart: one per signed-in user.
final class UsageCart {
    let owner: String
    var items: [String] = []
    var saved = false
    init(owner: String) { self.owner = owner }
    func save() { saved = true }
}

/// A screen's context: one per outermost resolution.
final class UsageUnit {
    init() {}
}

final class UsageProbe {
    @Dependency(\.feedStore) var store
    init() {}
}

final class UsagePair {
    let first: UsageUnit
    let second: UsageUnit
    init(first: UsageUnit, second: UsageUnit) { (self.first, self.second) = (first, second) }
}

final class UsageSuspendedScreen {
    let before: UsageProbe
    let after: UsageProbe
    let unitBefore: UsageUnit
    let unitAfter: UsageUnit
    init(before: UsageProbe, after: UsageProbe, unitBefore: UsageUnit, unitAfter: UsageUnit) {
        (self.before, self.after, self.unitBefore, self.unitAfter) = (before, after, unitBefore, unitAfter)
    }
}

/// Main-actor gate: the construction passes it and waits until the test opens it.
final class UsageGate {
    private var waiter: CheckedContinuation<Void, Never>?
    private var arrivalWaiter: CheckedContinuation<Void, Never>?
    private var arrived = false
    private var opened = false
    init() {}
    func pass() async {
        arrived = true
        arrivalWaiter?.resume()
        arrivalWaiter = nil
        if opened { return }
        await withCheckedContinuation { waiter = $0 }
    }
    func waitForArrival() async {
        if arrived { return }
        await withCheckedContinuation { arrivalWaiter = $0 }
    }
    func open() {
        opened = true
        waiter?.resume()
        waiter = nil
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class UsageProfileViewModel {
    @ObservationIgnored @Dependency(\.usageProfileStore) var profiles
    @ObservationIgnored @Dependency(\.usageCurrentUser) var user
    @ObservationIgnored @Dependency(\.usageCart) var cart
    var title = ""
    init() {}
    func load() { title = profiles.name(of: user) }
}

/// A class whose deinit tells the test which thread released it (instrumentation).
final class UsageMainActorResource {
    let onDeinit: (@Sendable (Bool) -> Void)?
    init(onDeinit: (@Sendable (Bool) -> Void)?) { self.onDeinit = onDeinit }
    deinit { onDeinit?(usageIsOnTheMainActorsThread()) }
}

extension DependencyContainer {
    var usageProfileStore: Provider<any UsageProfileStore> { singleton { @MainActor in UsageLiveProfileStore() } }
    var usageCurrentUser: Provider<String> { unimplemented() }
    var usageCart: Provider<UsageCart> {
        scoped { @MainActor in UsageCart(owner: self.usageCurrentUser()) }.onShutdown { @MainActor in $0.save() }
    }
    var usageProfileViewModel: Provider<UsageProfileViewModel> { factory { @MainActor in UsageProfileViewModel() } }
    var usageUnit: Provider<UsageUnit> { graph { UsageUnit() } }
    var usagePair: Provider<UsagePair> { factory { UsagePair(first: self.usageUnit(), second: self.usageUnit()) } }
    var usageGate: UsageGate? { getValue(forKey: "usage.gate") }
    var usageSuspendingScreen: AsyncProvider<UsageSuspendedScreen> {
        factory { @MainActor in
            let before = UsageProbe()
            let unitBefore = self.usageUnit()
            await self.usageGate?.pass()
            let after = UsageProbe()
            let unitAfter = self.usageUnit()
            return UsageSuspendedScreen(before: before, after: after, unitBefore: unitBefore, unitAfter: unitAfter)
        }
    }
    var usageDeinitHook: (@Sendable (Bool) -> Void)? { getValue(forKey: "usage.deinit") }
    var usageMainSingleton: Provider<UsageMainActorResource> {
        singleton { @MainActor in UsageMainActorResource(onDeinit: self.usageDeinitHook) }
    }
    var usageMainScoped: Provider<UsageMainActorResource> {
        scoped { @MainActor in UsageMainActorResource(onDeinit: self.usageDeinitHook) }
    }
}

// MARK: - Test infrastructure (not app code)

/// Whether the caller runs where the main actor runs: the main thread, or (on Linux, once
/// the main thread called `dispatchMain()`) the worker draining the main queue.
nonisolated let usageMainQueueKey: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
}()
nonisolated func usageIsOnTheMainActorsThread() -> Bool {
    DispatchQueue.getSpecific(key: usageMainQueueKey) ?? false || Thread.isMainThread
}

nonisolated final class UsageBox<T>: @unchecked Sendable {
    private var value: T?
    init(_ value: T) { self.value = value }
    func take() { value = nil }
}

/// Runs `work` on a thread of its own and resumes when it is done.
nonisolated func usageOnAThreadOfItsOwn(_ work: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            work()
            done.resume()
        }.start()
    }
}

/// A hook for deinit and the stream of which thread (main or not) it ran on.
nonisolated func usageDeinitReporter() -> (@Sendable (Bool) -> Void, AsyncStream<Bool>) {
    let (stream, continuation) = AsyncStream.makeStream(of: Bool.self)
    return ({ continuation.yield($0) }, stream)
}

// MARK: - Sessions in a main-actor app

@Suite(.dependencies { $0.override(\.usageProfileStore) { @MainActor in UsageStubProfileStore(prefix: "stub") } })
struct AppUsageSessionTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aSignedInSessionGivesItsViewModelsItsUserAndCartAndShutsDownOnSignOut() {
        let app = DependencyContainer.main
        var session: DependencyContainer? = DependencyContainer(scopeOf: app)
        session!.override(\.usageCurrentUser) { "ada" }

        var model: UsageProfileViewModel? = session!.usageProfileViewModel()
        model!.load()
        #expect(model!.title == "stub ada")
        #expect(model!.cart === session!.usageCart())
        #expect(model!.cart.owner == "ada")
        #expect(isSameInstance(model!.profiles, app.usageProfileStore()))

        let other = DependencyContainer(scopeOf: app)
        other.override(\.usageCurrentUser) { "bob" }
        #expect(other.usageCart() !== session!.usageCart())
        #expect(other.usageCart().owner == "bob")

        let cart = session!.usageCart()
        session!.shutdown()
        #expect(cart.saved)
        weak let weakSession = session
        weak let weakCart = session!.usageCart()
        model = nil   // the screen goes (its properties held the session)
        session = nil
        #expect(weakSession == nil, "the session outlived sign-out")
        #expect(weakCart == nil, "the cart outlived sign-out")
    }

    /// A view model made by a session's factory outlives the local variable holding the
    /// session (a screen's model kept by the view): its properties still resolve.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aViewModelBuiltByASessionFactoryResolvesAfterTheSessionVariableIsGone() {
        func signIn() -> UsageProfileViewModel {
            let session = DependencyContainer(scopeOf: DependencyContainer.main)
            session.override(\.usageCurrentUser) { "cy" }
            return session.usageProfileViewModel()
        }
        let model = signIn()
        model.load()
        #expect(model.title == "stub cy")
        #expect(model.cart.owner == "cy")
    }

    /// A view model created inside `withMain(session)` keeps resolving from the session
    /// after the call returns and the session variable is gone.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aViewModelCreatedInWithMainOfASessionResolvesAfterTheSessionVariableIsGone() {
        func makeModel() -> UsageProfileViewModel {
            let session = DependencyContainer(scopeOf: DependencyContainer.main)
            session.override(\.usageCurrentUser) { "dee" }
            return DependencyContainer.withMain(session) { UsageProfileViewModel() }
        }
        let model = makeModel()
        model.load()
        #expect(model.title == "stub dee")
        #expect(model.cart.owner == "dee")
    }

    /// Suite init runs inside the test's container: overriding `main` there reaches the test.
    @Test func aSuiteStoredModelTakesTheTestsContainer() {
        #expect(probe.$store.container === DependencyContainer.main)
    }
    let probe = UsageProbe()
}

// MARK: - An async main-actor construction that suspends, and what runs meanwhile

@Suite(.dependencies) struct AppUsageSuspensionTests {
    /// While an async `factory { @MainActor in … }` of container A is suspended, other main-actor
    /// code runs on the same thread: it is not part of A's construction.
    @Test func codeRunningWhileAMainActorAsyncConstructionIsSuspendedIsNotPartOfIt() async throws {
        let a = DependencyContainer(parent: .mocks)
        let b = DependencyContainer(parent: .mocks)
        let gate = UsageGate()
        a.setValue(gate, forKey: "usage.gate")

        let construction = Task { @MainActor in try await a.usageSuspendingScreen() }
        await gate.waitForArrival()

        // Meanwhile, on the main actor:
        let outsider = DependencyContainer.withMain(b) { UsageProbe() }
        #expect(outsider.$store.container === b, "an object made under withMain(b) took another container")
        let plain = UsageProbe()
        #expect(plain.$store.container === DependencyContainer.main, "an object made by the test took the suspended construction's container")
        let topLevelUnit1 = a.usageUnit()
        let topLevelUnit2 = a.usageUnit()
        #expect(topLevelUnit1 !== topLevelUnit2, "a top-level graph resolution joined a suspended construction's resolution")
        let pair = b.usagePair()
        #expect(pair.first === pair.second)

        gate.open()
        let screen = try await construction.value
        #expect(screen.before.$store.container === a)
        #expect(screen.after.$store.container === a, "after its await, the construction's objects lost their container")
        #expect(screen.unitBefore === screen.unitAfter, "one outermost async resolution got two graph instances")
        #expect(screen.unitBefore !== topLevelUnit1 && screen.unitBefore !== topLevelUnit2)
        #expect(screen.unitBefore !== pair.first)
    }

    /// The same, with many constructions suspended at once and resumed in reverse order.
    @Test func manySuspendedMainActorConstructionsKeepTheirOwnGraphsAndContainers() async throws {
        let worlds = (0..<20).map { _ in DependencyContainer(parent: .mocks) }
        let gates = worlds.map { _ in UsageGate() }
        for (world, gate) in zip(worlds, gates) { world.setValue(gate, forKey: "usage.gate") }
        let tasks = worlds.map { world in Task { @MainActor in try await world.usageSuspendingScreen() } }
        for gate in gates { await gate.waitForArrival() }
        for gate in gates.reversed() { gate.open() }
        var units: [ObjectIdentifier] = []
        for (index, task) in tasks.enumerated() {
            let screen = try await task.value
            #expect(screen.before.$store.container === worlds[index])
            #expect(screen.after.$store.container === worlds[index])
            #expect(screen.unitBefore === screen.unitAfter)
            units.append(ObjectIdentifier(screen.unitBefore))
        }
        #expect(Set(units).count == units.count)
    }
}

// MARK: - What a container drops of a main-actor singleton is released on the main actor

@Suite struct AppUsageReleaseTests {
    @Test func theProbeKnowsTheMainActorsThread() async {
        #expect(usageIsOnTheMainActorsThread())
        let offMain = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            Thread { done.resume(returning: usageIsOnTheMainActorsThread()) }.start()
        }
        #expect(!offMain)
    }

    @Test func aMainActorSingletonDroppedByAResetOffTheMainThreadIsReleasedOnIt() async {
        let (hook, stream) = usageDeinitReporter()
        let world = DependencyContainer(parent: .mocks)
        world.setValue(hook, forKey: "usage.deinit")
        _ = world.usageMainSingleton()
        await usageOnAThreadOfItsOwn { world.reset() }
        var events = stream.makeAsyncIterator()
        let onMain = await events.next()
        #expect(onMain == true, "the main-actor singleton's deinit ran off the main thread")
    }

    @Test func aMainActorScopedInstanceOfAScopeReleasedOffTheMainThreadIsReleasedOnIt() async {
        let (hook, stream) = usageDeinitReporter()
        let app = DependencyContainer(parent: .mocks)
        app.setValue(hook, forKey: "usage.deinit")
        let box: UsageBox<DependencyContainer>
        do {
            let scope = DependencyContainer(scopeOf: app)
            _ = scope.usageMainScoped()
            box = UsageBox(scope)
        }
        await usageOnAThreadOfItsOwn { box.take() }
        var events = stream.makeAsyncIterator()
        let onMain = await events.next()
        #expect(onMain == true, "the main-actor scoped instance's deinit ran off the main thread")
    }

    @Test func aMainActorSingletonOfAWorldReleasedOffTheMainThreadIsReleasedOnIt() async {
        let (hook, stream) = usageDeinitReporter()
        let box: UsageBox<DependencyContainer>
        do {
            let world = DependencyContainer(parent: .mocks)
            world.setValue(hook, forKey: "usage.deinit")
            _ = world.usageMainSingleton()
            box = UsageBox(world)
        }
        await usageOnAThreadOfItsOwn { box.take() }
        var events = stream.makeAsyncIterator()
        let onMain = await events.next()
        #expect(onMain == true, "the main-actor singleton's deinit ran off the main thread")
    }

    @Test func aMainActorSingletonOfAScopeThatOverridesWhatItUsesReleasedOffTheMainThread() async {
        let (hook, stream) = usageDeinitReporter()
        let app = DependencyContainer(parent: .mocks)
        let box: UsageBox<DependencyContainer>
        do {
            let scope = DependencyContainer(scopeOf: app)
            scope.setValue(hook, forKey: "usage.deinit")
            scope.override(\.usageMainSingleton) { @MainActor in UsageMainActorResource(onDeinit: hook) }
            _ = scope.usageMainSingleton()
            box = UsageBox(scope)
        }
        await usageOnAThreadOfItsOwn { box.take() }
        var events = stream.makeAsyncIterator()
        let onMain = await events.next()
        #expect(onMain == true, "the main-actor override instance's deinit ran off the main thread")
    }
}

/// Main-actor app function that reads through `main`.
func usageCurrentTitle() async -> String {
    await Task.yield()
    return DependencyContainer.main.usageProfileStore().name(of: DependencyContainer.main.usageCurrentUser())
}

// MARK: - Hundreds of parallel tests, each in its own world

nonisolated final class UsageWorldRegistry: @unchecked Sendable {
    static let shared = UsageWorldRegistry()
    private struct Claim {
        weak var world: DependencyContainer?
        let id: Int
    }
    private let lock = NSLock()
    private var claims: [ObjectIdentifier: Claim] = [:]
    /// Records that test `id` uses `container`; returns the id of another test whose world,
    /// still alive, is the same container. A world that ended may leave its address to a
    /// later test's (the tests run one at a time under `--no-parallel`): that is no sharing.
    func claim(_ container: DependencyContainer, by id: Int) -> Int? {
        lock.withLock {
            let key = ObjectIdentifier(container)
            if let earlier = claims[key], earlier.id != id, earlier.world === container { return earlier.id }
            claims[key] = Claim(world: container, id: id)
            return nil
        }
    }
}

@Suite(.dependencies { $0.override(\.usageCurrentUser) { "suite" } })
struct AppUsageParallelWorldTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<300) func eachOfManyParallelTestsSeesOnlyItsOwnWorld(id: Int) async throws {
        let world = DependencyContainer.main
        #expect(world.parent === DependencyContainer.mocks)
        let other = UsageWorldRegistry.shared.claim(world, by: id)
        #expect(other == nil, "test \(id) got test \(other ?? -1)'s container")

        world.override(\.usageProfileStore) { @MainActor in UsageStubProfileStore(prefix: "case \(id)") }
        world.override(\.usageCurrentUser) { "user \(id)" }
        world.setValue(id, forKey: "usage.id")
        let model = UsageProfileViewModel()
        for round in 0..<3 {
            for _ in 0...((id &* 7 &+ round) % 4) { await Task.yield() }
            model.load()
            #expect(model.title == "case \(id) user \(id)")
            #expect(model.cart.owner == "user \(id)")
            #expect(DependencyContainer.main.getValue(forKey: "usage.id") == id)
        }
        // An unstructured task and child tasks see the test's world.
        let fromTask = await Task { () -> String in
            await Task.yield()
            let m = UsageProfileViewModel()
            m.load()
            return m.title
        }.value
        #expect(fromTask == "case \(id) user \(id)")
        let fromGroup = await withTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask { await usageCurrentTitle() }
            }
            var all: [String] = []
            for await title in group { all.append(title) }
            return all
        }
        #expect(fromGroup == Array(repeating: "case \(id) user \(id)", count: 3))
        // A per-test session sees the test's overrides.
        let session = DependencyContainer(scopeOf: world)
        #expect(session.usageCart().owner == "user \(id)")
        #expect(session.usageCart() !== model.cart)
        #expect(isSameInstance(session.usageProfileStore(), world.usageProfileStore()))
    }
}

// MARK: - A task a construction starts with Task.immediate

final class UsageImmediateReport {
    var probeContainer: DependencyContainer?
    var unit: UsageUnit?
    init() {}
}

final class UsageStartsWork {
    let unit: UsageUnit
    let report: UsageImmediateReport
    init(unit: UsageUnit, report: UsageImmediateReport) { (self.unit, self.report) = (unit, report) }
}

extension DependencyContainer {
    var usageReport: UsageImmediateReport? { getValue(forKey: "usage.report") }
    /// A screen model that starts its loading at once, as UI code does with `Task.immediate`.
    var usageStartsWork: Provider<UsageStartsWork> {
        factory { @MainActor in
            let report = self.usageReport!
            let unit = self.usageUnit()
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate {
                    report.probeContainer = UsageProbe().$store.container
                    report.unit = self.usageUnit()
                }
            }
            return UsageStartsWork(unit: unit, report: report)
        }
    }
}

@Suite(.dependencies) struct AppUsageImmediateTaskTests {
    /// "A task that a registration's closure starts is not part of the construction:
    /// objects it creates take main." and "A task that a construction starts … does not
    /// share its instances: what it resolves is outermost of its own."
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func aTaskStartedImmediatelyByAConstructionIsNotPartOfIt() async {
        let world = DependencyContainer.main
        let other = DependencyContainer(parent: .mocks)
        let report = UsageImmediateReport()
        other.setValue(report, forKey: "usage.report")
        let built = other.usageStartsWork()
        #expect(report.probeContainer === world, "an object made in the construction's task took the building container")
        #expect(report.unit != nil)
        #expect(report.unit !== built.unit, "the started task shared the construction's graph instance")
    }
}

// MARK: - Async main-actor singleton: built once, a cancelled waiter does not cancel it

final class UsageSessionService {
    init() {}
}

extension DependencyContainer {
    var usageAsyncMainService: AsyncProvider<UsageSessionService> {
        singleton { @MainActor in
            (self.getValue(forKey: "usage.builds") as UsageBuilds?)?.count += 1
            await self.usageGate?.pass()
            return UsageSessionService()
        }
    }
}

final class UsageBuilds {
    var count = 0
    init() {}
}

@Suite(.dependencies) struct AppUsageAsyncMainSingletonTests {
    @Test func anAsyncMainActorSingletonIsBuiltOnceAndACancelledWaiterDoesNotCancelIt() async throws {
        let world = DependencyContainer.main
        let gate = UsageGate()
        let builds = UsageBuilds()
        world.setValue(gate, forKey: "usage.gate")
        world.setValue(builds, forKey: "usage.builds")
        let first = Task { @MainActor in try await world.usageAsyncMainService() }
        let second = Task { @MainActor in try await world.usageAsyncMainService() }
        await gate.waitForArrival()
        first.cancel()
        let firstOutcome = await first.result
        gate.open()
        let service = try await second.value
        #expect(throws: CancellationError.self) { try firstOutcome.get() }
        #expect(try await world.usageAsyncMainService() === service)
        #expect(builds.count == 1)
    }
}

// MARK: - A session's model that keeps an async provider and a provider family

/// A mailbox opened asynchronously, once per app; a thread per subject.
final class UsageMailbox {
    init() {}
}

final class UsageThread {
    let subject: String
    init(subject: String) { self.subject = subject }
}

/// A session's inbox: awaits the mailbox and opens threads where it needs them.
@Observable final class UsageInboxModel {
    @ObservationIgnored @Dependency(\.usageMailbox) var mailbox
    @ObservationIgnored @Dependency(\.usageThreads) var threads
    var opened: [String] = []
    init() {}
    func open(_ subject: String) {
        opened.append(threads(subject).subject)
    }
}

extension DependencyContainer {
    var usageMailbox: AsyncProvider<UsageMailbox> { singleton { @MainActor in UsageMailbox() } }
    var usageThreads: ProviderFamily<String, UsageThread> { singleton { @MainActor in UsageThread(subject: $0) } }
    var usageInbox: Provider<UsageInboxModel> { scoped { @MainActor in UsageInboxModel() } }
}

@Suite(.dependencies) struct AppUsageSessionProvidersTests {
    /// The session keeps its inbox, whose properties publish providers: after sign-out
    /// the session and the inbox go, and the app keeps its mailbox.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aSessionsInboxThatKeepsProvidersGoesWithTheSession() async throws {
        let app = DependencyContainer.main
        weak var weakSession: DependencyContainer?
        weak var weakInbox: UsageInboxModel?
        do {
            let session = DependencyContainer(scopeOf: app)
            weakSession = session
            let inbox = session.usageInbox()
            weakInbox = inbox
            inbox.open("welcome")
            #expect(inbox.opened == ["welcome"])
            #expect(inbox.threads("welcome") === app.usageThreads("welcome"))
            #expect(try await inbox.mailbox() === app.usageMailbox())
        }
        #expect(weakSession == nil, "the session outlived sign-out")
        #expect(weakInbox == nil, "the inbox outlived sign-out")
        #expect(app.instanceIfBuilt(\.usageMailbox) != nil)
    }
}

// MARK: - A linked async provider reads a main-actor registration on the main actor

/// Counts the runs of a registration's property, and those off the main actor.
nonisolated final class UsagePropertyRuns: @unchecked Sendable {
    private let lock = NSLock()
    private var runs = (total: 0, offMain: 0)
    func note() {
        let onMain = usageIsOnTheMainActorsThread()
        lock.withLock { runs = (runs.total + 1, runs.offMain + (onMain ? 0 : 1)) }
    }
    var counts: (total: Int, offMain: Int) { lock.withLock { runs } }
}

/// Main-actor state a registration reads to choose what it builds.
final class UsageMailboxSettings {
    var useStub = false
    init() {}
}

final class UsageChosenInbox {
    @Dependency(\.usageChosenMailbox) var mailbox
    init() {}
}

extension DependencyContainer {
    var usagePropertyRuns: UsagePropertyRuns? { getValue(forKey: "usage.propertyRuns") }
    var usageMailboxSettings: Provider<UsageMailboxSettings> { singleton { @MainActor in UsageMailboxSettings() } }
    /// Main-actor isolated, as the module's default: it reads main-actor state.
    var usageChosenMailbox: AsyncProvider<UsageMailbox> {
        usagePropertyRuns?.note()
        return usageMailboxSettings().useStub ? singleton { @MainActor in UsageMailbox() } : usageMailbox
    }
    var usageChosenInbox: Provider<UsageChosenInbox> { scoped { @MainActor in UsageChosenInbox() } }
}

@Suite(.dependencies) struct AppUsageLinkedProviderIsolationTests {
    /// The session's inbox keeps a linked provider, which reads the registration again on
    /// every call: on the main actor, where the property first read it, whether awaited
    /// there or from a task off it.
    @Test func aLinkedProviderReadsAMainActorRegistrationOnTheMainActor() async throws {
        let runs = UsagePropertyRuns()
        let app = DependencyContainer.main
        app.setValue(runs, forKey: "usage.propertyRuns")
        let session = DependencyContainer(scopeOf: app)
        let inbox = session.usageChosenInbox()
        let mailbox = inbox.mailbox
        let before = runs.counts.total
        let first = try await mailbox()
        #expect(try await inbox.mailbox() === first)
        let fromATask = try await Task.detached { try await mailbox() }.value
        #expect(fromATask === first)
        #expect(runs.counts.total == before + 3)
        #expect(runs.counts.offMain == 0, "a main-actor registration's property ran off the main actor")
        #expect(try await app.usageMailbox() === first)
        withExtendedLifetime(session) {}
    }
}

// MARK: - A coordinator that makes a screen model for each screen it shows

/// A screen's view model, made anew for each screen.
final class UsageScreenModel {
    let title: String
    init(title: String) { self.title = title }
}

/// A session's navigation: it makes a model for each screen it pushes, through the
/// provider it keeps.
final class UsageCoordinator {
    @Dependency(\.usageMakeScreen) var makeScreen: Provider<UsageScreenModel>
    private(set) var stack: [UsageScreenModel] = []
    init() {}
    func push() { stack.append(makeScreen()) }
}

extension DependencyContainer {
    var usageMakeScreen: Provider<UsageScreenModel> { factory { UsageScreenModel(title: "live") } }
    var usageCoordinator: Provider<UsageCoordinator> { scoped { UsageCoordinator() } }
}

@Suite(.dependencies) struct AppUsageScreenFactoryTests {
    /// The session keeps its coordinator, whose provider builds in the session: with the
    /// session's override, installed after the coordinator read it, and without keeping
    /// the session alive once the user signs out.
    @Test func aSessionsCoordinatorMakesScreensInTheSessionAndGoesWithIt() {
        weak var releasedSession: DependencyContainer?
        weak var releasedCoordinator: UsageCoordinator?
        do {
            let session = DependencyContainer(scopeOf: DependencyContainer.main)
            releasedSession = session
            let coordinator = session.usageCoordinator()
            releasedCoordinator = coordinator
            coordinator.push()
            session.override(\.usageMakeScreen) { @MainActor in UsageScreenModel(title: "session") }
            coordinator.push()
            #expect(coordinator.stack.map(\.title) == ["live", "session"])
            #expect(session.usageCoordinator() === coordinator)
        }
        #expect(releasedSession == nil, "the session was kept alive by its coordinator's provider")
        #expect(releasedCoordinator == nil)
    }
}

// MARK: - Tracing what a view model's first reads resolve

/// The names a tracer heard of, in order: a tracer is called from whichever thread ends
/// the resolution, so its log takes a lock.
nonisolated final class UsageTraceLog: @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [[String]] = []
    func append(_ batch: [ResolutionEvent]) { lock.withLock { heard.append(batch.map { "\($0.name) \($0.depth)" }) } }
    var batches: [[String]] { lock.withLock { heard } }
}

extension DependencyContainer {
    /// The trace log as a registration a tracer resolves: `nonisolated`, as CompositionRoot.md
    /// says a main-actor module declares it, since the tracer runs on the resolving thread.
    nonisolated var usageTraceLog: Provider<UsageTraceLog> { singleton { UsageTraceLog() } }
}

@Suite(.dependencies) struct AppUsageTracingTests {
    /// CompositionRoot.md's tracer, in a main-actor module: it resolves its log, declared
    /// `nonisolated`, which is not traced.
    @Test func aTracerResolvesANonisolatedLog() {
        let world = DependencyContainer.main
        world.override(\.usageCurrentUser) { "ada" }
        world.tracer = ResolutionTracer { [unowned world] events in world.usageTraceLog().append(events) }
        #expect(world.usageCurrentUser() == "ada")
        world.tracer = nil
        #expect(world.usageTraceLog().batches == [["usageCurrentUser 0"]])
    }

    /// A view model that app code creates reads its properties outside every construction:
    /// each first read is an outermost resolution, which the test's tracer hears of.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aViewModelsFirstReadsAreTraced() {
        let world = DependencyContainer.main
        world.override(\.usageCurrentUser) { "ada" }
        let log = UsageTraceLog()
        world.tracer = ResolutionTracer { log.append($0) }
        let model = UsageProfileViewModel()
        model.load()
        #expect(log.batches == [["usageProfileStore 0"], ["usageCurrentUser 0"]])
        world.tracer = nil
    }

    /// A session's coordinator makes a screen through the provider it keeps: the tracer
    /// hears of each screen it pushes, as of a screen the session makes.
    @Test func aCoordinatorsScreensAreTraced() {
        let session = DependencyContainer(scopeOf: DependencyContainer.main)
        let coordinator = session.usageCoordinator()
        let log = UsageTraceLog()
        session.tracer = ResolutionTracer { log.append($0) }
        coordinator.push()
        _ = session.usageMakeScreen()
        session.tracer = nil
        #expect(log.batches == [["usageMakeScreen 0"], ["usageMakeScreen 0"]])
    }
}

// MARK: - Suite init inside the test's world; per-property container switch

final class UsageInitMark {
    init() {}
}

@Suite(.dependencies) struct AppUsageSuiteInitTests {
    let mark = UsageInitMark()
    let initContainer: DependencyContainer

    init() async throws {
        await Task.yield()
        initContainer = DependencyContainer.main
        DependencyContainer.main.setValue(mark, forKey: "usage.init")
        DependencyContainer.main.override(\.usageCurrentUser) { "from init" }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<40) func aSuiteInitRunsInEachTestsWorld(id: Int) {
        #expect(initContainer === DependencyContainer.main)
        #expect(initContainer !== DependencyContainer.mocks && initContainer !== DependencyContainer.default)
        #expect((DependencyContainer.main.getValue(forKey: "usage.init") as UsageInitMark?) === mark)
        #expect((DependencyContainer.mocks.getValue(forKey: "usage.init") as UsageInitMark?) == nil)
        #expect((DependencyContainer.default.getValue(forKey: "usage.init") as UsageInitMark?) == nil)
        let model = UsageProfileViewModel()
        #expect(model.user == "from init")
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func switchingOnePropertyToAnotherSessionResolvesFromIt() {
        let ada = DependencyContainer(scopeOf: DependencyContainer.main)
        ada.override(\.usageCurrentUser) { "ada" }
        let bob = DependencyContainer(scopeOf: DependencyContainer.main)
        bob.override(\.usageCurrentUser) { "bob" }
        let model = DependencyContainer.withMain(ada) { UsageProfileViewModel() }
        #expect(model.cart.owner == "ada")
        model.$cart.container = bob
        #expect(model.cart === bob.usageCart())
        #expect(model.user == "ada")
        model.$user.container = bob
        #expect(model.user == "bob")
        model.$user.reset()
        #expect(model.user == "bob")
    }
}
