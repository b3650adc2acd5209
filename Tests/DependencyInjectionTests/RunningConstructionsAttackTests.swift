import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Attacks on a container's running constructions (two kept inline, the rest in an array,
// a freed slot refilled from the array's end) through the public behaviour: chains of
// singletons built on several threads of one container, each link held at a gate of its
// own, so that constructions begin and end in any interleaving the test chooses. While
// they run, other threads ask for each link in flight (they must wait in its room and get
// its instance); an override (of what the links resolve, or of one link) or a reset lands
// among them. Every order is driven by gates and by conditions read under the container's
// lock, never by a delay.

/// What the base registration builds: where it came from.
final class RCABase: Sendable {
    let madeBy: String
    init(_ madeBy: String) { self.madeBy = madeBy }
}

/// What a link builds: its index, who made it, the base it resolved and its inner link.
final class RCAPart: Sendable {
    let index: Int
    let madeBy: String
    let base: RCABase?
    let inner: RCAPart?
    init(_ index: Int, madeBy: String, base: RCABase? = nil, inner: RCAPart? = nil) {
        (self.index, self.madeBy, self.base, self.inner) = (index, madeBy, base, inner)
    }

    /// Whether this part, or one it was built from, is stale after `change`.
    func isStale(after change: RCAChange) -> Bool {
        switch change {
        case .overrideBase: if base?.madeBy == "registration" { return true }
        case .overrideLink(let link): if index == link && madeBy == "registration" { return true }
        case .reset: return true
        }
        return inner?.isStale(after: change) ?? false
    }

    /// Whether this part, or one it was built from, is of the registration that `change`
    /// replaced (a reset replaces nothing).
    func holdsReplaced(by change: RCAChange) -> Bool {
        if case .reset = change { return false }
        return isStale(after: change)
    }
}

/// A change the scenario makes while constructions run.
enum RCAChange: Sendable, CustomStringConvertible {
    case overrideBase
    case overrideLink(Int)
    case reset

    var description: String {
        switch self {
        case .overrideBase: "override base"
        case .overrideLink(let link): "override link \(link)"
        case .reset: "reset"
        }
    }
}

/// How the links of one scenario are built, read by their closures from the container's
/// stored values: which inner link each resolves, which resolve the base, where each is
/// held the first time it is built, how many times each was built, and what its first
/// construction made.
final class RCAControl: @unchecked Sendable {
    // @unchecked: the dictionaries are only touched while holding `lock`; the rest is
    // immutable.
    private let lock = NSLock()
    let family: Bool
    private let inner: [Int: Int]
    private let users: Set<Int>
    private let gates: [ConstructionGate]
    private var passed: Set<Int> = []
    private var builds: [Int: Int] = [:]
    private var firstMade: [Int: RCAPart] = [:]

    init(family: Bool, links: Int, inner: [Int: Int], users: Set<Int>) {
        (self.family, self.inner, self.users) = (family, inner, users)
        gates = (0..<links).map { _ in ConstructionGate() }
    }

    func gate(_ link: Int) -> ConstructionGate { gates[link] }
    func inner(of link: Int) -> Int? { inner[link] }
    func usesBase(_ link: Int) -> Bool { users.contains(link) }

    /// Counts a build of `link`, and returns which one it is, the first being 1.
    func counted(_ link: Int) -> Int {
        lock.withLock {
            builds[link, default: 0] += 1
            return builds[link]!
        }
    }
    func builds(of link: Int) -> Int { lock.withLock { builds[link] ?? 0 } }
    func firstMade(_ link: Int) -> RCAPart? { lock.withLock { firstMade[link] } }

    /// Holds the first construction of `link` at its gate; later ones go straight on.
    func pass(_ link: Int) {
        let first = lock.withLock { passed.insert(link).inserted }
        if first { gates[link].enterAndWait() }
    }

    /// Notes what the first build of a link made, whenever it ends.
    func made(_ part: RCAPart, build: Int) {
        if build == 1 { lock.withLock { firstMade[part.index] = part } }
    }
}

extension DependencyContainer {
    var rcaBase: Provider<RCABase> { factory { RCABase("registration") } }

    subscript(rcaLink link: Int) -> Provider<RCAPart> { singleton(link) { self.rcaBuild(link) } }

