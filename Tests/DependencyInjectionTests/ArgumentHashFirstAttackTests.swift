import DependencyInjection
import Foundation
import Testing

// Arguments are compared by value only when their kept hashes agree. Equal arguments
// built anew (other objects, other Unicode normalizations, -0.0 for 0.0, collections
// built in another order or with another capacity) must still be one argument
// everywhere a container compares keys; arguments whose hashes collide must still be
// told apart.

/// What the registrations under test build.
final class HFPart: Sendable {
    let source: String
    let inner: HFPart?
    init(_ source: String, inner: HFPart? = nil) { (self.source, self.inner) = (source, inner) }
}

/// Signalled when two distinct ``HFAccount`` objects that carry it are compared.
final class HFCompareProbe: Sendable {
    let compared = DispatchSemaphore(value: 0)
}

/// An account: a class whose `==` and hash are its id's, so that equal accounts are
/// distinct objects. The probe takes no part in equality.
final class HFAccount: Hashable, Sendable, CustomStringConvertible {
    let id: String
    let probe: HFCompareProbe?
    init(_ id: String, probe: HFCompareProbe? = nil) { (self.id, self.probe) = (id, probe) }
    static func == (lhs: HFAccount, rhs: HFAccount) -> Bool {
        if lhs !== rhs { (lhs.probe ?? rhs.probe)?.compared.signal() }
        return lhs.id == rhs.id
    }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
    var description: String { id }
}

enum HFRoute: Hashable, Sendable {
    case user(String)
    case group([Double])
    case nothing
}

/// A struct of collections: equal values may be built in another order, with another
/// capacity, with another normalization of their strings.
struct HFQuery: Hashable, Sendable {
    let name: String
    let weight: Double
    let tags: Set<String>
    let limits: [String: Int]
}

extension DependencyContainer {
    /// One singleton per argument, whatever its type; counts its builds.
    subscript<A: Hashable & Sendable>(hfMember argument: A) -> Provider<HFPart> {
        singleton(argument) {
            self.count("hfMember")
            return HFPart("app \(argument)")
        }
    }
    subscript<A: Hashable & Sendable>(hfAsyncMember argument: A) -> AsyncProvider<HFPart> {
        singleton(argument) {
            self.count("hfAsyncMember")
            return HFPart("app async \(argument)")
        }
    }
    subscript<A: Hashable & Sendable>(hfShared argument: A) -> Provider<HFPart> {
        shared(argument) { HFPart("shared \(argument)") }
    }
    subscript<A: Hashable & Sendable>(hfScoped argument: A) -> Provider<HFPart> {
        scoped(argument) { HFPart("scoped \(argument)") }
    }

    var hfAccounts: ProviderFamily<HFAccount, HFPart> {
        singleton { (account: HFAccount) in
            self.count("hfAccounts")
            (self.getValue(forKey: "hf.gate") as OnceGate?)?.pass()
            return HFPart("account \(account.id)")
        }
    }

    /// `1` resolves `2`, which resolves a new `1`: a cycle through equal objects.
    subscript(hfLoop account: HFAccount) -> Provider<HFPart> {
        singleton(account) { HFPart("loop", inner: self[hfLoop: HFAccount(account.id == "1" ? "2" : "1")]()) }
    }
    subscript(hfAsyncLoop account: HFAccount) -> AsyncProvider<HFPart> {
        singleton(account) {
            HFPart("loop", inner: try await self[hfAsyncLoop: HFAccount(account.id == "1" ? "2" : "1")]())
        }
    }
    /// "é" precomposed resolves "é" decomposed: one argument, a cycle.
    subscript(hfNormalizedLoop name: String) -> Provider<HFPart> {
        singleton(name) { HFPart("loop", inner: self[hfNormalizedLoop: name.decomposedStringWithCanonicalMapping]()) }
    }

