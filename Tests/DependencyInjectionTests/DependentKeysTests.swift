import Testing
@testable import DependencyInjection

/// A container's record of uses keeps, for each registration, the keys of what was built
/// from it: one inline, a set from the second on. An override drops exactly those keys,
/// so none may be lost, doubled or kept after it is subtracted.
@Suite struct DependentKeysTests {
    private func key(_ line: UInt) -> RegistrationKey {
        RegistrationKey(file: #fileID, line: line, column: 1, type: Int.self, argument: nil)
    }

    @Test func keysInsertedOneByOneAreEachKeptOnce() {
        var users = DependentKeys()
        #expect(users.isEmpty)
        for line in [1, 2, 2, 3, 1] as [UInt] { users.insert(key(line)) }
        #expect(users.count == 3)
        #expect(Set(users) == [key(1), key(2), key(3)])
        #expect(Array(users).count == 3, "a key was listed twice")
        #expect(users.contains(key(1)) && users.contains(key(3)) && !users.contains(key(4)))
    }

    @Test func oneKeyInsertedTwiceStaysOne() {
        var users = DependentKeys()
        users.insert(key(7))
        users.insert(key(7))
        #expect(users.count == 1)
        #expect(Array(users) == [key(7)])
    }

    @Test(arguments: [1, 2, 5])
    func subtractingDropsExactlyTheGivenKeys(count: Int) {
        let users = DependentKeys((1...count).map { key(UInt($0)) })
        #expect(users.isDisjoint(with: [key(99)]))
        #expect(!users.isDisjoint(with: [key(1)]))
        let remaining = users.subtracting([key(1), key(99)])
        #expect(Set(remaining) == Set((1...count).dropFirst().map { key(UInt($0)) }))
        #expect(remaining.count == count - 1)
        #expect(remaining.isEmpty == (count == 1))
        #expect(users.subtracting([]).count == count)
    }
}
