// Tests written as an app module is: main-actor default isolation, plain protocols and
// classes, @Observable view models, the testing product's trait; the Apps article's
// examples, renamed, included.
import DependencyInjection
import DependencyInjectionTesting
import Observation
import Testing

// MARK: - Apps.md, verbatim but renamed

protocol AppStyleDocFeedStore {
    func load() -> [String]
}

final class AppStyleDocLiveFeedStore: AppStyleDocFeedStore {
    private var items = ["Welcome"]
    func load() -> [String] { items }
}

final class AppStyleDocStubFeedStore: AppStyleDocFeedStore {
    let items: [String]
    init(items: [String]) { self.items = items }
    func load() -> [String] { items }
}

final class AppStyleDocFeedService {
    let store: any AppStyleDocFeedStore
    init(store: any AppStyleDocFeedStore) { self.store = store }
    func titles() -> [String] { store.load().map { $0.uppercased() } }
}

final class AppStyleDocSettings {
    var showsImages = true
}

extension DependencyContainer {
    var appStyleDocFeedStore: Provider<any AppStyleDocFeedStore> { singleton { @MainActor in AppStyleDocLiveFeedStore() } }
    var appStyleDocFeedService: Provider<AppStyleDocFeedService> { factory { AppStyleDocFeedService(store: self.appStyleDocFeedStore()) } }
    var appStyleDocSettings: Provider<AppStyleDocSettings> { singleton { AppStyleDocSettings() } }
}

protocol AppStyleDocTracker {
    func track(_ event: String)
}

final class AppStyleDocConsoleTracker: AppStyleDocTracker {
    private(set) var events: [String] = []
    func track(_ event: String) { events.append(event) }
}

extension DependencyContainer {
    var appStyleDocTracker: Provider<any AppStyleDocTracker> { unimplemented(on: MainActor.self) }
}

func appStyleDocSupplyTracker(in container: DependencyContainer) {
    container.override(\.appStyleDocTracker) { @MainActor in AppStyleDocConsoleTracker() }
}

protocol AppStyleDocDraftEditor {
    var draft: Int { get }
}

final class AppStyleDocLiveDraftEditor: AppStyleDocDraftEditor {
    let draft: Int
    init(draft: Int) { self.draft = draft }
}

extension DependencyContainer {
    var appStyleDocEditor: ProviderFamily<Int, any AppStyleDocDraftEditor> { unimplemented(on: MainActor.self) }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleDocFeedModel {
    @ObservationIgnored @Dependency(\.appStyleDocFeedStore) var store
    var items: [String] = []

    func load() {
        items = store.load()
    }
}

func appStyleDocUseStubs(in container: DependencyContainer) {
    container.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["a", "b"]) }
    container.override(\.appStyleDocFeedService) { @MainActor in AppStyleDocFeedService(store: AppStyleDocStubFeedStore(items: [])) }
}

actor AppStyleDocDrafts {
    private(set) var saved: [String] = []
    func save(_ draft: String) { saved.append(draft) }
}

extension DependencyContainer {
    var appStyleDocDrafts: AsyncProvider<AppStyleDocDrafts> { singleton { AppStyleDocDrafts() } }
}

@Test(.dependencies { $0.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["a"]) } })
func appStyleAppStyleDocShowsTheStubbedItems() {
    #expect(DependencyContainer.main.appStyleDocFeedStore().load() == ["a"])
}

@Test(.dependencies { container in
    try await container.appStyleDocDrafts().save("seeded")
})
func appStyleAppStyleDocStartsFromASeededStore() async throws {
    #expect(try await DependencyContainer.main.appStyleDocDrafts().saved == ["seeded"])
}