    /// A recursive family over colliding arguments: each level resolves the one below.
    subscript(hfCollidingLevel id: CollidingID) -> Provider<Int> {
        singleton(id) { id.raw == 0 ? 0 : 1 + self[hfCollidingLevel: CollidingID(raw: id.raw - 1)]() }
    }
    subscript(hfAsyncCollidingLevel id: CollidingID) -> AsyncProvider<Int> {
        singleton(id) { id.raw == 0 ? 0 : 1 + (try await self[hfAsyncCollidingLevel: CollidingID(raw: id.raw - 1)]()) }
    }
}

/// An argument type that breaks `Hashable`'s rule: `==` compares `id` alone, the hash
/// takes `salt` too, so equal values may hash apart (as an `NSObject` subclass that
/// overrides `isEqual` but not `hash`).
struct HFSaltedID: Hashable, Sendable {
    let id: Int
    let salt: Int
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(salt)
    }
}

extension DependencyContainer {
    /// Salt 0 resolves the equal value with salt 1 inside its construction.
    subscript(hfSalted id: HFSaltedID) -> Provider<HFPart> {
        singleton(id) {
            self.count("hfSalted")
            return HFPart("salted \(id.salt)", inner: id.salt == 0 ? self[hfSalted: HFSaltedID(id: id.id, salt: 1)]() : nil)
        }
    }
}

/// Checks run on two equal arguments, distinct as objects or as representations.
protocol HFEqualArgumentsCheck {
    func check<A: Hashable & Sendable>(_ first: A, _ second: A) async throws
}

/// Pairs of equal arguments that are not the same bits.
enum HFEqualPair: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case distinctObjects, normalizations, angstromSign, signedZeros, enumPayload, arrayOfZeros
    case structOfCollections, optionalString

    var testDescription: String { rawValue }

    func run(_ check: some HFEqualArgumentsCheck) async throws {
        switch self {
        case .distinctObjects: try await check.check(HFAccount("7"), HFAccount("7"))
        case .normalizations: try await check.check("caf\u{E9}", "cafe\u{301}")
        case .angstromSign: try await check.check(HFRoute.user("\u{212B}"), HFRoute.user("A\u{30A}"))
        case .signedZeros: try await check.check(0.0, -0.0)
        case .enumPayload: try await check.check(HFRoute.group([1, 0.0]), HFRoute.group([1, -0.0]))
        case .arrayOfZeros: try await check.check([0.0, 2], [-0.0, 2])
        case .structOfCollections:
            var tags = Set<String>(minimumCapacity: 64)
            for tag in ["z", "y", "e\u{301}", "w"] { tags.insert(tag) }
            var limits = [String: Int](minimumCapacity: 64)
            for (key, value) in [("b", 2), ("a", 1), ("c", 3)] { limits[key] = value }
            try await check.check(
                HFQuery(name: "\u{C5}", weight: 0.0, tags: ["w", "\u{E9}", "y", "z"],
                    limits: ["a": 1, "b": 2, "c": 3]),
                HFQuery(name: "\u{212B}", weight: -0.0, tags: tags, limits: limits))
        case .optionalString: try await check.check(Optional("\u{1E0A}\u{323}"), Optional("D\u{323}\u{307}"))
        }
    }
}

@Suite struct ArgumentHashFirstAttackTests {
    /// Caching, `instanceIfBuilt`, an override, a reset and a decoration installed with
    /// one argument all apply to the other, sync and async, `shared` and `scoped` too.
    @Test(arguments: HFEqualPair.allCases)
    func equalArgumentsAreOneInstanceAndOneKeyForEveryFeature(pair: HFEqualPair) async throws {
        struct Check: HFEqualArgumentsCheck {
            func check<A: Hashable & Sendable>(_ first: A, _ second: A) async throws {
                let app = DependencyContainer()
                let builds = app.counter("hfMember")
                let built = app[hfMember: first]()
                #expect(app[hfMember: second]() === built)
                #expect(app.instanceIfBuilt(\.[hfMember: second]) === built)
                #expect(builds.count == 1)

                app.override(\.[hfMember: second]) { HFPart("override") }
                #expect(app[hfMember: first]().source == "override")
                app.reset(\.[hfMember: first])
                let rebuilt = app[hfMember: second]()
                #expect(rebuilt !== built && rebuilt.source.hasPrefix("app "))
                #expect(builds.count == 2)
                app.decorate(\.[hfMember: second]) { HFPart("decorated", inner: $0) }
                #expect(app[hfMember: first]().source == "decorated")

                let asyncBuilds = app.counter("hfAsyncMember")
                let asyncBuilt = try await app[hfAsyncMember: first]()
                #expect(try await app[hfAsyncMember: second]() === asyncBuilt)
                #expect(app.instanceIfBuilt(\.[hfAsyncMember: second]) === asyncBuilt)
                #expect(asyncBuilds.count == 1)

                let shared = app[hfShared: first]()
                #expect(app[hfShared: second]() === shared)

                let scope = DependencyContainer(scopeOf: app)
                let scoped = scope[hfScoped: first]()
                #expect(scope[hfScoped: second]() === scoped)
            }
        }
        try await pair.run(Check())
    }

