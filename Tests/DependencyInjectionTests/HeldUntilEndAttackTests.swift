import DependencyInjection
import Foundation
import Testing

// Attacks on the release of what a resolution held: a resolution inside a construction
// hands the override and trace it held (and a tracer removed meanwhile) to the outermost
// resolution of its thread, which lets go of them once its own construction has completed,
// whether the resolution built, found a graph instance, was served or waited.

final class HUEMock: @unchecked Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

final class HUEClient: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

final class HUEAnalytics: Sendable {
    let client: HUEClient
    init(client: HUEClient) { self.client = client }
}

final class HUELog: Sendable {}

final class HUEWeak: @unchecked Sendable {
    weak var object: AnyObject?
}

/// A family argument whose `==` can be made to wait, once, when it compares an argument
/// with itself (the resolution's own check of its argument, outside every lock).
final class HUEArgGate: @unchecked Sendable {
    let gate = ConstructionGate()
    let lock = NSLock()
    var armed = true
    func passIfArmed() {
        let first = lock.withLock {
            defer { armed = false }
            return armed
        }
        if first {
            gate.enterAndWait()
        }
    }
}

struct HUEKey: Hashable, Sendable {
    let id: Int
    let gate: HUEArgGate?
    static func == (lhs: HUEKey, rhs: HUEKey) -> Bool {
        if let gate = lhs.gate, rhs.gate === gate { gate.passIfArmed() }
        return lhs.id == rhs.id
    }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// What the analytics construction in a test process asks twice of the graph family.
nonisolated(unsafe) var hueBetweenAsks: OnceGate? = nil
nonisolated(unsafe) var hueSecondArgument: HUEKey = HUEKey(id: 1, gate: nil)

final class HUEReadScreen: @unchecked Sendable {
    @Dependency(\.hueAnalytics) var analytics
    init(container: DependencyContainer) { $analytics.container = container }
}

final class HUEDeepTop: Sendable {
    let value: Int
    init(_ value: Int) { self.value = value }
}

final class HUELogged: Sendable {}
final class HUEReadLog: Sendable {
    deinit { if let screen = hueLoggedScreen { hueLogReads.append(screen.logged) } }
}
nonisolated(unsafe) weak var hueLoggedScreen: HUELoggedScreen?
let hueLogReads = Collected<HUELogged>()

final class HUELoggedScreen: @unchecked Sendable {
    @Dependency(\.hueLogged) var logged
    init(container: DependencyContainer) { $logged.container = container }
}

final class HUEScreen: @unchecked Sendable {
    @Dependency(\.hueClientFactory) var client
    init(container: DependencyContainer) { $client.container = container }
}

extension DependencyContainer {
    var hueClient: Provider<HUEClient> { singleton { HUEClient("live") } }
    var hueClientFactory: Provider<HUEClient> { factory { HUEClient("live factory") } }
    var hueAnalytics: Provider<HUEAnalytics> { singleton { HUEAnalytics(client: self.hueClient()) } }
    var hueOuterFactory: Provider<HUEAnalytics> { factory { HUEAnalytics(client: self.hueClient()) } }

    subscript(hueDeep n: Int) -> Provider<Int> { factory(n) { n == 0 ? 0 : self[hueDeep: n - 1]() + 1 } }
    var hueDeepTop: Provider<HUEDeepTop> { singleton { HUEDeepTop(self[hueDeep: 1_500]()) } }

    subscript(hueLog key: HUEKey) -> Provider<HUELog> { graph(key) { HUELog() } }
    /// Asks the graph family's member 1 twice: the second time, the outermost resolution
    /// has it already.
    var hueReadLog: Provider<HUEReadLog> { graph { HUEReadLog() } }
    var hueLogged: Provider<HUELogged> {
        factory {
            _ = self.hueReadLog()
            return HUELogged()
        }
    }
    var hueChain: ProviderFamily<Int, Int> { factory { (n: Int) in n } }
    var hueLoggedAnalytics: Provider<HUEAnalytics> {
        singleton {
            let first = self[hueLog: HUEKey(id: 1, gate: nil)]()
            hueBetweenAsks?.pass()
            let second = self[hueLog: hueSecondArgument]()
            precondition(first === second, "one graph instance per outermost resolution")
            return HUEAnalytics(client: HUEClient("logged"))
        }
    }
}

@Suite struct HeldUntilEndAttackTests {
    // MARK: - A graph member found in the outermost resolution, with an override held