@Suite struct AppStyleDocAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func theObservableModelLoadsTheLiveStoreThenTheStubs() {
        let model = AppStyleDocFeedModel()
        model.load()
        #expect(model.items == ["Welcome"])
        appStyleDocUseStubs(in: DependencyContainer.main)
        // An override drops the singleton; the model's property keeps the value it read.
        #expect(model.store.load() == ["Welcome"])
        model.$store.reset()
        model.load()
        #expect(model.items == ["a", "b"])
        #expect(DependencyContainer.main.appStyleDocFeedService().titles() == [])
    }

    @Test(.dependencies) func theSettingsSingletonIsOnePerWorld() {
        let settings = DependencyContainer.main.appStyleDocSettings()
        settings.showsImages = false
        #expect(DependencyContainer.main.appStyleDocSettings().showsImages == false)
        #expect(DependencyContainer.mocks.appStyleDocSettings() !== settings)
    }

    @Test(.dependencies) func theTrackerSuppliedAtLaunchIsUsed() {
        appStyleDocSupplyTracker(in: DependencyContainer.main)
        let tracker = DependencyContainer.main.appStyleDocTracker()
        tracker.track("x")
        #expect((tracker as? AppStyleDocConsoleTracker)?.events == ["x"])
    }

    @Test(.dependencies { $0.override(\.appStyleDocEditor) { @MainActor draft in AppStyleDocLiveDraftEditor(draft: draft) } })
    func theEditorFamilyPlaceholderIsSuppliedForEveryDraft() {
        #expect(DependencyContainer.main.appStyleDocEditor(3).draft == 3)
        #expect(DependencyContainer.main.appStyleDocEditor(7).draft == 7)
    }
}

// MARK: - A suite without a trait of its own, a test with one: its stored model

final class AppStylePlainFeedModel {
    @Dependency(\.appStyleDocFeedStore) var store
    var items: [String] = []
    func load() { items = store.load() }
}

@Suite struct AppStyleTestTraitSuiteAttackTests {
    let model = AppStylePlainFeedModel()

    @Test(.dependencies { $0.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["test"]) } })
    func aStoredModelOfASuiteWithoutATraitTakesTheTestsContainer() {
        model.load()
        #expect(model.items == ["test"])
        #expect(model.$store.container === DependencyContainer.main)
    }
}

// MARK: - A model created before an override reads lazily

@Suite struct AppStyleLazyReadAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aModelCreatedBeforeAnOverrideReadsTheOverride() async {
        let model = AppStyleDocFeedModel()
        await Task.yield()
        DependencyContainer.main.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["late"]) }
        model.load()
        #expect(model.items == ["late"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(arguments: 0..<60) func parallelTestsReadTheirOwnOverrideLazilyAfterSuspensions(id: Int) async {
        await DependencyContainer.withMain(DependencyContainer(parent: .mocks)) {
            let model = AppStyleDocFeedModel()
            for _ in 0..<3 { await Task.yield() }
            DependencyContainer.main.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["\(id)"]) }
            for _ in 0..<3 { await Task.yield() }
            model.load()
            #expect(model.items == ["\(id)"])
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies, arguments: 0..<60) func parallelTraitTestsSeeOnlyTheirOwnSingletonsAndOverrides(id: Int) async throws {
        let model = AppStyleDocFeedModel()
        let settings = DependencyContainer.main.appStyleDocSettings()
        #expect(settings.showsImages)
        settings.showsImages = id.isMultiple(of: 2)
        await Task.yield()
        DependencyContainer.main.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["\(id)"]) }
        try await DependencyContainer.main.appStyleDocDrafts().save("\(id)")
        await Task.yield()
        model.load()
        #expect(model.items == ["\(id)"])
        #expect(DependencyContainer.main.appStyleDocSettings().showsImages == id.isMultiple(of: 2))
        #expect(try await DependencyContainer.main.appStyleDocDrafts().saved == ["\(id)"])
    }
}

// MARK: - A screen scope inside a test's world

final class AppStyleScreenState {
    let name: String
    private(set) var saved = false
    init(name: String) { self.name = name }
    func save() { saved = true }
}

