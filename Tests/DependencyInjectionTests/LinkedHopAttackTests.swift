import DependencyInjection
import Foundation
import Testing

// Where a linked async provider reads its registration again, in a nonisolated module:
// off the main actor for a property first read off it, on it for one first read there.

@MainActor final class HopNMainOwner {
    @Dependency(\.hopNMainCatalog) var catalog
    init() {}
}

extension DependencyContainer {
    /// Same, linked provider called in the construction's own task.
    var hopNInlineCycleCatalog: AsyncProvider<Catalog> {
        singleton {
            let catalog = self.hopNInlineOwner().catalog
            _ = try await catalog()
            return Catalog()
        }
    }
    var hopNInlineOwner: Provider<HopNInlineOwner> { singleton { HopNInlineOwner() } }
    /// A main-actor registration in a nonisolated module.
    @MainActor var hopNMainCatalog: AsyncProvider<Catalog> { singleton { Catalog() } }
    @MainActor var hopNMainOwner: Provider<HopNMainOwner> { singleton { @MainActor in HopNMainOwner() } }
    /// Main-actor getter with the cycle, so that the linked call hops.
    @MainActor var hopNMainCycleCatalog: AsyncProvider<Catalog> {
        singleton {
            let catalog = await MainActor.run { self.hopNMainCycleOwner().catalog }
            _ = try await catalog()
            return Catalog()
        }
    }
    @MainActor var hopNMainCycleOwner: Provider<HopNMainCycleOwner> { singleton { @MainActor in HopNMainCycleOwner() } }
}

final class HopNInlineOwner: @unchecked Sendable {
    @Dependency(\.hopNInlineCycleCatalog) var catalog
    init() {}
}

@MainActor final class HopNMainCycleOwner {
    @Dependency(\.hopNMainCycleCatalog) var catalog
    init() {}
}

@Suite struct LinkedHopAttackTests {
    /// A property first read off the main actor reads its registration there again: a
    /// linked call completes while the main actor is blocked. In a child process: in-process, exit tests running alongside can take the
    /// cooperative pool's two threads while the main actor is blocked.
    @Test func aLinkedCallOfAPropertyReadOffTheMainActorCompletesWhileTheMainActorIsBlocked() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("nonisolated linked call, main actor blocked")
            let container = DependencyContainer()
            let catalog = container.catalogReader().catalog
            await MainActor.run {
                let done = DispatchSemaphore(value: 0)
                Task.detached {
                    _ = try? await catalog()
                    done.signal()
                }
                done.wait()
            }
            withExtendedLifetime(container) {}
        }
    }

    /// A main-actor registration in this module, whose property is first read on the main
    /// actor: the linked call reads it there again, and agrees.
    @Test func anExplicitMainActorRegistrationHopsAndAgrees() async throws {
        let container = DependencyContainer()
        let catalog = await MainActor.run { container.hopNMainOwner().catalog }
        let viaLink = try await Task.detached { try await catalog() }.value
        #expect(viaLink === (try await container.hopNMainCatalog()))
    }

    @Test func aCycleThroughALinkedProviderInTheSameTaskStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("inline cycle")
            _ = try await DependencyContainer().hopNInlineCycleCatalog()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Circular dependency"), "\(text)")
    }

    @Test func aCycleThroughAHoppingLinkedProviderInTheSameTaskStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("hopping inline cycle")
            let container = DependencyContainer()
            _ = try await container.hopNMainCycleCatalog()
        }
        let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(text.contains("Circular dependency"), "\(text)")
    }
}