    /// A scope that overrides one argument answers for the equal argument built anew, and
    /// shares the app's instance of everything else; so does one that overrides many
    /// arguments (looked up in a set, not one by one).
    @Test(arguments: [1, 40])
    func aScopesOverrideOfOneArgumentAnswersForAnEqualArgumentBuiltAnew(overrides: Int) {
        let app = DependencyContainer()
        let other = app.hfAccounts(HFAccount("other"))
        let scope = DependencyContainer(scopeOf: app)
        for index in 0..<overrides {
            let account = HFAccount("\(index)")
            scope.override(\.hfAccounts[account]) { HFPart("scope \(account.id)") }
        }
        #expect(scope.hfAccounts(HFAccount("0")).source == "scope 0")
        #expect(scope.hfAccounts(HFAccount("\(overrides - 1)")).source == "scope \(overrides - 1)")
        #expect(scope.hfAccounts(HFAccount("other")) === other)
        #expect(app.hfAccounts(HFAccount("0")).source == "account 0")
        scope.reset(\.hfAccounts[HFAccount("0")])
        #expect(scope.hfAccounts(HFAccount("0")) === app.hfAccounts(HFAccount("0")))
    }

    /// A construction in flight for one account, held at a gate: another thread resolving
    /// an equal account, another object, compares it with the one in flight and waits for
    /// it, and both get the one instance.
    @Test func anEqualArgumentOnAnotherThreadWaitsForTheConstructionInFlight() async {
        let app = DependencyContainer()
        let builds = app.counter("hfAccounts")
        let gate = OnceGate()
        app.setValue(gate, forKey: "hf.gate")
        let probe = HFCompareProbe()
        let results = Collected<HFPart>()
        let finished = await finishesWithoutHangingOffThePool {
            let first = onThread { app.hfAccounts(HFAccount("9")) }
            gate.gate.entered.wait()
            let second = onThread { app.hfAccounts(HFAccount("9", probe: probe)) }
            probe.compared.wait()
            gate.gate.open()
            results.append(first())
            results.append(second())
        }
        #expect(finished)
        let parts = results.values
        #expect(parts.count == 2 && parts[0] === parts[1])
        #expect(builds.count == 1)
    }

    /// Threads released together resolve equal accounts, each thread its own objects, in
    /// its own order: one build an account, one instance across threads.
    @Test func threadsResolvingEqualArgumentsTogetherBuildEachOnce() async {
        let app = DependencyContainer()
        let builds = app.counter("hfAccounts")
        let seen = Collected<(String, ObjectIdentifier)>()
        let accounts = 40
        let finished = await concurrentlyOffThePool(threads: 8) { thread in
            for step in 0..<accounts {
                let id = (step * (thread + 1) + thread) % accounts
                let part = app.hfAccounts(HFAccount("\(id)"))
                seen.append(("\(id)", ObjectIdentifier(part)))
                withExtendedLifetime(part) {}
            }
        }
        #expect(finished)
        #expect(builds.count == accounts)
        let byAccount = Dictionary(grouping: seen.values, by: \.0).mapValues { Set($0.map(\.1)) }
        #expect(byAccount.count == accounts)
        #expect(byAccount.values.allSatisfy { $0.count == 1 })
    }