final class AppStyleScreenDeinitCounter {
    var count = 0
    var saves = 0
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleScreenModel {
    @ObservationIgnored @Dependency(\.appStyleScreenState) var state
    @ObservationIgnored @Dependency(\.appStyleDocSettings) var settings
    var title = ""
    func open() { title = state.name }
}

extension DependencyContainer {
    var appStyleScreenName: Provider<String> { unimplemented() }
    var appStyleScreenCounter: Provider<AppStyleScreenDeinitCounter> { singleton { AppStyleScreenDeinitCounter() } }
    var appStyleScreenState: Provider<AppStyleScreenState> {
        scoped { @MainActor in
            AppStyleScreenState(name: self.appStyleScreenName())
        }.onShutdown { @MainActor in $0.save() }
    }
}

@Suite struct AppStyleScreenScopeAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aScreenScopeOfTheTestsWorldSharesItsSingletonsAndFreesItsOwn() {
        let world = DependencyContainer.main
        weak var weakScope: DependencyContainer?
        weak var weakState: AppStyleScreenState?
        weak var weakModel: AppStyleScreenModel?
        do {
            let screen = DependencyContainer(scopeOf: world)
            screen.override(\.appStyleScreenName) { "inbox" }
            let model = DependencyContainer.withMain(screen) { AppStyleScreenModel() }
            model.open()
            #expect(model.title == "inbox")
            #expect(model.settings === world.appStyleDocSettings())
            #expect(model.state === screen.appStyleScreenState())
            weakScope = screen
            weakState = model.state
            weakModel = model
            screen.shutdown()
            #expect(model.state.saved)
        }
        #expect(weakModel == nil)
        #expect(weakScope == nil)
        #expect(weakState == nil)
    }

    @Test(.dependencies) func manyScreenScopesEachTheirOwnStateAllFreed() {
        let world = DependencyContainer.main
        var weakStates: [() -> AppStyleScreenState?] = []
        for index in 0..<50 {
            let screen = DependencyContainer(scopeOf: world)
            screen.override(\.appStyleScreenName) { "screen \(index)" }
            let state = screen.appStyleScreenState()
            #expect(state.name == "screen \(index)")
            #expect(screen.appStyleScreenState() === state)
            weak let weakState = state
            weakStates.append { weakState }
        }
        #expect(weakStates.allSatisfy { $0() == nil })
    }
}

// MARK: - Server-style: a scope per request, many at once

final class AppStyleOrdersStore {
    private(set) var served = 0
    func orders(of user: String) -> [String] { served += 1; return ["order of \(user)"] }
}

final class AppStyleOrdersHandler {
    let user: String
    let store: AppStyleOrdersStore
    init(user: String, store: AppStyleOrdersStore) { (self.user, self.store) = (user, store) }
    func respond() -> [String] { store.orders(of: user) }
}

final class AppStyleRequestAudit {
    let user: String
    init(user: String) { self.user = user }
}

final class AppStyleReleaseLog {
    var handlers: [() -> AppStyleOrdersHandler?] = []
    var scopes: [() -> DependencyContainer?] = []
    var audits: [() -> AppStyleRequestAudit?] = []
}

extension DependencyContainer {
    var appStyleOrdersStore: Provider<AppStyleOrdersStore> { singleton { AppStyleOrdersStore() } }
    var appStyleRequestUser: Provider<String> { unimplemented() }
    var appStyleOrdersHandler: Provider<AppStyleOrdersHandler> {
        scoped { AppStyleOrdersHandler(user: self.appStyleRequestUser(), store: self.appStyleOrdersStore()) }
    }
    var appStyleRequestAudit: AsyncProvider<AppStyleRequestAudit> {
        scoped { @MainActor in
            await Task.yield()
            return AppStyleRequestAudit(user: self.appStyleRequestUser())
        }
    }
}

func appStyleHandle(requestFrom user: String, app: DependencyContainer, log: AppStyleReleaseLog) async throws -> [String] {
    let request = DependencyContainer(scopeOf: app)
    request.override(\.appStyleRequestUser) { user }
    await Task.yield()
    let handler = request.appStyleOrdersHandler()
    let audit = try await request.appStyleRequestAudit()
    await Task.yield()
    #expect(audit.user == user)
    #expect(handler.user == user)
    #expect(try await request.appStyleRequestAudit() === audit)
    #expect(request.appStyleOrdersHandler() === handler)
    weak let weakHandler = handler
    weak let weakRequest = request
    weak let weakAudit = audit
    log.handlers.append { weakHandler }
    log.scopes.append { weakRequest }
    log.audits.append { weakAudit }
    return handler.respond()
}

