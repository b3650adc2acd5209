import Testing
@testable import DependencyInjection

/// A container's running constructions: one kept inline, more in an array, removed in any
/// order, and none left once each has ended.
@Suite struct RunningConstructionsTests {
    private let container = DependencyContainer()

    private func constructions(_ count: Int) -> [Resolution] {
        (0..<count).map {
            Resolution(
                claim: .build, in: container,
                key: RegistrationKey(file: #fileID, position: UInt64($0), type: ObjectIdentifier(Int.self)),
                name: "construction", scope: .singleton, owner: .current, enclosing: nil, servesScope: nil,
                override: nil, overriddenHere: false, isListed: true)
        }
    }

    private func ids(_ running: RunningConstructions) -> Set<ObjectIdentifier> {
        Set(running.map(ObjectIdentifier.init))
    }

    @Test func constructionsEndingInAnyOrderLeaveNoneRunning() {
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 3, 2], [2, 0, 3, 1]] {
            let all = constructions(4)
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

    @Test func removingAConstructionThatDoesNotRunChangesNothing() {
        let all = constructions(3)
        var running = RunningConstructions()
        running.append(all[0])
        running.append(all[1])
        running.remove(all[2])
        #expect(ids(running) == [ObjectIdentifier(all[0]), ObjectIdentifier(all[1])])
    }
}
