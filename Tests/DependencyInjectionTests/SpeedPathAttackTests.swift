import DependencyInjection
import Foundation
import Testing

// Attacks on the fast paths: where a container files its singletons, how `main` is read
// and switched, and who owns a construction.

/// One instance per registration of the table tests, told apart by identity.
final class SPAThing: Sendable {
    let tag: Int
    init(tag: Int) { self.tag = tag }
}

/// Where a registration of the table tests is declared: a helper forwarding `line` and
/// `column` makes one registration per value, as a helper that makes providers for
/// several properties does.
struct SPAPlacement: Hashable, Sendable {
    let line: UInt
    let column: UInt

    /// Lines that differ only from bit 20 up: registrations at the same column whose
    /// positions differ only in high bits.
    static func highLine(_ number: Int) -> SPAPlacement {
        SPAPlacement(line: 1 + UInt(number) << 20, column: 3)
    }

    /// Consecutive lines at another column.
    static func nextLine(_ number: Int) -> SPAPlacement {
        SPAPlacement(line: 10 + UInt(number), column: 5)
    }
}

/// An argument whose hash value is the same for every value.
struct SPASameHash: Hashable, Sendable {
    let raw: Int
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

extension DependencyContainer {
    subscript(spaPlaced placement: SPAPlacement) -> Provider<SPAThing> {
        singleton(line: placement.line, column: placement.column) {
            SPAThing(tag: Int(placement.line) &+ Int(placement.column))
        }
    }

    subscript(spaSameHash argument: SPASameHash) -> Provider<SPAThing> {
        singleton(argument) { SPAThing(tag: argument.raw) }
    }
}

/// A simple deterministic generator, so a failing order can be replayed.
struct SPAGenerator {
    var state: UInt64
    mutating func next(below bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

@Suite struct SpeedPathTableAttackTests {
    /// A registration kind and number: the three families of keys the table files.
    enum Entry: Hashable {
        case highLine(Int)
        case nextLine(Int)
        case sameHash(Int)

        func resolve(in container: DependencyContainer) -> SPAThing {
            switch self {
            case .highLine(let number): return container[spaPlaced: .highLine(number)]()
            case .nextLine(let number): return container[spaPlaced: .nextLine(number)]()
            case .sameHash(let number): return container[spaSameHash: SPASameHash(raw: number)]()
            }
        }

        func reset(in container: DependencyContainer) {
            switch self {
            case .highLine(let number): container.reset(\.[spaPlaced: .highLine(number)])
            case .nextLine(let number): container.reset(\.[spaPlaced: .nextLine(number)])
            case .sameHash(let number): container.reset(\.[spaSameHash: SPASameHash(raw: number)])
            }
        }
    }

    /// Registrations on consecutive lines of one column fill a table to just below its
    /// growth, each at its own slot; then they are removed one at a time in a scrambled
    /// order. When the entry in the table's last slot goes while the first slot is taken,
    /// the removal looks past the end: an entry there sits at its home and must stay. Each
    /// column places the run elsewhere, so across columns and sizes that case comes up.
    @Test func removalsThatLookPastTheTablesEndKeepTheEntriesThere() {
        var generator = SPAGenerator(state: 0xC0FFEE)
        for capacity in [16, 64, 256] {
            for column in UInt(1)...(capacity == 256 ? 8 : 24) {
                let container = DependencyContainer()
                let placements = (0..<(capacity * 3 / 4 - 1)).map {
                    SPAPlacement(line: 100 + UInt($0), column: column)
                }
                var kept = Dictionary(uniqueKeysWithValues: placements.map { ($0, container[spaPlaced: $0]()) })
                var order = placements
                while !order.isEmpty {
                    let victim = order.remove(at: generator.next(below: order.count))
                    kept[victim] = nil
                    container.reset(\.[spaPlaced: victim])
                    for (placement, instance) in kept {
                        #expect(
                            container[spaPlaced: placement]() === instance,
                            "capacity \(capacity), column \(column): \(placement.line) lost after removing \(victim.line)")
                    }
                }
            }
        }
    }

    /// Keys that share a home slot (positions differing only in high bits, arguments with
    /// one hash), mixed with keys spread over the table, inserted up to just below each
    /// growth and removed one at a time in a scrambled order: the runs they form cover
    /// the table's end, so removals shift entries back across it. Every kept instance
    /// must still be found (not built again), and every removed one built anew.
    @Test func everyKeyStaysFoundWhileKeysThatShareASlotAreRemovedAndGrown() {
        let container = DependencyContainer()
        var kept: [Entry: SPAThing] = [:]
        var order: [Entry] = []
        var generator = SPAGenerator(state: 0x5A5A)
        var made = (high: 0, next: 0, same: 0)

        func checkEveryKept(_ moment: String) {
            for (entry, instance) in kept {
                let again = entry.resolve(in: container)
                #expect(again === instance, "\(entry) lost \(moment)")
            }
        }

        // Just below each growth (3/4 of 8, 16, ... 1024 slots).
        for capacity in [8, 16, 32, 64, 128, 256, 512, 1024] {
            while kept.count < capacity * 3 / 4 - 1 {
                let entry: Entry
                switch order.count % 3 {
                case 0: entry = .highLine(made.high); made.high += 1
                case 1: entry = .sameHash(made.same); made.same += 1
                default: entry = .nextLine(made.next); made.next += 1
                }
                kept[entry] = entry.resolve(in: container)
                order.append(entry)
            }
            checkEveryKept("after growing to \(capacity)")

            // Remove a quarter, one at a time, checking the rest each time in small tables
            // and every few removals in large ones.
            let removals = kept.count / 4
            var removed: [Entry] = []
            for step in 0..<removals {
                let victim = order.remove(at: generator.next(below: order.count))
                let old = kept.removeValue(forKey: victim)!
                victim.reset(in: container)
                removed.append(victim)
                if capacity <= 64 || step % 16 == 0 { checkEveryKept("after removing \(victim)") }
                let rebuilt = victim.resolve(in: container)
                #expect(rebuilt !== old, "\(victim) was not removed")
                victim.reset(in: container)
            }
            checkEveryKept("after removing \(removals) at \(capacity)")

            // Insert them again, into the holes the removals left.
            for victim in removed {
                kept[victim] = victim.resolve(in: container)
                order.append(victim)
            }
            checkEveryKept("after inserting again at \(capacity)")
        }
    }
}

/// An instance whose `deinit` reads and switches `main`: user code that runs when the
/// container keeping it goes.
final class SPAMainSwitcher: Sendable {
    deinit {
        let seen = DependencyContainer.main
        precondition(seen === DependencyContainer.default, "main is the container just set")
        DependencyContainer.main = .mocks
    }
}

extension DependencyContainer {
    var spaMainSwitcher: Provider<SPAMainSwitcher> { singleton { SPAMainSwitcher() } }
}

/// `main` changes process-wide state, so each test runs in a process of its own.
@Suite struct SpeedPathMainAttackTests {
    /// Replacing `main` releases the container it held; when that was the last reference,
    /// the container goes and its instances' `deinit`s run, which read and set `main`. That
    /// must happen after the switch is unlocked: under it, they would deadlock.
    @Test func theContainerThatMainReplacesIsReleasedAfterUnlocking() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("releasing the replaced main")
            DependencyContainer.main = DependencyContainer()
            _ = DependencyContainer.main.spaMainSwitcher()
            DependencyContainer.main = .default
            // The switcher's deinit ran, after the switch to `default`, and switched again.
            precondition(DependencyContainer.main === DependencyContainer.mocks)
        }
    }