@Suite struct AppStyleServerAttackTests {
    @Test func manyRequestsShareTheStoreSeeTheirUserAndAreFreed() async throws {
        let app = DependencyContainer()
        let log = AppStyleReleaseLog()
        let responses = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<200 {
                group.addTask { try await appStyleHandle(requestFrom: "user\(index)", app: app, log: log) }
            }
            var all: [String] = []
            for try await response in group { all += response }
            return all
        }
        #expect(responses.count == 200)
        #expect(Set(responses).count == 200)
        #expect(app.appStyleOrdersStore().served == 200)
        #expect(log.handlers.filter { $0() != nil }.count == 0)
        #expect(log.audits.filter { $0() != nil }.count == 0)
        #expect(log.scopes.filter { $0() != nil }.count == 0)
    }

    @Test(.dependencies) func requestsScopedOnTheTestsWorldAreFreed() async throws {
        let world = DependencyContainer.main
        let log = AppStyleReleaseLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { _ = try await appStyleHandle(requestFrom: "u\(index)", app: world, log: log) }
            }
            try await group.waitForAll()
        }
        #expect(world.appStyleOrdersStore().served == 50)
        #expect(log.scopes.filter { $0() != nil }.count == 0)
        #expect(log.handlers.filter { $0() != nil }.count == 0)
        #expect(log.audits.filter { $0() != nil }.count == 0)
    }
}

// MARK: - Worlds released when a test ends

/// What a test's world held, looked at after the test ended.
final class AppStyleWorldProbe {
    weak var world: DependencyContainer?
    weak var settings: AppStyleDocSettings?
    weak var store: AnyObject?
    weak var model: AnyObject?
    weak var drafts: AppStyleDocDrafts?
    init() {}
}

@Suite struct AppStyleWorldReleaseAttackTests {
    /// A test's world, its main-actor and async singletons, its override's object and a
    /// model that read from it all go when the test ends. The trait's scope runs by hand,
    /// as Swift Testing runs it around a test, so that this test can look after it ends.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func whatATestsWorldBuiltGoesWhenTheTestEnds() async throws {
        let probe = AppStyleWorldProbe()
        let trait: DependenciesTrait = .dependencies {
            $0.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["x"]) }
        }
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            try await Self.buildInTheTestsWorld(into: probe)
        }
        #expect(probe.model == nil)
        #expect(probe.world == nil)
        #expect(probe.settings == nil)
        #expect(probe.store == nil)
        #expect(probe.drafts == nil)
    }

    /// What a test body does: builds a model and singletons in the test's world.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    static func buildInTheTestsWorld(into probe: AppStyleWorldProbe) async throws {
        let model = AppStyleDocFeedModel()
        model.load()
        #expect(model.items == ["x"])
        probe.world = DependencyContainer.main
        probe.settings = DependencyContainer.main.appStyleDocSettings()
        probe.store = DependencyContainer.main.appStyleDocFeedStore() as AnyObject
        probe.model = model
        probe.drafts = try await DependencyContainer.main.appStyleDocDrafts()
    }
}

// MARK: - A linked provider in an Observable singleton sees later overrides

