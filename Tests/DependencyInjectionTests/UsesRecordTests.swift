import Testing
@testable import DependencyInjection

/// A container's record of uses keeps, for each registration, the keys built from it: the
/// first two registrations in the record itself, every one in a dictionary from the third
/// on. An override drops exactly the users the record names, so no use may be lost in the
/// move, found under another registration, or kept after it is forgotten.
@Suite struct UsesRecordTests {
    private func key(_ line: UInt) -> RegistrationKey {
        RegistrationKey(file: #fileID, line: line, column: 1, type: Int.self, argument: nil)
    }

    /// A record of `registrations` registrations, registration `u` (lines 1…) used by the
    /// keys on lines `1000 + u` and `2000 + u`.
    private func record(of registrations: Int) -> UsesRecord {
        var record = UsesRecord()
        for used in 1...UInt(registrations) {
            record.insert(key(1000 + used), using: key(used))
            record.insert(key(2000 + used), using: key(used))
            record.insert(key(1000 + used), using: key(used))  // a use recorded twice is one
        }
        return record
    }

    @Test(arguments: [1, 2, 3, 8, 9, 20])
    func everyUseIsFoundUnderItsOwnRegistration(registrations: Int) {
        let record = record(of: registrations)
        #expect(record.count == registrations)
        for used in 1...UInt(registrations) {
            #expect(record[key(used)].map(Set.init) == [key(1000 + used), key(2000 + used)])
        }
        #expect(record[key(999)] == nil)
        #expect(record.allUsers.count == registrations)
        #expect(Set(record.allUsers.flatMap { $0 }).count == 2 * registrations)
    }

    @Test(arguments: [1, 2, 3, 8, 9, 20])
    func removingARegistrationHandsOverItsUsersAndKeepsTheOthers(registrations: Int) {
        var record = record(of: registrations)
        let removed = record.removeValue(forKey: key(1))
        #expect(removed.map(Set.init) == [key(1001), key(2001)])
        #expect(record.removeValue(forKey: key(1)) == nil, "removed twice")
        #expect(record[key(1)] == nil)
        #expect(record.count == registrations - 1)
        #expect(record.isEmpty == (registrations == 1))
        for used in 2...UInt(max(2, registrations)) where used <= registrations {
            #expect(record[key(used)].map(Set.init) == [key(1000 + used), key(2000 + used)])
        }
    }

    /// A use first filed by time window only, then made by the construction itself, leaves
    /// the window-only record; its last user takes the registration out.
    @Test(arguments: [1, 2, 3, 9])
    func removingOneUserKeepsTheRestOfTheRegistration(registrations: Int) {
        var record = record(of: registrations)
        record.remove(key(1001), using: key(1))
        #expect(record[key(1)].map(Array.init) == [key(2001)])
        record.remove(key(1001), using: key(1))  // no longer there: nothing changes
        record.remove(key(2001), using: key(2))  // not a user of registration 2
        #expect(record[key(1)].map(Array.init) == [key(2001)])
        record.remove(key(2001), using: key(1))
        #expect(record[key(1)] == nil)
        #expect(record.count == registrations - 1)
    }

    /// What an override dropped is forgotten everywhere it was filed, and a registration
    /// left with no user goes; the lists that changed are handed over to be released after
    /// unlocking.
    @Test(arguments: [1, 2, 3, 8, 9, 20])
    func forgettingDroppedKeysTakesThemOutOfEveryList(registrations: Int) {
        var record = record(of: registrations)
        record.insert(key(1001), using: key(2))  // 1001 used registration 2 as well
        var released = DependencyInjection.Released()
        record.forget([key(1001), key(2001)], released: &released)
        #expect(record[key(1)] == nil, "registration 1 has no user left")
        if registrations >= 2 {
            #expect(record[key(2)].map(Set.init) == [key(1002), key(2002)])
        }
        #expect(record.count == registrations - 1)
        #expect(!record.allUsers.contains { $0.contains(key(1001)) || $0.contains(key(2001)) })
        #expect(released.count == 0, "keys without an argument hold nothing to release")
    }

    /// The arguments of the keys an override dropped are handed over to be released after
    /// unlocking, each once, however many users the list keeps: a list of thousands
    /// changes in place.
    @Test(arguments: [1, 3, 2_000])
    func forgettingDroppedArgumentsHandsThemOver(users: Int) {
        func member(_ id: Int) -> RegistrationKey {
            RegistrationKey(file: #fileID, line: 5, column: 1, type: Int.self, argument: RegistrationKey.TypedArgument(id))
        }
        var record = UsesRecord()
        for id in 0..<users { record.insert(member(id), using: key(1)) }
        var released = DependencyInjection.Released()
        record.forget([member(0), member(users)], released: &released)
        #expect(released.count == 1, "the one dropped member's argument")
        #expect(record[key(1)].map { Set($0) } == (users == 1 ? nil : Set((1..<users).map(member))))
        var familyReleased = DependencyInjection.Released()
        record.replace(byTheirFamilies: [member(1)], released: &familyReleased)
        if users > 2 {
            #expect(record[key(1)].map { Set($0) } == Set((2..<users).map(member)).union([member(1).goneInstances]))
        }
    }

    @Test func anEmptyRecordHoldsNothing() {
        var record = UsesRecord()
        #expect(record.isEmpty && record.count == 0 && record.allUsers.isEmpty)
        #expect(record.removeValue(forKey: key(1)) == nil)
        var released = DependencyInjection.Released()
        record.forget([key(1)], released: &released)
        record.keepReferences(in: &released)
        #expect(released.count == 0)
    }

    /// Every transition of the record against a dictionary of sets: the first and the
    /// second slot filled, emptied and refilled in either order, the move to the dictionary
    /// at the third registration, and a long pseudo-random walk of insertions, removals of
    /// one user, removals of a registration and forgetting, over four registrations and
    /// three users. A registration is in the record, and ``UsesRecord/contains(_:)`` says
    /// so, exactly while it has a user.
    @Test func aRecordAgreesWithADictionaryThroughEveryTransition() {
        let used = (1...4).map { key(UInt($0)) }
        let users = (1...3).map { key(UInt(1000 + $0)) }
        var record = UsesRecord()
        var model: [RegistrationKey: Set<RegistrationKey>] = [:]
        var problems: [String] = []
        func check(_ step: String) {
            if record.isEmpty != model.isEmpty || record.count != model.count {
                problems.append("\(step): count \(record.count) for \(model.count)")
            }
            for registration in used where record[registration].map(Set.init) != model[registration] {
                problems.append("\(step): users of line \(registration.line)")
            }
            for registration in used where record.contains(registration) != (model[registration] != nil) {
                problems.append("\(step): whether line \(registration.line) was used")
            }
            if record.allUsers.count != model.count || Set(record.allUsers.map(Set.init)) != Set(model.values) {
                problems.append("\(step): all users")
            }
        }
        func insert(_ user: Int, _ registration: Int) {
            record.insert(users[user], using: used[registration])
            model[used[registration], default: []].insert(users[user])
            check("insert \(user) into \(registration)")
        }
        func remove(_ user: Int, _ registration: Int) {
            record.remove(users[user], using: used[registration])
            model[used[registration]]?.remove(users[user])
            if model[used[registration]]?.isEmpty == true { model[used[registration]] = nil }
            check("remove \(user) from \(registration)")
        }
        func removeValue(_ registration: Int) {
            if record.removeValue(forKey: used[registration]).map(Set.init) != model.removeValue(forKey: used[registration]) {
                problems.append("removeValue \(registration): removed")
            }
            check("removeValue \(registration)")
        }
        func forget(_ user: Int) {
            var released = DependencyInjection.Released()
            record.forget([users[user]], released: &released)
            for registration in model.keys {
                model[registration]?.remove(users[user])
                if model[registration]?.isEmpty == true { model[registration] = nil }
            }
            check("forget \(user)")
        }
        check("empty")
        insert(0, 0); insert(1, 1); removeValue(0); insert(2, 0); removeValue(0); removeValue(1)
        insert(0, 1); insert(0, 0); remove(0, 1); insert(1, 2); insert(2, 3); remove(1, 2); forget(2)
        forget(0); insert(0, 0); insert(0, 1); insert(0, 2); removeValue(1); forget(0)
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<4_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let (user, registration) = (Int((seed >> 20) % 3), Int((seed >> 30) % 4))
            switch (seed >> 40) % 8 {
            case 0, 1, 2, 3: insert(user, registration)
            case 4, 5: remove(user, registration)
            case 6: removeValue(registration)
            default: forget(user)
            }
        }
        let firstProblems = Array(problems.prefix(5))
        #expect(firstProblems.isEmpty, "\(problems.count) problems in all")
    }
}
