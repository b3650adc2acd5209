@testable import DependencyInjection
import Foundation
import Testing

// Attacks on a `@Dependency` property's first read, outside every construction, that lets
// go of what its resolutions held (a replaced override, graph instances, a removed tracer)
// only once it has published: `deinit`s run by that release read the property again, read
// others for the first time (through the thread's spare frame), reset, switch, set, shut
// the container down, while other threads wait for the read or replace overrides. Each
// scenario runs in a process of its own: before the fix, the first such read stopped the
// process with a cycle.

/// Hooks handed, one each, to the graph logs made in the process, for their `deinit`s.
final class RAPHooks: @unchecked Sendable {
    private let lock = NSLock()
    private var queue: [@Sendable () -> Void] = []
    func push(_ hook: @escaping @Sendable () -> Void) { lock.withLock { queue.append(hook) } }
    func next() -> (@Sendable () -> Void)? {
        lock.withLock { queue.isEmpty ? nil : queue.removeFirst() }
    }
}
let rapHooks = RAPHooks()

final class RAPLog: @unchecked Sendable {
    let hook: (@Sendable () -> Void)?
    init() { hook = rapHooks.next() }
    deinit { hook?() }
}

final class RAPThing: @unchecked Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

final class RAPMock: @unchecked Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

extension DependencyContainer {
    var rapLog: Provider<RAPLog> { graph { RAPLog() } }
    var rapA: Provider<RAPThing> {
        factory {
            _ = self.rapLog()
            return RAPThing("a")
        }
    }
    var rapB: Provider<RAPThing> {
        factory {
            _ = self.rapLog()
            return RAPThing("b")
        }
    }
    var rapPlain: Provider<RAPThing> { factory { RAPThing("plain") } }
    /// A screen made inside a construction: its property's first read is nested.
    var rapInnerScreen: Provider<RAPScreen> {
        factory {
            let inner = RAPScreen(container: self)
            _ = inner.a
            return inner
        }
    }
}

final class RAPScreen: @unchecked Sendable {
    @Dependency(\.rapA) var a
    @Dependency(\.rapB) var b
    @Dependency(\.rapPlain) var plain
    init(container: DependencyContainer) {
        $a.container = container
        $b.container = container
        $plain.container = container
    }
}

final class RAPOuter: @unchecked Sendable {
    @Dependency(\.rapInnerScreen) var inner
    init(container: DependencyContainer) { $inner.container = container }
}

@Suite struct ReleaseAfterPublishAttackTests {
    // MARK: - Re-entrant reads in the deinits the release runs

    /// No threads: a's first read builds a graph log; its deinit (run by the release) reads
    /// a again, b for the first time (which builds another log, whose deinit reads a, b and a
    /// new screen's a, whose log reads that screen's b and a again).
    static func reentrantReads() {
        endProcessIfHung("reentrantReads")
        let container = DependencyContainer()
        let screen = RAPScreen(container: container)
        let seen = Collected<String>()
        let identities = Collected<ObjectIdentifier>()
        rapHooks.push {
            seen.append("log1:a=\(screen.a.name)")
            identities.append(ObjectIdentifier(screen.a))
            seen.append("log1:b=\(screen.b.name)")
            identities.append(ObjectIdentifier(screen.b))
        }
        rapHooks.push {
            seen.append("log2:a=\(screen.a.name)")
            seen.append("log2:b=\(screen.b.name)")
            let fresh = RAPScreen(container: container)
            seen.append("log2:fresh.a=\(fresh.a.name)")
            seen.append("log2:fresh.a again=\(fresh.a === fresh.a)")
        }
        rapHooks.push {
            let fresh = RAPScreen(container: container)
            seen.append("log3:fresh.b=\(fresh.b.name)")
            seen.append("log3:fresh.plain=\(fresh.plain.name)")
        }
        let a = screen.a
        precondition(ObjectIdentifier(a) == identities.values.first, "log1 read another a: \(identities.values)")
        precondition(screen.b === screen.b)
        precondition(ObjectIdentifier(screen.b) == identities.values.last)
        let values = seen.values
        precondition(values == [
            // Each log goes once the read that built it has published, before the code
            // after that read: log 3, built by the fresh screen's read in log 2, reports
            // before log 2 appends what that read returned.
            "log1:a=a", "log2:a=a", "log2:b=b", "log3:fresh.b=b", "log3:fresh.plain=plain", "log2:fresh.a=a",
            "log2:fresh.a again=true", "log1:b=b",
        ], "\(values)")
        // More first reads on this thread afterwards, through the spare frame.
        for _ in 0..<1_000 {
            let s = RAPScreen(container: container)
            precondition(s.a === s.a && s.plain === s.plain)
        }
    }