final class AppStyleRow {
    let label: String
    init(label: String) { self.label = label }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleListModel {
    @ObservationIgnored @Dependency(\.appStyleRow) var makeRow: Provider<AppStyleRow>
    var rows: [AppStyleRow] = []
    func add() { rows.append(makeRow()) }
}

extension DependencyContainer {
    var appStyleRow: Provider<AppStyleRow> { factory { AppStyleRow(label: "live") } }
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var appStyleListModel: Provider<AppStyleListModel> { singleton { @MainActor in AppStyleListModel() } }
}

@Suite struct AppStyleLinkedProviderAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aSingletonModelsRowFactorySeesAnOverrideInstalledLater() {
        let list = DependencyContainer.main.appStyleListModel()
        list.add()
        DependencyContainer.main.override(\.appStyleRow) { @MainActor in AppStyleRow(label: "stub") }
        list.add()
        #expect(list.rows.map(\.label) == ["live", "stub"])
        #expect(DependencyContainer.main.appStyleListModel() === list)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aSingletonModelOfAWorldIsFreedWithTheWorld() {
        weak var weakWorld: DependencyContainer?
        weak var weakList: AppStyleListModel?
        do {
            let world = DependencyContainer(parent: .mocks)
            let list = world.appStyleListModel()
            list.add()
            weakWorld = world
            weakList = list
        }
        #expect(weakWorld == nil)
        #expect(weakList == nil)
    }
}

// MARK: - Task-local world and tasks

@Suite struct AppStyleTaskAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies { $0.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["t"]) } })
    func aModelCreatedInAChildTaskTakesTheTestsWorld() async {
        let world = DependencyContainer.main
        let items = await Task { () -> [String] in
            let model = AppStyleDocFeedModel()
            model.load()
            #expect(model.$store.container === world)
            return model.items
        }.value
        #expect(items == ["t"])
        let grouped = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<10 {
                group.addTask { @MainActor in
                    let model = AppStyleDocFeedModel()
                    model.load()
                    return model.items
                }
            }
            var all: [String] = []
            for await items in group { all += items }
            return all
        }
        #expect(grouped == Array(repeating: "t", count: 10))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aModelCreatedInAWorldAndReadAfterTheWorldIsDroppedStillReadsIt() {
        var world: DependencyContainer? = DependencyContainer(parent: .mocks)
        world!.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["kept"]) }
        let model = DependencyContainer.withMain(world!) { AppStyleDocFeedModel() }
        world = nil
        model.load()
        #expect(model.items == ["kept"])
    }
}

// MARK: - Composer, parent: .default, families in a view model, decorations, graph

struct AppStyleAppComposer: Composer {
    let items: [String]
    func compose(_ container: DependencyContainer) {
        container.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: self.items) }
        container.override(\.appStyleDocTracker) { @MainActor in AppStyleDocConsoleTracker() }
    }
}

