// Test worlds as an app team writes them, in a main-actor module: plain protocols and
// classes, @Observable view models whose startup tasks make injected objects, deinits and
// tracers that change the world, many parallel tests each in a world of its own.
import DependencyInjection
import DependencyInjectionTesting
import Foundation
import Observation
import Testing

// MARK: - The app

protocol AWGreeter {
    func greet() -> String
}

final class AWLiveGreeter: AWGreeter {
    func greet() -> String { "live" }
}

final class AWNamedGreeter: AWGreeter {
    let name: String
    init(name: String) { self.name = name }
    func greet() -> String { name }
}

/// What a screen makes once it has loaded.
final class AWRow {
    @Dependency(\.awGreeter) var greeter
    init() {}
}

/// A screen model that starts loading as soon as it exists, as UI code does.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AWScreenModel {
    @ObservationIgnored @Dependency(\.awGreeter) var greeter
    var rows: [AWRow] = []
    @ObservationIgnored var loading: Task<Void, Never>?

    init() {
        loading = Task { self.rows.append(AWRow()) }
    }
}

/// The same screen, making its first row at once rather than in a task.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class AWEagerScreenModel {
    @ObservationIgnored @Dependency(\.awGreeter) var greeter
    var rows: [AWRow] = []

    init() {
        rows.append(AWRow())
    }
}

extension DependencyContainer {
    var awGreeter: Provider<any AWGreeter> { singleton { @MainActor in AWLiveGreeter() } }
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var awScreen: Provider<AWScreenModel> { singleton { AWScreenModel() } }
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var awEagerScreen: Provider<AWEagerScreenModel> { singleton { AWEagerScreenModel() } }
}

// MARK: - Tasks a screen starts

@Suite struct AppTestWorldScreenTaskTests {
    /// A screen the world keeps, whose startup task makes a row: the row is made after the
    /// construction, in a task that inherited `main` (the world), and the screen keeps it.
    /// The row holds the world, as an object made outside any construction does, so the
    /// world and its screen keep each other until the world is reset, as the testing
    /// product resets it when the test ends, and as WritingTests.md says to do without it.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aWorldWhoseScreensStartupTaskMadeARowGoesWhenItIsReset() async {
        weak var weakWorld: DependencyContainer?
        weak var weakScreen: AWScreenModel?
        do {
            let world = DependencyContainer(parent: .mocks)
            world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "world") }
            let screen = await DependencyContainer.withMain(world) { () async -> AWScreenModel in
                let screen = world.awScreen()
                await screen.loading?.value
                return screen
            }
            #expect(screen.rows.first?.greeter.greet() == "world")
            #expect(screen.rows.first?.$greeter.container === world)
            weakWorld = world
            weakScreen = screen
            world.reset()
        }
        #expect(weakScreen == nil, "the world's screen outlived the world")
        #expect(weakWorld == nil, "the reset world stayed")
    }

    /// The same screen making its row in its initializer: held weakly, freed.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func aSingletonScreensEagerRowDoesNotKeepTheWorldAlive() {
        weak var weakWorld: DependencyContainer?
        do {
            let world = DependencyContainer(parent: .mocks)
            world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "world") }
            let screen = DependencyContainer.withMain(world) { world.awEagerScreen() }
            #expect(screen.rows.first?.greeter.greet() == "world")
            weakWorld = world
        }
        #expect(weakWorld == nil)
    }

    /// A screen a world's singleton construction makes, its row made by a task it starts:
    /// which container does the row read? The docs: a task the construction starts is not
    /// part of it, and objects it makes take `main`.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies { $0.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "test") } })
    func aScreenBuiltByAnotherWorldsSingletonMakesItsRowFromMain() async {
        let test = DependencyContainer.main
        let other = DependencyContainer(parent: .mocks)
        other.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "other") }
        let screen = other.awScreen()
        await screen.loading?.value
        #expect(screen.greeter.greet() == "other")
        #expect(screen.rows.first?.$greeter.container === test)
    }
}

// MARK: - A deinit that changes the container, a tracer that does

final class AWSession {
    let onEnd: () -> Void
    init(onEnd: @escaping () -> Void) { self.onEnd = onEnd }
    deinit { MainActor.assumeIsolated { onEnd() } }
}

