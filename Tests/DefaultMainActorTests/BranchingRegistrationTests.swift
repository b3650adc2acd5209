import DependencyInjection
import Testing

// A registration that is two registrations, one for `mocks` and one for the app: the
// getter of the property decides in the container that resolves it.

protocol Greeter {
    func greeting() -> String
}

final class LiveGreeter: Greeter {
    func greeting() -> String { "hello" }
}

final class PreviewGreeter: Greeter {
    func greeting() -> String { "preview" }
}

extension DependencyContainer {
    var greeter: Provider<any Greeter> {
        if isMocked { return singleton { @MainActor in PreviewGreeter() } }
        return singleton { @MainActor in LiveGreeter() }
    }
}

final class WelcomeScreen {
    @Dependency(\.greeter) var greeter
    init() {}
}

/// A `@Dependency` reads its key path in the container it resolves from, every time one
/// is first read: a registration chosen by `isMocked` is never served in the other
/// world, even once the one key path has led to a built singleton there.
@Suite struct BranchingRegistrationTests {
    @Test func eachContainerResolvesTheRegistrationItsGetterChooses() {
        let app = DependencyContainer()
        let world = DependencyContainer(parent: .mocks)

        let live = DependencyContainer.withMain(app) { WelcomeScreen() }
        #expect(live.greeter.greeting() == "hello")
        let preview = DependencyContainer.withMain(world) { WelcomeScreen() }
        #expect(preview.greeter.greeting() == "preview")

        // Each container's singleton, shared by the next screen in the same container.
        let again = DependencyContainer.withMain(app) { WelcomeScreen() }
        #expect(isSameInstance(again.greeter, live.greeter))
        let switched = DependencyContainer.withMain(app) { WelcomeScreen() }
        switched.$greeter.container = world
        #expect(isSameInstance(switched.greeter, preview.greeter))
        #expect(switched.greeter.greeting() == "preview")
    }
}
