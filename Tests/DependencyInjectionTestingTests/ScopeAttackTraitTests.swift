import DependencyInjection
import DependencyInjectionTesting
import Testing

/// An app-wide object that reads a value the test installs.
final class TraitScopeGreeter: Sendable {
    let greeting: String
    init(greeting: String) { self.greeting = greeting }
}

extension DependencyContainer {
    var traitScopeGreeting: Provider<String> { factory { "live" } }
    var traitScopeGreeter: Provider<TraitScopeGreeter> {
        singleton { TraitScopeGreeter(greeting: self.traitScopeGreeting()) }
    }
}

/// A scope of `main` in a test with its own container belongs to the test: its app-wide
/// instances are built in the test's container, with the test's overrides, and never in
/// the shared `mocks`.
@Suite struct ScopeAttackTraitTests {
    @Test(.dependencies { $0.override(\.traitScopeGreeting) { "test" } })
    func aScopeOfMainInATestSharesTheTestsSingletonsBuiltWithItsOverrides() {
        let request = DependencyContainer(scopeOf: .main)
        #expect(request.traitScopeGreeter().greeting == "test")
        #expect(request.traitScopeGreeter() === DependencyContainer.main.traitScopeGreeter())
        #expect(DependencyContainer.mocks.instanceIfBuilt(\.traitScopeGreeter) == nil)
    }
}