final class AppStyleLoggingFeedStore: AppStyleDocFeedStore {
    let wrapped: any AppStyleDocFeedStore
    init(wrapping wrapped: any AppStyleDocFeedStore) { self.wrapped = wrapped }
    func load() -> [String] { ["logged"] + wrapped.load() }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleEditorModel {
    @ObservationIgnored @Dependency(\.appStyleDocEditor) var editor
    var open: [Int] = []
    func openDraft(_ id: Int) { open.append(editor(id).draft) }
}

final class AppStyleUnitOfWork {}
final class AppStyleOrderWriter {
    let work: AppStyleUnitOfWork
    init(work: AppStyleUnitOfWork) { self.work = work }
}
final class AppStyleCheckout {
    let orders: AppStyleOrderWriter
    let payments: AppStyleOrderWriter
    init(orders: AppStyleOrderWriter, payments: AppStyleOrderWriter) { (self.orders, self.payments) = (orders, payments) }
}

extension DependencyContainer {
    var appStyleUnitOfWork: Provider<AppStyleUnitOfWork> { graph { AppStyleUnitOfWork() } }
    var appStyleOrderWriter: Provider<AppStyleOrderWriter> { factory { AppStyleOrderWriter(work: self.appStyleUnitOfWork()) } }
    var appStyleCheckout: Provider<AppStyleCheckout> {
        factory { AppStyleCheckout(orders: self.appStyleOrderWriter(), payments: self.appStyleOrderWriter()) }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleCheckoutModel {
    @ObservationIgnored @Dependency(\.appStyleCheckout) var checkout
    @ObservationIgnored @Dependency(\.appStyleUnitOfWork) var work
}

@Suite struct AppStyleMoreAttackTests {
    @Test(.dependencies { $0.compose(AppStyleAppComposer(items: ["composed"])) })
    func aMainActorComposerInTheTraitSuppliesMainActorObjects() {
        #expect(DependencyContainer.main.appStyleDocFeedStore().load() == ["composed"])
        #expect(DependencyContainer.main.appStyleDocTracker() is AppStyleDocConsoleTracker)
    }

    @Test(.dependencies(parent: .default)) func anOverrideInATestOfTheDefaultParentDoesNotReachDefault() {
        DependencyContainer.main.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["mine"]) }
        DependencyContainer.main.setValue("mine", forKey: "appStyle.key")
        #expect(DependencyContainer.main.appStyleDocFeedStore().load() == ["mine"])
        #expect(DependencyContainer.default.appStyleDocFeedStore().load() == ["Welcome"])
        #expect(DependencyContainer.default.getValue(forKey: "appStyle.key") as String? == nil)
        #expect(DependencyContainer.main.isMocked == false)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies { $0.override(\.appStyleDocEditor) { @MainActor draft in AppStyleDocLiveDraftEditor(draft: draft * 10) } })
    func anObservableModelOpensDraftsThroughAFamilyPlaceholder() {
        let model = AppStyleEditorModel()
        model.openDraft(1)
        model.openDraft(2)
        #expect(model.open == [10, 20])
        DependencyContainer.main.override(\.appStyleDocEditor) { @MainActor draft in AppStyleDocLiveDraftEditor(draft: -draft) }
        model.openDraft(3)
        #expect(model.open == [10, 20, -3])
    }

    @Test(.dependencies) func aMainActorDecorationWrapsTheTestsOverrideAndAScopeSeesIt() {
        let world = DependencyContainer.main
        world.decorate(\.appStyleDocFeedStore) { @MainActor in AppStyleLoggingFeedStore(wrapping: $0) }
        #expect(world.appStyleDocFeedStore().load() == ["logged", "Welcome"])
        world.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["stub"]) }
        #expect(world.appStyleDocFeedStore().load() == ["logged", "stub"])
        let screen = DependencyContainer(scopeOf: world)
        #expect(screen.appStyleDocFeedStore().load() == ["logged", "stub"])
        #expect(isSameInstance(screen.appStyleDocFeedStore(), world.appStyleDocFeedStore()))
        #expect(DependencyContainer.mocks.appStyleDocFeedStore().load() == ["Welcome"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func graphInstancesInAMainActorModuleArePerOutermostResolution() {
        let checkout = DependencyContainer.main.appStyleCheckout()
        #expect(checkout.orders.work === checkout.payments.work)
        #expect(DependencyContainer.main.appStyleCheckout().orders.work !== checkout.orders.work)
        let model = AppStyleCheckoutModel()
        #expect(model.checkout.orders.work === model.checkout.payments.work)
        #expect(model.work !== model.checkout.orders.work)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aSingletonModelOfTheTestsWorldDoesNotKeepTheWorld() {
        weak var weakWorld: DependencyContainer?
        weak var weakList: AppStyleListModel?
        weak var weakDecorated: AnyObject?
        do {
            let world = DependencyContainer(parent: .mocks)
            world.decorate(\.appStyleDocFeedStore) { @MainActor in AppStyleLoggingFeedStore(wrapping: $0) }
            world.override(\.appStyleRow) { @MainActor in AppStyleRow(label: "w") }
            let list = world.appStyleListModel()
            list.add()
            #expect(list.rows.map(\.label) == ["w"])
            weakDecorated = world.appStyleDocFeedStore() as AnyObject
            weakWorld = world
            weakList = list
        }
        #expect(weakWorld == nil)
        #expect(weakList == nil)
        #expect(weakDecorated == nil)
    }
}

// MARK: - Requests that override what an app-wide async singleton is built from

final class AppStyleRateLimiter {
    let region: String
    init(region: String) { self.region = region }
}

