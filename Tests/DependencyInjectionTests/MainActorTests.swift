import DependencyInjection
import Testing

/// A view model: main-actor isolated, not `Sendable` by itself.
@MainActor final class ScreenModel {
    let loader: any FeedLoader
    var title = "Feed"
    init(loader: any FeedLoader) { self.loader = loader }
}

@MainActor final class ScreenSession {
    var visits = 0
}

extension DependencyContainer {
    @MainActor var screenModel: Provider<ScreenModel> {
        factory { ScreenModel(loader: self.feedLoader()) }
    }
    @MainActor var screenSession: Provider<ScreenSession> { singleton { ScreenSession() } }
    @MainActor var asyncScreenModel: AsyncProvider<ScreenModel> {
        factory { @MainActor in
            await Task.yield()
            return ScreenModel(loader: self.feedLoader())
        }
    }
}

@MainActor final class Screen {
    @Dependency(\.screenModel) var model
    @Dependency(\.screenSession) var session
}

@MainActor @Suite struct MainActorTests {
    @Test func mainActorRegistrationsResolveFromMainActorCode() {
        let container = DependencyContainer()
        let model = container.screenModel()
        model.title = "Changed"
        #expect(container.screenModel() !== model)
        #expect(container.screenSession() === container.screenSession())
    }

    @Test func mainActorObjectsInjectMainActorDependencies() {
        let container = DependencyContainer()
        let screen = DependencyContainer.withMain(container) { Screen() }
        screen.session.visits += 1
        #expect(container.screenSession().visits == 1)
        #expect(screen.model === screen.model)
    }

    @Test func asyncMainActorRegistration() async throws {
        let container = DependencyContainer()
        let model = try await container.asyncScreenModel()
        #expect(model.title == "Feed")
    }
}