    /// The first `withMain` of the process begins while other threads read and set `main`:
    /// the call sees its container at once, the readers see only process-wide containers,
    /// and a task created inside the call keeps its container. Under ThreadSanitizer, the
    /// flag and the container are read and written under the one lock.
    @Test func theFirstWithMainBeginsWhileThreadsReadAndSetMain() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("first withMain")
            let first = DependencyContainer()
            let second = DependencyContainer()
            DependencyContainer.main = first
            let tasks = Collected<Task<Bool, Never>>()
            let threadsEnded = await concurrentlyOffThePool(threads: 4) { index in
                let chosen = DependencyContainer()
                for round in 0..<300 {
                    switch index {
                    case 0:
                        DependencyContainer.main = round.isMultiple(of: 2) ? second : first
                    case 1:
                        let (inherited, detached) = DependencyContainer.withMain(chosen) {
                            precondition(DependencyContainer.main === chosen)
                            return (
                                Task { DependencyContainer.main === chosen },
                                Task.detached { DependencyContainer.main !== chosen }
                            )
                        }
                        precondition(DependencyContainer.main !== chosen)
                        tasks.append(inherited)
                        tasks.append(detached)
                    default:
                        let main = DependencyContainer.main
                        precondition(main === first || main === second)
                    }
                }
            }
            precondition(threadsEnded, "the threads did not end before the hang limit")
            for task in tasks.values {
                let sawTheRightContainer = await task.value
                precondition(sawTheRightContainer)
            }
        }
    }
}
