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

extension DependencyContainer {
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

    @Test func theRegistrationsOfOneScreenShareItsContext() {
        let container = DependencyContainer()
        let screen = container.screen()
        #expect(screen.header.context === screen.content.context)
        #expect(container.screen().header.context !== screen.header.context)
    }
}
