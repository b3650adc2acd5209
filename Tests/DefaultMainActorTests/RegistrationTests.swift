import DependencyInjection
import Testing

/// Main-actor registrations of plain protocol existentials, `singleton { @MainActor in … }`
/// and `shared { @MainActor in … }`, keep their scopes as nonisolated ones do.
@Suite struct RegistrationTests {
    @Test func aSingletonIsBuiltOncePerContainerAndSharedByItsDependents() {
        let container = DependencyContainer()
        let store = container.feedStore()
        #expect(isSameInstance(container.feedStore(), store))
        let service = container.feedService()
        #expect(container.feedService() === service)
        #expect(isSameInstance(service.store, store), "a dependent got a store of its own")
        #expect(service.headlines() == ["LIVE"])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func objectsInjectTheContainersSingletons() {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        #expect(model.$store.container === container)
        #expect(isSameInstance(model.store, container.feedStore()))
        #expect(model.service === container.feedService())
        model.load()
        #expect(model.items == ["live"])
    }

    @Test func aSharedInstanceIsReusedWhileHeldAndRebuiltAfterRelease() {
        let container = DependencyContainer()
        var held: (any ImageCache)? = container.imageCache()
        held?.insert([1], named: "logo")
        #expect(container.imageCache() === held)
        #expect(container.imageCache().image(named: "logo") == [1])

        weak let released = held
        held = nil
        #expect(released == nil, "the container keeps a shared instance alive")
        #expect(container.imageCache().image(named: "logo") == nil, "the released instance was served again")
    }

    @Test func argumentFormsKeepOneInstancePerArgument() {
        let container = DependencyContainer()
        container[draft: 1]().text = "first"
        #expect(container[draft: 1]().text == "first")
        #expect(container[draft: 1]() === container[draft: 1]())
        #expect(container[draft: 2]().text == "")
        #expect(container[draft: 2]().documentID == 2)

        let small = container[thumbnails: 64]()
        #expect(container[thumbnails: 64]() === small)
        let large = container[thumbnails: 128]()
        #expect(large !== small)
        #expect(large.size == 128)
        #expect(container[thumbnails: 128]() === large)
    }

    @Test func aChildContainerBuildsItsOwn() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let parentStore = parent.feedStore()
        #expect(!isSameInstance(child.feedStore(), parentStore))
        #expect(isSameInstance(child.feedStore(), child.feedStore()))
        #expect(child.feedService() !== parent.feedService())
        #expect(isSameInstance(child.feedService().store, child.feedStore()))
        #expect(isSameInstance(parent.feedStore(), parentStore))

        child[draft: 1]().text = "child"
        #expect(parent[draft: 1]().text == "")
        let parentCache = parent.imageCache()
        #expect(child.imageCache() !== parentCache)
    }
}

// MARK: - A scope's main-actor instance per argument

protocol Editor: AnyObject {
    var draftID: Int { get }
}

final class DraftEditor: Editor {
    let draftID: Int
    init(draftID: Int) { self.draftID = draftID }
}

extension DependencyContainer {
    subscript(editor draftID: Int) -> Provider<any Editor> {
        scoped(draftID) { @MainActor in DraftEditor(draftID: draftID) }
    }
}

/// `scoped(argument) { @MainActor in … }` keeps one instance of a plain protocol per
/// argument in each scope, as the form without an argument does.
@Suite struct ScopedPerArgumentTests {
    @Test func aScopeKeepsOneInstancePerArgumentAndAnotherScopeItsOwn() {
        let app = DependencyContainer()
        let screen = DependencyContainer(scopeOf: app)
        let first = screen[editor: 1]()
        #expect(screen[editor: 1]() === first)
        #expect(screen[editor: 2]() !== first)
        #expect(screen[editor: 2]().draftID == 2)
        #expect(DependencyContainer(scopeOf: app)[editor: 1]() !== first, "another scope shared the instance")
    }
}
