import DependencyInjection
import Foundation
import Testing

/// A singleton whose builds are counted and whose release resolves from its container.
final class TableAttackRaced: @unchecked Sendable {
    // @unchecked: `container` is written once, in init.
    weak var container: DependencyContainer?
    let number: Int
    init(_ container: DependencyContainer, _ number: Int) { (self.container, self.number) = (container, number) }
    deinit {
        if let container { _ = container.instanceIfBuilt(\.tableAttackR1) }
    }
}

extension DependencyContainer {
    var tableAttackRacedDep: Provider<String> { factory { "dep" } }
    var tableAttackR1: Provider<TableAttackRaced> {
        singleton {
            self.count("tableAttackR1")
            return TableAttackRaced(self, 1)
        }
    }
    var tableAttackR2: Provider<TableAttackRaced> {
        singleton {
            self.count("tableAttackR2")
            _ = self.tableAttackRacedDep()
            return TableAttackRaced(self, 2)
        }
    }
    var tableAttackR3: Provider<TableAttackRaced> {
        singleton {
            self.count("tableAttackR3")
            return TableAttackRaced(self, 3)
        }
    }
    var tableAttackR4: Provider<TableAttackRaced> {
        singleton {
            self.count("tableAttackR4")
            return TableAttackRaced(self, 4)
        }
    }
}

private func racedKey(_ index: Int) -> KeyPath<DependencyContainer, Provider<TableAttackRaced>> {
    [\.tableAttackR1, \.tableAttackR2, \.tableAttackR3, \.tableAttackR4][index]
}

/// Many threads resolve the first few singletons of a fresh container at once: the growth
/// from the inline entries to the storage happens under contention.
@Suite struct TableAttackConcurrencyTests {
    /// Each thread resolves the `count` singletons in its own order; each is built once and
    /// every thread gets the same instance.
    @Test(arguments: [2, 3, 4])
    func fewSingletonsAreBuiltOnceUnderContention(count: Int) async throws {
        let failures = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<150 {
                let container = DependencyContainer()
                let counters = (1...4).map { container.counter("tableAttackR\($0)") }
                let seen = Collected<(Int, ObjectIdentifier)>()
                concurrently(threads: 6) { thread in
                    for step in 0..<count {
                        let index = (step + thread) % count
                        let value = container[keyPath: racedKey(index)]()
                        if value.number != index + 1 { failures.append("round \(round): wrong instance for R\(index + 1)") }
                        seen.append((index, ObjectIdentifier(value)))
                    }
                }
                for index in 0..<count {
                    if counters[index].count != 1 { failures.append("round \(round): R\(index + 1) built \(counters[index].count) times") }
                    let ids = Set(seen.values.filter { $0.0 == index }.map(\.1))
                    if ids.count != 1 { failures.append("round \(round): R\(index + 1) handed out \(ids.count) instances") }
                    let kept = container.instanceIfBuilt(racedKey(index)).map(ObjectIdentifier.init)
                    if kept != ids.first { failures.append("round \(round): instanceIfBuilt disagrees for R\(index + 1)") }
                }
            }
        }
        try #require(finished)
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")
    }

    /// Resolutions of three or four singletons race a reset, a reset of one key, an
    /// override of what R2 used, or a shutdown. Afterwards the container is consistent:
    /// each singleton resolves to one instance, the one instanceIfBuilt reports.
    @Test(arguments: ["reset all", "reset R1", "override dep", "shutdown"], [3, 4])
    func aChangeRacingTheGrowthLeavesAConsistentTable(change: String, count: Int) async throws {
        let failures = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<120 {
                let container = DependencyContainer()
                concurrently(threads: 5) { thread in
                    if thread == 0 {
                        switch change {
                        case "reset all": container.reset()
                        case "reset R1": container.reset(\.tableAttackR1)
                        case "override dep": container.override(\.tableAttackRacedDep) { "stub \(round)" }
                        default: container.shutdown()
                        }
                        return
                    }
                    for step in 0..<count {
                        let index = (step + thread) % count
                        if container[keyPath: racedKey(index)]().number != index + 1 {
                            failures.append("round \(round): wrong instance for R\(index + 1)")
                        }
                    }
                }
                for index in 0..<count {
                    let first = container[keyPath: racedKey(index)]()
                    let second = container[keyPath: racedKey(index)]()
                    if first !== second { failures.append("round \(round): R\(index + 1) not kept after \(change)") }
                    if container.instanceIfBuilt(racedKey(index)) !== first {
                        failures.append("round \(round): instanceIfBuilt disagrees for R\(index + 1) after \(change)")
                    }
                }
                container.reset()
                for index in 0..<count where container.instanceIfBuilt(racedKey(index)) != nil {
                    failures.append("round \(round): R\(index + 1) survived a reset")
                }
            }
        }
        try #require(finished, "a racing \(change) hung")
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")
    }

    /// Family arguments of a fresh container resolved from many threads while another
    /// resets single arguments: the inline entries' keys are rewritten under contention.
    @Test func familyArgumentsRaceArgumentResets() async throws {
        let failures = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<150 {
                let container = DependencyContainer()
                let tokens = (0..<4).map { TableAttackToken($0) }
                concurrently(threads: 5) { thread in
                    for step in 0..<8 {
                        let token = tokens[(step + thread) % tokens.count]
                        if thread == 0 {
                            container.reset(\.tableAttackTokenUser[token])
                        } else if container.tableAttackTokenUser(token).id != token.id {
                            failures.append("round \(round): wrong instance for token \(token.id)")
                        }
                    }
                }
                for token in tokens {
                    let value = container.tableAttackTokenUser(token)
                    if value.id != token.id || container.tableAttackTokenUser(token) !== value {
                        failures.append("round \(round): token \(token.id) not kept")
                    }
                }
            }
        }
        try #require(finished)
        #expect(failures.values.isEmpty, "\(failures.values.prefix(5))")
    }
}
