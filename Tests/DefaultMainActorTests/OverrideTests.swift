import DependencyInjection
import Testing

/// Overrides written in main-actor code: `override(\.x) { @MainActor in … }` may call
/// main-actor initializers, and behaves as the nonisolated override does.
@Suite struct OverrideTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func dependentsSeeTheReplacement() {
        let container = DependencyContainer()
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stub"]) }
        #expect(container.feedStore().load() == ["stub"])
        #expect(container.feedService().headlines() == ["STUB"])

        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        model.load()
        #expect(model.items == ["stub"])
    }

    @Test func aSingletonBuiltFromTheOldRegistrationIsDropped() {
        let container = DependencyContainer()
        let before = container.feedService()
        #expect(before.headlines() == ["LIVE"])

        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stub"]) }
        let after = container.feedService()
        #expect(after !== before)
        #expect(after.headlines() == ["STUB"])
        #expect(container.feedService() === after)
        #expect(isSameInstance(container.feedStore(), container.feedStore()), "the replacement lost the singleton scope")
    }

    @Test func aReplacementMayBuildMainActorObjects() {
        let container = DependencyContainer()
        container.override(\.feedService) { @MainActor in FeedService(store: StubFeedStore(items: ["direct"])) }
        #expect(container.feedService().headlines() == ["DIRECT"])
        #expect(container.feedService() === container.feedService())
        #expect(container.feedStore().load() == ["live"])
    }

    @Test func anArgumentIsOverriddenAlone() {
        let container = DependencyContainer()
        container.override(\.[draft: 1]) { @MainActor in
            let draft = LocalDraft(documentID: 1)
            draft.text = "restored"
            return draft
        }
        #expect(container[draft: 1]().text == "restored")
        #expect(container[draft: 2]().text == "")
    }

    @Test func resetRestoresTheRegistration() {
        let container = DependencyContainer()
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stub"]) }
        let stubbed = container.feedService()
        #expect(stubbed.headlines() == ["STUB"])

        container.reset(\.feedStore)
        #expect(container.feedStore().load() == ["live"])
        #expect(container.feedService() !== stubbed)
        #expect(container.feedService().headlines() == ["LIVE"])
    }

    @Test func anOverrideInAChildDoesNotReachItsParent() {
        let parent = DependencyContainer()
        let parentService = parent.feedService()
        let child = DependencyContainer(parent: parent)
        child.override(\.feedStore) { @MainActor in StubFeedStore(items: ["child"]) }

        #expect(child.feedService().headlines() == ["CHILD"])
        #expect(parent.feedStore().load() == ["live"])
        #expect(parent.feedService() === parentService)
    }

    @Test func anOverrideInAParentReachesItsChildren() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        #expect(child.feedService().headlines() == ["LIVE"])

        parent.override(\.feedStore) { @MainActor in StubFeedStore(items: ["parent"]) }
        #expect(child.feedService().headlines() == ["PARENT"], "the child kept what it built from the old registration")
    }
}