    /// Thread A builds the logged analytics. Its construction asks the graph family member
    /// 1 twice; the family is overridden by a closure capturing a mock that reports through
    /// the logged analytics when it goes. The second ask finds the graph instance the
    /// outermost already has, but its resolution took the override first (begin, under the
    /// lock). While it checks its argument (`==`, outside the lock), this thread replaces the
    /// family's override: the resolution holds the last reference to the old closure, and
    /// lets go of it when `prepare` returns `.ready`, inside the analytics construction.
    static func graphMemberFoundWhileOverrideReplaced() {
        endProcessIfHung("graphMemberFoundWhileOverrideReplaced")
        let container = DependencyContainer(parent: .mocks)
        let argGate = HUEArgGate()
        hueSecondArgument = HUEKey(id: 1, gate: argGate)
        let between = OnceGate()
        hueBetweenAsks = between
        let reported = Counter()
        let resolved = DispatchSemaphore(value: 0)
        Thread {
            _ = container.hueLoggedAnalytics()
            resolved.signal()
        }.start()
        // Between the two asks: the family member is overridden now, by a closure that
        // captures the mock.
        between.gate.entered.wait()
        do {
            let mock = HUEMock { [unowned container] in
                _ = container.hueLoggedAnalytics()
                reported.increment()
            }
            container.override(\.[hueLog: HUEKey(id: 1, gate: nil)]) {
                _ = mock
                return HUELog()
            }
        }
        between.gate.open()
        // The second ask took that override, and checks its argument.
        argGate.gate.entered.wait()
        container.override(\.[hueLog: HUEKey(id: 1, gate: nil)]) { HUELog() }
        precondition(reported.count == 0, "a resolution on the other thread still holds the old closure")
        argGate.gate.open()
        resolved.wait()
        precondition(reported.count == 1, "the mock went before the resolution returned")
    }