    @Test func reentrantReadsInTheReleasedDeinitsGetPublishedValues() async {
        let passed = await #expect(processExitsWith: .success) { Self.reentrantReads() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.reentrantReads()
            })
        }
    }

    /// The log's deinit resets the property it was built for and reads it again, switches
    /// the property's container and reads it again, and sets it.
    static func deinitResetsSwitchesAndSets() {
        endProcessIfHung("deinitResetsSwitchesAndSets")
        let container = DependencyContainer()
        let other = DependencyContainer()
        other.override(\.rapA) { RAPThing("other") }
        let screen = RAPScreen(container: container)
        let seen = Collected<String>()
        rapHooks.push {
            let first = screen.a
            screen.$a.reset()
            let second = screen.a  // a new first read, builds log 2
            seen.append("reset:\(first.name),\(second.name),\(first !== second)")
        }
        rapHooks.push {
            seen.append("log2:\(screen.a.name)")
            screen.$a.container = other
            seen.append("switched:\(screen.a.name)")
            screen.a = RAPThing("set")
            seen.append("set:\(screen.a.name)")
        }
        let read = screen.a
        precondition(read.name == "a", "\(read.name)")
        precondition(screen.a.name == "set", "\(screen.a.name) \(seen.values)")
        let values = seen.values
        precondition(values.count == 4, "\(values)")
        // The spare frame still serves this thread.
        for _ in 0..<1_000 {
            let s = RAPScreen(container: container)
            precondition(s.a === s.a)
        }
    }

    @Test func aDeinitThatResetsSwitchesAndSetsThePropertyIsServed() async {
        let passed = await #expect(processExitsWith: .success) { Self.deinitResetsSwitchesAndSets() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.deinitResetsSwitchesAndSets()
            })
        }
    }

    /// Nested: the outer's first read builds a screen and reads its `a` (a nested first
    /// read): the log that read built belongs to the outer read; its deinit reads the inner
    /// screen's a and b and the outer's property.
    static func nestedReadLogReadsBoth() {
        endProcessIfHung("nestedReadLogReadsBoth")
        let container = DependencyContainer()
        let outer = RAPOuter(container: container)
        let seen = Collected<String>()
        rapHooks.push {
            let inner = outer.inner
            seen.append("inner.a=\(inner.a.name)")
            seen.append("inner.b=\(inner.b.name)")
        }
        let inner = outer.inner
        precondition(seen.values == ["inner.a=a", "inner.b=b"], "\(seen.values)")
        precondition(inner === outer.inner)
    }

    @Test func aLogOfANestedReadReadsBothProperties() async {
        let passed = await #expect(processExitsWith: .success) { Self.nestedReadLogReadsBoth() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.nestedReadLogReadsBoth()
            })
        }
    }

    // MARK: - Another thread waits for the read

    /// Thread A reads a; its override is gated, and captures a mock whose deinit reads a
    /// and b and releases the screen's last other reference. Thread B waits for A's read.
    /// The override is replaced while A is inside it.
    static func waiterAndReplacedOverride(switchContainer: Bool) {
        endProcessIfHung("waiterAndReplacedOverride")
        let container = DependencyContainer(parent: .mocks)
        let other = DependencyContainer()
        other.override(\.rapA) { RAPThing("other") }
        nonisolated(unsafe) var screen: RAPScreen? = RAPScreen(container: container)
        let gate = OnceGate()
        let seen = Collected<String>()
        let deinitDone = DispatchSemaphore(value: 0)
        do {
            let held = screen!
            let mock = RAPMock {
                seen.append("mock:a=\(held.a.name)")
                seen.append("mock:b=\(held.b.name)")
                deinitDone.signal()
            }
            container.override(\.rapA) {
                _ = mock
                gate.pass()
                return RAPThing("first stub")
            }
        }
        let a = screen!
        let readA = Collected<String>()
        let readB = Collected<String>()
        let done = DispatchGroup()
        done.enter()
        Thread {
            readA.append(a.a.name)
            done.leave()
        }.start()
        gate.gate.entered.wait()
        done.enter()
        Thread {
            readB.append(a.a.name)
            done.leave()
        }.start()
        while !a.$a.storage.isAwaited { sched_yield() }
        if switchContainer { a.$a.container = other }
        container.override(\.rapA) { RAPThing("second stub") }
        screen = nil
        gate.gate.open()
        done.wait()
        deinitDone.wait()
        let values = seen.values
        if switchContainer {
            precondition(readA.values == ["first stub"], "\(readA.values)")
            precondition(values.first == "mock:a=" + a.a.name, "\(values) \(readB.values) \(a.a.name)")
        } else {
            precondition(readA.values == ["first stub"] && readB.values == ["first stub"], "\(readA.values) \(readB.values)")
            precondition(values == ["mock:a=first stub", "mock:b=b"], "\(values)")
        }
    }

    @Test func aWaiterAndAReplacedOverride() async {
        let passed = await #expect(processExitsWith: .success) { Self.waiterAndReplacedOverride(switchContainer: false) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.waiterAndReplacedOverride(switchContainer: false)
            })
        }
    }

    @Test func aWaiterAndAReplacedOverrideWithTheContainerSwitched() async {
        let passed = await #expect(processExitsWith: .success) { Self.waiterAndReplacedOverride(switchContainer: true) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.waiterAndReplacedOverride(switchContainer: true)
            })
        }
    }

    // MARK: - The deinit shuts down the container, overrides the key

    static func deinitShutsDownAndOverrides() {
        endProcessIfHung("deinitShutsDownAndOverrides")
        let container = DependencyContainer()
        let screen = RAPScreen(container: container)
        let seen = Collected<String>()
        rapHooks.push {
            container.override(\.rapA) { RAPThing("overridden in deinit") }
            seen.append("a=\(screen.a.name)")
            let fresh = RAPScreen(container: container)
            seen.append("fresh=\(fresh.a.name)")
            container.shutdown()
            seen.append("after shutdown a=\(screen.a.name)")
        }
        precondition(screen.a.name == "a")
        precondition(seen.values == ["a=a", "fresh=overridden in deinit", "after shutdown a=a"], "\(seen.values)")
    }

    @Test func aDeinitShuttingDownTheContainer() async {
        let passed = await #expect(processExitsWith: .success) { Self.deinitShutsDownAndOverrides() }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.deinitShutsDownAndOverrides()
            })
        }
    }

    // MARK: - Stress

    /// Rounds: threads released together do first reads of fresh screens (each builds a
    /// graph log whose deinit reads the screen's other property and a fresh screen's), a
    /// thread reads a shared screen, and others replace `a`'s override with closures whose
    /// mocks read the shared screen's properties and a fresh screen's.
    static func stress(rounds: Int) {
        endProcessIfHung("stress")
        let reported = Counter()
        let made = Counter()
        for _ in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            let shared = RAPScreen(container: container)
            @Sendable func install(_ name: String) {
                let mock = RAPMock { [weak container, weak shared] in
                    _ = shared?.a
                    _ = shared?.b
                    if let container {
                        let fresh = RAPScreen(container: container)
                        _ = fresh.b
                        _ = fresh.a
                    }
                    reported.increment()
                }
                made.increment()
                container.override(\.rapA) { [unowned container] in
                    _ = mock
                    _ = container.rapLog()
                    return RAPThing(name)
                }
            }
            install("first")
            let other = DependencyContainer(parent: .mocks)
            onThreadsReleasedTogether(8) { index in
                switch index {
                case 6:
                    _ = shared.a
                case 7:
                    shared.$b.reset()
                    shared.$a.container = other
                    _ = shared.b
                    shared.$a.container = container
                case 0:
                    _ = shared.a
                case 1:
                    _ = shared.b
                    _ = shared.a
                case 2, 3:
                    for _ in 0..<8 {
                        let fresh = RAPScreen(container: container)
                        _ = fresh.a
                        _ = fresh.b
                        _ = fresh.plain
                    }
                default:
                    for n in 0..<4 { install("stub \(index) \(n)") }
                }
            }
            precondition(shared.a === shared.a)
            withExtendedLifetime((container, other)) {}
        }
        // The last installed override's mock goes with its world, later than the check:
        // count only that none was reported twice.
        precondition(reported.count <= made.count)
    }

    @Test func stressFirstReadsWhileOverridesAreReplaced() async {
        let passed = await #expect(processExitsWith: .success) { Self.stress(rounds: 300) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.stress(rounds: 300)
            })
        }
    }
}

