import Foundation
import Testing
@testable import DependencyInjection

final class FKSpawnProbe: @unchecked Sendable {
    let asking = DispatchSemaphore(value: 0)
    let sawConstruction = Collected<Bool>()
    let sawNothingOutside = Collected<Bool>()
    let resolved = Collected<ObjectIdentifier>()
    let taskDone = DispatchSemaphore(value: 0)
    let task = Handoff<Task<Void, Never>>()
}

/// A value a container stores, which opens `latch` when the container releases it.
final class FKReleaseSignal: Sendable {
    let latch: AsyncLatch
    init(_ latch: AsyncLatch) { self.latch = latch }
    deinit { latch.open() }
}

extension DependencyContainer {
    /// A synchronous singleton whose construction starts a task that resolves it, and ends
    /// only once that task is asking for it.
    var fkSpawningSingleton: Provider<FKThing> {
        singleton {
            let probe: FKSpawnProbe? = self.getValue(forKey: "fkProbe")
            let task = Task {
                probe?.sawConstruction.append(Frame.innermostBound != nil)
                Frame.outsideInheritedConstructions { probe?.sawNothingOutside.append(Frame.innermostBound == nil) }
                probe?.asking.signal()
                probe?.resolved.append(ObjectIdentifier(self.fkSpawningSingleton()))
                probe?.taskDone.signal()
            }
            probe?.task.put(task)
            probe?.asking.wait()
            return FKThing("spawning")
        }
    }
}

/// The frame is bound as a task-local value of a struct of its own: a task a
/// construction starts still inherits it, sees the construction, waits for the singleton
/// instead of being stopped as a cycle, and sees nothing outside inherited constructions.
@Suite struct FileWordBoundAttackTests {
    @Test func aTaskStartedInASynchronousSingletonsConstructionWaitsForItAndSeesIt() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a task waiting for the singleton whose construction started it")
            for _ in 0..<20 {
                let container = DependencyContainer()
                let probe = FKSpawnProbe()
                container.setValue(probe, forKey: "fkProbe")
                let built = container.fkSpawningSingleton()
                probe.taskDone.wait()
                precondition(probe.resolved.values == [ObjectIdentifier(built)], "the task got another instance")
                precondition(probe.sawConstruction.values == [true], "the task did not inherit the construction")
                precondition(probe.sawNothingOutside.values == [true], "outsideInheritedConstructions still saw it")
            }
        }
    }

    @Test func outsideEveryConstructionNothingIsBound() async {
        #expect(Frame.innermostBound == nil)
        Frame.outsideInheritedConstructions { #expect(Frame.innermostBound == nil) }
        await Task { #expect(Frame.innermostBound == nil) }.value
    }

    /// Once its task has ended, nothing of the construction keeps the container or the
    /// instance: the bound frame was released with the binding.
    ///
    /// The thread that resolves, and the task the construction starts, capture the
    /// container in closures that are released some time after they signal that they
    /// finished: the test waits for the container's own release (a value it stores goes
    /// with it, after its singletons), under the hang guard, rather than read a weak
    /// reference at once. A container that something keeps is never released, and fails it.
    @Test func theContainerAndTheInstanceAreFreedOnceTheSpawnedTaskEnds() async {
        weak var weakContainer: DependencyContainer?
        weak var weakInstance: FKThing?
        let containerReleased = AsyncLatch()
        do {
            let container = DependencyContainer()
            let probe = FKSpawnProbe()
            container.setValue(probe, forKey: "fkProbe")
            container.setValue(FKReleaseSignal(containerReleased), forKey: "fkReleased")
            let built = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: container.fkSpawningSingleton()) }.start()
            }
            await probe.task.value().value
            (weakContainer, weakInstance) = (container, built)
        }
        #expect(await endsWithoutHanging { await containerReleased.wait() }, "something kept the container")
        #expect(weakContainer == nil, "something kept the container")
        #expect(weakInstance == nil, "something kept the instance")
    }
}
