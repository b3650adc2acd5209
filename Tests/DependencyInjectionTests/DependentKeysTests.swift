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

    /// A use filed by time window only, then made by the construction itself, leaves the
    /// window-only list: removing a key keeps every other, inline or in the set.
    @Test(arguments: [1, 2, 3, 5])
    func removingAKeyKeepsEveryOther(count: Int) {
        var users = DependentKeys((1...count).map { key(UInt($0)) })
        users.remove(key(99))
        #expect(users.count == count, "removing an absent key changed the list")
        users.remove(key(1))
        #expect(Set(users) == Set((1...count).dropFirst().map { key(UInt($0)) }))
        #expect(users.count == count - 1 && !users.contains(key(1)))
        #expect(Array(users).count == count - 1, "a key was listed twice")
        users.insert(key(1))
        #expect(users.count == count && users.contains(key(1)))
    }

    @Test(arguments: [1, 2, 5])
    func subtractingAnotherListDropsExactlyItsKeys(count: Int) {
        let users = DependentKeys((1...count).map { key(UInt($0)) })
        let windowOnly = DependentKeys([key(1), key(99)])
        let own = users.subtracting(windowOnly)
        #expect(Set(own) == Set((1...count).dropFirst().map { key(UInt($0)) }))
        #expect(own.isEmpty == (count == 1))
        #expect(users.subtracting(DependentKeys()).count == count)
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
