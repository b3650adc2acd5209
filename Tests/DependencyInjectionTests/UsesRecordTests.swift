import Testing
@testable import DependencyInjection

/// A container's record of uses keeps, for each registration, the keys built from it: the
/// first eight registrations in an array, every one in a dictionary from the ninth on. An
/// override drops exactly the users the record names, so no use may be lost in the move,
/// found under another registration, or kept after it is forgotten.
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

    @Test(arguments: [1, 2, 8, 9, 20])
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

    @Test(arguments: [1, 8, 9, 20])
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
    @Test(arguments: [1, 9])
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
    @Test(arguments: [1, 8, 9, 20])
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
        #expect(released.count == min(registrations, 2), "each changed list of several keys is handed over once")
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
}
