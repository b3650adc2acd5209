import Testing
@testable import DependencyInjection

/// A container's running constructions: two kept inline, more in an array, removed in any
/// order, found by key wherever they sit, and none left once each has ended.
@Suite struct RunningConstructionsTests {
    private let container = DependencyContainer()

    private func constructions(_ count: Int) -> [Resolution] {
        (0..<count).map {
            Resolution(
                in: container,
                key: RegistrationKey(file: #fileID, position: UInt64($0), type: ObjectIdentifier(Int.self)),
                name: "construction", scope: .singleton, owner: .current, enclosing: nil, servesScope: nil,
                override: nil, overriddenHere: false, isListed: true)
        }
    }

    private func ids(_ running: RunningConstructions) -> Set<ObjectIdentifier> {
        Set(running.map(ObjectIdentifier.init))
    }

    /// Every order of removal, for one to five constructions: the inline slots and the
    /// array hand constructions to each other as they end.
    private static let removalOrders: [[Int]] = (1...5).flatMap { permutations(of: Array(0..<$0)) }

    private static func permutations(of items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let item = rest.remove(at: index)
            return permutations(of: rest).map { [item] + $0 }
        }
    }

    @Test func constructionsEndingInAnyOrderLeaveNoneRunning() {
        for order in Self.removalOrders {
            let all = constructions(order.count)
            var running = RunningConstructions()
            #expect(running.isEmpty)
            for construction in all { running.append(construction) }
            #expect(ids(running) == Set(all.map(ObjectIdentifier.init)))
            var left = Set(all.map(ObjectIdentifier.init))
            for index in order {
                #expect(!running.isEmpty)
                running.remove(all[index])
                left.remove(ObjectIdentifier(all[index]))
                #expect(ids(running) == left, "after removing \(index) of \(order)")
            }
            #expect(running.isEmpty)
        }
    }

    @Test func eachRunningConstructionIsFoundByItsKeyUntilItEnds() {
        for order in Self.removalOrders {
            let all = constructions(order.count)
            var running = RunningConstructions()
            for construction in all { running.append(construction) }
            var ended: Set<Int> = []
            for index in order {
                for (other, construction) in all.enumerated() {
                    let found = running.construction(of: construction.key)
                    let expected = ended.contains(other) ? nil : construction
                    #expect(found === expected, "\(other) after \(ended) of \(order)")
                }
                running.remove(all[index])
                ended.insert(index)
            }
            let stillFound = all.filter { running.construction(of: $0.key) != nil }
            #expect(stillFound.isEmpty)
        }
    }

    @Test func aDroppedConstructionIsNoLongerFoundAndTheOthersAre() {
        for count in 1...5 {
            for dropped in 0..<count {
                let all = constructions(count)
                var running = RunningConstructions()
                for construction in all { running.append(construction) }
                running.drop(all[dropped].key)
                for (index, construction) in all.enumerated() {
                    #expect(construction.isDropped == (index == dropped), "\(index) of \(count), \(dropped) dropped")
                    let found = running.construction(of: construction.key)
                    let expected = index == dropped ? nil : construction
                    #expect(found === expected)
                }
                #expect(running.keys.count == count - 1)
            }
            let all = constructions(count)
            var running = RunningConstructions()
            for construction in all { running.append(construction) }
            running.dropAll()
            #expect(all.allSatisfy { $0.isDropped }, "dropAll of \(count)")
            #expect(running.keys.isEmpty)
        }
    }

    @Test func removingAConstructionThatDoesNotRunChangesNothing() {
        let all = constructions(3)
        var running = RunningConstructions()
        running.append(all[0])
        running.append(all[1])
        running.remove(all[2])
        #expect(ids(running) == [ObjectIdentifier(all[0]), ObjectIdentifier(all[1])])
    }
}
