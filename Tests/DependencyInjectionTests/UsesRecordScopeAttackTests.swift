import DependencyInjection
import Foundation
import Testing

// Attacks on the record of uses in two inline slots (UsesRecord, first/second, a
// dictionary from the third registration) and on a scope's question whether the app
// built an instance from what it overrides, which now walks the record only when one of
// the overridden keys was used at all (ContainerState.built / wasUsed).

final class RVPart: Sendable {
    let name: String
    let token: Int
    let parts: [RVPart]
    init(_ name: String, token: Int = 0, parts: [RVPart] = []) { (self.name, self.token, self.parts) = (name, token, parts) }
    /// The leaf at the bottom of the first parts.
    var bottom: RVPart { parts.first?.bottom ?? self }
}

extension DependencyContainer {
    /// Leaf `i`: a registration of its own.
    subscript(rvLeaf i: Int) -> Provider<RVPart> {
        singleton(name: "rvLeaf", line: UInt(500_000 + i)) { RVPart("leaf \(i)") }
    }
    /// User `i`: built from leaf `i` alone.
    subscript(rvUser i: Int) -> Provider<RVPart> {
        singleton(name: "rvUser", line: UInt(510_000 + i)) { RVPart("user \(i)", parts: [self[rvLeaf: i]()]) }
    }
    /// Depth 0 is built from leaf 0; depth d from depth d - 1.
    subscript(rvChain d: Int) -> Provider<RVPart> {
        singleton(name: "rvChain", line: UInt(520_000 + d)) {
            RVPart("chain \(d)", parts: [d == 0 ? self[rvLeaf: 0]() : self[rvChain: d - 1]()])
        }
    }
    var rvFactoryMid: Provider<RVPart> { factory { RVPart("factory mid", parts: [self[rvLeaf: 0]()]) } }
    var rvOverFactory: Provider<RVPart> { singleton { RVPart("over factory", parts: [self.rvFactoryMid()]) } }
    var rvSharedMid: Provider<RVPart> { shared { RVPart("shared mid", parts: [self[rvLeaf: 0]()]) } }
    var rvOverShared: Provider<RVPart> { singleton { RVPart("over shared", parts: [self.rvSharedMid()]) } }
    var rvScopedMid: Provider<RVPart> { scoped { RVPart("scoped mid", parts: [self[rvLeaf: 0]()]) } }

    /// A family that uses nothing.
    var rvLedger: ProviderFamily<Int, RVPart> { singleton { (n: Int) in RVPart("ledger \(n)", token: n) } }
    /// A family whose members are built from leaf 0.
    var rvLeafLedger: ProviderFamily<Int, RVPart> {
        singleton { (n: Int) in RVPart("leaf ledger \(n)", token: n, parts: [self[rvLeaf: 0]()]) }
    }
    /// Built from argument 1 of `rvLedger`.
    var rvStatement: Provider<RVPart> { singleton { RVPart("statement", parts: [self.rvLedger(1)]) } }
    /// Built from argument 7 of `rvLeafLedger`, so from leaf 0 two levels down.
    var rvLeafStatement: Provider<RVPart> { singleton { RVPart("leaf statement", parts: [self.rvLeafLedger(7)]) } }
    /// Built from every argument 0..<3000 of `rvLeafLedger`.
    var rvLeafSummary: Provider<RVPart> { singleton { RVPart("summary", parts: (0..<3_000).map { self.rvLeafLedger($0) }) } }

    /// Uses no leaf itself; its first construction waits at the gate.
    subscript(rvGated gate: RecordedGate) -> Provider<RVPart> {
        singleton(name: "rvGated", line: 530_000) {
            gate.pass()
            return RVPart("gated")
        }
    }
}

