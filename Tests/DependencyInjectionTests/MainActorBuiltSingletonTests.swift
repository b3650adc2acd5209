import DependencyInjection
import Foundation
import Testing

/// Pins Apps.md (a library's registration overridden with a `@MainActor` closure): "A
/// singleton the replacement already built on the main actor is `Sendable`, as a
/// nonisolated registration's singleton must be, and is served anywhere."
@Suite struct MainActorBuiltSingletonTests {
    @Test func aSingletonAMainActorOverrideBuiltOnTheMainActorIsServedOnAnyThread() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a singleton built on the main actor, served off it")
            let container = DependencyContainer()
            let built = await MainActor.run {
                container.override(\.httpClient) { @MainActor in StubHTTPClient("main actor") }
                return container.httpClient()
            }
            precondition(built.name == "main actor")
            let fromTask = await Task.detached { container.httpClient() }.value
            precondition(fromTask === built, "a detached task got another instance")
            let fromThread = Collected<any HTTPClient>()
            let done = DispatchSemaphore(value: 0)
            Thread {
                fromThread.append(container.httpClient())
                // What was built from it is served there too.
                fromThread.append(container.feedLoader().client)
                done.signal()
            }.start()
            done.wait()
            precondition(fromThread.values.count == 2 && fromThread.values.allSatisfy { $0 === built },
                         "a thread got another instance")
        }
    }
}
