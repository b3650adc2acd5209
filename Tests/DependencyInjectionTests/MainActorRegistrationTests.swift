import DependencyInjection
import Foundation
import Testing

// Main-actor registrations whose values are not `Sendable`. The compiler keeps their
// properties on the main actor; a key path or a `@Dependency` can still carry one off it,
// and what the container drops may be dropped on another thread: the library checks the
// first and releases the second on the main actor.

/// A plain class, as main-actor code holds: not `Sendable`.
final class Notebook {
    var pages: [String] = []
    private let onRelease: (@Sendable (_ onMainActor: Bool) -> Void)?
    init(onRelease: (@Sendable (Bool) -> Void)? = nil) { self.onRelease = onRelease }
    deinit { onRelease?(runsWhereTheMainActorRuns()) }
}

/// Whether this runs on the main thread or the main queue (which a worker may drain on
/// Linux), as main-actor work does.
private func runsWhereTheMainActorRuns() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) != nil
}

private let mainQueueKey: DispatchSpecificKey<Void> = {
    let key = DispatchSpecificKey<Void>()
    DispatchQueue.main.setSpecific(key: key, value: ())
    return key
}()

extension DependencyContainer {
    @MainActor var notebook: Provider<Notebook> { singleton { @MainActor in Notebook() } }
    @MainActor subscript(notebook topic: String) -> Provider<Notebook> {
        singleton(topic) { @MainActor in Notebook() }
    }
    @MainActor var sharedNotebook: Provider<Notebook> { shared { @MainActor in Notebook() } }
    /// A notebook that reports where it is released, through a stored callback.
    @MainActor var probedNotebook: Provider<Notebook> {
        singleton { @MainActor in Notebook(onRelease: self.getValue(forKey: "release-probe")) }
    }
    @MainActor var greeting: Provider<String> { factory { "hello" } }
}

@Suite struct MainActorRegistrationTests {
    @Test @MainActor func aMainActorSingletonOfANonSendableValueIsBuiltOncePerContainer() {
        let container = DependencyContainer()
        container.notebook().pages.append("first")
        #expect(container.notebook() === container.notebook())
        #expect(container.notebook().pages == ["first"])
        #expect(container[notebook: "a"]() !== container[notebook: "b"]())
        #expect(container[notebook: "a"]() === container[notebook: "a"]())
        #expect(DependencyContainer(parent: container).notebook() !== container.notebook())
    }

    @Test @MainActor func aMainActorSharedInstanceIsReusedWhileHeld() {
        let container = DependencyContainer()
        let held = container.sharedNotebook()
        #expect(container.sharedNotebook() === held)
    }

    @Test @MainActor func aMainActorRegistrationResolvesInAnotherQueuesSyncBlock() {
        let container = DependencyContainer()
        let queue = DispatchQueue(label: "serial")
        // The block runs on the calling thread, still the main actor (the main thread on
        // Apple platforms; on Linux, maybe a worker that drains the main queue).
        #expect(queue.sync { container.greeting() } == "hello")
        container.override(\.httpClient) { @MainActor in StubHTTPClient("on main") }
        #expect(queue.sync { container.httpClient().name } == "on main")
    }

    @Test func aMainActorSingletonDroppedOffTheMainActorIsReleasedOnIt() async {
        let container = DependencyContainer()
        _ = mainQueueKey
        let releasedOnMainActor = Collected<Bool>()
        let released = DispatchSemaphore(value: 0)
        let probe: @Sendable (Bool) -> Void = { onMainActor in
            releasedOnMainActor.append(onMainActor)
            released.signal()
        }
        container.setValue(probe, forKey: "release-probe")
        await MainActor.run { _ = container.probedNotebook() }
        // Dropped by a reset on another thread: the deinit still runs on the main actor.
        await Task.detached { container.reset() }.value
        #expect(await finishesWithoutHangingOffThePool { released.wait() })
        #expect(releasedOnMainActor.values == [true])
    }

    @Test func aKeyPathSentOffTheMainActorStopsTheResolutionAndNamesTheRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await resolveThroughAKeyPathOffTheMainActor(DependencyContainer())
        }
        #expect(standardError(of: result).contains(
            "greeting is a registration of MainActor and was resolved off it"), "\(standardError(of: result))")
    }

    @Test func aDependencySentOffTheMainActorStopsOnItsFirstRead() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let dependency = await MainActor.run { Dependency(\.greeting, container: DependencyContainer()) }
            _ = await Task.detached { dependency.wrappedValue }.value
        }
        #expect(standardError(of: result).contains(
            "greeting is a registration of MainActor and was resolved off it"), "\(standardError(of: result))")
    }
}

/// Forms a key path to a main-actor registration on the main actor and applies it on a
/// detached task, which the compiler allows.
@MainActor private func resolveThroughAKeyPathOffTheMainActor(_ container: DependencyContainer) async {
    let keyPath = \DependencyContainer.greeting
    _ = await Task.detached { container[keyPath: keyPath]() }.value
}