/// A family argument that resolves from its container when it goes.
final class RVArgument: Hashable, @unchecked Sendable {
    // @unchecked: immutable after init.
    let id: Int
    weak var container: DependencyContainer?
    let seen: Collected<Int>
    init(id: Int, container: DependencyContainer, seen: Collected<Int>) { (self.id, self.container, self.seen) = (id, container, seen) }
    deinit { if let container { seen.append(container[rvLeaf: 0]().token) } }
    static func == (lhs: RVArgument, rhs: RVArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DependencyContainer {
    /// Built from leaf `argument.id % 3`.
    subscript(rvArgumentUser argument: RVArgument) -> Provider<RVPart> {
        singleton(argument) { RVPart("argument user \(argument.id)", parts: [self[rvLeaf: argument.id % 3]()]) }
    }
}

/// Makes an app container's record hold `extra` registrations besides what a test adds:
/// users 100..<100+extra, each built from a leaf of its own. 0 keeps the record empty, 1
/// fills the first slot, 2 both, more the dictionary.
private func primed(_ app: DependencyContainer, extra: Int) {
    for index in 0..<extra { _ = app[rvUser: 100 + index]() }
}

@Suite struct UsesRecordScopeAttackTests {
    // MARK: Registration against argument keys

    /// The app built a statement from argument 1 of a family that uses nothing. A scope
    /// overriding argument 1, the whole family, or another argument (files the same
    /// registration) builds its own statement, with its own ledger where it overrides it.
    @Test(arguments: [0, 1, 2, 5])
    func aScopeOverridingAFamilyArgumentGetsItsOwnStatement(extra: Int) {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let appStatement = app.rvStatement()
        let one = DependencyContainer(scopeOf: app)
        one.override(\.rvLedger[1]) { RVPart("scope ledger 1", token: -1) }
        #expect(one.rvStatement().parts[0].token == -1, "extra \(extra): the scope's statement holds the app's ledger 1")
        #expect(one.rvStatement() !== appStatement)
        let all = DependencyContainer(scopeOf: app)
        all.override(\.rvLedger) { n in RVPart("scope ledger", token: -n) }
        #expect(all.rvStatement().parts[0].token == -1, "extra \(extra)")
        let other = DependencyContainer(scopeOf: app)
        other.override(\.rvLedger[2]) { RVPart("scope ledger 2", token: -2) }
        #expect(other.rvStatement().parts[0] === app.rvLedger(1), "extra \(extra): the scope's own statement from the app's ledger 1")
        #expect(other.rvLedger(2).token == -2)
        #expect(app.rvStatement() === appStatement, "a scope's override changed the app's statement")
        // A scope that overrides nothing the app used shares.
        let unrelated = DependencyContainer(scopeOf: app)
        unrelated.override(\.[rvLeaf: 99]) { RVPart("scope leaf 99", token: -99) }
        #expect(unrelated.rvStatement() === appStatement, "extra \(extra)")
    }

    /// A statement built from a family argument built from leaf 0: a scope that overrides
    /// the leaf builds its own statement and member; one that overrides argument 7 builds
    /// the statement and that member itself and shares argument 8, which the app built
    /// from the leaf; one that overrides argument 8 shares nothing built from the family.
    @Test(arguments: [0, 1, 2, 5])
    func aScopeOverridingALeafUnderAFamilyMemberGetsItsOwnStatement(extra: Int) {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let appStatement = app.rvLeafStatement()
        let app8 = app.rvLeafLedger(8)
        let leafScope = DependencyContainer(scopeOf: app)
        leafScope.override(\.[rvLeaf: 0]) { RVPart("scope leaf 0", token: -10) }
        #expect(leafScope.rvLeafStatement().bottom.token == -10, "extra \(extra): statement from the app's leaf")
        #expect(leafScope.rvLeafLedger(7).parts[0].token == -10)
        #expect(leafScope.rvLeafLedger(8).parts[0].token == -10)
        #expect(leafScope.rvLeafLedger(8) !== app8)
        let memberScope = DependencyContainer(scopeOf: app)
        memberScope.override(\.rvLeafLedger[7]) { RVPart("scope member 7", token: -7) }
        #expect(memberScope.rvLeafStatement().parts[0].token == -7, "extra \(extra)")
        #expect(memberScope.rvLeafLedger(8) === app8, "extra \(extra): member 8 uses only the leaf, which the scope does not override")
        #expect(app.rvLeafStatement() === appStatement)
        #expect(app.rvLeafLedger(7).token == 7)
    }

    // MARK: Chains

    /// An app singleton built from leaf 0 through a chain `depth` deep: a scope that
    /// overrides the leaf builds every level itself; one that overrides another leaf shares
    /// every level. Asked app first and scope first.
    @Test(arguments: [3, 10, 40], [0, 1, 2, 5])
    func aChainDeepOverALeafTheScopeOverrides(depth: Int, extra: Int) {
        for appFirst in [true, false] {
            let app = DependencyContainer()
            primed(app, extra: extra)
            let appTop = appFirst ? app[rvChain: depth]() : nil
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -1) }
            let top = scope[rvChain: depth]()
            #expect(top.bottom.token == -1, "depth \(depth), extra \(extra), app first \(appFirst): scope's chain from the app's leaf")
            for level in 0...depth {
                #expect(scope[rvChain: level]() !== app[rvChain: level](), "depth \(depth), level \(level) shared")
            }
            #expect(app[rvChain: depth]().bottom.token == 0)
            if let appTop { #expect(app[rvChain: depth]() === appTop) }
            let other = DependencyContainer(scopeOf: app)
            other.override(\.[rvLeaf: 1]) { RVPart("other leaf", token: -2) }
            for level in 0...depth {
                #expect(other[rvChain: level]() === app[rvChain: level](), "depth \(depth), level \(level) not shared")
            }
        }
    }

    /// The middle of a chain is a factory, a shared instance or a scoped one: an app
    /// singleton over it, built from leaf 0, is the scope's own when the scope overrides
    /// the leaf.
    @Test(arguments: [0, 1, 2, 5])
    func aSingletonOverAFactoryOrSharedMiddle(extra: Int) {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let overFactory = app.rvOverFactory()
        let overShared = app.rvOverShared()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -3) }
        #expect(scope.rvOverFactory().bottom.token == -3, "extra \(extra): over a factory")
        #expect(scope.rvOverShared().bottom.token == -3, "extra \(extra): over a shared instance")
        #expect(scope.rvScopedMid().bottom.token == -3)
        #expect(app.rvOverFactory() === overFactory && app.rvOverShared() === overShared)
        let other = DependencyContainer(scopeOf: app)
        other.override(\.[rvLeaf: 1]) { RVPart("other leaf", token: -4) }
        #expect(other.rvOverFactory() === overFactory)
        #expect(other.rvOverShared() === overShared)
    }

    // MARK: Slots moving to the dictionary and back

    /// Random app changes move the app's record between its slots and its dictionary (and
    /// to empty and back) while scopes, each overriding a set of leaves, ask for users. A
    /// scope's user of a leaf it overrides holds its leaf and is not the app's; every other
    /// user is the app's instance, built from the app's current leaf.
    @Test(arguments: [2, 3, 4, 6])
    func scopesAskWhileTheAppsRecordMovesBetweenSlotsAndDictionary(leaves n: Int) {
        let app = DependencyContainer()
        var generator = RecordedGenerator(seed: UInt64(n) * 31)
        let overridden: [Set<Int>] = [[], [0], [n - 1], [0, n / 2], Set(0..<n)]
        let scopes = overridden.enumerated().map { index, leaves in
            let scope = DependencyContainer(scopeOf: app)
            for leaf in leaves { scope.override(\.[rvLeaf: leaf]) { RVPart("scope \(index) leaf \(leaf)", token: -(index * 100 + leaf) - 1) } }
            return scope
        }
        var tokens = [Int](repeating: 0, count: n)
        var nextToken = 1
        var problems: [String] = []
        for step in 0..<3_000 {
            switch generator.next(8) {
            case 0:
                let leaf = generator.next(n)
                let token = nextToken
                nextToken += 1
                app.override(\.[rvLeaf: leaf]) { RVPart("app leaf \(leaf)", token: token) }
                tokens[leaf] = token
            case 1:
                let leaf = generator.next(n)
                app.reset(\.[rvLeaf: leaf])
                tokens[leaf] = 0
            case 2:
                // Takes the user's use out of the record without touching the leaf.
                app.reset(\.[rvUser: generator.next(n)])
            case 3:
                let user = generator.next(n)
                let part = app[rvUser: user]()
                if part.parts[0].token != tokens[user] { problems.append("step \(step): app user \(user) stale") }
            default:
                let which = generator.next(scopes.count)
                let user = generator.next(n)
                let part = scopes[which][rvUser: user]()
                if overridden[which].contains(user) {
                    if part.parts[0].token != -(which * 100 + user) - 1 {
                        problems.append("step \(step): scope \(which) user \(user) holds token \(part.parts[0].token)")
                    }
                    if part === app[rvUser: user]() { problems.append("step \(step): scope \(which) shares user \(user)") }
                } else {
                    if part.parts[0].token != tokens[user] {
                        problems.append("step \(step): scope \(which) user \(user) stale (\(part.parts[0].token) for \(tokens[user]))")
                    }
                    if part !== app[rvUser: user]() { problems.append("step \(step): scope \(which) built its own user \(user)") }
                }
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems, first: \(problems.prefix(5))")
    }

    /// The only use of a leaf goes (the app's user is overridden with a closure that uses
    /// nothing, then reset): the scope shares the app's user while the record has no use of
    /// the leaf, and builds its own again once the app's user uses the leaf again. With
    /// the record in each form.
    @Test(arguments: [0, 1, 2, 5])
    func removingTheOnlyUseThenTheScopeAsksAgain(extra: Int) {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -1) }
        _ = app[rvUser: 0]()
        #expect(scope[rvUser: 0]().parts[0].token == -1)
        app.override(\.[rvUser: 0]) { RVPart("app user uses nothing") }
        let plain = app[rvUser: 0]()
        #expect(scope[rvUser: 0]() === plain, "extra \(extra): nothing overridden by the scope was used")
        app.reset(\.[rvUser: 0])
        #expect(scope[rvUser: 0]().parts[0].token == -1, "extra \(extra): the app's user uses the leaf again")
        #expect(app[rvUser: 0]().parts[0].token == 0)
        // The app drops the leaf itself (an override): the record of its uses goes with it.
        app.override(\.[rvLeaf: 0]) { RVPart("app leaf", token: 5) }
        #expect(scope[rvUser: 0]().parts[0].token == -1, "extra \(extra)")
        #expect(app[rvUser: 0]().parts[0].token == 5)
        app.reset()
        #expect(scope[rvUser: 0]().parts[0].token == -1, "extra \(extra): after an app reset")
        scope.reset(\.[rvLeaf: 0])
        #expect(scope[rvUser: 0]() === app[rvUser: 0](), "extra \(extra): the scope overrides nothing now")
    }

    /// A scope first shares the app's user, then overrides its leaf: its change reads the
    /// app's record (keysBuilt, now behind the same check) and must stop sharing; its reset
    /// shares again. With the record in each form, and a family member built from the leaf.
    @Test(arguments: [0, 1, 2, 5])
    func aScopesOwnChangeAfterSharing(extra: Int) {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let scope = DependencyContainer(scopeOf: app)
        let shared = scope[rvUser: 0]()
        let sharedMember = scope.rvLeafLedger(3)
        let sharedChain = scope[rvChain: 4]()
        #expect(shared === app[rvUser: 0]() && sharedMember === app.rvLeafLedger(3))
        scope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -1) }
        #expect(scope[rvUser: 0]().parts[0].token == -1, "extra \(extra): still the app's user")
        #expect(scope.rvLeafLedger(3).parts[0].token == -1, "extra \(extra): still the app's member")
        #expect(scope[rvChain: 4]().bottom.token == -1, "extra \(extra): still the app's chain")
        scope.reset(\.[rvLeaf: 0])
        #expect(scope[rvUser: 0]() === shared)
        #expect(scope.rvLeafLedger(3) === sharedMember)
        #expect(scope[rvChain: 4]() === sharedChain)
    }

    // MARK: Window-only uses

    /// The app builds a singleton on one thread while another resolves leaf 0 there: a use
    /// by time window only. An app override of the leaf drops the singleton; a scope that
    /// overrides the leaf shares it (ownOnly), and builds its own user of the leaf, which
    /// the app built itself from the leaf. With the record in each form.
    @Test(arguments: [0, 1, 2, 5])
    func windowOnlyUsesAndTheScopesQuestion(extra: Int) async {
        let app = DependencyContainer()
        primed(app, extra: extra)
        let gate = RecordedGate()
        let built = Collected<RVPart>()
        let finished = await finishesWithoutHangingOffThePool {
            let thread = Thread {
                built.append(app[rvGated: gate]())
                gate.done.signal()
            }
            thread.start()
            gate.entered.wait()
            _ = app[rvUser: 0]()  // leaf 0 resolved while the gated singleton is built
            gate.proceed.signal()
            gate.done.wait()
        }
        #expect(finished)
        guard let gated = built.values.first else { return }
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -1) }
        #expect(scope[rvGated: gate]() === gated, "extra \(extra): a use by time window made the scope build its own")
        #expect(scope[rvUser: 0]().parts[0].token == -1)
        app.override(\.[rvLeaf: 0]) { RVPart("app leaf", token: 1) }
        #expect(app[rvGated: gate]() !== gated, "extra \(extra): a use by time window did not drop the app's instance")
    }

    // MARK: Deinits and arguments

    /// Family members whose arguments resolve from the container in their deinit, in a
    /// container that builds them itself (a plain one, or a child of an app), the record in
    /// its slots or its dictionary: an override drops the users of the first slot while
    /// the second holds arguments, and every argument goes after unlocking, once.
    @Test(arguments: [1, 2, 3], [false, true])
    func argumentsInTheSlotsOfTheRecordGoAfterUnlocking(arguments count: Int, inChild: Bool) {
        let app = DependencyContainer()
        let container = inChild ? DependencyContainer(parent: app) : app
        let seen = Collected<Int>()
        var weakArguments: [() -> RVArgument?] = []
        do {
            for id in 0..<count {
                let argument = RVArgument(id: id, container: container, seen: seen)
                weak let weakArgument = argument
                weakArguments.append { weakArgument }
                _ = container[rvArgumentUser: argument]()
            }
        }
        #expect(weakArguments.allSatisfy { $0() != nil })
        // Leaf 0 in the first slot: its users go, the second slot moves up.
        container.override(\.[rvLeaf: 0]) { RVPart("leaf 0 again", token: -50) }
        #expect(weakArguments[0]() == nil, "argument 0 kept after its user was dropped")
        if count > 1 { #expect(weakArguments[1]() != nil, "argument 1 dropped with leaf 0's users") }
        if count > 1 {
            container.override(\.[rvLeaf: 1]) { RVPart("leaf 1 again", token: -51) }
            #expect(weakArguments[1]() == nil, "argument 1 kept after its user was dropped")
        }
        container.reset()
        #expect(weakArguments.allSatisfy { $0() == nil }, "an argument outlived the reset")
        #expect(seen.values.count == count, "\(seen.values)")
        #expect(seen.values.first == -50, "the first argument's deinit saw \(seen.values)")
    }

    /// Thousands of arguments of one family built from leaf 0, and a summary of them all,
    /// in the app: a scope overriding the leaf builds its own members and summary; one
    /// overriding an argument of another family shares them; one overriding one member
    /// builds only that member and the summary.
    @Test func thousandsOfArgumentsAndScopes() {
        let app = DependencyContainer()
        primed(app, extra: 3)
        let summary = app.rvLeafSummary()
        let leafScope = DependencyContainer(scopeOf: app)
        leafScope.override(\.[rvLeaf: 0]) { RVPart("scope leaf", token: -1) }
        #expect(leafScope.rvLeafLedger(2_999).parts[0].token == -1)
        #expect(leafScope.rvLeafSummary().parts.allSatisfy { $0.parts[0].token == -1 })
        let otherScope = DependencyContainer(scopeOf: app)
        otherScope.override(\.rvLedger[5]) { RVPart("scope ledger 5", token: -5) }
        #expect(otherScope.rvLeafSummary() === summary)
        #expect(otherScope.rvLeafLedger(1_234) === app.rvLeafLedger(1_234))
        let memberScope = DependencyContainer(scopeOf: app)
        memberScope.override(\.rvLeafLedger[42]) { RVPart("scope member", token: -42) }
        let ownSummary = memberScope.rvLeafSummary()
        #expect(ownSummary !== summary && ownSummary.parts[42].token == -42)
        #expect(memberScope.rvLeafLedger(43) === app.rvLeafLedger(43))
        app.override(\.[rvLeaf: 0]) { RVPart("app leaf", token: 9) }
        #expect(otherScope.rvLeafSummary().parts[100].parts[0].token == 9)
        #expect(leafScope.rvLeafSummary().parts[100].parts[0].token == -1)
        #expect(memberScope.rvLeafSummary().parts[43].parts[0].token == 9)
        #expect(memberScope.rvLeafSummary().parts[42].token == -42)
    }

    // MARK: Concurrency

    /// Scopes made per request on six threads, each overriding one leaf, while two threads
    /// override and reset the app's leaves and users, all released together. A scope's
    /// user of the leaf it overrides always holds its leaf; at the end every scope's users
    /// of other leaves are the app's current ones.
    @Test(arguments: [2, 3, 5])
    func requestScopesWhileTheAppChanges(leaves n: Int) async {
        let app = DependencyContainer()
        primed(app, extra: n > 2 ? 1 : 0)
        let problems = Collected<String>()
        let kept = Collected<(Int, Int, DependencyContainer)>()
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(8) { thread in
                var generator = RecordedGenerator(seed: UInt64(thread * 17 + n))
                if thread < 2 {
                    for step in 0..<300 {
                        let leaf = generator.next(n)
                        switch generator.next(4) {
                        case 0: app.override(\.[rvLeaf: leaf]) { RVPart("app leaf", token: thread * 1_000 + step + 1) }
                        case 1: app.reset(\.[rvLeaf: leaf])
                        case 2: app.reset(\.[rvUser: leaf])
                        default: _ = app[rvChain: 3]()
                        }
                    }
                    return
                }
                for request in 0..<150 {
                    let scope = DependencyContainer(scopeOf: app)
                    let leaf = generator.next(n)
                    let token = -(thread * 10_000 + request) - 1
                    scope.override(\.[rvLeaf: leaf]) { RVPart("request leaf", token: token) }
                    for _ in 0..<3 {
                        let user = scope[rvUser: leaf]()
                        if user.parts[0].token != token {
                            problems.append("thread \(thread) request \(request): user \(leaf) holds \(user.parts[0].token)")
                        }
                        _ = scope[rvUser: generator.next(n)]()
                        if leaf == 0 && scope[rvChain: 3]().bottom.token != token {
                            problems.append("thread \(thread) request \(request): chain holds another leaf")
                        }
                    }
                    if request % 50 == 49 { kept.append((leaf, token, scope)) }
                }
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "\(problems.values.count) problems, first: \(problems.values.prefix(5))")
        for (leaf, token, scope) in kept.values {
            for user in 0..<n {
                let part = scope[rvUser: user]()
                if user == leaf {
                    #expect(part.parts[0].token == token)
                } else {
                    #expect(part.parts[0] === app[rvLeaf: user](), "a scope's user \(user) holds a stale app leaf")
                    #expect(part === app[rvUser: user](), "a scope built its own user \(user), overriding leaf \(leaf)")
                }
            }
        }
    }

    /// Long-lived scopes, each overriding a leaf, asked on their own threads while the app
    /// builds and drops on two others: the handover's check runs against a record that
    /// changes between slots and dictionary under it.
    @Test func longLivedScopesWhileTheAppsRecordChangesForm() async {
        let n = 4
        let app = DependencyContainer()
        let scopes = (0..<6).map { index in
            let scope = DependencyContainer(scopeOf: app)
            scope.override(\.[rvLeaf: index % n]) { RVPart("scope leaf", token: -index - 1) }
            return scope
        }
        let problems = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            onThreadsReleasedTogetherAndJoined(8) { thread in
                var generator = RecordedGenerator(seed: UInt64(thread + 1_000))
                if thread >= 6 {
                    for step in 0..<400 {
                        let user = generator.next(n)
                        switch generator.next(3) {
                        case 0: app.reset(\.[rvUser: user])
                        case 1: app.override(\.[rvLeaf: user]) { RVPart("app leaf", token: step + 1) }
                        default: _ = app[rvUser: user]()
                        }
                    }
                    return
                }
                let scope = scopes[thread]
                for _ in 0..<400 {
                    let part = scope[rvUser: thread % n]()
                    if part.parts[0].token != -thread - 1 {
                        problems.append("scope \(thread): its user holds \(part.parts[0].token)")
                    }
                    _ = scope[rvUser: generator.next(n)]()
                }
            }
        }
        #expect(finished)
        #expect(problems.values.isEmpty, "\(problems.values.count) problems, first: \(problems.values.prefix(5))")
        for (index, scope) in scopes.enumerated() {
            for user in 0..<n where user != index % n {
                #expect(scope[rvUser: user]().parts[0] === app[rvLeaf: user](), "scope \(index) user \(user) stale")
            }
        }
    }
}
