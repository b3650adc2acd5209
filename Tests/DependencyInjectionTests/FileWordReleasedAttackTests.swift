import Foundation
import Testing
@testable import DependencyInjection

/// Counts releases, under a lock of its own: the bag's lock is not free while a change runs.
private final class FKTally: @unchecked Sendable {
    private let lock = NSLock()
    private var released: [Int] = []
    func note(_ index: Int) { lock.withLock { released.append(index) } }
    var values: [Int] { lock.withLock { released } }
}

/// Takes the bag's lock in its `deinit` (a deadlock if released under it), and notes itself.
private final class FKLockTaker: @unchecked Sendable {
    let lock: _Locked<Int>
    let tally: FKTally
    let index: Int
    init(_ lock: _Locked<Int>, _ tally: FKTally, _ index: Int) { (self.lock, self.tally, self.index) = (lock, tally, index) }
    deinit {
        lock.withLock { $0 += 1 }
        tally.note(index)
    }
}

/// Its `deinit` makes a change under the same lock that takes out another lock taker.
private final class FKNestedChanger: @unchecked Sendable {
    let lock: _Locked<Int>
    let tally: FKTally
    init(_ lock: _Locked<Int>, _ tally: FKTally) { (self.lock, self.tally) = (lock, tally) }
    deinit {
        let (lock, tally) = (lock, tally)
        lock.withLock(releasingAfter: { count, released in
            count += 1
            released.append(FKLockTaker(lock, tally, 1_000))
            released.keep([FKLockTaker(lock, tally, 1_001)])
        })
        tally.note(-1)
    }
}

/// The bag with values first and objects after, objects first and values after, and both
/// by turns, at every count around its slots: each thing released once, none while the
/// lock is held.
@Suite struct FileWordReleasedAttackTests {
    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7, 12], [0, 1, 2, 3, 4, 5, 6, 9])
    func valuesThenObjectsAreEachReleasedOnceAfterUnlocking(values: Int, objects: Int) async throws {
        for order in ["values first", "objects first", "turns"] {
            let lock = _Locked(0)
            let tally = FKTally()
            let finished = await finishesWithoutHangingOffThePool {
                lock.withLock(releasingAfter: { _, released in
                    var things: [(isValue: Bool, index: Int)] = (0..<values).map { (true, $0) }
                        + (0..<objects).map { (false, values + $0) }
                    if order == "objects first" { things.reverse() }
                    if order == "turns" { things.sort { ($0.index % 2, $0.index) < ($1.index % 2, $1.index) } }
                    for thing in things {
                        let taker = FKLockTaker(lock, tally, thing.index)
                        if thing.isValue { released.append([taker] as [FKLockTaker]) } else { released.append(taker) }
                    }
                    released.keep(nil as FKLockTaker?)
                    released.keep(nil as [FKLockTaker]?)
                    #expect(released.count == values + objects)
                    #expect(tally.values.isEmpty, "released before the lock was free")
                })
            }
            try #require(finished, "a thing was released under the lock (\(order))")
            #expect(tally.values.sorted() == Array(0..<(values + objects)), "\(order)")
            #expect(lock.withLock { $0 } == values + objects)
        }
    }

    @Test(arguments: [0, 4, 5, 7])
    func aDeinitThatChangesTheSameLockReleasesItsOwnBagAfterItToo(objectsBefore: Int) async throws {
        let lock = _Locked(0)
        let tally = FKTally()
        let finished = await finishesWithoutHangingOffThePool {
            lock.withLock(releasingAfter: { _, released in
                for index in 0..<objectsBefore { released.append(FKLockTaker(lock, tally, index)) }
                released.keep(FKNestedChanger(lock, tally) as FKNestedChanger?)
            })
        }
        try #require(finished, "the nested change deadlocked")
        #expect(tally.values.sorted() == [-1] + Array(0..<objectsBefore) + [1_000, 1_001])
        #expect(lock.withLock { $0 } == objectsBefore + 3)
    }

    /// A bag is a struct: a copy taken inside the change shares its object of values, so
    /// what either copy holds lives until both are gone, and is released once.
    @Test func aCopyOfABagReleasesEachValueOnce() async throws {
        let lock = _Locked(0)
        let tally = FKTally()
        let finished = await finishesWithoutHangingOffThePool {
            lock.withLock(releasingAfter: { _, released in
                released.keep([FKLockTaker(lock, tally, 0)])
                var copy = released
                copy.keep([FKLockTaker(lock, tally, 1)])
                released.keep([FKLockTaker(lock, tally, 2)])
                #expect(tally.values.isEmpty)
                _ = copy.count
            })
        }
        try #require(finished)
        #expect(tally.values.sorted() == [0, 1, 2])
    }
}

/// An instance whose `deinit` uses the container that built it, and counts itself.
final class FKContainerUser: @unchecked Sendable {
    let container: DependencyContainer
    let deinits: Counter
    init(_ container: DependencyContainer, _ deinits: Counter) { (self.container, self.deinits) = (container, deinits) }
    deinit {
        _ = container.getValue(forKey: "fk") as Int?
        deinits.increment()
    }
}

extension DependencyContainer {
    var fkUsers: ProviderFamily<Int, FKContainerUser> {
        singleton { (_: Int) in FKContainerUser(self, self.getValue(forKey: "fkDeinits") ?? Counter()) }
    }
    var fkUser: Provider<FKContainerUser> {
        singleton { FKContainerUser(self, self.getValue(forKey: "fkDeinits") ?? Counter()) }
    }
}

/// Changes through a container that take out many instances and overrides (the bag's
/// object of values and its array) release each once, outside every lock.
@Suite struct FileWordReleasedContainerAttackTests {
    @Test(arguments: [1, 2, 3, 9])
    func resettingAFamilyWithManyArgumentOverridesReleasesEachInstanceOnce(count: Int) async throws {
        let container = DependencyContainer()
        let deinits = Counter()
        container.setValue(deinits, forKey: "fkDeinits")
        for argument in 0..<count {
            container.override(\.fkUsers[argument]) { FKContainerUser(container, deinits) }
            _ = container.fkUsers(argument)
            _ = container.fkUsers(argument + 100)
        }
        let finished = await finishesWithoutHangingOffThePool { container.reset(\.fkUsers) }
        try #require(finished, "an instance was released under a lock")
        #expect(deinits.count == 2 * count)
        let again = await finishesWithoutHangingOffThePool { container.reset() }
        try #require(again)
        #expect(deinits.count == 2 * count)
    }

    @Test func removeAllResetAndOverrideReleaseWhatTheyReplaceOnce() async throws {
        let container = DependencyContainer()
        let deinits = Counter()
        container.setValue(deinits, forKey: "fkDeinits")
        for index in 0..<6 { container.setValue(FKContainerUser(container, deinits), forKey: "v\(index)") }
        _ = container.fkUser()
        let replaced = await finishesWithoutHangingOffThePool {
            container.override(\.fkUser) { FKContainerUser(container, deinits) }
        }
        try #require(replaced)
        #expect(deinits.count == 1)
        _ = container.fkUser()
        let removed = await finishesWithoutHangingOffThePool { container.removeAll() }
        try #require(removed)
        #expect(deinits.count == 7, "removeAll released \(deinits.count - 1) of 6 values")
        let reset = await finishesWithoutHangingOffThePool { container.reset() }
        try #require(reset)
        #expect(deinits.count == 8)
    }
}