extension DependencyContainer {
    var appStyleRegion: Provider<String> { factory { "eu" } }
    var appStyleRateLimiter: AsyncProvider<AppStyleRateLimiter> {
        singleton { @MainActor in
            await Task.yield()
            let region = self.appStyleRegion()
            await Task.yield()
            return AppStyleRateLimiter(region: region)
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AppStyleDatabaseModel {
    @ObservationIgnored @Dependency(\.appStyleDocDrafts) var drafts
    var saved: [String] = []
    func save(_ text: String) async throws {
        try await drafts().save(text)
        saved = try await drafts().saved
    }
}

func appStyleServeLimiterRequest(index: Int, app: DependencyContainer) async throws -> (Int, String, ObjectIdentifier) {
    let request = DependencyContainer(scopeOf: app)
    if index.isMultiple(of: 3) { request.override(\.appStyleRegion) { "r\(index)" } }
    await Task.yield()
    let limiter = try await request.appStyleRateLimiter()
    #expect(try await request.appStyleRateLimiter() === limiter)
    return (index, limiter.region, ObjectIdentifier(limiter))
}

@Suite struct AppStyleAsyncScopeAttackTests {
    @Test func requestsThatOverrideTheRegionGetTheirOwnLimiterOthersShareTheApps() async throws {
        let app = DependencyContainer()
        let results = try await withThrowingTaskGroup(of: (Int, String, ObjectIdentifier).self) { group in
            for index in 0..<120 {
                group.addTask { try await appStyleServeLimiterRequest(index: index, app: app) }
            }
            var all: [(Int, String, ObjectIdentifier)] = []
            for try await result in group { all.append(result) }
            return all
        }
        let appLimiter = try await app.appStyleRateLimiter()
        for (index, region, identity) in results {
            if index.isMultiple(of: 3) {
                #expect(region == "r\(index)")
                #expect(identity != ObjectIdentifier(appLimiter))
            } else {
                #expect(region == "eu")
                #expect(identity == ObjectIdentifier(appLimiter), "request \(index)")
            }
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func anObservableModelKeepsAnAsyncProviderAndSeesTheTestsWorld() async throws {
        let model = AppStyleDatabaseModel()
        try await model.save("one")
        try await model.save("two")
        #expect(model.saved == ["one", "two"])
        #expect(try await DependencyContainer.main.appStyleDocDrafts().saved == ["one", "two"])
        #expect(try await DependencyContainer.mocks.appStyleDocDrafts().saved == [])
    }
}

@Suite(.dependencies) struct AppStyleAsyncSuiteInitAttackTests {
    let seeded: [String]
    init() async throws {
        try await DependencyContainer.main.appStyleDocDrafts().save("init")
        seeded = try await DependencyContainer.main.appStyleDocDrafts().saved
    }

    @Test(arguments: 0..<20) func eachCaseSeedsItsOwnWorldInTheSuitesAsyncInit(id: Int) async throws {
        #expect(seeded == ["init"])
        try await DependencyContainer.main.appStyleDocDrafts().save("\(id)")
        #expect(try await DependencyContainer.main.appStyleDocDrafts().saved == ["init", "\(id)"])
    }
}

// MARK: - Messages an app developer meets with scopes

final class AppStyleAppWideAuditLog {
    @Dependency(\.appStyleRequestUser) var user
    func entry() -> String { "by \(user)" }
}

final class AppStyleScreenOwnedModel {
    @Dependency(\.appStyleDocSettings) var settings
}

extension DependencyContainer {
    var appStyleAppWideAuditLog: Provider<AppStyleAppWideAuditLog> { singleton { AppStyleAppWideAuditLog() } }
    var appStyleScreenOwnedModel: Provider<AppStyleScreenOwnedModel> { scoped { AppStyleScreenOwnedModel() } }
}

@Suite struct AppStyleScopeMessageAttackTests {
    @Test func anAppWideSingletonReadingARequestValueLaterSaysToUseScoped() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let app = DependencyContainer()
                let request = DependencyContainer(scopeOf: app)
                request.override(\.appStyleRequestUser) { "ada" }
                let log = request.appStyleAppWideAuditLog()
                _ = log.entry()
                withExtendedLifetime(request) {}
            }
        }
        let output = standardError(of: result)
        #expect(output.contains("appStyleRequestUser"), "\(output)")
        #expect(output.contains("scoped"), "\(output)")
    }

    @Test func aScopedModelReadAfterItsScreenScopeIsGoneNamesTheRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let app = DependencyContainer()
                var screen: DependencyContainer? = DependencyContainer(scopeOf: app)
                let model = screen!.appStyleScreenOwnedModel()
                screen = nil
                _ = model.settings
            }
        }
        let output = standardError(of: result)
        // It names the owner, and the file where the property is declared.
        #expect(output.contains("@Dependency in AppStyleScreenOwnedModel (DefaultMainActorTests/AppStyleAttackTests.swift:"), "\(output)")
        #expect(output.contains("released before the property was first read"), "\(output)")
    }
}

