import Foundation
import Testing
@testable import DependencyInjection

// A synchronous construction runs in its resolution, which is also its frame: a task the
// construction starts inherits that frame and may outlive the construction by far. What
// the resolution held to decide and build (the in-flight record with the result, the
// override it built from) must not live on with the task.

/// What `rfSpawning` builds.
final class RFValue: Sendable {
    init() {}
}

/// Something an override's closure captures.
final class RFCaptured: Sendable {
    init() {}
}

extension DependencyContainer {
    /// A singleton whose construction starts the task of the `WaitingTaskProbe` stored here.
    var rfSpawning: Provider<RFValue> {
        singleton {
            self.startWaitingTask()
            return RFValue()
        }
    }
}

@Suite struct ResolutionFrameTests {
    /// The singleton is built, then dropped by a reset while the task its construction
    /// started still runs: nothing but the dropped cache held it, so it goes.
    @Test func aTaskTheConstructionStartedDoesNotKeepItsResult() async {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        weak var built: RFValue?
        do { built = container.rfSpawning() }
        let task = await probe.started.value()
        #expect(built != nil, "the container keeps its singleton")
        container.reset(\.rfSpawning)
        #expect(built == nil, "the running task keeps the instance its construction built")
        probe.latch.open()
        await task.value
    }

    /// The same for an override: once it is removed, what its closure captured goes, though
    /// the task started by the construction it ran still runs.
    @Test func aTaskTheConstructionStartedDoesNotKeepTheOverrideItRan() async {
        let container = DependencyContainer()
        let probe = WaitingTaskProbe(in: container)
        weak var captured: RFCaptured?
        weak var built: RFValue?
        do {
            let stub = RFCaptured()
            captured = stub
            container.override(\.rfSpawning) { [unowned container] in
                withExtendedLifetime(stub) { container.startWaitingTask() }
                return RFValue()
            }
            built = container.rfSpawning()
        }
        let task = await probe.started.value()
        #expect(captured != nil && built != nil, "the override is installed, its instance kept")
        container.reset(\.rfSpawning)
        #expect(captured == nil, "the running task keeps the override its construction ran")
        #expect(built == nil, "the running task keeps the instance its construction built")
        probe.latch.open()
        await task.value
    }
}
