import DependencyInjection
import Foundation
import Testing

// An attack on the record of uses (UsesRecord): up to eight registrations in an array, a
// dictionary from the ninth on. Each leaf below is a registration of its own (its own
// line), not a family member, so a container whose singletons use `n` leaves records `n`
// registrations, and the tests cross the move to the dictionary, and back below eight
// while the dictionary is in use, with overrides and resets in between.

final class RecordedLeaf: Sendable {
    let index: Int
    let token: Int
    init(index: Int, token: Int) { (self.index, self.token) = (index, token) }
}

final class RecordedUser: Sendable {
    let index: Int
    let leaves: [RecordedLeaf]
    init(index: Int, leaves: [RecordedLeaf]) { (self.index, self.leaves) = (index, leaves) }
}

final class RecordedItem: Sendable {
    let id: Int
    let leaf: RecordedLeaf
    init(id: Int, leaf: RecordedLeaf) { (self.id, self.leaf) = (id, leaf) }
}

/// Counts its instances alive, and resolves from its container when it goes.
final class RecordedDeinitResolver: @unchecked Sendable {
    // @unchecked: immutable after init.
    let container: DependencyContainer
    let leaf: RecordedLeaf
    let seen: Collected<Int>
    init(container: DependencyContainer, leaf: RecordedLeaf, seen: Collected<Int>) {
        (self.container, self.leaf, self.seen) = (container, leaf, seen)
    }
    deinit {
        // User code in a deinit resolves from the container that dropped it: it must not
        // run under that container's lock.
        seen.append(container[recordedLeaf: 0]().token)
        seen.append(container[recordedUser: 1]().leaves[0].token)
    }
}

extension DependencyContainer {
    /// Leaf `i`: a registration of its own, at line 100_000 + i.
    subscript(recordedLeaf i: Int) -> Provider<RecordedLeaf> {
        singleton(name: "recordedLeaf", line: UInt(100_000 + i)) { RecordedLeaf(index: i, token: 0) }
    }
    /// User `i`: built from leaf `i` alone.
    subscript(recordedUser i: Int) -> Provider<RecordedUser> {
        singleton(name: "recordedUser", line: UInt(200_000 + i)) { RecordedUser(index: i, leaves: [self[recordedLeaf: i]()]) }
    }
    /// Built from leaves 0..<n.
    subscript(recordedAll n: Int) -> Provider<RecordedUser> {
        singleton(name: "recordedAll", line: UInt(300_000 + n)) {
            RecordedUser(index: -n, leaves: (0..<n).map { self[recordedLeaf: $0]() })
        }
    }
    /// A family: item `id` is built from leaf `id % 10`.
    subscript(recordedItem id: Int) -> Provider<RecordedItem> {
        singleton(id) { RecordedItem(id: id, leaf: self[recordedLeaf: id % 10]()) }
    }
    /// Built from items 0..<100: a user of the whole item family.
    var recordedItemSummary: Provider<[RecordedItem]> { singleton { (0..<100).map { self[recordedItem: $0]() } } }
    /// Holds the container and resolves from it in its deinit; built from leaf 0.
    subscript(recordedDeinit seen: RecordedSeen) -> Provider<RecordedDeinitResolver> {
        singleton(name: "recordedDeinit", line: 400_000) {
            RecordedDeinitResolver(container: self, leaf: self[recordedLeaf: 0](), seen: seen.collected)
        }
    }
}