    var rcaP0: Provider<RCAPart> { singleton { self.rcaBuild(0) } }
    var rcaP1: Provider<RCAPart> { singleton { self.rcaBuild(1) } }
    var rcaP2: Provider<RCAPart> { singleton { self.rcaBuild(2) } }
    var rcaP3: Provider<RCAPart> { singleton { self.rcaBuild(3) } }
    var rcaP4: Provider<RCAPart> { singleton { self.rcaBuild(4) } }
    var rcaP5: Provider<RCAPart> { singleton { self.rcaBuild(5) } }
    var rcaP6: Provider<RCAPart> { singleton { self.rcaBuild(6) } }
    var rcaP7: Provider<RCAPart> { singleton { self.rcaBuild(7) } }
    var rcaP8: Provider<RCAPart> { singleton { self.rcaBuild(8) } }
    var rcaP9: Provider<RCAPart> { singleton { self.rcaBuild(9) } }

    static func rcaKeyPath(_ link: Int, family: Bool) -> KeyPath<DependencyContainer, Provider<RCAPart>> {
        if family { return \DependencyContainer.[rcaLink: link] }
        switch link {
        case 0: return \.rcaP0
        case 1: return \.rcaP1
        case 2: return \.rcaP2
        case 3: return \.rcaP3
        case 4: return \.rcaP4
        case 5: return \.rcaP5
        case 6: return \.rcaP6
        case 7: return \.rcaP7
        case 8: return \.rcaP8
        case 9: return \.rcaP9
        default: fatalError("no plain link \(link)")
        }
    }

    func rcaLink(_ link: Int, family: Bool) -> Provider<RCAPart> {
        self[keyPath: Self.rcaKeyPath(link, family: family)]
    }

    /// A link's construction: the base, if it uses it, then its inner link, then its gate.
    func rcaBuild(_ link: Int) -> RCAPart {
        let control: RCAControl = getValue(forKey: "rca.control")!
        let build = control.counted(link)
        let base = control.usesBase(link) ? rcaBase() : nil
        let inner = control.inner(of: link).map { rcaLink($0, family: control.family)() }
        control.pass(link)
        let part = RCAPart(link, madeBy: "registration", base: base, inner: inner)
        control.made(part, build: build)
        return part
    }

    /// How many owners have waited so far for the construction of `key` running here and
    /// not dropped: read under the container's lock and the room's.
    func rcaWaited(for key: RegistrationKey) -> Int {
        withStateLock { state in
            var waited = 0
            for construction in state.building where construction.key == key && !construction.isDropped {
                waited = construction.asyncWaitRoom?.waitedSoFar ?? 0
            }
            return waited
        }
    }

    /// How many owners have waited so far for the dropped constructions of `key` running
    /// here.
    func rcaWaitedForDropped(_ key: RegistrationKey) -> Int {
        withStateLock { state in
            var waited = 0
            for construction in state.building where construction.key == key && construction.isDropped {
                waited += construction.asyncWaitRoom?.waitedSoFar ?? 0
            }
            return waited
        }
    }

    var rcaNothingRuns: Bool { withStateLock { $0.building.isEmpty } }
}

/// Chains of links built on threads of their own in one container: chain `c` of depth `d`
/// is links `offset ..< offset + d`, the first the innermost; each resolves the one below
/// it, then waits at its gate.
struct RCAScenario: Sendable, CustomStringConvertible {
    enum Event: Sendable, CustomStringConvertible {
        /// A thread starts building chain `c`: every link of it runs, the innermost held.
        case start(Int)
        /// The innermost running link of chain `c` ends.
        case end(Int)
        /// Threads ask for every link in flight that is still to be kept, and wait.
        case probe
        case change(RCAChange)
        /// After the change: a thread asks for the innermost running link of each chain
        /// started before it that the change surely dropped, which must not wait for that
        /// construction but build anew, from what replaced it.
        case askDropped

        var description: String {
            switch self {
            case .start(let chain): "start \(chain)"
            case .end(let chain): "end \(chain)"
            case .probe: "probe"
            case .change(let change): "\(change)"
            case .askDropped: "ask dropped"
            }
        }
    }

    var depths: [Int]
    var family: Bool
    var users: Set<Int>
    var events: [Event]

    var offsets: [Int] { depths.indices.map { depths[..<$0].reduce(0, +) } }
    var links: Int { depths.reduce(0, +) }

    var description: String {
        "depths \(depths), \(family ? "family" : "plain"), users \(users.sorted()), events \(events)"
    }