extension DependencyContainer {
    var awSession: Provider<AWSession> { singleton { AWSession(onEnd: {}) } }
}

@Suite struct AppTestWorldReentrancyTests {
    /// The session the world kept, dropped by an override, signs the user out in its
    /// deinit: it overrides the greeter and resolves it, in the container that is dropping it.
    @Test(.dependencies) func aSingletonDroppedByAnOverrideMayOverrideAndResolveInItsDeinit() {
        let world = DependencyContainer.main
        world.override(\.awSession) { @MainActor in
            AWSession(onEnd: {
                world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "signed out") }
                _ = world.awGreeter()
            })
        }
        weak let first = world.awSession()
        #expect(first != nil)
        #expect(world.awGreeter().greet() == "live")
        world.override(\.awSession) { @MainActor in AWSession(onEnd: {}) }
        #expect(first == nil)
        #expect(world.awGreeter().greet() == "signed out")
    }

    /// A tracer that, on hearing of the greeter, replaces it: the next resolution is the replacement.
    @Test(.dependencies) func aTracerMayOverrideWhatItHeardOf() {
        let world = DependencyContainer.main
        world.tracer = ResolutionTracer { events in
            guard events.contains(where: { "\($0)".contains("awGreeter") }) else { return }
            MainActor.assumeIsolated {
                world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "traced") }
            }
        }
        #expect(world.awGreeter().greet() == "live")
        world.tracer = nil
        #expect(world.awGreeter().greet() == "traced")
    }
}

// MARK: - Many parallel tests, each in its world

/// What one test's world held, looked at after the test ended.
final class AWWorldProbe {
    weak var world: DependencyContainer?
    weak var screen: AnyObject?
    weak var row: AWRow?
    weak var greeter: AnyObject?
    weak var session: AWSession?
    var read: String?
    init() {}
}

@Suite struct AppTestWorldParallelTests {
    /// Each case overrides the greeter with its own, makes a screen whose startup task
    /// makes a row, and reads the row's greeter after suspensions: its own, never another's.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test(.dependencies, arguments: 0..<200) func eachCasesScreenTaskReadsItsOwnOverride(id: Int) async {
        let world = DependencyContainer.main
        world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "case \(id)") }
        let screen = AWScreenModel()
        await Task.yield()
        await screen.loading?.value
        #expect(screen.rows.first?.greeter.greet() == "case \(id)")
        #expect(screen.greeter.greet() == "case \(id)")
        let late = await Task { AWRow() }.value
        #expect(late.greeter.greet() == "case \(id)")
        #expect(isSameInstance(late.greeter, world.awGreeter()))
    }

    /// Many tests' scopes run at once, as Swift Testing runs them, each building singletons,
    /// a screen with a startup task, a session whose deinit uses the world; afterwards
    /// every world and what it built is gone.
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func manyParallelTestWorldsAreAllFreedAfterwards() async throws {
        let trait: DependenciesTrait = .dependencies { $0.setValue("configured", forKey: "aw.word") }
        let probes = (0..<60).map { _ in AWWorldProbe() }
        try await inParallelTestScopes(probes.count, of: { _ in trait }) { id in
            await Self.runTestBody(id: id, probe: probes[id])
        }
        for (id, probe) in probes.enumerated() {
            #expect(probe.read == "case \(id) configured")
            #expect(probe.world == nil, "world \(id)")
            #expect(probe.screen == nil, "screen \(id)")
            #expect(probe.row == nil, "row \(id)")
            #expect(probe.greeter == nil, "greeter \(id)")
            #expect(probe.session == nil, "session \(id)")
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor static func runTestBody(id: Int, probe: AWWorldProbe) async {
        let world = DependencyContainer.main
        world.override(\.awGreeter) { @MainActor in AWNamedGreeter(name: "case \(id)") }
        world.override(\.awSession) { @MainActor in
            AWSession(onEnd: { _ = world.awGreeter() })
        }
        let screen = world.awScreen()
        await screen.loading?.value
        let session = world.awSession()
        let word: String = world.getValue(forKey: "aw.word") ?? "?"
        probe.read = (screen.rows.first?.greeter.greet() ?? "none") + " " + word
        probe.world = world
        probe.screen = screen
        probe.row = screen.rows.first
        probe.greeter = screen.greeter as AnyObject
        probe.session = session
    }
}
