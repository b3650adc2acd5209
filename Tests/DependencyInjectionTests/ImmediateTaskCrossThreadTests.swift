import DependencyInjection
import Foundation
import Testing

// A task started with `Task.immediate` inside a construction runs on the construction's
// thread, above it. When it waits for what another thread builds, and that construction
// waits for the one the task runs above, neither can go on: the task blocks the thread the
// first construction needs. That cycle through two threads waited forever, with no message
// (a known issue); it now stops with the chain and the fix, whichever of the two waits
// begins last.

final class CrossThreadLedger: Sendable {
    init() {}
}

final class CrossThreadSyncEngine: Sendable {
    let ledger: CrossThreadLedger
    init(ledger: CrossThreadLedger) { self.ledger = ledger }
}

/// What the two constructions use to line up: the engine's construction signals that it
/// began; with `engineWaitsFirst`, the ledger's construction starts its task only once the
/// engine's construction is about to ask for the ledger.
final class CrossThreadSignals: Sendable {
    let engineBegan = DispatchSemaphore(value: 0)
    let engineAsks = DispatchSemaphore(value: 0)
    let engineWaitsFirst: Bool
    init(engineWaitsFirst: Bool) { self.engineWaitsFirst = engineWaitsFirst }
}

extension DependencyContainer {
    /// A ledger whose construction has the sync engine built on another thread, then
    /// starts a task at once that asks for the engine.
    var crossThreadLedger: Provider<CrossThreadLedger> {
        singleton {
            let signals = self.getValue(forKey: "cross.signals") as CrossThreadSignals?
            Thread { _ = self.crossThreadSyncEngine() }.start()
            signals?.engineBegan.wait()
            if signals?.engineWaitsFirst == true { signals?.engineAsks.wait() }
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.crossThreadSyncEngine() }
            }
            return CrossThreadLedger()
        }
    }

    var crossThreadSyncEngine: Provider<CrossThreadSyncEngine> {
        singleton {
            let signals = self.getValue(forKey: "cross.signals") as CrossThreadSignals?
            signals?.engineBegan.signal()
            signals?.engineAsks.signal()
            return CrossThreadSyncEngine(ledger: self.crossThreadLedger())
        }
    }
}

/// Resolves the ledger in a new container, lined up by `signals`.
func resolveCrossThreadLedger(engineWaitsFirst: Bool) {
    let container = DependencyContainer()
    container.setValue(CrossThreadSignals(engineWaitsFirst: engineWaitsFirst), forKey: "cross.signals")
    _ = container.crossThreadLedger()
}

@Suite struct ImmediateTaskCrossThreadTests {
    /// Either wait may begin last, and closes the cycle then. With `engineWaitsFirst` off,
    /// the task begins waiting for the engine while the engine's thread is still on its way
    /// to the ledger (most runs): the engine's wait closes the cycle, through the ledger's
    /// construction, which waits with the task above it. With it on, the engine's thread
    /// asks for the ledger before the task starts (most runs): the task's wait closes the
    /// cycle, through the ledger's construction below it.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test(arguments: [false, true])
    func anImmediateTaskWaitingForAnotherThreadStopsTheCycle(engineWaitsFirst: Bool) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [engineWaitsFirst] in
            endProcessIfHung("an immediate task and a construction on another thread waiting for each other")
            resolveCrossThreadLedger(engineWaitsFirst: engineWaitsFirst)
        }
        expectCrossThreadCycle(in: standardError(of: result))
    }

    private func expectCrossThreadCycle(in output: String) {
        #expect(output.contains("Fatal error: Circular dependency: "), "\(output)")
        #expect(output.contains("crossThreadLedger ("), "\(output)")
        #expect(output.contains("crossThreadSyncEngine ("), "\(output)")
        #expect(
            output.contains(
                "A task started with Task.immediate inside crossThreadLedger waits for crossThreadSyncEngine, which another thread builds"
            ), "\(output)")
        #expect(output.contains("Start the task with Task { … }"), "\(output)")
    }
}
