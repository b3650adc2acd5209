@testable import DependencyInjection
import Dispatch
import Foundation
import Testing

/// A singleton whose construction waits until the test lets it finish, so that a test can
/// act while it is in flight. The gates are stored values of the container under test.
final class Gate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
}

final class Clock: Sendable {}

/// Holds a property of the container that builds it.
final class ClockReader: @unchecked Sendable {
    @Dependency var clock: Clock
    init(_ container: DependencyContainer) { _clock = Dependency(\.clock, container: container) }
}

extension DependencyContainer {
    var gate: Gate { getValue(forKey: "gate")! }
    var clock: Provider<Clock> { singleton { Clock() } }
    var gatedClock: Provider<Clock> {
        singleton {
            self.gate.entered.signal()
            self.gate.release.wait()
            _ = self.clock()
            return Clock()
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
        let gate = Gate()
        container.setValue(gate, forKey: "gate")
        let built = DispatchSemaphore(value: 0)
        Thread {
            _ = container.gatedClock()
            built.signal()
        }.start()
        gate.entered.wait()
        let seen = Collected<String>()
        container.tracer = ResolutionTracer { events in
            _ = container.gatedClock()
            for event in events { seen.append("\(event.name) \(event.outcome.rawValue)") }
        }
        gate.release.signal()
        built.wait()
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

    // MARK: - Bookkeeping

    /// Arguments resolved while a construction runs are remembered per registration, not
    /// per argument.
    @Test func argumentsResolvedWhileBuildingDoNotPileUp() {
        let container = DependencyContainer()
        let gate = Gate()
        container.setValue(gate, forKey: "gate")
        let built = DispatchSemaphore(value: 0)
        Thread {
            _ = container.gatedClock()
            built.signal()
        }.start()
        gate.entered.wait()
        for number in 0..<5_000 { #expect(container[requestNumber: number]() == number) }
        gate.release.signal()
        built.wait()
        let remembered = container.state.withLock { $0.dependents.count }
        #expect(remembered <= 2, "\(remembered) uses remembered")
    }
}