    /// A random scenario: up to three chains, up to ten links, at most one change.
    static func random(_ random: inout SeededGenerator) -> RCAScenario {
        let chains = 1 + random.below(3)
        var depths = (0..<chains).map { _ in 1 + random.below(4) }
        while depths.reduce(0, +) > 10 { depths[random.below(chains)] = 1 }
        let links = depths.reduce(0, +)
        let users = Set((0..<links).filter { _ in random.chance(40) })
        var scenario = RCAScenario(depths: depths, family: random.chance(50), users: users, events: [])
        var started = Set<Int>()
        var ended = Array(repeating: 0, count: chains)
        var changed = false
        while started.count < chains || ended != depths {
            let startable = (0..<chains).filter { !started.contains($0) }
            let endable = (0..<chains).filter { started.contains($0) && ended[$0] < depths[$0] }
            let roll = random.below(100)
            if !changed && roll < 12 {
                changed = true
                let change: RCAChange
                switch random.below(3) {
                case 0: change = .overrideBase
                case 1 where !started.isEmpty:
                    // A link of a chain already started: one started later would not run
                    // the links below it, nor reach their gates.
                    let chain = started.sorted()[random.below(started.count)]
                    let offset = depths[..<chain].reduce(0, +)
                    change = .overrideLink(offset + random.below(depths[chain]))
                case 1: change = .overrideBase
                default: change = .reset
                }
                scenario.events.append(.change(change))
            } else if changed && roll < 20 {
                scenario.events.append(.askDropped)
            } else if roll < 30 {
                scenario.events.append(.probe)
            } else if !startable.isEmpty && (endable.isEmpty || roll < 65) {
                let chain = startable[random.below(startable.count)]
                started.insert(chain)
                scenario.events.append(.start(chain))
            } else if !endable.isEmpty {
                let chain = endable[random.below(endable.count)]
                ended[chain] += 1
                scenario.events.append(.end(chain))
            }
        }
        return scenario
    }