// MARK: - Models made by factories, read after their world variable is gone

extension DependencyContainer {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var appStyleFactoryFeedModel: Provider<AppStyleDocFeedModel> { factory { AppStyleDocFeedModel() } }
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var appStyleAsyncFeedModel: AsyncProvider<AppStyleDocFeedModel> {
        factory { @MainActor in
            await Task.yield()
            return AppStyleDocFeedModel()
        }
    }
}

@Suite struct AppStyleFactoryModelAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aFactoryModelFromAPappStyleWorldReadsItAfterTheVariableIsGone() {
        var preview: DependencyContainer? = DependencyContainer(parent: .mocks)
        preview!.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["preview"]) }
        let model = preview!.appStyleFactoryFeedModel()
        preview = nil
        model.load()
        #expect(model.items == ["preview"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func anAsyncFactoryModelTakesTheBuildingWorld() async throws {
        var preview: DependencyContainer? = DependencyContainer(parent: .mocks)
        preview!.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["async"]) }
        let model = try await preview!.appStyleAsyncFeedModel()
        #expect(model.$store.container === preview)
        preview = nil
        model.load()
        #expect(model.items == ["async"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aModelFirstReadInsideAnotherWorldStillReadsItsOwn() async {
        DependencyContainer.main.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["mine"]) }
        let model = AppStyleDocFeedModel()
        let other = DependencyContainer(parent: .mocks)
        other.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["other"]) }
        await DependencyContainer.withMain(other) {
            await Task.yield()
            model.load()
        }
        #expect(model.items == ["mine"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func aModelMadeInsideASingletonsConstructionInAnotherWorldTakesThatWorld() {
        let other = DependencyContainer(parent: .mocks)
        other.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["other"]) }
        let list = other.appStyleListModel()
        // A model created now, outside any construction, takes the test's world.
        let model = AppStyleDocFeedModel()
        model.load()
        #expect(model.items == ["Welcome"])
        #expect(list.rows.isEmpty)
    }
}

// MARK: - Property switch, and an async shutdown awaited off the main actor

@Suite struct AppStyleSwitchAndShutdownAttackTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies) func switchingAModelsPropertyToAnotherWorldReadsFromIt() {
        let model = AppStyleDocFeedModel()
        model.load()
        #expect(model.items == ["Welcome"])
        let other = DependencyContainer(parent: .mocks)
        other.override(\.appStyleDocFeedStore) { @MainActor in AppStyleDocStubFeedStore(items: ["other"]) }
        model.$store.container = other
        model.load()
        #expect(model.items == ["other"])
        model.$store.container = DependencyContainer.main
        model.load()
        #expect(model.items == ["Welcome"])
    }

    @Test(.dependencies) func anAsyncShutdownAwaitedFromADetachedTaskRunsMainActorTeardowns() async {
        let screen = DependencyContainer(scopeOf: DependencyContainer.main)
        screen.override(\.appStyleScreenName) { "detached" }
        let state = screen.appStyleScreenState()
        await Task.detached { await screen.shutdown() }.value
        #expect(state.saved)
        #expect(screen.instanceIfBuilt(\.appStyleScreenState) == nil)
    }
}
