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

    private func key(_ line: UInt, argument: Int?) -> RegistrationKey {
        RegistrationKey(
            file: #fileID, line: line, column: 1, type: Int.self, argument: argument.map { RegistrationKey.TypedArgument($0) })
    }

    /// A walk of the record of uses goes on from the registrations of the users it finds,
    /// once each when they are many: whatever order the keys of several registrations came
    /// and went in, the registrations listed are exactly those of the keys held. One
    /// missing is a transitive user that an override never reaches.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func theRegistrationsListedAreExactlyThoseOfTheKeysHeld(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var users = DependentKeys()
        var model = Set<RegistrationKey>()
        for step in 0..<3_000 {
            let key = key(UInt(1 + random.below(4)), argument: random.chance(20) ? nil : random.below(8))
            // Phases that fill the list and phases that empty it, across one key, a few
            // and many.
            let inserting = step / 300 % 2 == 0 ? 6 : 3
            switch random.below(10) {
            case 0..<inserting:
                users.insert(key)
                model.insert(key)
            case inserting..<9:
                users.remove(key)
                model.remove(key)
            default:
                // Two keys dropped at once: looked up in place among many, the rest
                // rebuilt from one or two.
                let dropped: Set = [self.key(UInt(1 + random.below(4)), argument: random.below(8)), key]
                var released = DependencyInjection.Released()
                let removed = users.remove(dropped, released: &released)
                #expect(Set(removed) == model.intersection(dropped) && removed.count == Set(removed).count)
                model.subtract(dropped)
            }
            var listed: [RegistrationKey] = []
            users.forEachRegistration { listed.append($0) }
            let expected = Set(model.map(\.registration))
            let right = Set(users) == model && Set(listed) == expected
                && (model.count <= 8 || listed.count == expected.count)
                && expected.allSatisfy { registration in
                    users.count(of: registration) == model.filter { $0.registration == registration }.count
                }
            #expect(right, "seed \(seed) step \(step): listed \(listed.count) registrations of \(model.count) keys")
            if !right { return }
        }
    }

    /// The users a question about what a construction resolved itself reaches: all but
    /// those set aside (recorded by time window only), whether there are few or many of
    /// either. A registration is listed while one of its users is not set aside.
    @Test(arguments: [(1, 0), (3, 1), (3, 3), (40, 1), (40, 39), (40, 40), (40, 12)])
    func theUsersReachedAreAllButThoseSetAside(count: Int, setAside: Int) {
        var all = DependentKeys()
        var windowOnly = DependentKeys()
        for id in 0..<count {
            all.insert(key(1, argument: id))
            if id < setAside { windowOnly.insert(key(1, argument: id)) }
        }
        // A second registration, used by one construction that only its time window saw.
        all.insert(key(2, argument: nil))
        windowOnly.insert(key(2, argument: nil))
        let reached = ReachedUsers(all: all, windowOnly: windowOnly)
        #expect(!reached.contains(key(2, argument: nil)))
        #expect((0..<count).allSatisfy { reached.contains(key(1, argument: $0)) == ($0 >= setAside) })
        #expect(!reached.contains(key(1, argument: count)))
        var listed = Set<RegistrationKey>()
        reached.forEachRegistration { listed.insert($0) }
        #expect(listed == (setAside < count ? [key(1, argument: nil)] : []))
        var everyListed = Set<RegistrationKey>()
        ReachedUsers(all: all, windowOnly: nil).forEachRegistration { everyListed.insert($0) }
        #expect(everyListed == [key(1, argument: nil), key(2, argument: nil)])
    }

    /// An override drops the keys built from what it replaced: fewer than the users,
    /// looked up in place; more, the users kept are rebuilt. Either way exactly the
    /// dropped keys go, and come back as they were kept, arguments and all.
    @Test(arguments: [(1, 1), (2, 1), (5, 1), (5, 3), (40, 1), (40, 39), (2, 5), (40, 60)])
    func removingSeveralDropsExactlyTheGivenKeys(count: Int, dropped: Int) {
        var users = DependentKeys((0..<count).map { key(1, argument: $0) })
        #expect(users.isDisjoint(with: [key(1, argument: count)]))
        #expect(!users.isDisjoint(with: [key(1, argument: 0), key(1, argument: count)]))
        // The dropped keys overlap the users' first ones, and go past them.
        let keys = Set((0..<dropped).map { key(1, argument: $0 * 2) })
        var released = DependencyInjection.Released()
        let removed = users.remove(keys, released: &released)
        let expected = Set((0..<count).map { key(1, argument: $0) }).intersection(keys)
        #expect(Set(removed) == expected && removed.count == expected.count)
        #expect(Set(users) == Set((0..<count).map { key(1, argument: $0) }).subtracting(keys))
        #expect(users.count == count - expected.count)
        #expect(users.count(of: key(1, argument: nil)) == users.count, "the count per registration follows")
        #expect(users.remove([], released: &released).isEmpty && users.count == count - expected.count)
    }
}