/// A family argument that resolves from its container when it goes: the record of uses
/// holds it in the keys of its users, and must let go of it only after unlocking.
final class RecordedArgument: Hashable, @unchecked Sendable {
    // @unchecked: immutable after init.
    let id: Int
    weak var container: DependencyContainer?
    let seen: Collected<Int>
    init(id: Int, container: DependencyContainer, seen: Collected<Int>) {
        (self.id, self.container, self.seen) = (id, container, seen)
    }
    deinit { if let container { seen.append(container[recordedLeaf: id]().token) } }
    static func == (lhs: RecordedArgument, rhs: RecordedArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DependencyContainer {
    /// Built from leaf `id` and leaf `id + 1`; weakly held.
    subscript(recordedArgumentUser argument: RecordedArgument) -> Provider<RecordedUser> {
        shared(argument) { RecordedUser(index: argument.id, leaves: [self[recordedLeaf: argument.id](), self[recordedLeaf: argument.id + 1]()]) }
    }
    subscript(recordedArgumentSingleton argument: RecordedArgument) -> Provider<RecordedUser> {
        singleton(argument) { RecordedUser(index: argument.id, leaves: [self[recordedLeaf: argument.id](), self[recordedLeaf: argument.id + 1]()]) }
    }
}

/// Blocks the first construction that passes it until told to go on.
final class RecordedGate: Hashable, @unchecked Sendable {
    // @unchecked: semaphores and a lock-guarded counter.
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    private let passes = Collected<Int>()
    func pass() {
        passes.append(1)
        guard passes.values.count == 1 else { return }
        entered.signal()
        proceed.wait()
    }
    static func == (lhs: RecordedGate, rhs: RecordedGate) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension DependencyContainer {
    /// Uses no leaf itself; its first construction waits at the gate.
    subscript(recordedGated gate: RecordedGate) -> Provider<RecordedUser> {
        singleton(name: "recordedGated", line: 410_000) {
            gate.pass()
            return RecordedUser(index: -99, leaves: [])
        }
    }
}

/// A key-path-friendly wrapper of a collector (compared by identity).
struct RecordedSeen: Hashable, Sendable {
    let collected: Collected<Int>
    static func == (lhs: RecordedSeen, rhs: RecordedSeen) -> Bool { lhs.collected === rhs.collected }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(collected)) }
}

/// A small deterministic generator, so that a failure can be replayed.
struct RecordedGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}

@Suite struct UsesRecordAttackTests {
    /// A model of one container (with a child that has no override of its own): which
    /// leaf tokens are installed, and for each user the instance last seen and whether a
    /// leaf it was built from changed since. Random overrides, resets and partial
    /// resolutions move the record across eight registrations both ways; every resolution
    /// checks that an unchanged user is the same instance and a changed one is rebuilt from
    /// the current leaves, in the container and in its child.
    @Test(arguments: [1, 7, 8, 9, 10, 50])
    func overridesAndResetsDropExactlyTheUsersOfWhatChanged(leaves n: Int) {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        var generator = RecordedGenerator(seed: UInt64(n))
        var tokens = [Int](repeating: 0, count: n)
        var nextToken = 1

        struct Seen {
            var instance: RecordedUser?
            var dirty = false
        }
        // Users 0..<n, and `all` at index n; per container.
        var seen: [[Seen]] = [Array(repeating: Seen(), count: n + 1), Array(repeating: Seen(), count: n + 1)]
        let containers = [parent, child]

        func resolve(_ which: Int, _ user: Int) {
            let container = containers[which]
            let instance = user == n ? container[recordedAll: n]() : container[recordedUser: user]()
            let expectedLeaves = user == n ? Array(0..<n) : [user]
            #expect(instance.leaves.map(\.index) == expectedLeaves)
            #expect(
                instance.leaves.map(\.token) == expectedLeaves.map { tokens[$0] },
                "stale: user \(user) in container \(which) built from old leaves, n = \(n)")
            for leaf in instance.leaves {
                #expect(leaf === container[recordedLeaf: leaf.index](), "user \(user) holds another leaf than the cached one")
            }
            if let previous = seen[which][user].instance {
                if seen[which][user].dirty {
                    #expect(previous !== instance, "user \(user) in container \(which) was not rebuilt, n = \(n)")
                } else {
                    #expect(previous === instance, "user \(user) in container \(which) was rebuilt needlessly, n = \(n)")
                }
            }
            seen[which][user] = Seen(instance: instance, dirty: false)
        }

        func changed(leaf: Int) {
            for which in 0..<2 {
                seen[which][leaf].dirty = true
                seen[which][n].dirty = true
            }
        }