    /// Runs the scenario in a new container and records in `findings` what went wrong.
    func run(_ findings: Findings) {
        let offsets = self.offsets
        var inner: [Int: Int] = [:]
        for (chain, depth) in depths.enumerated() where depth > 1 {
            for level in 1..<depth { inner[offsets[chain] + level] = offsets[chain] + level - 1 }
        }
        let control = RCAControl(family: family, links: links, inner: inner, users: users)
        let container = DependencyContainer()
        container.setValue(control, forKey: "rca.control")
        let family = self.family
        let key = { (link: Int) in container.rcaLink(link, family: family).key }
        let note = { (what: String) in findings.check(false, "\(what) — \(self)") }

        var builders: [Int: () -> ObjectIdentifier] = [:]
        var nextToEnd = Array(repeating: 0, count: depths.count)
        var startedAfterChange = Set<Int>()  // chains
        var change: RCAChange?
        var waiters: [(link: Int, result: () -> ObjectIdentifier)] = []
        var askedAnew: [(link: Int, part: RCAPart)] = []

        func running() -> [Int] {
            builders.keys.flatMap { chain in
                (nextToEnd[chain]..<depths[chain]).map { offsets[chain] + $0 }
            }
        }
        func chain(of link: Int) -> Int { offsets.lastIndex { $0 <= link }! }
        func isCurrent(_ link: Int) -> Bool { change == nil || startedAfterChange.contains(chain(of: link)) }

        func apply(_ event: Event) {
            switch event {
            case .start(let chain):
                let top = offsets[chain] + depths[chain] - 1
                if change != nil { startedAfterChange.insert(chain) }
                builders[chain] = onThread { ObjectIdentifier(container.rcaLink(top, family: family)()) }
                control.gate(offsets[chain]).entered.wait()
            case .end(let chain):
                let link = offsets[chain] + nextToEnd[chain]
                control.gate(link).open()
                nextToEnd[chain] += 1
                if nextToEnd[chain] < depths[chain] {
                    control.gate(link + 1).entered.wait()
                } else {
                    _ = builders[chain]!()
                }
                if isCurrent(link), !isOverridden(link) {
                    let made = control.firstMade(link)
                    let resolved = container.rcaLink(link, family: family)()
                    if made !== resolved { note("link \(link) just ended, resolved to another instance") }
                }
            case .probe:
                // Only the constructions still to be kept: a dropped one is built anew.
                for link in running() where isCurrent(link) {
                    let waitedBefore = container.rcaWaited(for: key(link))
                    let returned = Collected<Bool>()
                    let result = onThread {
                        let part = ObjectIdentifier(container.rcaLink(link, family: family)())
                        returned.append(true)
                        return part
                    }
                    while container.rcaWaited(for: key(link)) <= waitedBefore && returned.values.isEmpty {
                        sched_yield()
                    }
                    if !returned.values.isEmpty {
                        note("a thread asking for link \(link) in flight returned without waiting")
                    }
                    waiters.append((link, result))
                }
            case .askDropped:
                for chain in builders.keys.sorted() where nextToEnd[chain] < depths[chain] {
                    let link = offsets[chain] + nextToEnd[chain]
                    guard surelyDropped(link) else { continue }
                    let waitedBefore = container.rcaWaitedForDropped(key(link))
                    let returned = Collected<Bool>()
                    let result = onThread {
                        let part = container.rcaLink(link, family: family)()
                        returned.append(true)
                        return part
                    }
                    while container.rcaWaitedForDropped(key(link)) <= waitedBefore && returned.values.isEmpty {
                        sched_yield()
                    }
                    if returned.values.isEmpty {
                        note("a thread asking for link \(link) waits for its dropped construction")
                        // It gets its instance once the test lets the construction end.
                    } else {
                        askedAnew.append((link, result()))
                    }
                }
            case .change(let made):
                change = made
                switch made {
                case .overrideBase: container.override(\.rcaBase) { RCABase("override") }
                case .overrideLink(let link):
                    container.override(DependencyContainer.rcaKeyPath(link, family: family)) {
                        RCAPart(link, madeBy: "override")
                    }
                case .reset: container.reset()
                }
            }
        }
        /// Whether the change surely dropped the running `link` of a chain started before:
        /// it, or a link inside it, was built from what the change replaced.
        func surelyDropped(_ link: Int) -> Bool {
            guard let change, !startedAfterChange.contains(chain(of: link)) else { return false }
            let lowest = offsets[chain(of: link)]
            switch change {
            case .reset: return true
            case .overrideBase: return (lowest...link).contains { users.contains($0) }
            case .overrideLink(let replaced): return chain(of: replaced) == chain(of: link) && replaced <= link
            }
        }
        func isOverridden(_ link: Int) -> Bool {
            if case .overrideLink(link) = change { return true }
            return false
        }

        for event in events { apply(event) }
        for chain in depths.indices where builders[chain] == nil { apply(.start(chain)) }
        for chain in depths.indices { while nextToEnd[chain] < depths[chain] { apply(.end(chain)) } }

        for (link, result) in waiters {
            let made = control.firstMade(link).map(ObjectIdentifier.init)
            if result() != made { note("a waiter for link \(link) got another instance than its construction") }
        }
        for (link, part) in askedAnew {
            if part === control.firstMade(link) { note("link \(link), asked for after the change, got the dropped instance") }
            if let change, part.holdsReplaced(by: change) { note("link \(link), asked for after the change, was built from what it replaced") }
            if isOverridden(link) && part.madeBy != "override" { note("link \(link), asked for after its override, is not the override's") }
            if container.rcaLink(link, family: family)() !== part { note("link \(link), built anew after the change, was not kept") }
        }
        if !container.rcaNothingRuns { note("constructions are still listed after every one ended") }
        for link in 0..<links {
            let first = control.firstMade(link)
            let final = container.rcaLink(link, family: family)()
            if let change {
                if final.holdsReplaced(by: change) {
                    note("link \(link) resolves to an instance built from what \(change) replaced or dropped")
                }
                if isCurrent(link) {
                    if !isOverridden(link) && final !== first { note("link \(link), started after the change, was built again") }
                } else if let first, first.isStale(after: change), final === first {
                    note("link \(link) kept an instance \(change) made stale")
                }
                if isOverridden(link) && final.madeBy != "override" { note("overridden link \(link) is not the override's") }
            } else {
                if final !== first { note("link \(link) resolves to another instance than its construction's") }
                if control.builds(of: link) != 1 { note("link \(link) built \(control.builds(of: link)) times") }
            }
        }
        // Every gate a later build of a link may have entered is open: nothing stays held.
        for link in 0..<links { control.gate(link).open() }
    }
}

