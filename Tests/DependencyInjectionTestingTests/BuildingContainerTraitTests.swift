import DependencyInjection
import DependencyInjectionTesting
import Testing

/// An object with one injected property, built by the registration below.
final class TraitBadge: @unchecked Sendable {
    @Dependency(\.token) var token
}

extension DependencyContainer {
    var traitBadge: Provider<TraitBadge> { factory { TraitBadge() } }
}

/// Which container an object built by a shared container takes in a test with its own
/// container: the shared one, since the change to "the building container first". What a
/// test reaches through `main` is its own; an object built by `.mocks` or `.default` by
/// name is not, and neither are its properties (before the change they took the test's).
@Suite struct BuildingContainerTraitTests {
    @Test(.dependencies { $0.setValue("test's", forKey: "token") })
    func anObjectBuiltByMocksByNameResolvesFromMocksNotTheTestsContainer() {
        let badge = DependencyContainer.mocks.traitBadge()
        #expect(badge.$token.container === DependencyContainer.mocks)
        #expect(badge.token == nil)
        // Through `main`, it is the test's.
        #expect(DependencyContainer.main.traitBadge().token == "test's")
    }
}
