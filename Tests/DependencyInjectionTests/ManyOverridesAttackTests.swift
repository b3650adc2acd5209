import Foundation
import Testing
@testable import DependencyInjection

// Attacks on a scope's list of what it overrides (`OverriddenKeys`: an array up to 16 keys,
// a set beyond), on a request's reading of its session's lists (`ScopeOverrides`), and on
// the app container's record of uses walking on by registration
// (`DependentKeys.forEachRegistration`).

final class MOFAAccount: Sendable {
    let id: Int
    let limit: Int
    let fee: Int
    init(id: Int, limit: Int, fee: Int) { (self.id, self.limit, self.fee) = (id, limit, fee) }
}

final class MOFAAudit: Sendable {
    let account: MOFAAccount
    init(account: MOFAAccount) { self.account = account }
}

final class MOFASummary: Sendable {
    let total: Int
    init(total: Int) { self.total = total }
}

extension DependencyContainer {
    /// What scopes override, argument by argument or as a family.
    var mofaLimit: ProviderFamily<Int, Int> { singleton { _ in 100 } }
    /// What scopes decorate, argument by argument.
    var mofaFee: ProviderFamily<Int, Int> { singleton { _ in 5 } }
    /// App-wide, built from a limit and a fee: the users of both registrations.
    var mofaAccount: ProviderFamily<Int, MOFAAccount> {
        singleton { id in MOFAAccount(id: id, limit: self.mofaLimit(id), fee: self.mofaFee(id)) }
    }
    /// App-wide, built from an account: thousands of users of the account registration.
    var mofaAudit: ProviderFamily<Int, MOFAAudit> { singleton { id in MOFAAudit(account: self.mofaAccount(id)) } }
    /// App-wide, built from two accounts: another registration among the account's users.
    var mofaSummary: Provider<MOFASummary> {
        singleton { MOFASummary(total: self.mofaAccount(0).limit + self.mofaAccount(1).limit) }
    }
    /// App-wide, built from the summary: three steps from a limit.
    var mofaDigest: Provider<MOFASummary> { singleton { MOFASummary(total: self.mofaSummary().total + 1) } }
    /// App-wide, built from nothing a scope overrides.
    var mofaRate: ProviderFamily<Int, MOFAAccount> { singleton { id in MOFAAccount(id: id, limit: 0, fee: 0) } }

    /// One registration for every argument type, providing `Int`: `1 as Int` and
    /// `1 as UInt8` are two arguments of one registration whose hashes are equal.
    subscript<ID: Hashable & Sendable>(mofaGeneric id: ID) -> Provider<Int> { singleton(id) { 100 } }
    /// Two families whose arguments all hash alike.
    subscript(mofaCollideA id: CollidingID) -> Provider<Int> { singleton(id) { 100 } }
    subscript(mofaCollideB id: CollidingID) -> Provider<Int> { singleton(id) { 200 } }
}