/// Scenarios over many interleavings, run on a thread of their own behind the hang guard.
@Suite struct RunningConstructionsAttackTests {
    private func run(_ scenarios: [RCAScenario]) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            for scenario in scenarios { scenario.run(findings) }
        }
        #expect(finished, "the scenarios hung")
        #expect(findings.problems == [])
    }

    /// All interleavings of ends of the given chains, all started first (in order), with
    /// waiters probed after every end.
    private static func interleavings(_ depths: [Int], family: Bool, users: Set<Int> = []) -> [RCAScenario] {
        func orders(_ left: [Int]) -> [[Int]] {
            if left.allSatisfy({ $0 == 0 }) { return [[]] }
            return left.indices.filter { left[$0] > 0 }.flatMap { chain in
                var rest = left
                rest[chain] -= 1
                return orders(rest).map { [chain] + $0 }
            }
        }
        return orders(depths).map { order in
            let starts = depths.indices.map { RCAScenario.Event.start($0) }
            let ends = order.flatMap { [RCAScenario.Event.end($0), .probe] }
            return RCAScenario(depths: depths, family: family, users: users, events: starts + [.probe] + ends)
        }
    }

    /// Five single constructions on five threads (two inline, three in the array), ended in
    /// every order; after each end, a thread asks for each one still running and must wait
    /// for it and get its instance.
    @Test func fiveConstructionsEndingInEveryOrderAreEachWaitedForAndBuiltOnce() async {
        await run(Self.interleavings([1, 1, 1, 1, 1], family: false))
    }

    /// Two chains of three on two threads (a construction inside a construction inside a
    /// construction), ending in every interleaving; plain and family links.
    @Test func twoChainsOfThreeEndingInEveryInterleavingAreWaitedForAndBuiltOnce() async {
        await run(Self.interleavings([3, 3], family: false) + Self.interleavings([3, 3], family: true))
    }

    /// One chain six deep, with a single construction beside it ending first or last.
    @Test func aSixDeepChainBesideAnotherConstructionIsWaitedForAtEveryLink() async {
        await run(Self.interleavings([6, 1], family: false) + Self.interleavings([1, 6], family: true))
    }

    /// Three chains (2, 2, 1) in every interleaving, the base resolved at the bottom of
    /// each: every link waited for and built once.
    @Test func threeChainsInEveryInterleavingAreWaitedForAndBuiltOnce() async {
        await run(Self.interleavings([2, 2, 1], family: false, users: [0, 2, 4]))
    }

    /// An override of the base while five constructions run, with each position of the
    /// running list holding one that resolved it: none of those is kept, a new asker does
    /// not wait for them, and everything resolved afterwards is built from the override.
    @Test func anOverrideWhileFiveRunDropsEveryOneThatUsedTheBase() async {
        var scenarios: [RCAScenario] = []
        for user in 0..<5 {
            for endedBefore in 0..<5 {
                // Constructions 0 ..< endedBefore end before the override, shifting the
                // others into the inline slots.
                let ends = (0..<endedBefore).map { RCAScenario.Event.end($0) }
                for family in [false, true] {
                    scenarios.append(RCAScenario(
                        depths: [1, 1, 1, 1, 1], family: family, users: [user],
                        events: (0..<5).map { .start($0) } + [.probe] + ends + [.change(.overrideBase), .askDropped]))
                }
            }
        }
        await run(scenarios)
    }

    /// An override of one link while it runs in any of five positions: it is not kept,
    /// and what it is inside of is built anew from the override.
    @Test func anOverrideOfARunningLinkInAnyPositionIsNotKept() async {
        var scenarios: [RCAScenario] = []
        for depths in [[1, 1, 1, 1, 1], [2, 3], [3, 2], [5]] {
            let links = depths.reduce(0, +)
            for link in 0..<links {
                for family in [false, true] {
                    let starts = depths.indices.map { RCAScenario.Event.start($0) }
                    scenarios.append(RCAScenario(
                        depths: depths, family: family, users: [],
                        events: starts + [.probe, .change(.overrideLink(link)), .askDropped, .end(depths.count - 1), .askDropped]))
                }
            }
        }
        await run(scenarios)
    }

    /// A reset while two, three, four or five run, some ended before: none of those
    /// running is kept; what starts afterwards is kept and waited for.
    @Test func aResetWhileSeveralRunKeepsNoneOfThem() async {
        var scenarios: [RCAScenario] = []
        for running in 2...5 {
            for endedBefore in 0..<running {
                let depths = Array(repeating: 1, count: running) + [2]
                let starts = (0..<running).map { RCAScenario.Event.start($0) }
                let ends = (0..<endedBefore).map { RCAScenario.Event.end($0) }
                scenarios.append(RCAScenario(
                    depths: depths, family: running % 2 == 0, users: [0],
                    events: starts + ends + [.change(.reset), .askDropped, .start(running), .probe, .end(running), .probe]))
            }
        }
        await run(scenarios)
    }

    /// Random scenarios: chains started and ended in random interleavings, waiters probed,
    /// at most one override or reset among them.
    @Test(arguments: 0..<4)
    func randomInterleavingsKeepEveryInstanceRight(batch: Int) async {
        var random = SeededGenerator(seed: 0x5EED_0000 + UInt64(batch))
        await run((0..<60).map { _ in RCAScenario.random(&random) })
    }
}
