import DependencyInjection
import Testing

// Registrations written as plain computed properties, as in the examples of the original
// README and as a consumer module writes them.

protocol LoginServiceProtocol { func login() -> String }
final class LoginService: LoginServiceProtocol { func login() -> String { "live" } }
final class MockLoginService: LoginServiceProtocol { func login() -> String { "mock" } }

extension DependencyContainer {
    static let custom: DependencyContainer = {
        let container = DependencyContainer()
        container.setValue("custom", forKey: "name")
        return container
    }()

    var baseUrl: String { "https://api.server.com" }
    var dataFromStorage: [UInt8]? { getValue(forKey: "data") }
    var loginService: any LoginServiceProtocol {
        if isMocked {
            return MockLoginService()
        }
        return LoginService()
    }
}

class ViewModel {
    @Dependency(\.baseUrl) var baseUrl
    @Dependency(\.loginService) var loginService
}

@Suite struct ComputedPropertyRegistrationTests {
    @Test func registerAndResolveByComputedProperties() {
        let container = DependencyContainer()
        #expect(container.baseUrl == "https://api.server.com")
        #expect(container.dataFromStorage == nil)
        container.setValue([1, 2, 3] as [UInt8], forKey: "data")
        #expect(container.dataFromStorage == [1, 2, 3])
    }

    @Test func mocksBranchThroughIsMocked() {
        #expect(DependencyContainer.mocks.loginService.login() == "mock")
        #expect(DependencyContainer.default.loginService.login() == "live")
    }

    @Test func customContainersAreAddedByExtension() {
        #expect(DependencyContainer.custom.getValue(forKey: "name") == "custom")
    }

    @Test func viewModelResolvesFromMainAndCanSwitchPerProperty() {
        let viewModel = DependencyContainer.withMain(.default) { ViewModel() }
        #expect(viewModel.baseUrl == "https://api.server.com")
        #expect(viewModel.loginService.login() == "live")

        viewModel.$loginService.container = .mocks
        #expect(viewModel.loginService.login() == "mock")
    }
}