/// An argument that is an object, so that a test can see it released.
final class MOFAArgument: Hashable, Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
    static func == (lhs: MOFAArgument, rhs: MOFAArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DependencyContainer {
    var mofaByArgument: ProviderFamily<MOFAArgument, Int> { singleton { _ in 100 } }
    /// App-wide, built from an argument of `mofaByArgument`.
    var mofaHolder: ProviderFamily<Int, MOFASummary> {
        singleton { id in MOFASummary(total: self.mofaByArgument(MOFAArgument(id))) }
    }
}

/// What a session and a request in it override and decorate, as the test believes it.
private struct MOFAModel {
    struct Level {
        var arguments: [Int: Int] = [:]
        var family: Int?
        var decoratedFees: Set<Int> = []
        var touchesLimit: Bool { !arguments.isEmpty || family != nil }
    }
    var session = Level()
    var request = Level()

    /// The limit of `id` resolved in the request (`inRequest`) or the session.
    func limit(_ id: Int, inRequest: Bool) -> Int {
        for level in inRequest ? [request, session] : [session] {
            if let value = level.arguments[id] { return value }
            if let base = level.family { return base + id }
        }
        return 100
    }

    func fee(_ id: Int, inRequest: Bool) -> Int {
        var fee = 5
        if session.decoratedFees.contains(id) { fee += 1_000 }
        if inRequest, request.decoratedFees.contains(id) { fee += 10_000 }
        return fee
    }

    /// Whether nothing the account is built from is overridden or decorated there: the
    /// scope then shares the app's accounts.
    func sharesAccounts(inRequest: Bool) -> Bool {
        let levels = inRequest ? [request, session] : [session]
        return levels.allSatisfy { !$0.touchesLimit && $0.decoratedFees.isEmpty }
    }
}

@Suite struct ManyOverridesAttackTests {
    /// A digest built from a summary built from two accounts, among 3,000 audits built
    /// from accounts, all built from limits: a request overriding one limit (or the family,
    /// or decorating a fee) builds its own digest, from its values, after the users of the
    /// account registration came and went.
    @Test(arguments: ["argument", "manyArguments", "family", "sessionArgument", "sessionFamily"])
    func aTransitiveUserOfARegistrationWithThousandsOfUsersIsBuiltInTheScope(how: String) {
        let app = DependencyContainer()
        for id in 0..<3_000 { _ = app.mofaAudit(id) }
        let appDigest = app.mofaDigest()
        #expect(appDigest.total == 201)
        // The summary's use of the account registration goes, and comes back: the count
        // of the account's users of the summary registration falls to zero and rises.
        app.reset(\.mofaSummary)
        #expect(app.mofaDigest().total == 201)
        for id in 0..<3_000 where id % 20 == 1 { app.reset(\.mofaAudit[id]) }
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        switch how {
        case "argument": request.override(\.mofaLimit[0]) { 7 }
        case "manyArguments":
            for id in 2..<40 { request.override(\.mofaLimit[id]) { id } }
            request.override(\.mofaLimit[0]) { 7 }
        case "family": request.override(\.mofaLimit) { $0 == 0 ? 7 : 100 }
        case "sessionArgument": session.override(\.mofaLimit[0]) { 7 }
        default:
            for id in 2..<40 { session.override(\.mofaLimit[id]) { id } }
            session.override(\.mofaLimit) { $0 == 0 ? 7 : 100 }
        }
        #expect(request.mofaDigest().total == 108, "the request was served the app's digest, built from the app's limit")
        #expect(request.mofaSummary().total == 107)
        #expect(request.mofaAudit(0).account.limit == 7)
        #expect(request.mofaAudit(1).account.limit == 100)
        #expect(request.mofaRate(3) === app.mofaRate(3))
        #expect(app.mofaDigest().total == 201)
        #expect(app.mofaAudit(0).account.limit == 100)
    }

    // MARK: - What a scope decides, against a model

    /// Random overrides of arguments and of the family, decorations and resets of every
    /// kind, in a session and in a request inside it, crossing back and forth between 16
    /// keys (an array) and more (a set): after each change, every value the request and the
    /// session serve is the one their overrides make, and they share the app's accounts
    /// exactly when nothing an account is built from is overridden or decorated there.
    @Test(arguments: [11, 12, 13] as [UInt64])
    func whatAScopeBuildsFollowsItsOverridesAndItsSessionsThroughEveryKindOfChange(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let app = DependencyContainer()
        for id in 0..<200 { _ = app.mofaAudit(id) }
        _ = app.mofaDigest()
        let ids = 0..<30
        let appAccounts = ids.map { app.mofaAccount($0) }
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        var model = MOFAModel()
        var failures = 0
        for step in 0..<600 {
            let inRequest = random.chance(50)
            let scope = inRequest ? request : session
            var level = inRequest ? model.request : model.session
            let id = random.below(ids.count)
            var what: String
            switch random.below(100) {
            case 0..<45:
                let value = 1_000 + random.below(1_000)
                scope.override(\.mofaLimit[id]) { value }
                level.arguments[id] = value
                what = "override \(id)"
            case 45..<70:
                scope.reset(\.mofaLimit[id])
                level.arguments[id] = nil
                what = "reset \(id)"
            case 70..<76:
                let base = 5_000 + random.below(1_000) * 10
                scope.override(\.mofaLimit) { base + $0 }
                level.family = base
                what = "override family"
            case 76..<80:
                scope.reset(\.mofaLimit)
                (level.arguments, level.family) = ([:], nil)
                what = "reset family"
            case 80..<88:
                // Disjoint in the session and the request: how two levels' decorations
                // of one key stack is not what this test is about.
                let fee = inRequest ? 15 + random.below(15) : random.below(15)
                guard !level.decoratedFees.contains(fee) else { continue }
                scope.decorate(\.mofaFee[fee]) { $0 + (inRequest ? 10_000 : 1_000) }
                level.decoratedFees.insert(fee)
                what = "decorate fee \(fee)"
            case 88..<92:
                let fee = random.below(30)
                scope.reset(\.mofaFee[fee])
                level.decoratedFees.remove(fee)
                what = "reset fee \(fee)"
            case 92..<95:
                scope.reset()
                level = MOFAModel.Level()
                what = "reset()"
            default:
                // Many at once: over 16 keys in one step.
                for more in 0..<20 {
                    let other = (id + more) % ids.count
                    scope.override(\.mofaLimit[other]) { 3_000 + other }
                    level.arguments[other] = 3_000 + other
                }
                what = "override 20"
            }
            if inRequest { model.request = level } else { model.session = level }
            let label = "seed \(seed) step \(step): \(what) in the \(inRequest ? "request" : "session")"
            for checked in [random.below(ids.count), random.below(ids.count), id] {
                for (container, inRequest) in [(request, true), (session, false)] {
                    let account = container.mofaAccount(checked)
                    let limit = model.limit(checked, inRequest: inRequest)
                    let fee = model.fee(checked, inRequest: inRequest)
                    var right = container.mofaLimit(checked) == limit
                    right = right && account.limit == limit && account.fee == fee
                    right = right && container.mofaAudit(checked).account.limit == limit
                    if model.sharesAccounts(inRequest: inRequest) {
                        right = right && account === appAccounts[checked]
                    } else if limit != 100 || fee != 5 {
                        right = right && account !== appAccounts[checked]
                    }
                    if !right {
                        failures += 1
                        Issue.record("""
                            \(label): in the \(inRequest ? "request" : "session") account \(checked) has limit \
                            \(account.limit), fee \(account.fee), shared \(account === appAccounts[checked]); \
                            expected limit \(limit), fee \(fee)
                            """)
                    }
                }
            }
            let digest = model.limit(0, inRequest: true) + model.limit(1, inRequest: true) + 1
            if request.mofaDigest().total != digest {
                failures += 1
                Issue.record("\(label): the request's digest is \(request.mofaDigest().total), expected \(digest)")
            }
            #expect(request.mofaRate(id) === app.mofaRate(id), "\(label)")
            if failures > 5 { return }
        }
        #expect(app.mofaDigest().total == 201)
        #expect(app.mofaAccount(3) === appAccounts[3])
    }

    // MARK: - Arguments that are alike

    /// `1 as UInt8` and `1 as Int` hash alike and are equal as `AnyHashable`, but are two
    /// arguments: a request overriding Int arguments, as an array (few) or a set (many),
    /// never serves the override for the UInt8 argument, nor builds it itself.
    @Test(arguments: [3, 16, 17, 300])
    func argumentsOfAnotherTypeWithEqualValuesAreNotOverridden(count: Int) {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        for id in 0..<count { request.override(\.[mofaGeneric: id]) { 1_000 + id } }
        for id in 0..<min(count, 200) {
            #expect(request[mofaGeneric: id]() == 1_000 + id)
            #expect(request[mofaGeneric: UInt8(id)]() == 100, "the Int override of \(id) reached UInt8(\(id))")
            #expect(request[mofaGeneric: Double(id)]() == 100)
        }
        #expect(app[mofaGeneric: 2]() == 100)
    }

    /// Arguments of two families that all hash alike, as an array or a set: overriding
    /// some of one family's overrides neither the other family's nor the rest of its own.
    @Test(arguments: [5, 16, 17, 200])
    func argumentsThatHashAlikeAreToldApart(count: Int) {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        for raw in 0..<count { session.override(\.[mofaCollideA: CollidingID(raw: raw)]) { 1_000 + raw } }
        request.override(\.[mofaCollideB: CollidingID(raw: 0)]) { 9 }
        for raw in [0, 1, count - 1] {
            #expect(request[mofaCollideA: CollidingID(raw: raw)]() == 1_000 + raw)
            #expect(request[mofaCollideA: CollidingID(raw: count + raw)]() == 100)
            #expect(request[mofaCollideB: CollidingID(raw: raw)]() == (raw == 0 ? 9 : 200))
            #expect(session[mofaCollideB: CollidingID(raw: raw)]() == 200)
        }
    }

    // MARK: - Releases

    /// The arguments a scope overrode, as a list (few) or a set (many), are released when
    /// the overrides go (a reset of the family, `reset()`), and when the scope goes.
    @Test(arguments: [3, 40])
    func theArgumentsAScopeOverrodeAreReleasedWithTheOverridesAndTheScope(count: Int) {
        let app = DependencyContainer()
        for id in 0..<count { _ = app.mofaHolder(id) }
        weak var session: DependencyContainer?
        func weakly(_ arguments: [MOFAArgument]) -> [() -> MOFAArgument?] {
            arguments.map { argument in { [weak argument] in argument } }
        }
        var lookups: [() -> MOFAArgument?] = []
        do {
            let strongSession = DependencyContainer(scopeOf: app)
            session = strongSession
            let request = DependencyContainer(scopeOf: strongSession)
            var arguments = (0..<count).map { MOFAArgument($0) }
            for argument in arguments { strongSession.override(\.mofaByArgument[argument]) { 1_000 + argument.id } }
            #expect(request.mofaHolder(1).total == 1_001)
            #expect(strongSession.mofaHolder(2).total == 1_002)
            lookups = weakly(arguments)
            arguments = []
            strongSession.reset(\.mofaByArgument)
            #expect(request.mofaHolder(1).total == 100)
            #expect(lookups.allSatisfy { $0() == nil }, "the family's reset kept \(lookups.filter { $0() != nil }.count) arguments")
            var more = (0..<count).map { MOFAArgument(10_000 + $0) }
            for argument in more { request.override(\.mofaByArgument[argument]) { argument.id } }
            #expect(request.mofaByArgument(MOFAArgument(10_001)) == 10_001)
            #expect(request.mofaHolder(1).total == 100)
            lookups = weakly(more)
            more = []
            request.reset()
            #expect(lookups.allSatisfy { $0() == nil }, "reset() kept \(lookups.filter { $0() != nil }.count) arguments")
            more = (0..<count).map { MOFAArgument(20_000 + $0) }
            for argument in more { request.override(\.mofaByArgument[argument]) { argument.id } }
            #expect(request.mofaHolder(1).total == 100)
            lookups = weakly(more)
            more = []
        }
        #expect(session == nil, "the session outlived its last reference")
        #expect(lookups.allSatisfy { $0() == nil }, "the request's arguments outlived it")
    }

    // MARK: - Threads

    /// Readers, each in its own request of a session, resolve accounts while a writer
    /// installs and removes overrides in the session, crossing 16 keys, and overrides and
    /// resets the family: an account whose limit the session always overrides always has
    /// it, one nothing overrides is 100 or the family's, the rate is the app's, and each
    /// request's own override is its own.
    @Test func requestsResolvingWhileTheirSessionsOverridesChangeServeWhatTheyOverride() async {
        let app = DependencyContainer()
        for id in 0..<50 { _ = app.mofaAudit(id) }
        let appRates = (0..<64).map { app.mofaRate($0) }
        let session = DependencyContainer(scopeOf: app)
        for id in 0..<10 { session.override(\.mofaLimit[id]) { 2_000 + id } }
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            if thread == 0 {
                for round in 0..<150 {
                    for id in 100..<(100 + round % 20) { session.override(\.mofaLimit[id]) { 7_000 + id } }
                    if round % 7 == 0 { session.override(\.mofaLimit) { 9_000 + $0 } }
                    if round % 5 == 0 { session.decorate(\.mofaFee[50]) { $0 + 1 } }
                    for id in 100..<(100 + round % 20) { session.reset(\.mofaLimit[id]) }
                    if round % 7 == 3 {
                        // The family's reset removes the arguments' overrides too.
                        session.reset(\.mofaLimit)
                        for id in 0..<10 { session.override(\.mofaLimit[id]) { 2_000 + id } }
                    }
                    if round % 5 == 2 { session.reset(\.mofaFee[50]) }
                }
                return
            }
            for round in 0..<100 {
                let request = DependencyContainer(scopeOf: session)
                let ownID = 500 + thread
                request.override(\.mofaLimit[ownID]) { -round }
                for step in 0..<8 {
                    let id = (round * 8 + step + thread) % 64
                    let rate = request.mofaRate(id)
                    if rate !== appRates[id] { wrong.append("rate \(id) is not the app's") }
                    let own = request.mofaAccount(ownID)
                    if own.limit != -round { wrong.append("request's own account has \(own.limit), not \(-round)") }
                    let pinned = request.mofaAccount(id % 10)
                    // The writer removes these only with the family, then installs them
                    // again at once: the family's value may show meanwhile.
                    if pinned.limit != 2_000 + id % 10 && pinned.limit != 9_000 + id % 10 && pinned.limit != 100 {
                        wrong.append("pinned account \(id % 10) has \(pinned.limit)")
                    }
                    let free = request.mofaAccount(1_000 + id)
                    if free.limit != 100 && free.limit != 10_000 + id {
                        wrong.append("free account \(1_000 + id) has \(free.limit)")
                    }
                }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        #expect(app.mofaAccount(3).limit == 100)
        #expect(app.mofaRate(3) === appRates[3])
    }

    /// Threads released together resolve through one request while another thread of it
    /// installs and removes overrides of limits, crossing 16 keys, and decorates fees:
    /// the limits it always overrides are always its own, what uses nothing it overrides
    /// is always the app's, and an account nothing overrides has the app's limit.
    @Test func aRequestChangingItsOwnOverridesWhileItsThreadsResolveServesWhatItOverrides() async {
        let app = DependencyContainer()
        for id in 0..<300 { _ = app.mofaAudit(id) }
        let appRates = (0..<64).map { app.mofaRate($0) }
        let appDigest = app.mofaDigest()
        let request = DependencyContainer(scopeOf: DependencyContainer(scopeOf: app))
        for id in 0..<10 { request.override(\.mofaLimit[id]) { 2_000 + id } }
        let wrong = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            if thread == 0 {
                for round in 0..<120 {
                    for id in 100..<(100 + round % 24) { request.override(\.mofaLimit[id]) { 7_000 + id } }
                    if round % 3 == 0 { request.decorate(\.mofaFee[60 + round % 4]) { $0 + 1 } }
                    for id in 100..<(100 + round % 24) { request.reset(\.mofaLimit[id]) }
                    if round % 3 == 1 { request.reset(\.mofaFee[60 + round % 4]) }
                }
                return
            }
            for round in 0..<200 {
                let id = (round + thread * 7) % 64
                if request.mofaRate(id) !== appRates[id] { wrong.append("rate \(id) is not the app's") }
                let pinned = request.mofaAccount(id % 10)
                if pinned.limit != 2_000 + id % 10 { wrong.append("pinned account \(id % 10) has \(pinned.limit)") }
                if request.mofaAudit(id % 10).account.limit != 2_000 + id % 10 {
                    wrong.append("the audit of pinned account \(id % 10) has the app's limit")
                }
                let free = request.mofaAccount(1_000 + id)
                if free.limit != 100 { wrong.append("free account \(1_000 + id) has \(free.limit)") }
                if request.mofaDigest().total != 2_000 + 2_001 + 1 { wrong.append("digest \(request.mofaDigest().total)") }
            }
        }
        #expect(finished)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        #expect(app.mofaDigest() === appDigest)
    }
}
