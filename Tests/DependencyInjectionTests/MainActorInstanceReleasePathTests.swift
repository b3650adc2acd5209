import DependencyInjection
import Foundation
import Testing

/// A plain, non-`Sendable` class, as main-actor code holds, that reports where it is released.
final class OffMainReleasePage {
    private let onRelease: (@Sendable (_ onMainActor: Bool) -> Void)?
    init(onRelease: (@Sendable (Bool) -> Void)?) { self.onRelease = onRelease }
    deinit { onRelease?(offMainReleaseRunsWhereTheMainActorRuns()) }
}

private let offMainReleaseMainQueueKey: DispatchSpecificKey<Void> = {
    let key = DispatchSpecificKey<Void>()
    DispatchQueue.main.setSpecific(key: key, value: ())
    return key
}()

private func offMainReleaseRunsWhereTheMainActorRuns() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: offMainReleaseMainQueueKey) != nil
}

final class OffMainReleaseLeaf: Sendable {}

extension DependencyContainer {
    var offMainReleaseProbe: (@Sendable (Bool) -> Void)? { getValue(forKey: "off-main-release.probe") }
    var offMainReleaseLeaf: Provider<OffMainReleaseLeaf> { singleton { OffMainReleaseLeaf() } }
    @MainActor var offMainReleasePage: Provider<OffMainReleasePage> {
        singleton { @MainActor in OffMainReleasePage(onRelease: self.offMainReleaseProbe) }
    }
    /// A main-actor singleton built from a plain singleton.
    @MainActor var offMainReleaseBuiltFromLeaf: Provider<OffMainReleasePage> {
        singleton { @MainActor in
            _ = self.offMainReleaseLeaf()
            return OffMainReleasePage(onRelease: self.offMainReleaseProbe)
        }
    }
    @MainActor var offMainReleaseScoped: Provider<OffMainReleasePage> {
        scoped { @MainActor in OffMainReleasePage(onRelease: self.offMainReleaseProbe) }
    }
    @MainActor subscript(offMainReleaseTopic topic: String) -> Provider<OffMainReleasePage> {
        singleton(topic) { @MainActor in OffMainReleasePage(onRelease: self.offMainReleaseProbe) }
    }
}

/// Where a main-actor instance went, and a signal for each release.
final class OffMainReleaseReleases: Sendable {
    let onMainActor = Collected<Bool>()
    let released = DispatchSemaphore(value: 0)
    var probe: @Sendable (Bool) -> Void {
        { [onMainActor, released] onMain in
            onMainActor.append(onMain)
            released.signal()
        }
    }
    func waitForOne() async -> Bool {
        let released = self.released
        return await finishesWithoutHangingOffThePool { released.wait() }
    }
}

@Suite struct MainActorInstanceReleasePathTests {
    @Test func droppedByAnOverrideOfItsDependencyOffTheMainActor() async {
        _ = offMainReleaseMainQueueKey
        let releases = OffMainReleaseReleases()
        let container = DependencyContainer()
        container.setValue(releases.probe, forKey: "off-main-release.probe")
        await MainActor.run { _ = container.offMainReleaseBuiltFromLeaf() }
        await Task.detached { container.override(\.offMainReleaseLeaf) { OffMainReleaseLeaf() } }.value
        #expect(await releases.waitForOne())
        #expect(releases.onMainActor.values == [true], "released off the main actor")
    }

    @Test func droppedWhenItsContainerIsReleasedOffTheMainActor() async {
        _ = offMainReleaseMainQueueKey
        let releases = OffMainReleaseReleases()
        let box = ContainerBox(DependencyContainer())
        box.container!.setValue(releases.probe, forKey: "off-main-release.probe")
        await MainActor.run { _ = box.container!.offMainReleasePage(); _ = box.container!.offMainReleaseBuiltFromLeaf() }
        await Task.detached { box.drop() }.value
        #expect(await releases.waitForOne())
        #expect(await releases.waitForOne())
        #expect(releases.onMainActor.values == [true, true], "released off the main actor")
    }

    @Test func aScopedInstanceDroppedWhenItsScopeIsReleasedOffTheMainActor() async {
        _ = offMainReleaseMainQueueKey
        let releases = OffMainReleaseReleases()
        let app = DependencyContainer()
        app.setValue(releases.probe, forKey: "off-main-release.probe")
        let box = ContainerBox(DependencyContainer(scopeOf: app))
        await MainActor.run { _ = box.container!.offMainReleaseScoped() }
        await Task.detached { box.drop() }.value
        #expect(await releases.waitForOne())
        #expect(releases.onMainActor.values == [true], "released off the main actor")
    }

    @Test func aChildsInstanceDroppedByItsParentsOverrideOffTheMainActor() async {
        _ = offMainReleaseMainQueueKey
        let releases = OffMainReleaseReleases()
        let parent = DependencyContainer()
        parent.setValue(releases.probe, forKey: "off-main-release.probe")
        let child = DependencyContainer(parent: parent)
        await MainActor.run { _ = child.offMainReleaseBuiltFromLeaf() }
        await Task.detached { parent.override(\.offMainReleaseLeaf) { OffMainReleaseLeaf() } }.value
        #expect(await releases.waitForOne())
        #expect(releases.onMainActor.values == [true], "released off the main actor")
    }

    @Test func droppedByShutdownOffTheMainActor() async {
        _ = offMainReleaseMainQueueKey
        let releases = OffMainReleaseReleases()
        let container = DependencyContainer()
        container.setValue(releases.probe, forKey: "off-main-release.probe")
        await MainActor.run { _ = container.offMainReleasePage() }
        await Task.detached { shutdownRaceShutDown(container) }.value
        #expect(await releases.waitForOne())
        #expect(releases.onMainActor.values == [true], "released off the main actor")
    }
}

final class ContainerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: DependencyContainer?
    init(_ container: DependencyContainer) { stored = container }
    var container: DependencyContainer? { lock.withLock { stored } }
    func drop() {
        let dropped = lock.withLock { () -> DependencyContainer? in
            defer { stored = nil }
            return stored
        }
        _ = consume dropped
    }
}
