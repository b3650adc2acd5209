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
    /// A singleton whose construction starts a task that ends only when the latch stored
    /// under "rf.latch" opens; the task is handed to the test under "rf.spawned".
    var rfSpawning: Provider<RFValue> {
        singleton {
            self.rfSpawnWaitingTask()
            return RFValue()
        }
    }

    func rfSpawnWaitingTask() {
        let latch: AsyncLatch? = getValue(forKey: "rf.latch")
        let spawned: Handoff<Task<Void, Never>>? = getValue(forKey: "rf.spawned")
        spawned?.put(Task { await latch?.wait() })
    }
}

@Suite struct ResolutionFrameTests {
    /// A container whose `rfSpawning` construction starts a task that waits for `latch`,
    /// and hands it to `spawned`.
    func containerWhoseConstructionsSpawnTasks()
        -> (container: DependencyContainer, latch: AsyncLatch, spawned: Handoff<Task<Void, Never>>)
    {
        let container = DependencyContainer()
        let (latch, spawned) = (AsyncLatch(), Handoff<Task<Void, Never>>())
        container.setValue(latch, forKey: "rf.latch")
        container.setValue(spawned, forKey: "rf.spawned")
        return (container, latch, spawned)
    }

    /// The singleton is built, then dropped by a reset while the task its construction
    /// started still runs: nothing but the dropped cache held it, so it goes.
    @Test func aTaskTheConstructionStartedDoesNotKeepItsResult() async {
        let (container, latch, spawned) = containerWhoseConstructionsSpawnTasks()
        weak var built: RFValue?
        do { built = container.rfSpawning() }
        let task = await spawned.value()
        #expect(built != nil, "the container keeps its singleton")
        container.reset(\.rfSpawning)
        #expect(built == nil, "the running task keeps the instance its construction built")
        latch.open()
        await task.value
    }

    /// The same for an override: once it is removed, what its closure captured goes, though
    /// the task started by the construction it ran still runs.
    @Test func aTaskTheConstructionStartedDoesNotKeepTheOverrideItRan() async {
        let (container, latch, spawned) = containerWhoseConstructionsSpawnTasks()
        weak var captured: RFCaptured?
        weak var built: RFValue?
        do {
            let stub = RFCaptured()
            captured = stub
            container.override(\.rfSpawning) { [unowned container] in
                withExtendedLifetime(stub) { container.rfSpawnWaitingTask() }
                return RFValue()
            }
            built = container.rfSpawning()
        }
        let task = await spawned.value()
        #expect(captured != nil && built != nil, "the override is installed, its instance kept")
        container.reset(\.rfSpawning)
        #expect(captured == nil, "the running task keeps the override its construction ran")
        #expect(built == nil, "the running task keeps the instance its construction built")
        latch.open()
        await task.value
    }
}
