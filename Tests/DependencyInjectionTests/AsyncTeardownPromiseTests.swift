import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// An async factory that declares a teardown: a misuse.
    var promiseAsyncFactoryWithTeardown: AsyncProvider<MailResource> {
        factory { MailResource("promiseAsyncFactoryWithTeardown", log: nil) }.onShutdown { await $0.closeAfterSuspending() }
    }
    /// An async shared registration that declares a teardown: a misuse.
    var promiseAsyncSharedWithTeardown: AsyncProvider<MailResource> {
        shared { MailResource("promiseAsyncSharedWithTeardown", log: nil) }.onShutdown { await $0.closeAfterSuspending() }
    }
}

/// Pins `AsyncProvider.onShutdown(_:)` (Teardown.swift:116-118): "the teardown belongs to
/// the registration (an override's instance gets it too), and a `factory` or `shared`
/// registration with a teardown stops as soon as its provider is made."
@Suite struct AsyncTeardownPromiseTests {
    @Test func anOverridesInstanceOfAnAsyncSingletonGetsTheRegistrationsAsyncTeardownOnce() async throws {
        let container = DependencyContainer()
        let log = container.installShutdownLog()
        let replacement = MailResource("override of asyncMailDatabase", log: log)
        container.override(\.asyncMailDatabase) { replacement }
        let resolved = try await container.asyncMailDatabase()
        #expect(resolved === replacement)

        await container.shutdown()

        #expect(replacement.closeCount == 1, "the override's instance was not torn down exactly once")
        #expect(log.values == ["override of asyncMailDatabase"], "\(log.values)")
        #expect(container.instanceIfBuilt(\.asyncMailDatabase) == nil)
    }

    @Test func anAsyncFactoryWithATeardownStopsWithItsNameAsSoonAsItsProviderIsMade() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().promiseAsyncFactoryWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains("promiseAsyncFactoryWithTeardown declares onShutdown but is a factory registration."), "\(output)")
        #expect(output.contains("AsyncTeardownPromiseTests.swift"), "\(output)")
    }

    @Test func anAsyncSharedRegistrationWithATeardownStopsWithItsNameAsSoonAsItsProviderIsMade() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().promiseAsyncSharedWithTeardown
        }
        let output = standardError(of: result)
        #expect(output.contains("promiseAsyncSharedWithTeardown declares onShutdown but is a shared registration."), "\(output)")
        #expect(output.contains("AsyncTeardownPromiseTests.swift"), "\(output)")
    }
}
