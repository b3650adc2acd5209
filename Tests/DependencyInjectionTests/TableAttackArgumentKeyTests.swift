import DependencyInjection
import Foundation
import Testing

/// The argument of a singleton family: a class, so its release is observable, and its
/// `deinit` is user code that may use the container.
final class TableAttackToken: Hashable, Sendable {
    let id: Int
    let hook: DeinitHook
    init(_ id: Int, hook: DeinitHook = DeinitHook()) { (self.id, self.hook) = (id, hook) }
    static func == (lhs: TableAttackToken, rhs: TableAttackToken) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    deinit { hook.fire() }
}

/// What the family builds: it does not hold the token.
final class TableAttackMarker: Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
}

extension DependencyContainer {
    var tableAttackTokenUser: ProviderFamily<TableAttackToken, TableAttackMarker> {
        singleton { (token: TableAttackToken) in TableAttackMarker(token.id) }
    }
    var tableAttackTokenDepUser: ProviderFamily<TableAttackToken, TableAttackMarker> {
        singleton { (token: TableAttackToken) in
            _ = self.tableAttackDep()
            return TableAttackMarker(token.id)
        }
    }
    subscript(tableAttackTokenParam token: TableAttackToken) -> Provider<TableAttackMarker> {
        singleton(token) { TableAttackMarker(token.id) }
    }
    var tableAttackPlainA: Provider<TableAttackMarker> { singleton { TableAttackMarker(-1) } }
    var tableAttackPlainB: Provider<TableAttackMarker> { singleton { TableAttackMarker(-2) } }
    var tableAttackPlainC: Provider<TableAttackMarker> { singleton { TableAttackMarker(-3) } }
}

/// A key holds its argument: a table that kept the key of an entry it keeps in itself
/// (`firstKey`/`secondKey`) after the entry was removed, or moved to the storage, kept a
/// family argument alive past the instance built for it, and released it where it next
/// overwrote or cleared the key, under the container's lock. Neither may happen: a dropped
/// argument goes when the drop is done, and its `deinit` may resolve from the container.
@Suite struct TableAttackArgumentKeyTests {
    /// `filled`: how many plain singletons are built before the family's argument (0, 1),
    /// or after it (2 => the third insertion makes the storage).
    @Test(arguments: [
        ("family reset", 0), ("family reset", 1), ("family reset", 2),
        ("argument reset", 0), ("argument reset", 1), ("argument reset", 2),
    ])
    func aDroppedArgumentIsNotKeptAliveByTheTable(drop: String, filled: Int) {
        let container = DependencyContainer()
        weak var weakToken: TableAttackToken?
        do {
            let token = TableAttackToken(7)
            weakToken = token
            if filled == 1 { _ = container.tableAttackPlainA() }
            #expect(container.tableAttackTokenUser(token).id == 7)
            if filled == 2 {
                _ = container.tableAttackPlainA()
                _ = container.tableAttackPlainB()
            }
            if drop == "family reset" {
                container.reset(\.tableAttackTokenUser)
            } else {
                container.reset(\.tableAttackTokenUser[token])
            }
            #expect(container.instanceIfBuilt(\.tableAttackTokenUser[token]) == nil)
        }
        #expect(weakToken == nil, "the container still holds a dropped family argument (\(drop), \(filled))")
        withExtendedLifetime(container) {}
    }

    /// Whatever rewrites the table next (an insertion, a reset, a shutdown, the growth to
    /// a storage) runs under the container's lock: a dropped argument's deinit, which
    /// resolves from the container, must not run there.
    @Test(arguments: ["next singleton", "reset all", "shutdown", "grow then reset all"])
    func anArgumentsDeinitThatResolvesIsNotRunUnderTheLock(then: String) async throws {
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            let hook = DeinitHook()
            let resolvedInDeinit = Counter()
            hook.set {
                _ = container.instanceIfBuilt(\.tableAttackPlainC)
                resolvedInDeinit.increment()
            }
            do {
                let token = TableAttackToken(9, hook: hook)
                _ = container.tableAttackTokenUser(token)
                if then == "grow then reset all" {
                    _ = container.tableAttackPlainA()
                    _ = container.tableAttackPlainB()
                }
                container.reset(\.tableAttackTokenUser[token])
            }
            switch then {
            case "next singleton": _ = container.tableAttackPlainA()
            case "shutdown": container.shutdown()
            default: container.reset()
            }
            _ = container.tableAttackPlainB()
            withExtendedLifetime(container) {}
        }
        try #require(finished, "a family argument's deinit waited for its container's lock (\(then))")
    }

    /// The same through a parameterized singleton (`singleton(id) { }`), and through a
    /// drop by an override of what the family's instance used.
    @Test(arguments: ["parameterized reset", "override of a dependency"])
    func aDroppedArgumentOfOtherKindsIsNotKeptAliveByTheTable(drop: String) {
        let container = DependencyContainer()
        weak var weakToken: TableAttackToken?
        do {
            let token = TableAttackToken(8)
            weakToken = token
            if drop == "parameterized reset" {
                _ = container[tableAttackTokenParam: token]()
                container.reset(\.[tableAttackTokenParam: token])
            } else {
                _ = container.tableAttackTokenDepUser(token)
                container.override(\.tableAttackDep) { "stub" }
                #expect(container.instanceIfBuilt(\.tableAttackTokenDepUser[token]) == nil)
            }
        }
        #expect(weakToken == nil, "the container still holds a dropped argument (\(drop))")
        withExtendedLifetime(container) {}
    }
}