        // Everything first, in both containers.
        for which in 0..<2 { for user in 0...n { resolve(which, user) } }
        for _ in 0..<(6 * n + 40) {
            switch generator.next(10) {
            case 0, 1, 2:
                let leaf = generator.next(n)
                let token = nextToken
                nextToken += 1
                parent.override(\.[recordedLeaf: leaf]) { RecordedLeaf(index: leaf, token: token) }
                tokens[leaf] = token
                changed(leaf: leaf)
            case 3:
                let leaf = generator.next(n)
                parent.reset(\.[recordedLeaf: leaf])
                tokens[leaf] = 0
                changed(leaf: leaf)
            case 4:
                // Only a few users: most registrations lose their users, and the record
                // shrinks while its dictionary is in use.
                for _ in 0..<2 { resolve(generator.next(2), generator.next(n)) }
            case 5:
                resolve(generator.next(2), n)
            default:
                let which = generator.next(2)
                let start = generator.next(n)
                for user in start..<min(n, start + 1 + generator.next(12)) { resolve(which, user) }
            }
        }
        for which in 0..<2 { for user in 0...n { resolve(which, user) } }
    }

    /// A user rebuilt from an override that uses another leaf must not inherit the record
    /// of its first construction: a later override of its first leaf keeps it, an override
    /// of its new leaf drops it. With the record in both forms.
    @Test(arguments: [1, 7, 8, 9, 10, 50])
    func aRebuiltUserDoesNotInheritTheUsesOfItsFirstConstruction(leaves n: Int) {
        let container = DependencyContainer()
        let all = container[recordedAll: n]()
        var users = (0..<n).map { container[recordedUser: $0]() }
        for index in 0..<n {
            let other = (index + 1) % n
            // Drops user `index` (and `all`); its new instance uses leaf `other` only.
            container.override(\.[recordedUser: index]) { RecordedUser(index: index, leaves: [container[recordedLeaf: other]()]) }
            users[index] = container[recordedUser: index]()
        }
        #expect(container[recordedAll: n]() === all, "overriding users drops nothing built from leaves")
        for index in 0..<n where n > 1 {
            let before = users
            container.override(\.[recordedLeaf: index]) { RecordedLeaf(index: index, token: 1) }
            // Only user `index - 1` uses leaf `index` now.
            let user = (index + n - 1) % n
            for check in 0..<n {
                let now = container[recordedUser: check]()
                if check == user {
                    #expect(now !== before[check], "user \(check) uses leaf \(index) and was kept")
                    #expect(now.leaves[0].token == 1)
                } else {
                    #expect(now === before[check], "user \(check) was dropped by leaf \(index), which its override does not use; n = \(n)")
                }
                users[check] = now
            }
        }
    }

    /// Thousands of arguments of one family, built from ten leaves: an override of one leaf
    /// drops exactly the items built from it, and their user the summary, and its reset
    /// drops them again; an override of one argument drops that item and the summary alone.
    @Test func aFamilyWithThousandsOfArgumentsLosesOnlyTheItemsBuiltFromWhatChanged() {
        let container = DependencyContainer()
        let count = 3_000
        var items = (0..<count).map { container[recordedItem: $0]() }
        var summary = container.recordedItemSummary()
        // More registrations used, so the record is a dictionary: ten leaves and the family.
        for (step, leaf) in [3, 7, 3, 0].enumerated() {
            if step == 2 {
                container.reset(\.[recordedLeaf: leaf])
            } else {
                container.override(\.[recordedLeaf: leaf]) { RecordedLeaf(index: leaf, token: 100 + step) }
            }
            let token = step == 2 ? 0 : 100 + step
            for id in 0..<count {
                let again = container[recordedItem: id]()
                if id % 10 == leaf {
                    #expect(again !== items[id], "item \(id) was built from leaf \(leaf) and kept")
                    #expect(again.leaf.token == token)
                } else {
                    #expect(again === items[id], "item \(id) was not built from leaf \(leaf) and was dropped")
                }
                items[id] = again
            }
            let newSummary = container.recordedItemSummary()
            #expect(newSummary.elementsEqual(items.prefix(100), by: ===), "the summary holds stale items")
            summary = newSummary
        }
        // One argument.
        container.override(\.[recordedItem: 42]) { RecordedItem(id: 42, leaf: RecordedLeaf(index: -1, token: -1)) }
        #expect(container[recordedItem: 42]().leaf.token == -1)
        for id in 0..<count where id != 42 { #expect(container[recordedItem: id]() === items[id]) }
        #expect(container.recordedItemSummary()[42].leaf.token == -1)
        #expect(container.recordedItemSummary()[41] === summary[41])
    }

    /// A scope overrides one leaf of many: the app-wide users of that leaf are the scope's
    /// own, every other one is shared with the app container; removing the override shares
    /// them all again. With 1, 8, 9 and 20 registrations used in the app container.
    @Test(arguments: [1, 8, 9, 20])
    func aScopeOverridingOneOfManyLeavesBuildsOnlyThatLeafsUsersItself(leaves n: Int) {
        let app = DependencyContainer()
        let app0 = (0..<n).map { app[recordedUser: $0]() }
        let all = app[recordedAll: n]()
        for overridden in Set([0, n / 2, n - 1]) {
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.[recordedLeaf: overridden]) { RecordedLeaf(index: overridden, token: -7) }
            for user in 0..<n {
                let inScope = scope[recordedUser: user]()
                if user == overridden {
                    #expect(inScope !== app0[user])
                    #expect(inScope.leaves[0].token == -7, "the scope's user \(user) holds the app's leaf")
                } else {
                    #expect(inScope === app0[user], "the scope built its own user \(user), n = \(n)")
                }
            }
            let scopeAll = scope[recordedAll: n]()
            #expect(scopeAll !== all)
            #expect(scopeAll.leaves[overridden].token == -7)
            // The app's own are untouched by the scope's override.
            for user in 0..<n { #expect(app[recordedUser: user]() === app0[user]) }
            #expect(app[recordedAll: n]() === all)
            // The scope's override goes: it shares the app's again.
            scope.reset(\.[recordedLeaf: overridden])
            #expect(scope[recordedUser: overridden]() === app0[overridden], "n = \(n)")
            #expect(scope[recordedAll: n]() === all, "n = \(n)")
        }
    }

    /// The app overrides a leaf while a scope holds instances of its own built from another
    /// overridden leaf: the scope drops what was built from the app's change, and keeps
    /// what it built from its own override.
    @Test(arguments: [2, 9, 20])
    func anAppChangeReachesTheScopesUsersOfThatLeafAndNoOthers(leaves n: Int) {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[recordedLeaf: 0]) { RecordedLeaf(index: 0, token: -1) }
        let own = scope[recordedUser: 0]()
        let shared = (1..<n).map { scope[recordedUser: $0]() }
        #expect(own.leaves[0].token == -1)
        for (offset, user) in shared.enumerated() { #expect(user === app[recordedUser: offset + 1]()) }
        app.override(\.[recordedLeaf: n - 1]) { RecordedLeaf(index: n - 1, token: 5) }
        #expect(scope[recordedUser: 0]() === own, "the scope's own user was dropped by an unrelated app change")
        #expect(scope[recordedUser: n - 1]().leaves[0].token == 5, "stale app-wide user in the scope")
        #expect(scope[recordedUser: n - 1]() === app[recordedUser: n - 1]())
        for index in 1..<(n - 1) { #expect(scope[recordedUser: index]() === shared[index - 1]) }
        app.override(\.[recordedLeaf: 0]) { RecordedLeaf(index: 0, token: 9) }
        #expect(scope[recordedUser: 0]().leaves[0].token == -1, "the scope's override must win")
        #expect(app[recordedUser: 0]().leaves[0].token == 9)
    }

    /// What an override drops is freed once the container lets go: no record keeps it.
    @Test(arguments: [1, 8, 9, 30])
    func droppedInstancesAreFreed(leaves n: Int) {
        let container = DependencyContainer()
        weak var weakUser: RecordedUser?
        weak var weakAll: RecordedUser?
        weak var weakLeaf: RecordedLeaf?
        weak var weakOther: RecordedUser?
        do {
            for index in 0..<n { _ = container[recordedUser: index]() }
            weakUser = container[recordedUser: 0]()
            weakAll = container[recordedAll: n]()
            weakLeaf = container[recordedLeaf: 0]()
            weakOther = container[recordedUser: n - 1]()
        }
        #expect(weakUser != nil && weakAll != nil && weakLeaf != nil)
        container.override(\.[recordedLeaf: 0]) { RecordedLeaf(index: 0, token: 1) }
        #expect(weakUser == nil, "a user of the overridden leaf is still alive")
        #expect(weakAll == nil, "the user of every leaf is still alive")
        #expect(weakLeaf == nil, "the overridden leaf is still alive")
        if n > 1 { #expect(weakOther != nil, "an unrelated user was dropped") }
        // Rebuilt, then reset: the override's instances go too.
        weak var rebuilt: RecordedUser?
        do { rebuilt = container[recordedUser: 0]() }
        #expect(rebuilt?.leaves[0].token == 1)
        container.reset()
        #expect(rebuilt == nil, "reset kept a user alive")
        #expect(weakOther == nil, "reset kept a user alive")
    }

    /// A dropped instance's deinit resolves from the container that dropped it, with the
    /// record a dictionary: it runs after the container lets go of its lock, and sees the
    /// new leaf.
    @Test(arguments: [1, 9, 20])
    func aDroppedInstancesDeinitResolvesFromItsContainer(leaves n: Int) {
        let container = DependencyContainer()
        let seen = Collected<Int>()
        for index in 0..<n { _ = container[recordedUser: index]() }
        _ = container[recordedAll: n]()
        _ = container[recordedDeinit: RecordedSeen(collected: seen)]()
        container.override(\.[recordedLeaf: 0]) { RecordedLeaf(index: 0, token: 3) }
        #expect(seen.values == [3, 0], "the deinit saw the new leaf 0 and leaf 1: \(seen.values)")
        #expect(container[recordedDeinit: RecordedSeen(collected: seen)]().leaf.token == 3)
        container.reset()
        #expect(seen.values == [3, 0, 0, 0], "after reset the deinit sees the registrations: \(seen.values)")
    }

    /// Family members whose arguments resolve from the container in their deinit, with the
    /// record in both forms: an override drops them, and each argument goes after the
    /// container unlocks (a deinit under the lock would deadlock or stop), and goes at all.
    @Test(arguments: [2, 9, 20])
    func argumentsHeldByTheRecordAreReleasedAfterUnlockingAndFreed(leaves n: Int) {
        let container = DependencyContainer()
        let seen = Collected<Int>()
        for index in 0..<(n - 1) { _ = container[recordedUser: index]() }
        weak var sharedArgument: RecordedArgument?
        weak var singletonArgument: RecordedArgument?
        do {
            let first = RecordedArgument(id: 0, container: container, seen: seen)
            let second = RecordedArgument(id: 0, container: container, seen: seen)
            (sharedArgument, singletonArgument) = (first, second)
            // The shared instance dies at once: only the record of uses names it then.
            _ = container[recordedArgumentUser: first]()
            _ = container[recordedArgumentSingleton: second]()
        }
        #expect(singletonArgument != nil, "the singleton's key holds its argument")
        container.override(\.[recordedLeaf: 1]) { RecordedLeaf(index: 1, token: 4) }
        #expect(singletonArgument == nil, "an argument of a dropped singleton is still alive")
        container.override(\.[recordedLeaf: 0]) { RecordedLeaf(index: 0, token: 5) }
        container.reset()
        #expect(sharedArgument == nil, "an argument of a dead shared instance is still alive")
        #expect(seen.values.count == 2 && seen.values.allSatisfy { [0, 5].contains($0) }, "\(seen.values)")
    }

    /// Leaves resolved on another thread while a singleton is being built are filed as its
    /// uses by time window only (the record's second form, `windowOnlyUses`): an override of
    /// any of them drops the singleton, and its rebuilt instance, built with no overlap,
    /// is then kept by overrides of the same leaves. With 1, 8, 9 and 20 such leaves.
    @Test(arguments: [1, 8, 9, 20])
    func usesByTimeWindowDropTheInstanceBuiltMeanwhileAndOnlyOnce(leaves n: Int) async {
        let container = DependencyContainer()
        let gate = RecordedGate()
        let others = (0..<n).map { container[recordedUser: $0]() }
        let built = Collected<RecordedUser>()
        let finished = await finishesWithoutHangingOffThePool {
            let thread = Thread {
                built.append(container[recordedGated: gate]())
                gate.done.signal()
            }
            thread.start()
            gate.entered.wait()
            for index in 0..<n { _ = container[recordedLeaf: index]() }
            gate.proceed.signal()
            gate.done.wait()
        }
        #expect(finished)
        guard let first = built.values.first else { return }
        #expect(container[recordedGated: gate]() === first)
        container.override(\.[recordedLeaf: n - 1]) { RecordedLeaf(index: n - 1, token: 1) }
        let second = container[recordedGated: gate]()
        #expect(second !== first, "a use by time window did not drop the instance built meanwhile; n = \(n)")
        for index in 0..<n {
            container.override(\.[recordedLeaf: index]) { RecordedLeaf(index: index, token: 2) }
            #expect(container[recordedGated: gate]() === second, "the rebuilt instance used no leaf, and was dropped; n = \(n)")
            if index < n - 1 { #expect(container[recordedUser: index]() !== others[index]) }
        }
    }

    /// Many threads build users and the all-leaves user while others override and reset
    /// leaves, released together. When they are done, every cached user holds the leaves
    /// the container holds now: no override was lost by the record, whatever its form.
    @Test(arguments: [8, 9, 24])
    func concurrentBuildsAndOverridesLeaveNoStaleUser(leaves n: Int) async {
        let app = DependencyContainer()
        let child = DependencyContainer(parent: app)
        let scope = DependencyContainer(scopeOf: app)
        let containers = [app, child, scope]
        for round in 0..<6 {
            let finished = await concurrentlyOffThePool(threads: 8) { thread in
                var generator = RecordedGenerator(seed: UInt64(round * 8 + thread + 1))
                for step in 0..<150 {
                    let container = containers[generator.next(3)]
                    switch thread % 4 {
                    case 0 where step % 3 == 0:
                        let leaf = generator.next(n)
                        let token = round * 10_000 + thread * 1_000 + step
                        if container === scope && generator.next(2) == 0 {
                            scope.override(\.[recordedLeaf: leaf]) { RecordedLeaf(index: leaf, token: token) }
                        } else {
                            app.override(\.[recordedLeaf: leaf]) { RecordedLeaf(index: leaf, token: token) }
                        }
                    case 1 where step % 5 == 0:
                        let leaf = generator.next(n)
                        (generator.next(2) == 0 ? app : scope).reset(\.[recordedLeaf: leaf])
                    default:
                        if generator.next(4) == 0 {
                            _ = container[recordedAll: n]()
                        } else {
                            _ = container[recordedUser: generator.next(n)]()
                        }
                    }
                }
            }
            #expect(finished)
            expectNoStaleUser(in: app, named: "app", leaves: n, round: round)
            expectNoStaleUser(in: child, named: "child", leaves: n, round: round)
            // A scope judges what its construction of an app-wide instance used by time window
            // (CHANGELOG, Known issues): another thread's resolution, during the construction,
            // of a leaf the scope overrides can keep its copy after that override is reset.
            // Once, under ThreadSanitizer in CI, an all-leaves user was found stale, in a
            // container the message did not name then; this is the known way to get one.
            withKnownIssue("a scope's uses judged by time window", isIntermittent: true) {
                expectNoStaleUser(in: scope, named: "scope", leaves: n, round: round)
            }
        }
    }

    /// Every cached user in `container` holds the leaves it holds now.
    private func expectNoStaleUser(in container: DependencyContainer, named name: String, leaves n: Int, round: Int) {
        for user in 0..<n {
            let instance = container[recordedUser: user]()
            #expect(
                instance.leaves[0] === container[recordedLeaf: user](),
                "round \(round), \(name): user \(user) holds a stale leaf (token \(instance.leaves[0].token), now \(container[recordedLeaf: user]().token))")
        }
        let all = container[recordedAll: n]()
        for leaf in 0..<n {
            #expect(all.leaves[leaf] === container[recordedLeaf: leaf](), "round \(round), \(name): the all-user is stale at \(leaf)")
        }
    }
}
