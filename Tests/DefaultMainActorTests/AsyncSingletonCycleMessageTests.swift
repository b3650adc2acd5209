import DependencyInjection
import Foundation
import Testing

// Two main-actor services that each need the other, registered as async singletons: an
// app's sync engine and its outbox. Each singleton is built in a task of its own, so the
// task that closes the cycle is the innermost one; the message still starts with what
// the app asked for, as a cycle on one thread does.

final class SyncEngineInCycle {
    let outbox: OutboxInCycle
    init(outbox: OutboxInCycle) { self.outbox = outbox }
}

final class OutboxInCycle {
    let engine: SyncEngineInCycle
    init(engine: SyncEngineInCycle) { self.engine = engine }
}

final class ScheduleInCycle {
    let engine: SyncEngineInCycle
    init(engine: SyncEngineInCycle) { self.engine = engine }
}

extension DependencyContainer {
    var cyclingSyncEngine: AsyncProvider<SyncEngineInCycle> {
        singleton { @MainActor in
            await Task.yield()
            return SyncEngineInCycle(outbox: try await self.cyclingOutbox())
        }
    }
    var cyclingOutbox: AsyncProvider<OutboxInCycle> {
        singleton { @MainActor in
            await Task.yield()
            return OutboxInCycle(engine: try await self.cyclingSyncEngine())
        }
    }

    /// Three singletons in a ring, with no suspension of their own: schedule needs the
    /// engine, which needs the outbox, which needs the schedule.
    var ringSchedule: AsyncProvider<ScheduleInCycle> {
        singleton { @MainActor in ScheduleInCycle(engine: try await self.ringSyncEngine()) }
    }
    var ringSyncEngine: AsyncProvider<SyncEngineInCycle> {
        singleton { @MainActor in SyncEngineInCycle(outbox: try await self.ringOutbox()) }
    }
    var ringOutbox: AsyncProvider<OutboxInCycle> {
        singleton { @MainActor in
            let schedule = try await self.ringSchedule()
            return OutboxInCycle(engine: schedule.engine)
        }
    }
}

/// The registrations of a `Circular dependency: a (File.swift:1) -> b (File.swift:2) -> a`
/// message, in order, without their locations.
private func cycleNames(in output: String) -> [String] {
    guard let start = output.range(of: "Circular dependency: ") else { return [] }
    return output[start.upperBound...].prefix { $0 != "\n" }.split(separator: " -> ").map { step in
        String(step.prefix { $0 != " " })
    }
}

@Suite struct AsyncSingletonCycleMessageTests {
    /// The app asks for the engine: the message reads engine, outbox, engine.
    @Test func theMessageStartsWithTheSingletonTheAppAskedFor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await Task { @MainActor in _ = try? await DependencyContainer().cyclingSyncEngine() }.value
        }
        let output = standardError(of: result)
        #expect(cycleNames(in: output) == ["cyclingSyncEngine", "cyclingOutbox", "cyclingSyncEngine"], "\(output)")
    }

    /// Asked for the other one first, the message starts there.
    @Test func askedForTheOtherOneTheMessageStartsThere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await Task { @MainActor in _ = try? await DependencyContainer().cyclingOutbox() }.value
        }
        let output = standardError(of: result)
        #expect(cycleNames(in: output) == ["cyclingOutbox", "cyclingSyncEngine", "cyclingOutbox"], "\(output)")
    }

    /// A request's scope hands the singletons to its app container, where they are built:
    /// the message still starts with what the request asked for.
    @Test func askedThroughARequestsScopeTheMessageStartsThere() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await Task { @MainActor in
                let app = DependencyContainer()
                _ = try? await DependencyContainer(scopeOf: app).cyclingOutbox()
            }.value
        }
        let output = standardError(of: result)
        #expect(cycleNames(in: output) == ["cyclingOutbox", "cyclingSyncEngine", "cyclingOutbox"], "\(output)")
    }

    /// Three singletons in a ring: every step in the order the constructions needed them.
    @Test func aRingOfThreeReadsInTheOrderTheyNeededEachOther() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await Task { @MainActor in _ = try? await DependencyContainer().ringSchedule() }.value
        }
        let output = standardError(of: result)
        #expect(
            cycleNames(in: output) == ["ringSchedule", "ringSyncEngine", "ringOutbox", "ringSchedule"], "\(output)")
    }
}