    /// Colliding arguments, 1 to 60, each level resolving the one below: no false cycle,
    /// sync and async, and each level its own instance.
    @Test func aDeepFamilyOfCollidingArgumentsIsNoCycle() async throws {
        let app = DependencyContainer()
        #expect(app[hfCollidingLevel: CollidingID(raw: 60)]() == 60)
        #expect(try await app[hfAsyncCollidingLevel: CollidingID(raw: 60)]() == 60)
        #expect(app.instanceIfBuilt(\.[hfCollidingLevel: CollidingID(raw: 30)]) == 30)
    }

    /// A scope overriding one colliding argument shares the app's instance of another;
    /// resetting one leaves the other.
    @Test func collidingArgumentsStayApartInScopesOverridesAndResets() {
        let app = DependencyContainer()
        let two = app[colliding: CollidingID(raw: 2)]()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.[colliding: CollidingID(raw: 1)]) { UserSession(id: "scope") }
        #expect(scope[colliding: CollidingID(raw: 1)]().id == "scope")
        #expect(scope[colliding: CollidingID(raw: 2)]() === two)
        app.reset(\.[colliding: CollidingID(raw: 1)])
        #expect(app[colliding: CollidingID(raw: 2)]() === two)
        #expect(app[colliding: CollidingID(raw: 1)]().id == "1")
    }

    /// `1 -> 2 -> 1`, each step a new object: the cycle check takes the new `1` for the one
    /// on the chain, and names the chain (a class argument by its type); the async family
    /// stops the same way.
    @Test func aCycleThroughEqualObjectsIsDetected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through equal objects")
            _ = DependencyContainer()[hfLoop: HFAccount("1")]()
        }
        let chain = CycleChain(result)
        #expect(chain?.names == ["subscript(hfLoop:)", "subscript(hfLoop:)", "subscript(hfLoop:)"], "\(chain?.description ?? standardError(of: result))")
        #expect(chain?.links.map(\.argument) == ["HFAccount", "HFAccount", "HFAccount"], "\(chain?.description ?? "")")
        let asyncResult = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an async cycle through equal objects")
            _ = try? await DependencyContainer()[hfAsyncLoop: HFAccount("1")]()
        }
        let output = standardError(of: asyncResult)
        #expect(output.contains("Circular dependency"), "\(output)")
    }

    /// The CHANGELOG's promise for a type that breaks `Hashable`'s rule: equal values
    /// whose hashes differ are two arguments everywhere. A construction of one that
    /// resolves the other builds it; before, the look for a construction in flight found
    /// the first as equal, and the resolution stopped as a cycle. In a process of its own,
    /// since that stop ends the process.
    @Test func equalArgumentsWhoseHashesDifferAreTwoArguments() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("equal arguments whose hashes differ")
            let container = DependencyContainer()
            let counter = container.counter("hfSalted")
            let outer = container[hfSalted: HFSaltedID(id: 7, salt: 0)]()
            let inner = container[hfSalted: HFSaltedID(id: 7, salt: 1)]()
            precondition(outer.inner === inner, "the construction's inner value is the other argument's instance")
            precondition(outer !== inner && counter.count == 2, "two arguments, two builds: \(counter.count)")
            precondition(container[hfSalted: HFSaltedID(id: 7, salt: 0)]() === outer, "the first is kept")
        }
    }

    @Test func aCycleThroughTwoNormalizationsOfOneStringIsDetected() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through two normalizations")
            _ = DependencyContainer()[hfNormalizedLoop: "caf\u{E9}"]()
        }
        let chain = CycleChain(result)
        #expect(chain?.names == ["subscript(hfNormalizedLoop:)", "subscript(hfNormalizedLoop:)"], "\(chain?.description ?? standardError(of: result))")
        #expect(chain?.links.count == 2 && chain?.links[0].location != nil, "\(chain?.description ?? "")")
    }
}
