import DependencyInjection
import Testing

/// Counts the loads of the store it wraps, as an app's logging decorator would.
final class CountingFeedStore: FeedStore {
    let wrapped: any FeedStore
    private(set) var loads = 0
    init(wrapping wrapped: any FeedStore) { self.wrapped = wrapped }
    func load() -> [String] {
        loads += 1
        return wrapped.load()
    }
}

/// What the parts of one screen share.
final class ScreenContext {}

final class Panel {
    let context: ScreenContext
    init(context: ScreenContext) { self.context = context }
}

final class Screen {
    let header: Panel
    let content: Panel
    init(header: Panel, content: Panel) { (self.header, self.content) = (header, content) }
}

/// What a logging decoration reads besides the store it wraps.
final class LogSettings {
    let verbose: Bool
    init(verbose: Bool) { self.verbose = verbose }
}

/// A logging decoration that takes its settings from the container it captured.
final class SettingsCapturingLoggingStore: FeedStore {
    let wrapped: any FeedStore
    let settings: LogSettings
    init(wrapping wrapped: any FeedStore, settings: LogSettings) { (self.wrapped, self.settings) = (wrapped, settings) }
    func load() -> [String] { wrapped.load() }
}

/// A logging decoration that reads its settings through `@Dependency`: created inside the
/// construction, the property takes the container that builds the store.
final class InjectedLoggingStore: FeedStore {
    let wrapped: any FeedStore
    @Dependency(\.logSettings) var settings
    init(wrapping wrapped: any FeedStore) { self.wrapped = wrapped }
    func load() -> [String] { wrapped.load() }
}

extension DependencyContainer {
    var logSettings: Provider<LogSettings> { singleton { LogSettings(verbose: true) } }
    var screenContext: Provider<ScreenContext> { graph { ScreenContext() } }
    var panel: Provider<Panel> { factory { Panel(context: self.screenContext()) } }
    var screen: Provider<Screen> { factory { Screen(header: self.panel(), content: self.panel()) } }
}

/// Decorations and graph registrations written in main-actor code, with plain protocols
/// and classes.
@Suite struct DecorationTests {
    @Test func aMainActorDecorationWrapsTheRegistrationsInstance() throws {
        let container = DependencyContainer()
        container.decorate(\.feedStore) { @MainActor in CountingFeedStore(wrapping: $0) }
        let store = try #require(container.feedStore() as? CountingFeedStore)
        #expect(store.wrapped is LiveFeedStore)
        #expect(container.feedService().headlines() == ["LIVE"])
        #expect(store.loads == 1)
        #expect(isSameInstance(container.feedStore(), store))
    }

    @Test func aMainActorDecorationWrapsAnOverride() {
        let container = DependencyContainer()
        container.decorate(\.feedStore) { @MainActor in CountingFeedStore(wrapping: $0) }
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stub"]) }
        let store = container.feedStore() as? CountingFeedStore
        #expect(store?.wrapped is StubFeedStore)
        #expect(container.feedService().headlines() == ["STUB"])
    }

    /// OverridesAndMocks.md: a parent's decoration resolves what it reads from the
    /// container its closure captured, the parent, also where a child applies it.
    @Test func aParentsDecorationReadsWhatItResolvesFromTheContainerItCaptured() throws {
        let app = DependencyContainer()
        app.decorate(\.feedStore) { @MainActor [unowned app] in
            SettingsCapturingLoggingStore(wrapping: $0, settings: app.logSettings())
        }
        let world = DependencyContainer(parent: app)
        world.override(\.logSettings) { @MainActor in LogSettings(verbose: false) }
        let store = try #require(world.feedStore() as? SettingsCapturingLoggingStore)
        #expect(store.settings === app.logSettings())
        #expect(store !== app.feedStore() as AnyObject, "the world builds and decorates its own store")
    }

    /// OverridesAndMocks.md: a decoration that reads through `@Dependency` gets what the
    /// container building the instance provides: in a test's world, the world's override.
    @Test func aParentsDecorationReadingThroughDependencyGetsTheChildsOverride() throws {
        let app = DependencyContainer()
        app.decorate(\.feedStore) { @MainActor in InjectedLoggingStore(wrapping: $0) }
        let world = DependencyContainer(parent: app)
        let quiet = LogSettings(verbose: false)
        world.override(\.logSettings) { @MainActor in quiet }
        let store = try #require(world.feedStore() as? InjectedLoggingStore)
        #expect(store.settings === quiet)
        let appStore = try #require(app.feedStore() as? InjectedLoggingStore)
        #expect(appStore.settings.verbose)
    }

    @Test func theRegistrationsOfOneScreenShareItsContext() {
        let container = DependencyContainer()
        let screen = container.screen()
        #expect(screen.header.context === screen.content.context)
        #expect(container.screen().header.context !== screen.header.context)
    }
}