// MARK: - A kept owner's first read, whose frame a task inherits

final class RAPKeptModel: @unchecked Sendable {
    @Dependency(\.rapTasked) var tasked
    @Dependency(\.rapB) var b
    init() {}
}

let rapTasksDone = DispatchGroup()

extension DependencyContainer {
    var rapKeptModel: Provider<RAPKeptModel> { singleton { RAPKeptModel() } }
    var rapTasked: Provider<RAPThing> {
        factory {
            _ = self.rapLog()
            rapTasksDone.enter()
            let model = self.rapKeptModel()
            Task {
                // Inherits the read's frame: waits for the read, then reads on.
                _ = model.tasked
                _ = model.b
                rapTasksDone.leave()
            }
            return RAPThing("tasked")
        }
    }
}

extension ReleaseAfterPublishAttackTests {
    static func keptOwnerStress(rounds: Int) {
        endProcessIfHung("keptOwnerStress")
        for _ in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            let model = container.rapKeptModel()
            @Sendable func install(_ name: String) {
                let mock = RAPMock { [weak container] in
                    _ = model.tasked
                    _ = model.b
                    if let container {
                        let fresh = RAPScreen(container: container)
                        _ = fresh.a
                    }
                }
                container.override(\.rapB) { [unowned container] in
                    _ = mock
                    _ = container.rapLog()
                    return RAPThing(name)
                }
            }
            install("first")
            rapHooks.push { _ = model.tasked; _ = model.b }
            onThreadsReleasedTogether(4) { index in
                switch index {
                case 0: _ = model.tasked
                case 1:
                    _ = model.b
                    _ = model.tasked
                case 2:
                    let fresh = RAPScreen(container: container)
                    _ = fresh.a
                    _ = fresh.b
                default:
                    for n in 0..<3 { install("stub \(n)") }
                }
            }
            precondition(model.tasked === model.tasked)
            withExtendedLifetime(container) {}
        }
        rapTasksDone.wait()
    }

    @Test func keptOwnerStressExit() async {
        let passed = await #expect(processExitsWith: .success) { Self.keptOwnerStress(rounds: 300) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.keptOwnerStress(rounds: 300)
            })
        }
    }
}

