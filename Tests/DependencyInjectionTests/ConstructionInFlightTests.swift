@testable import DependencyInjection
import Dispatch
import Foundation
import Testing

final class Clock: Sendable {}

/// Holds a property of the container that builds it.
final class ClockReader: @unchecked Sendable {
    @Dependency var clock: Clock
    init(_ container: DependencyContainer) { _clock = Dependency(\.clock, container: container) }
}

extension DependencyContainer {
    /// The gate a construction waits at, so that a test can act while it is in flight.
    var gate: ConstructionGate { getValue(forKey: "gate")! }
    var clock: Provider<Clock> { singleton { Clock() } }
    var gatedClock: Provider<Clock> {
        singleton {
            self.gate.enterAndWait()
            _ = self.clock()
            return Clock()
        }
    }
    /// Starts a task that, once the test lets it, makes a reader of this container: after
    /// the construction has ended.
    var startsReaderLater: Provider<Int> {
        singleton {
            let (latch, handoff): (AsyncLatch, Handoff<ClockReader>) = self.getValue(forKey: "later")!
            // Unowned: the test keeps the container until the reader exists, and only
            // the reader may keep it after that.
            Task { [unowned self] in
                await latch.wait()
                handoff.put(ClockReader(self))
            }
            return 1
        }
    }
    var readerFromChildTask: AsyncProvider<ClockReader> {
        singleton {
            async let reader = ClockReader(self)
            return await reader
        }
    }
    subscript(requestNumber number: Int) -> Provider<Int> { factory(number) { number } }
}

@Suite struct ConstructionInFlightTests {
    // MARK: - Tracing

    /// The tracer is set while `gatedClock` is being built, and resolves it: the events of
    /// that construction are not delivered inside it, where resolving it could only wait
    /// for itself.
    @Test func aTracerSetDuringAConstructionDoesNotRunInsideIt() {
        let container = DependencyContainer()
        let seen = Collected<String>()
        whileBuildingGatedClock(in: container) {
            container.tracer = ResolutionTracer { events in
                _ = container.gatedClock()
                for event in events { seen.append("\(event.name) \(event.outcome.rawValue)") }
            }
        }
        let clock = container.gatedClock()
        #expect(container.gatedClock() === clock)
        #expect(seen.values == ["gatedClock cached", "gatedClock cached"])
    }

    // MARK: - Lifetime

    /// A `@Dependency` created in a child task of an async singleton's construction holds
    /// the container weakly, as one created in the construction itself does.
    @Test func aPropertyCreatedInAChildTaskOfAConstructionDoesNotKeepTheContainer() async throws {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            let reader = try await container.readerFromChildTask()
            #expect(reader.clock === container.clock())
            released = container
        }
        #expect(released == nil)
    }

    /// A task that a construction started, and that makes an object after the construction
    /// ended, is not building anything the container keeps: the object holds its
    /// container strongly, so it can read its properties however long it lives.
    @Test func anObjectMadeByASpawnedTaskAfterTheConstructionKeepsItsContainer() async {
        let latch = AsyncLatch()
        let handoff = Handoff<ClockReader>()
        var world: DependencyContainer? = DependencyContainer()
        world?.setValue((latch, handoff), forKey: "later")
        #expect(world?.startsReaderLater() == 1)
        weak let container = world
        latch.open()
        let reader = await handoff.value()
        world = nil
        #expect(container != nil, "the reader's container was released")
        if container != nil { #expect(reader.clock === container?.clock()) }
    }

    // MARK: - Bookkeeping

    /// Arguments resolved while a construction runs are remembered per registration, not
    /// per argument.
    @Test func argumentsResolvedWhileBuildingDoNotPileUp() {
        let container = DependencyContainer()
        whileBuildingGatedClock(in: container) {
            for number in 0..<5_000 { #expect(container[requestNumber: number]() == number) }
        }
        let remembered = container.withStateLock { $0.dependents.count }
        #expect(remembered <= 2, "\(remembered) uses remembered")
    }

    /// Runs `body` while another thread is building `gatedClock` in `container`, and
    /// returns once that construction has finished.
    private func whileBuildingGatedClock(in container: DependencyContainer, _ body: () -> Void) {
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "gate")
        let built = DispatchSemaphore(value: 0)
        Thread {
            _ = container.gatedClock()
            built.signal()
        }.start()
        gate.entered.wait()
        body()
        gate.open()
        built.wait()
    }
}
