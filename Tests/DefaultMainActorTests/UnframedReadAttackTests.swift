import DependencyInjection
import Testing

// Attacks, in app code (main-actor default isolation), on a `@Dependency` property's
// first read of what the container already keeps, served without a frame: screens made by
// the hundred read the singletons built at launch, while the app overrides them, and
// registrations whose getters read other screens' properties.

/// Two screens whose registrations' getters each read the other screen's property: a
/// cycle written in app code, with main-actor registrations.
final class URAInbox {
    @Dependency(\.uraInboxService) var service
    init() {}
}

final class URAOutbox {
    @Dependency(\.uraOutboxService) var service
    init() {}
}

final class URAMailService {}

extension DependencyContainer {
    var uraInboxService: Provider<URAMailService> {
        _ = (getValue(forKey: "ura.outbox") as URAOutbox?)?.service
        return singleton { @MainActor in URAMailService() }
    }
    var uraOutboxService: Provider<URAMailService> {
        _ = (getValue(forKey: "ura.inbox") as URAInbox?)?.service
        return singleton { @MainActor in URAMailService() }
    }
}

@Suite struct UnframedReadAttackTests {
    /// Hundreds of screens read the singletons built at launch: each gets the container's
    /// instance, nothing is built twice, a screen made before an override but first read
    /// after it gets the replacement, a screen read before keeps what it read, and once
    /// the screens and the container go, nothing stays.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func screensReadTheLaunchSingletonsAndFollowAnOverride() {
        weak var weakContainer: DependencyContainer?
        weak var weakService: FeedService?
        weak var weakReplacement: FeedService?
        do {
            let container = DependencyContainer()
            let service = container.feedService()
            let store = container.feedStore()
            let screens = (0..<500).map { _ in DependencyContainer.withMain(container) { FeedViewModel() } }
            for screen in screens.prefix(250) {
                #expect(screen.service === service)
                #expect(isSameInstance(screen.store, store))
            }
            container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stub"]) }
            let replacement = container.feedService()
            #expect(replacement !== service)
            for screen in screens.prefix(250) {
                #expect(screen.service === service, "a screen read before the override lost what it read")
            }
            for screen in screens.dropFirst(250) {
                #expect(screen.service === replacement, "a screen first read after the override got the old service")
                #expect(screen.service.headlines() == ["STUB"])
                screen.load()
                #expect(screen.items == ["stub"])
            }
            (weakContainer, weakService, weakReplacement) = (container, service, replacement)
        }
        #expect(weakContainer == nil, "the container leaked")
        #expect(weakService == nil, "the launch service leaked")
        #expect(weakReplacement == nil, "the replacement leaked")
    }

    /// A screen switched to another world before its first read serves that world's
    /// singleton; one reset after an override serves the replacement.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aSwitchedOrResetScreenServesItsContainersInstance() {
        let (app, preview) = (DependencyContainer(), DependencyContainer())
        preview.override(\.feedStore) { @MainActor in StubFeedStore(items: ["preview"]) }
        let (appService, previewService) = (app.feedService(), preview.feedService())
        let screen = DependencyContainer.withMain(app) { FeedViewModel() }
        screen.$service.container = preview
        #expect(screen.service === previewService)
        screen.$service.container = app
        #expect(screen.service === appService)
        app.override(\.feedStore) { @MainActor in StubFeedStore(items: ["later"]) }
        #expect(screen.service === appService, "a published value changed without a reset")
        screen.$service.reset()
        #expect(screen.service === app.feedService())
        #expect(screen.service.headlines() == ["LATER"])
    }

    /// The two screens' getters read each other: the app must stop with the cycle named,
    /// not overflow the stack.
    @Test func screensWhoseRegistrationsReadEachOtherStopWithTheCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let container = DependencyContainer()
                let (inbox, outbox) = DependencyContainer.withMain(container) { (URAInbox(), URAOutbox()) }
                container.setValue(inbox, forKey: "ura.inbox")
                container.setValue(outbox, forKey: "ura.outbox")
                _ = inbox.service
            }
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: "),
            "no cycle was reported; the process ended with \(String(describing: result?.exitStatus))")
        #expect(output.contains("@Dependency in URAInbox") && output.contains("@Dependency in URAOutbox"))
    }
}