// MARK: - A tracer removed while a first read runs

extension ReleaseAfterPublishAttackTests {
    /// The tracer's closure captures a mock whose deinit reads the screen's a and b. The
    /// tracer is set before the read (the read is traced) or while it runs (it traces
    /// nothing of it), and removed while the read is inside a's override.
    static func tracerRemovedDuringFirstRead(setWhileRunning: Bool) {
        endProcessIfHung("tracerRemovedDuringFirstRead")
        let container = DependencyContainer(parent: .mocks)
        let screen = RAPScreen(container: container)
        let gate = OnceGate()
        let innerGate = OnceGate()
        let seen = Collected<String>()
        let mockGone = DispatchSemaphore(value: 0)
        @Sendable func setTracer() {
            let mock = RAPMock {
                seen.append("a=\(screen.a.name)")
                seen.append("b=\(screen.b.name)")
                mockGone.signal()
            }
            container.tracer = ResolutionTracer { _ in _ = mock }
        }
        if !setWhileRunning { setTracer() }
        container.override(\.rapA) { [unowned container] in
            gate.pass()
            // Resolved after the tracer was set: a resolution inside the read.
            _ = container.rapLog()
            _ = container.rapPlain()
            innerGate.pass()
            return RAPThing("stub")
        }
        let read = Collected<String>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            read.append(screen.a.name)
            done.signal()
        }.start()
        gate.gate.entered.wait()
        if setWhileRunning { setTracer() }
        gate.gate.open()
        innerGate.gate.entered.wait()
        container.tracer = nil
        innerGate.gate.open()
        done.wait()
        mockGone.wait()
        precondition(read.values == ["stub"])
        precondition(seen.values == ["a=stub", "b=b"], "\(seen.values)")
    }

    @Test func aTracedFirstReadWhoseTracerIsRemoved() async {
        let passed = await #expect(processExitsWith: .success) { Self.tracerRemovedDuringFirstRead(setWhileRunning: false) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.tracerRemovedDuringFirstRead(setWhileRunning: false)
            })
        }
    }

    @Test func anUntracedFirstReadWhoseTracerIsSetAndRemoved() async {
        let passed = await #expect(processExitsWith: .success) { Self.tracerRemovedDuringFirstRead(setWhileRunning: true) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.tracerRemovedDuringFirstRead(setWhileRunning: true)
            })
        }
    }
}

