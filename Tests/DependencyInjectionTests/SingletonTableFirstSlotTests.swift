import Testing
@testable import DependencyInjection

/// A value whose release is counted, boxed the way a container boxes a singleton.
private final class CountedValue: Sendable {
    let number: Int
    let releases: Counter
    init(_ number: Int, _ releases: Counter) { (self.number, self.releases) = (number, releases) }
    deinit { releases.increment() }
}

/// The key of registration `number`, as if declared on line `number + 1` of this file.
private func key(_ number: Int) -> RegistrationKey {
    RegistrationKey(file: #fileID, line: UInt(number + 1), column: 5, type: CountedValue.self, argument: nil)
}

/// An argument whose release is counted.
private final class ReleaseCountedArgument: Hashable, Sendable {
    let releases: Counter
    init(_ releases: Counter) { self.releases = releases }
    static func == (lhs: ReleaseCountedArgument, rhs: ReleaseCountedArgument) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    deinit { releases.increment() }
}

/// The number of the value kept for `key`, if any.
private func number(in table: _SingletonTable, for key: RegistrationKey) -> Int? {
    table.value(for: key, as: CountedValue.self)?.number
}

/// A table keeps its first two singletons in itself and makes its storage for the third,
/// moving them there: every entry must stay found, replaced, removed and released exactly
/// as in the storage, across each of those moves.
@Suite struct SingletonTableFirstSlotTests {
    @Test func theFirstEntryStaysFoundAsTheTableGrowsPastIt() {
        let releases = Counter()
        var table = _SingletonTable()
        #expect(table.isEmpty)
        #expect(table.insert(Box(CountedValue(0, releases)), for: key(0)) == nil)
        #expect(!table.isEmpty)
        #expect(number(in: table, for: key(0)) == 0)
        #expect(number(in: table, for: key(1)) == nil)
        #expect(table.cachedKeys == [key(0)])
        var outgrown: [AnyObject] = []
        for index in 1..<40 {
            if let old = table.insert(Box(CountedValue(index, releases)), for: key(index)) { outgrown.append(old) }
        }
        for index in 0..<40 { #expect(number(in: table, for: key(index)) == index) }
        #expect(number(in: table, for: key(40)) == nil)
        #expect(Set(table.cachedKeys) == Set((0..<40).map(key)) && table.cachedKeys.count == 40)
        outgrown = []
        #expect(releases.count == 0, "a storage outgrown released a box it had handed on")
        table = _SingletonTable()
        #expect(releases.count == 40)
    }

    @Test func replacingTheFirstEntryHandsBackTheBoxItReplaced() throws {
        let releases = Counter()
        var table = _SingletonTable()
        let first: AnyObject = Box(CountedValue(1, releases))
        _ = table.insert(first, for: key(0))
        let replaced = try #require(table.insert(Box(CountedValue(2, releases)), for: key(0)).map(ObjectIdentifier.init))
        #expect(replaced == ObjectIdentifier(first))
        #expect(number(in: table, for: key(0)) == 2)
        #expect(table.cachedKeys == [key(0)])
        // Once the storage exists, the same key is replaced there.
        let outgrown = table.insert(Box(CountedValue(3, releases)), for: key(1))
        #expect(outgrown == nil, "a table without storage has none to hand back")
        let second = try #require(table.box(for: key(0)).map(ObjectIdentifier.init))
        let replacedInStorage = try #require(
            table.insert(Box(CountedValue(4, releases)), for: key(0)).map(ObjectIdentifier.init))
        #expect(replacedInStorage == second)
        #expect(number(in: table, for: key(0)) == 4 && number(in: table, for: key(1)) == 3)
    }

    @Test func removingTheFirstEntryEmptiesTheTableForTheNext() {
        let releases = Counter()
        var table = _SingletonTable()
        _ = table.insert(Box(CountedValue(7, releases)), for: key(0))
        var bag = DependencyInjection.Released()
        table.remove(key(1), into: &bag)
        #expect(bag.count == 0)
        table.remove(key(0), into: &bag)
        #expect(bag.count == 1, "the removed box, for release after unlocking")
        #expect(table.isEmpty && table.cachedKeys.isEmpty)
        #expect(number(in: table, for: key(0)) == nil)
        table.remove(key(0), into: &bag)
        #expect(bag.count == 1)
        #expect(releases.count == 0, "the removed value went before the bag did")
        bag = DependencyInjection.Released()
        #expect(releases.count == 1)
        _ = table.insert(Box(CountedValue(8, releases)), for: key(1))
        #expect(number(in: table, for: key(1)) == 8 && number(in: table, for: key(0)) == nil)
        _ = table.insert(Box(CountedValue(9, releases)), for: key(2))
        table.remove(key(1), into: &bag)
        #expect(bag.count == 1)
        #expect(number(in: table, for: key(2)) == 9 && number(in: table, for: key(1)) == nil)
        #expect(table.cachedKeys == [key(2)])
    }

    @Test func theSecondEntryIsReplacedAndMovedLikeTheFirst() throws {
        let releases = Counter()
        var table = _SingletonTable()
        _ = table.insert(Box(CountedValue(0, releases)), for: key(0))
        let second: AnyObject = Box(CountedValue(1, releases))
        _ = table.insert(second, for: key(1))
        let replaced = try #require(table.insert(Box(CountedValue(11, releases)), for: key(1)).map(ObjectIdentifier.init))
        #expect(replaced == ObjectIdentifier(second))
        #expect(number(in: table, for: key(0)) == 0 && number(in: table, for: key(1)) == 11)
        // The first slot freed while the second is taken: the next key fills it, and the
        // one after makes the storage with all three.
        var bag = DependencyInjection.Released()
        table.remove(key(0), into: &bag)
        bag = DependencyInjection.Released()
        #expect(number(in: table, for: key(0)) == nil && number(in: table, for: key(1)) == 11)
        _ = table.insert(Box(CountedValue(2, releases)), for: key(2))
        #expect(Set(table.cachedKeys) == [key(1), key(2)])
        _ = table.insert(Box(CountedValue(3, releases)), for: key(3))
        #expect(number(in: table, for: key(1)) == 11 && number(in: table, for: key(2)) == 2)
        #expect(number(in: table, for: key(3)) == 3 && number(in: table, for: key(0)) == nil)
        #expect(table.cachedKeys.count == 3)
        #expect(releases.count == 1, "the removed value only: the test still holds the replaced one")
    }

    /// A removed entry's key gives its argument to the bag with the box, and the table keeps
    /// no copy of the key, kept in itself or moved to the storage: the argument goes when
    /// the bag does.
    @Test(arguments: [false, true])
    func aRemovedEntrysArgumentGoesWithTheBag(afterGrowth: Bool) {
        let releases = Counter()
        var table = _SingletonTable()
        var withArgument: RegistrationKey? = RegistrationKey(
            file: #fileID, line: 90, column: 1, type: CountedValue.self,
            argument: RegistrationKey.TypedArgument(ReleaseCountedArgument(releases)))
        _ = table.insert(Box(CountedValue(0, releases)), for: withArgument!)
        if afterGrowth {
            _ = table.insert(Box(CountedValue(1, releases)), for: key(1))
            _ = table.insert(Box(CountedValue(2, releases)), for: key(2))
        }
        var bag = DependencyInjection.Released()
        table.remove(withArgument!, into: &bag)
        withArgument = nil
        #expect(releases.count == 0, "the value or its argument went before the bag")
        bag = DependencyInjection.Released()
        #expect(releases.count == 2, "the table kept a copy of the removed key's argument")
    }

    @Test(arguments: [0, 1, 2, 12])
    func removeAllHandsEveryBoxToTheBagAndNothingElse(count: Int) {
        let releases = Counter()
        var table = _SingletonTable()
        for index in 0..<count { _ = table.insert(Box(CountedValue(index, releases)), for: key(index)) }
        var released = DependencyInjection.Released()
        table.removeAll(into: &released)
        #expect(table.isEmpty && table.cachedKeys.isEmpty)
        for index in 0..<count { #expect(number(in: table, for: key(index)) == nil) }
        #expect(releases.count == 0, "a box was released under the lock, before the bag went")
        released = DependencyInjection.Released()
        #expect(releases.count == count)
    }
}

final class FirstSlotReleaseProbe: Sendable {
    let container: DependencyContainer
    let resolvedInDeinit: Counter
    init(_ container: DependencyContainer, _ resolvedInDeinit: Counter) {
        (self.container, self.resolvedInDeinit) = (container, resolvedInDeinit)
    }
    deinit {
        // Takes the container's lock: it must be free when the container lets this go.
        _ = container.firstSlotOther()
        resolvedInDeinit.increment()
    }
}

extension DependencyContainer {
    var firstSlotProbe: Provider<FirstSlotReleaseProbe> {
        singleton { FirstSlotReleaseProbe(self, self.getValue(forKey: "firstSlot.deinits")!) }
    }
    var firstSlotOther: Provider<String> { factory { "other" } }
}

/// A container's only singleton lives in its table itself: dropping it, by a reset of
/// one key, of everything, or a shutdown, releases it after unlocking, like any other.
@Suite struct FirstSlotReleaseTests {
    @Test(arguments: ["reset one", "reset all", "shutdown", "override"])
    func theOnlySingletonIsReleasedAfterUnlocking(drop: String) async throws {
        let deinits = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue(deinits, forKey: "firstSlot.deinits")
            _ = container.firstSlotProbe()
            switch drop {
            case "reset one": container.reset(\.firstSlotProbe)
            case "reset all": container.reset()
            case "shutdown": container.shutdown()
            default: container.override(\.firstSlotOther) { "stub" }
            }
            // The probe's own reference to the container keeps the probe's release from
            // being the container's: it must have gone with the drop, or stayed kept.
            if drop == "override" {
                #expect(deinits.count == 0, "an override of something else dropped the singleton")
                container.reset(\.firstSlotProbe)
            }
        }
        try #require(finished, "a singleton's deinit waited for its container's lock")
        #expect(deinits.count == 1)
    }
}
