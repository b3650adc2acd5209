import DependencyInjection
import Testing

// In an app module with main-actor default isolation, a kept view model's async
// provider and provider family read their registration again on the main actor, where
// the property was first read. What the registration's getter creates there (a helper
// with a `@Dependency` of its own) takes the container the link reads, as on the
// property's first read, not `main`.

final class MainActorLinkedHelper {
    @Dependency(\.mainActorLinkedGreeting) var greeting: String
    init() {}
}

final class MainActorLinkedReport {
    let helper: MainActorLinkedHelper
    init(helper: MainActorLinkedHelper) { self.helper = helper }
}

/// A view model the container keeps, as a screen's shared model is.
final class MainActorLinkedViewModel {
    @Dependency(\.mainActorLinkedReport) var makeReport: AsyncProvider<MainActorLinkedReport>
    @Dependency(\.mainActorLinkedReports) var reports: ProviderFamily<Int, MainActorLinkedReport>
    init() {}
}

extension DependencyContainer {
    var mainActorLinkedGreeting: Provider<String> { factory { self.getValue(forKey: "main-actor-linked-greeting") ?? "none" } }
    var mainActorLinkedReport: AsyncProvider<MainActorLinkedReport> {
        let helper = MainActorLinkedHelper()
        return factory { @MainActor in MainActorLinkedReport(helper: helper) }
    }
    var mainActorLinkedReports: ProviderFamily<Int, MainActorLinkedReport> {
        let helper = MainActorLinkedHelper()
        return factory { (_: Int) in MainActorLinkedReport(helper: helper) }
    }
    var mainActorLinkedViewModel: Provider<MainActorLinkedViewModel> { singleton { MainActorLinkedViewModel() } }
}

@Suite struct LinkedGetterOnMainActorTests {
    @Test func whatAnAsyncProvidersGetterCreatesInALinkedCallTakesTheViewModelsContainer() async throws {
        let container = DependencyContainer()
        container.setValue("hello", forKey: "main-actor-linked-greeting")
        let viewModel = container.mainActorLinkedViewModel()

        let report = try await viewModel.makeReport()

        #expect(report.helper.$greeting.container === container)
        #expect(report.helper.greeting == "hello")
    }

    @Test func whatAFamilysGetterCreatesInALinkedCallTakesTheViewModelsContainer() {
        let container = DependencyContainer()
        container.setValue("hello", forKey: "main-actor-linked-greeting")
        let viewModel = container.mainActorLinkedViewModel()

        let report = viewModel.reports(1)

        #expect(report.helper.$greeting.container === container)
        #expect(report.helper.greeting == "hello")
    }
}
