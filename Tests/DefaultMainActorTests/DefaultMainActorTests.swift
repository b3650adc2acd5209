// This target is compiled with main-actor default isolation and nonisolated(nonsending)
// async functions, as new app projects are. Everything here is implicitly @MainActor:
// registrations, view models and tests. It must keep compiling and passing.
import DependencyInjection
import Testing

protocol Greeter: Sendable {
    func greet(_ name: String) -> String
}

nonisolated final class EnglishGreeter: Greeter {
    func greet(_ name: String) -> String { "Hello, \(name)" }
}

nonisolated final class MockGreeter: Greeter {
    func greet(_ name: String) -> String { "Mock \(name)" }
}

final class Settings {
    var theme = "light"
}

final class CounterViewModel {
    let greeter: any Greeter
    var count = 0
    init(greeter: any Greeter) { self.greeter = greeter }
    func increment() { count += 1 }
}

extension DependencyContainer {
    var greeter: Provider<any Greeter> {
        singleton { self.isMocked ? MockGreeter() : EnglishGreeter() as any Greeter }
    }
    var settings: Provider<Settings> { singleton { Settings() } }
    var counterModel: Provider<CounterViewModel> { factory { CounterViewModel(greeter: self.greeter()) } }
    var title: String { isMocked ? "Mock app" : "App" }
    // An async closure is `@Sendable`, so it is not main-actor isolated by default; one
    // that reads main-actor registrations says so.
    var profile: AsyncProvider<String> {
        factory { @MainActor in
            await Task.yield()
            return self.greeter().greet("profile")
        }
    }
}

final class CounterScreen {
    @Dependency(\.counterModel) var model
    @Dependency(\.settings) var settings
    @Dependency(\.title) var title
}

@Suite struct DefaultMainActorTests {
    @Test func registersResolvesAndInjectsOnTheMainActor() {
        let container = DependencyContainer()
        let screen = DependencyContainer.withMain(container) { CounterScreen() }
        screen.model.increment()
        #expect(screen.model.count == 1)
        #expect(screen.model.greeter.greet("you") == "Hello, you")
        #expect(screen.title == "App")
        screen.settings.theme = "dark"
        #expect(container.settings().theme == "dark")
    }

    @Test func overridesAndMocksWorkTheSame() async throws {
        let container = DependencyContainer(parent: .mocks)
        #expect(container.greeter().greet("x") == "Mock x")
        container.override(\.greeter) { EnglishGreeter() }
        #expect(container.counterModel().greeter.greet("y") == "Hello, y")
        #expect(try await container.profile() == "Hello, profile")
    }
}
