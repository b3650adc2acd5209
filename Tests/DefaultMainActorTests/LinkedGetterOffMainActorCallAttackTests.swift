import DependencyInjection
import Testing

/// A kept model whose async provider's registration is built on the main actor.
final class OffMainLinkedReportService {
    let report: MainActorLinkedReport
    init(report: MainActorLinkedReport) { self.report = report }
}

extension DependencyContainer {
    /// A main-actor async singleton whose construction calls the kept view model's linked
    /// async provider.
    var offMainLinkedReportService: AsyncProvider<OffMainLinkedReportService> {
        singleton { @MainActor in
            let viewModel = self.mainActorLinkedViewModel()
            return OffMainLinkedReportService(report: try await viewModel.makeReport())
        }
    }
}

@Suite struct LinkedGetterOffMainActorCallAttackTests {
    /// The linked async provider, taken on the main actor, called from a detached task:
    /// the getter's helper still takes the view model's container.
    @Test func aLinkedAsyncProviderCalledFromADetachedTask() async throws {
        let container = DependencyContainer()
        container.setValue("hello", forKey: "main-actor-linked-greeting")
        let makeReport = container.mainActorLinkedViewModel().makeReport
        let greetings = try await Task.detached {
            var greetings: [String] = []
            for _ in 0..<20 { greetings.append(try await makeReport().helper.greeting) }
            return greetings
        }.value
        #expect(greetings == Array(repeating: "hello", count: 20))
    }

    /// Inside a main-actor async singleton's construction, in a child container.
    @Test func aLinkedAsyncCallInsideAMainActorAsyncSingletonsConstruction() async throws {
        let app = DependencyContainer()
        app.setValue("app", forKey: "main-actor-linked-greeting")
        let child = DependencyContainer(parent: app)
        child.setValue("child", forKey: "main-actor-linked-greeting")
        let service = try await child.offMainLinkedReportService()
        #expect(service.report.helper.greeting == "child")
        #expect(service.report.helper.$greeting.container === child)
        #expect(try await app.offMainLinkedReportService().report.helper.greeting == "app")
    }

    /// The family, taken on the main actor, called from a detached task.
    @Test func aLinkedFamilyCalledFromADetachedTask() async {
        let container = DependencyContainer()
        container.setValue("hello", forKey: "main-actor-linked-greeting")
        let reports = container.mainActorLinkedViewModel().reports
        let greetings = await Task.detached { @MainActor in
            (0..<10).map { reports($0).helper.greeting }
        }.value
        #expect(greetings == Array(repeating: "hello", count: 10))
    }
}
