import DependencyInjection
import Testing

extension DependencyContainer {
    /// A registration that branches on `isMocked`.
    var simEndpoint: Provider<String> { factory { self.isMocked ? "mock endpoint" : "live endpoint" } }
}

/// Pins Scopes.md (two kinds of child): both "read their parent's stored values and
/// overrides, inherit ``DependencyContainer/isMocked`` and the tracer".
@Suite struct ScopeIsMockedTests {
    @Test func aScopeOfMocksAndAScopeOfThatScopeAreMocked() {
        let scope = DependencyContainer(scopeOf: .mocks)
        let nested = DependencyContainer(scopeOf: scope)
        #expect(scope.isMocked)
        #expect(nested.isMocked)
    }

    @Test func aScopeOfALiveContainerIsNotMocked() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        #expect(!scope.isMocked)
        #expect(!DependencyContainer(scopeOf: scope).isMocked)
        #expect(scope.simEndpoint() == "live endpoint")
    }

    @Test func aScopeOfAMockedContainerResolvesTheMockBranch() {
        let mocked = DependencyContainer(isMocked: true)
        let scope = DependencyContainer(scopeOf: mocked)
        #expect(scope.simEndpoint() == "mock endpoint")
        #expect(DependencyContainer(scopeOf: scope).simEndpoint() == "mock endpoint")
        #expect(DependencyContainer(scopeOf: .mocks).simEndpoint() == "mock endpoint")
    }
}
