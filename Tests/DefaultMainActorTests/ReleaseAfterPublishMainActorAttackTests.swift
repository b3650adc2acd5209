// A main-actor app: a view model's first read of its feed builds a request tracker, a
// graph registration that nothing keeps, whose deinit flushes through the view model's
// properties.
import DependencyInjection
import Foundation
import Testing

final class RAPMAnalytics {
    var events: [String] = []
    init() {}
}

extension DependencyContainer {
    var rapmAnalytics: Provider<RAPMAnalytics> { factory { RAPMAnalytics() } }
}

@Suite struct ReleaseAfterPublishMainActorAttackTests {
    /// A view model's first read of its service builds a request tracker (a `graph`
    /// instance) that nothing keeps; its `isolated deinit` flushes through the model's
    /// properties, the one being read among them. The tracker goes once the read has
    /// published, so the flush reads the published service. In a process of its own:
    /// before the fix, the flush stopped the process with a cycle.
    @Test func aGraphTrackerThatNothingKeepsFlushesThroughTheModelOnceItsReadHasPublished() async {
        await #expect(processExitsWith: .success) {
            await MainActor.run {
                let model = RAPMDroppingModel()
                rapmDroppingModel = model
                let service = model.feed
                precondition(model.flushed == ["feed=true", "analytics=0"], "\(model.flushed)")
                precondition(service === model.feed)
            }
        }
    }
}

// The service keeps no reference to the tracker: the read's graph instance goes when the
// read lets go of what it held.
final class RAPMDroppingTracker {
    init() {}
    isolated deinit {
        guard let model = rapmDroppingModel else { return }
        model.flushed.append("feed=\(model.feed === model.feed)")
        model.flushed.append("analytics=\(model.analytics.events.count)")
    }
}
weak var rapmDroppingModel: RAPMDroppingModel?
final class RAPMPlainService {
    init() {}
}
extension DependencyContainer {
    var rapmDroppingTracker: Provider<RAPMDroppingTracker> { graph { RAPMDroppingTracker() } }
    var rapmPlainService: Provider<RAPMPlainService> {
        factory {
            _ = self.rapmDroppingTracker()
            return RAPMPlainService()
        }
    }
}
final class RAPMDroppingModel {
    @Dependency(\.rapmPlainService) var feed
    @Dependency(\.rapmAnalytics) var analytics
    var flushed: [String] = []
    init() {}
}