// MARK: - A plain factory under the read

extension DependencyContainer {
    var rapClient: Provider<RAPThing> { singleton { RAPThing("client") } }
    var rapUsesClient: Provider<RAPThing> { factory { RAPThing("uses " + self.rapClient().name) } }
}

final class RAPPlainScreen: @unchecked Sendable {
    @Dependency(\.rapUsesClient) var uses
    @Dependency(\.rapPlain) var plain
    init(container: DependencyContainer) {
        $uses.container = container
        $plain.container = container
    }
}

extension ReleaseAfterPublishAttackTests {
    static func plainFactoryUnderTheRead(rounds: Int) {
        endProcessIfHung("plainFactoryUnderTheRead")
        for round in 0..<rounds {
            let container = DependencyContainer(parent: .mocks)
            // Warm: the factory is resolved plainly once, so the read's next one is plain.
            _ = container.rapUsesClient()
            container.reset(\.rapClient)
            let screen = RAPPlainScreen(container: container)
            let gate = OnceGate()
            let seen = Collected<String>()
            let gone = DispatchSemaphore(value: 0)
            do {
                let mock = RAPMock {
                    seen.append(screen.uses.name)
                    seen.append(screen.plain.name)
                    let fresh = RAPPlainScreen(container: container)
                    seen.append(fresh.uses.name)
                    gone.signal()
                }
                container.override(\.rapClient) {
                    _ = mock
                    gate.pass()
                    return RAPThing("first stub")
                }
            }
            let done = DispatchSemaphore(value: 0)
            let read = Collected<String>()
            Thread {
                read.append(screen.uses.name)
                done.signal()
            }.start()
            gate.gate.entered.wait()
            container.override(\.rapClient) { RAPThing("second stub") }
            gate.gate.open()
            done.wait()
            gone.wait()
            precondition(read.values == ["uses first stub"], "\(round) \(read.values)")
            precondition(
                seen.values == ["uses first stub", "plain", "uses second stub"] || seen.values == ["uses first stub", "plain", "uses first stub"],
                "\(seen.values)")
        }
    }

    @Test func aPlainFactoryUnderTheReadReleasesAfterThePublish() async {
        let passed = await #expect(processExitsWith: .success) { Self.plainFactoryUnderTheRead(rounds: 50) }
        if passed == nil {
            recordStop(of: await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                Self.plainFactoryUnderTheRead(rounds: 50)
            })
        }
    }
}
