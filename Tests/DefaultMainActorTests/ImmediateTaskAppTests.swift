// A main-actor app: a session coordinator, a singleton, starts its first refresh at once
// with `Task.immediate`, as UI code does, and the refresh asks the container for the
// coordinator while the container is still building it.
import DependencyInjection
import Foundation
import Observation
import Testing

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class ITSessionCoordinator {
    var refreshes = 0
    init() {}

    func startRefreshing(in container: DependencyContainer) {
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            Task.immediate {
                container.itSessionCoordinator().refreshes += 1
            }
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension DependencyContainer {
    var itSessionCoordinator: Provider<ITSessionCoordinator> {
        singleton { @MainActor in
            let coordinator = ITSessionCoordinator()
            coordinator.startRefreshing(in: self)
            return coordinator
        }
    }
}

@Suite struct ImmediateTaskAppTests {
    /// The refresh would wait on the main thread for the construction that the main thread
    /// runs below it: the app stops with a message that names the coordinator, not a
    /// freeze. The task inherits the construction's frame, and the cycle check finds it
    /// there (a nonisolated singleton's own immediate task goes on to the wait, which
    /// `ImmediateTaskWaitTests` pins).
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func aCoordinatorWhoseImmediateTaskAsksForItselfStopsWithTheFix() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            hopEndProcessIfHung("a coordinator whose immediate task asks for itself")
            await MainActor.run {
                _ = DependencyContainer().itSessionCoordinator()
            }
        }
        let output = standardError(of: result)
        #expect(
            output.contains("Fatal error: Circular dependency: itSessionCoordinator (DefaultMainActorTests/ImmediateTaskAppTests.swift:"),
            "\(output)")
        #expect(
            output.contains("A task started with Task.immediate inside itSessionCoordinator asks for itSessionCoordinator"),
            "\(output)")
    }
}