    @Test func aGraphMemberFoundInTheOutermostLetsGoOfAReplacedOverrideOutsideTheConstruction() async {
        let passed = await #expect(processExitsWith: .success) { Self.graphMemberFoundWhileOverrideReplaced() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.graphMemberFoundWhileOverrideReplaced()
            })
        }
    }

    // MARK: - A property's first read as the outermost frame

    /// Thread A reads a screen's `client` for the first time; the factory is overridden with
    /// a closure capturing a mock whose `deinit` reads that same property. The override is
    /// replaced while A is inside it. The read frame is the outermost: it lets go of the old
    /// closure when the frame ends, before the read has published.
    static func firstReadWhileOverrideReplaced() {
        endProcessIfHung("firstReadWhileOverrideReplaced")
        let container = DependencyContainer(parent: .mocks)
        let screen = HUEScreen(container: container)
        let gate = OnceGate()
        let reported = Collected<String>()
        do {
            let mock = HUEMock { [screen] in
                reported.append(screen.client.name)
            }
            container.override(\.hueClientFactory) {
                _ = mock
                gate.pass()
                return HUEClient("first stub")
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        Thread {
            precondition(screen.client.name == "first stub")
            resolved.signal()
        }.start()
        gate.gate.entered.wait()
        container.override(\.hueClientFactory) { HUEClient("second stub") }
        gate.gate.open()
        resolved.wait()
        let seen = reported.takeAll()
        precondition(seen == ["first stub"], "the mock's deinit read the published value: \(seen)")
    }

    @Test func aFirstReadLetsGoOfAReplacedOverrideSoThatADeinitReadingThePropertyGetsIt() async {
        let passed = await #expect(processExitsWith: .success) { Self.firstReadWhileOverrideReplaced() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.firstReadWhileOverrideReplaced()
            })
        }
    }

    // MARK: - A plain factory as the outermost frame

    /// Thread A resolves a plain factory (nothing replaces it) whose closure resolves the
    /// overridden client singleton; the mock's `deinit` resolves that same factory. The
    /// override is replaced while A is inside it.
    static func plainFactoryOutermost() {
        endProcessIfHung("plainFactoryOutermost")
        let container = DependencyContainer(parent: .mocks)
        let gate = OnceGate()
        let reported = Counter()
        nonisolated(unsafe) weak var weakMock: HUEMock?
        do {
            let mock = HUEMock { [unowned container] in
                _ = container.hueOuterFactory()
                reported.increment()
            }
            weakMock = mock
            container.override(\.hueClient) {
                _ = mock
                gate.pass()
                return HUEClient("first stub")
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        let goneOnReturn = Counter()
        Thread {
            _ = container.hueOuterFactory()
            if weakMock == nil && reported.count == 1 { goneOnReturn.increment() }
            resolved.signal()
        }.start()
        gate.gate.entered.wait()
        container.override(\.hueClient) { HUEClient("second stub") }
        gate.gate.open()
        resolved.wait()
        precondition(goneOnReturn.count == 1, "the mock went before the outermost factory returned")
    }

    @Test func aPlainFactoryOutermostLetsGoOnceItEnded() async {
        let passed = await #expect(processExitsWith: .success) { Self.plainFactoryOutermost() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.plainFactoryOutermost()
            })
        }
    }

    // MARK: - Memory: a task started inside the construction keeps the frame chain

    /// The outermost analytics construction starts a task that outlives it, holding the
    /// frame chain; the mock captured by the replaced override must still go when the
    /// outermost returns.
    @Test(arguments: ["singleton", "factory", "read"])
    func aTaskHoldingTheChainKeepsNothingAlive(_ outermost: String) async {
        let ok = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer(parent: .mocks)
            let gate = OnceGate()
            let taskMayEnd = DispatchSemaphore(value: 0)
            let taskEnded = DispatchSemaphore(value: 0)
            let weakMock = HUEWeak()
            do {
                let mock = HUEMock {}
                weakMock.object = mock
                container.override(\.hueClient) {
                    _ = mock
                    gate.pass()
                    Task.detached {}  // nothing inherited
                    Task {
                        taskMayEnd.wait()
                        taskEnded.signal()
                    }
                    return HUEClient("first stub")
                }
            }
            let resolved = DispatchSemaphore(value: 0)
            let goneOnReturn = Counter()
            let screen = HUEReadScreen(container: container)
            Thread {
                switch outermost {
                case "singleton": _ = container.hueAnalytics()
                case "factory": _ = container.hueOuterFactory()
                default: _ = screen.analytics
                }
                if weakMock.object == nil { goneOnReturn.increment() }
                resolved.signal()
            }.start()
            gate.gate.entered.wait()
            container.override(\.hueClient) { HUEClient("second stub") }
            gate.gate.open()
            resolved.wait()
            #expect(goneOnReturn.count == 1, "the mock outlived the outermost resolution (\(outermost))")
            taskMayEnd.signal()
            taskEnded.wait()
        }
        #expect(ok)
    }

    // MARK: - Deep chains

    /// 1,500 nested factories under a singleton, each overridden with a closure that
    /// captures a mock of its own whose `deinit` resolves the singleton. Every override is
    /// replaced while the innermost runs.
    static func deepChainOfReplacedOverrides() {
        endProcessIfHung("deepChainOfReplacedOverrides")
        let depth = 1_500
        let container = DependencyContainer(parent: .mocks)
        let gate = OnceGate()
        let reported = Counter()
        for n in 0...depth {
            let mock = HUEMock { [unowned container] in
                precondition(container.hueDeepTop().value == depth)
                reported.increment()
            }
            container.override(\.[hueDeep: n]) { [unowned container] in
                _ = mock
                if n == 0 { gate.pass() }
                return n == 0 ? 0 : container[hueDeep: n - 1]() + 1
            }
        }
        let resolved = DispatchSemaphore(value: 0)
        let reportedOnReturn = Counter()
        let thread = Thread {
            precondition(container.hueDeepTop().value == depth)
            if reported.count == depth + 1 { reportedOnReturn.increment() }
            resolved.signal()
        }
        thread.stackSize = 64 << 20
        thread.start()
        gate.gate.entered.wait()
        for n in 0...depth {
            container.override(\.[hueDeep: n]) { [unowned container] in n == 0 ? 0 : container[hueDeep: n - 1]() + 1 }
        }
        precondition(reported.count == 0)
        gate.gate.open()
        resolved.wait()
        precondition(reportedOnReturn.count == 1, "every mock went before the outermost returned: \(reported.count)")
    }

    @Test func aDeepChainOfReplacedOverridesLetsGoOfThemAllOnceTheOutermostCompleted() async {
        let passed = await #expect(processExitsWith: .success) { Self.deepChainOfReplacedOverrides() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.deepChainOfReplacedOverrides()
            })
        }
    }

    // MARK: - Tracer replaced while traced resolutions run

    /// The tracer's closure captures a mock whose `deinit` resolves the analytics; the
    /// tracer is removed while another thread's traced construction of the analytics is
    /// inside the client's override.
    static func tracerRemovedWhileTraced(_ replaceOverrideToo: Bool) {
        endProcessIfHung("tracerRemovedWhileTraced")
        let container = DependencyContainer(parent: .mocks)
        let gate = OnceGate()
        let reported = Counter()
        let events = Collected<String>()
        do {
            let mock = HUEMock { [unowned container] in
                _ = container.hueAnalytics()
                reported.increment()
            }
            container.tracer = ResolutionTracer { batch in
                _ = mock
                for event in batch { events.append(event.name) }
            }
        }
        container.override(\.hueClient) {
            gate.pass()
            return HUEClient("first stub")
        }
        let resolved = DispatchSemaphore(value: 0)
        Thread {
            _ = container.hueAnalytics()
            resolved.signal()
        }.start()
        gate.gate.entered.wait()
        container.tracer = nil
        if replaceOverrideToo { container.override(\.hueClient) { HUEClient("second stub") } }
        precondition(reported.count == 0)
        gate.gate.open()
        resolved.wait()
        precondition(reported.count == 1, "the tracer went with the resolution")
    }

    @Test func removingTheTracerWhileATracedConstructionRunsIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.tracerRemovedWhileTraced(false) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.tracerRemovedWhileTraced(false)
            })
        }
    }

    @Test func removingTheTracerAndTheOverrideWhileATracedConstructionRunsIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.tracerRemovedWhileTraced(true) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.tracerRemovedWhileTraced(true)
            })
        }
    }

    // MARK: - Threads released together

    /// Each round: a fresh world whose client is overridden by a closure capturing a mock
    /// whose `deinit` resolves the analytics (and reads a screen's analytics); threads
    /// released together resolve the analytics through a singleton, a factory, and a first
    /// read, while others replace the override and swap the tracer.
    static func threadsReplaceWhileOthersResolve() {
        endProcessIfHung("threadsReplaceWhileOthersResolve")
        let rounds = 400
        let reported = Counter()
        let made = Counter()
        for _ in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            let screen = HUEReadScreen(container: container)
            @Sendable func install(_ name: String) {
                let mock = HUEMock { [weak container] in
                    if let container {
                        _ = container.hueAnalytics()
                        _ = container.hueOuterFactory()
                    }
                    reported.increment()
                }
                made.increment()
                container.override(\.hueClient) {
                    _ = mock
                    return HUEClient(name)
                }
            }
            install("first")
            onThreadsReleasedTogether(5) { index in
                switch index {
                case 0: _ = container.hueAnalytics()
                case 1: _ = container.hueOuterFactory()
                case 2: _ = screen.analytics
                case 3:
                    install("second")
                    install("third")
                default:
                    let tracerMock = HUEMock { [weak container] in
                        if let container { _ = container.hueAnalytics() }
                    }
                    container.tracer = ResolutionTracer { _ in _ = tracerMock }
                    container.tracer = nil
                }
            }
            withExtendedLifetime(container) {}
        }
        // Every replaced stub's mock went; the last installed one goes with its world.
        precondition(reported.count == made.count, "\(reported.count) of \(made.count) mocks went")
    }

    @Test func threadsReplacingOverridesAndTracersWhileOthersResolveFindNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.threadsReplaceWhileOthersResolve() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.threadsReplaceWhileOthersResolve()
            })
        }
    }

    /// Ungated: a thread resolves the logged analytics (which asks graph member 1 twice)
    /// in a fresh world while another keeps replacing the member's override with closures
    /// capturing mocks that resolve the logged analytics when they go.
    static func graphMemberRaceUngated() {
        endProcessIfHung("graphMemberRaceUngated")
        let rounds = 3_000
        hueSecondArgument = HUEKey(id: 1, gate: nil)
        hueBetweenAsks = nil
        for _ in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            let stop = Counter()
            onThreadsReleasedTogether(2) { index in
                if index == 0 {
                    _ = container.hueLoggedAnalytics()
                    stop.increment()
                } else {
                    while stop.count == 0 {
                        let mock = HUEMock { [weak container] in
                            if let container { _ = container.hueLoggedAnalytics() }
                        }
                        container.override(\.[hueLog: HUEKey(id: 1, gate: nil)]) {
                            _ = mock
                            return HUELog()
                        }
                    }
                }
            }
        }
    }

    @Test func graphMemberRaceWithoutAGate() async {
        let passed = await #expect(processExitsWith: .success) { Self.graphMemberRaceUngated() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.graphMemberRaceUngated()
            })
        }
    }

    // MARK: - A graph instance built during a first read

    /// No threads: a screen's first read resolves a factory whose closure resolves a graph
    /// log; the log's `deinit` reads that screen's property.
    static func graphInstanceOfAFirstReadReadsTheProperty() {
        endProcessIfHung("graphInstanceOfAFirstReadReadsTheProperty")
        let container = DependencyContainer()
        let screen = HUELoggedScreen(container: container)
        hueLoggedScreen = screen
        let seen = screen.logged
        precondition(hueLogReads.values.count == 1, "the log went before the read returned")
        precondition(hueLogReads.values[0] === seen)
    }

    @Test func aGraphInstanceOfAFirstReadWhoseDeinitReadsThePropertyIsNoCycle() async {
        let passed = await #expect(processExitsWith: .success) { Self.graphInstanceOfAFirstReadReadsTheProperty() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.graphInstanceOfAFirstReadReadsTheProperty()
            })
        }
    }
}
