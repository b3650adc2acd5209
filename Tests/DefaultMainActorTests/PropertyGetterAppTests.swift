import DependencyInjection
import Testing

/// A document screen's model, which opens its document's draft: a key path with an
/// argument of the model's, which the property's storage keeps as it is.
final class DocumentViewModel {
    @Dependency var draft: any Draft

    init(documentID: Int) {
        _draft = Dependency(\.[draft: documentID])
    }
}

/// The `@Dependency` properties of an app module's view models, declared with key path
/// literals, read their main-actor registrations through the getter their declaration
/// compiled, in an optimized build (CI runs this suite in a release build too), and through
/// the key path in a debug build: either way, each reads the registration it names, in the
/// container it resolves from, with that container's overrides.
@Suite struct PropertyGetterAppTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aViewModelReadsTheRegistrationsItsPropertiesName() {
        let container = DependencyContainer()
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        model.load()
        #expect(model.items == ["live"])
        #expect(model.service === container.feedService())
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aViewModelReadsTheOverridesOfItsContainer() {
        let container = DependencyContainer()
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["stubbed"]) }
        let model = DependencyContainer.withMain(container) { FeedViewModel() }
        model.load()
        #expect(model.items == ["stubbed"])
        #expect(model.service.headlines() == ["STUBBED"])
    }

    @Test func aPropertyWhoseKeyPathCarriesAnArgumentReadsThatArgumentsRegistration() {
        let container = DependencyContainer()
        let (first, second) = DependencyContainer.withMain(container) {
            (DocumentViewModel(documentID: 1), DocumentViewModel(documentID: 2))
        }
        #expect(first.draft.documentID == 1)
        #expect(second.draft.documentID == 2)
        #expect(first.draft === container[draft: 1]())
    }
}
