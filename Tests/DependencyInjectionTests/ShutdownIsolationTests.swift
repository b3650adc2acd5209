import DependencyInjection
import Foundation
import Testing

/// A global actor of the tests' own, to call `shutdown()` from.
@globalActor actor TeardownCallerActor {
    static let shared = TeardownCallerActor()
}

extension DependencyContainer {
    /// A synchronous teardown that stops the process unless it runs on `TeardownCallerActor`.
    var promiseIsolationCheckedMailbox: Provider<MailResource> {
        singleton { MailResource("promiseIsolationCheckedMailbox", log: nil) }.onShutdown { mailbox in
            TeardownCallerActor.shared.preconditionIsolated()
            mailbox.close()
        }
    }
}

@TeardownCallerActor private func promiseShutDownOnTheTeardownActor(_ container: DependencyContainer) async {
    await container.shutdown()
}

private func promiseShutDownOffEveryActor(_ container: DependencyContainer) async {
    await container.shutdown()
}

/// Pins `shutdown(isolation:)` (DependencyContainer+Shutdown.swift:108-109): "- Parameter
/// isolation: The actor the synchronous teardowns run on; inferred from the caller."
@Suite struct ShutdownIsolationTests {
    @Test func anAwaitedShutdownRunsSynchronousTeardownsOnTheCallersGlobalActor() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let mailbox = container.promiseIsolationCheckedMailbox()
            // Built after it, so torn down around it: an async teardown that suspends does
            // not move the synchronous one off the caller's actor either.
            let database = try await container.asyncMailDatabase()
            await promiseShutDownOnTheTeardownActor(container)
            precondition(mailbox.closeCount == 1 && database.closeCount == 1, "a teardown did not run")
        }
        #expect(!standardError(of: result).contains("Incorrect actor executor assumption"), "\(standardError(of: result))")
    }

    /// The control: the same teardown, from a caller on no actor, is not on
    /// `TeardownCallerActor`, so the check above can fail.
    @Test func theSameTeardownFromACallerOnNoActorIsNotOnThatActor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            _ = container.promiseIsolationCheckedMailbox()
            await promiseShutDownOffEveryActor(container)
        }
        let output = standardError(of: result)
        #expect(output.contains("Incorrect actor executor assumption; expected 'DependencyInjectionTests.TeardownCallerActor' executor"), "\(output)")
    }
}
