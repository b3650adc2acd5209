import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    /// Waits at the `ConstructionGate` stored under "iibGate" while it is built.
    var iibGatedStore: Provider<ImageCache> {
        singleton {
            (self.getValue(forKey: "iibGate") as ConstructionGate?)?.enterAndWait()
            return ImageCache()
        }
    }
}

/// Pins `instanceIfBuilt(_:)` (DependencyContainer+InstanceIfBuilt.swift): "`nil` … for an
/// instance still being built (it does not wait)", and "It is not a resolution: it is not
/// traced".
@Suite struct InstanceIfBuiltInFlightTests {
    @Test func anInstanceStillBeingBuiltIsNilWithoutWaitingThenTheBuiltOne() async {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "iibGate")
        let built = onThread { container.iibGatedStore() }
        gate.entered.wait()
        // The construction is held at the gate: an answer that waited for it would hang.
        let answer = Collected<ImageCache?>()
        let answered = await finishesWithoutHangingOffThePool { answer.append(container.instanceIfBuilt(\.iibGatedStore)) }
        gate.open()
        let store = built()
        #expect(answered, "instanceIfBuilt waited for the construction in flight")
        #expect(answer.values.count == 1)
        #expect(answer.values.first.map { $0 == nil } == true, "instanceIfBuilt answered with an instance still being built")
        #expect(container.instanceIfBuilt(\.iibGatedStore) === store)
    }

    @Test func instanceIfBuiltAddsNoTraceEvents() {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "iibGate")

        #expect(container.instanceIfBuilt(\.iibGatedStore) == nil)   // before it is built
        #expect(batches.values.isEmpty)

        let built = onThread { container.iibGatedStore() }
        gate.entered.wait()
        _ = container.instanceIfBuilt(\.iibGatedStore)                // while it is built
        gate.open()
        let store = built()
        #expect(container.instanceIfBuilt(\.iibGatedStore) === store)  // once it is built
        #expect(container.instanceIfBuilt(\.httpClient) == nil)        // never built

        // Only the construction itself was traced.
        #expect(batches.values.count == 1, "\(batches.values)")
        #expect(batches.values.flatMap { $0 }.map(\.name) == ["iibGatedStore"], "\(batches.values)")
    }
}
