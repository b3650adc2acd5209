import DependencyInjection
import Foundation
import Testing

// An override of one argument of a provider family reaches what was built from that
// argument, and only that: an account built from its own limit stays when another
// account's limit is overridden or reset. The record of uses files a family's arguments
// together, and dropped every account built from any limit.

final class AUAccount: Sendable {
    let id: Int
    let limit: Int
    init(id: Int, limit: Int) { (self.id, self.limit) = (id, limit) }
}

/// Built from one account.
final class AUStatement: Sendable {
    let account: AUAccount
    init(account: AUAccount) { self.account = account }
}

/// Built from two limits.
final class AUTransfer: Sendable {
    let limits: [Int]
    init(limits: [Int]) { self.limits = limits }
}

extension DependencyContainer {
    subscript(auLimit id: Int) -> Provider<Int> { singleton(id) { 100 } }
    subscript(auAccount id: Int) -> Provider<AUAccount> {
        singleton(id) { AUAccount(id: id, limit: self[auLimit: id]()) }
    }
    subscript(auStatement id: Int) -> Provider<AUStatement> {
        singleton(id) { AUStatement(account: self[auAccount: id]()) }
    }
    var auTransfer: Provider<AUTransfer> { singleton { AUTransfer(limits: [self[auLimit: 1](), self[auLimit: 2]()]) } }
    /// A family of limits declared as one property, overridable for every argument at once.
    var auDailyLimit: ProviderFamily<Int, Int> { singleton { _ in 500 } }
    subscript(auDailyAccount id: Int) -> Provider<AUAccount> {
        singleton(id) { AUAccount(id: id, limit: self.auDailyLimit[id]()) }
    }
    /// An account whose construction waits at the gate the container stores, after
    /// resolving its own limit.
    var auGatedAccount: Provider<AUAccount> {
        singleton {
            let limit = self[auLimit: 1]()
            (self.getValue(forKey: "au.gate") as ConstructionGate?)?.enterAndWait()
            return AUAccount(id: 1, limit: limit)
        }
    }
}

@Suite struct ArgumentUsesTests {
    @Test func anOverrideOfOneArgumentLeavesWhatWasBuiltFromAnother() {
        let container = DependencyContainer()
        let first = container[auAccount: 1]()
        let second = container[auAccount: 2]()
        container.override(\.[auLimit: 2]) { 7 }
        #expect(container[auAccount: 1]() === first)
        let rebuilt = container[auAccount: 2]()
        #expect(rebuilt !== second)
        #expect(rebuilt.limit == 7)
        container.override(\.[auLimit: 1]) { 3 }
        #expect(container[auAccount: 1]() !== first)
        #expect(container[auAccount: 1]().limit == 3)
        #expect(container[auAccount: 2]() === rebuilt)
    }

    @Test func aResetOfOneArgumentLeavesWhatWasBuiltFromAnother() {
        let container = DependencyContainer()
        container.override(\.[auLimit: 2]) { 7 }
        let first = container[auAccount: 1]()
        let second = container[auAccount: 2]()
        container.reset(\.[auLimit: 2])
        #expect(container[auAccount: 1]() === first)
        #expect(container[auAccount: 2]() !== second)
        #expect(container[auAccount: 2]().limit == 100)
    }

    /// What was built from an account goes with it, and stays with it.
    @Test func whatWasBuiltFromTheUsersFollowsThem() {
        let container = DependencyContainer()
        let first = container[auStatement: 1]()
        let second = container[auStatement: 2]()
        container.override(\.[auLimit: 2]) { 7 }
        #expect(container[auStatement: 1]() === first)
        #expect(container[auStatement: 2]() !== second)
        #expect(container[auStatement: 2]().account.limit == 7)
        container.override(\.[auLimit: 1]) { 3 }
        #expect(container[auStatement: 1]() !== first)
        #expect(container[auStatement: 1]().account.limit == 3)
    }

    /// A construction that resolved two arguments goes with a change of either: the
    /// first it resolved as well as the last.
    @Test func aUserOfTwoArgumentsGoesWithEither() {
        let container = DependencyContainer()
        let transfer = container.auTransfer()
        container.override(\.[auLimit: 1]) { 5 }
        let rebuilt = container.auTransfer()
        #expect(rebuilt !== transfer)
        #expect(rebuilt.limits == [5, 100])
        container.override(\.[auLimit: 2]) { 7 }
        #expect(container.auTransfer() !== rebuilt)
        #expect(container.auTransfer().limits == [5, 7])
    }

    /// A family declared as one property: one argument's override leaves the others'
    /// accounts, an override of the whole family reaches every one.
    @Test func aFamilysWholeOverrideStillReachesEveryArgument() {
        let container = DependencyContainer()
        let first = container[auDailyAccount: 1]()
        _ = container[auDailyAccount: 2]()
        container.override(\.auDailyLimit[2]) { 7 }
        #expect(container[auDailyAccount: 1]() === first)
        #expect(container[auDailyAccount: 2]().limit == 7)
        container.override(\.auDailyLimit) { id in id * 1_000 }
        #expect(container[auDailyAccount: 1]() !== first)
        #expect(container[auDailyAccount: 1]().limit == 1_000)
        #expect(container[auDailyAccount: 2]().limit == 7, "the argument's own override stays")
        #expect(container[auDailyAccount: 3]().limit == 3_000)
    }

    /// A test's world, a child of the app's mocks, overrides one argument: the world builds
    /// from it, and the parent keeps what it built from the others.
    @Test func aChildsOverrideOfOneArgumentLeavesTheParentsOthers() {
        let parent = DependencyContainer()
        let first = parent[auAccount: 1]()
        let world = DependencyContainer(parent: parent)
        world.override(\.[auLimit: 1]) { 3 }
        #expect(world[auAccount: 1]().limit == 3)
        parent.override(\.[auLimit: 2]) { 7 }
        #expect(parent[auAccount: 1]() === first)
        #expect(parent[auAccount: 2]().limit == 7)
    }

    /// A use seen only by time window (an argument resolved on another thread while the
    /// account was being built) may have been the account's: a change of that argument
    /// drops the account, as it did.
    @Test func aUseSeenByTimeWindowStillDrops() {
        let container = DependencyContainer()
        let gate = ConstructionGate()
        container.setValue(gate, forKey: "au.gate")
        let built = DispatchSemaphore(value: 0)
        let account = Collected<AUAccount>()
        Thread {
            account.append(container.auGatedAccount())
            built.signal()
        }.start()
        gate.entered.wait()
        _ = container[auLimit: 2]()
        gate.open()
        built.wait()
        container.removeValue(forKey: "au.gate")
        #expect(container.auGatedAccount() === account.values.first)
        container.override(\.[auLimit: 2]) { 7 }
        #expect(container.auGatedAccount() !== account.values.first)
    }
}
