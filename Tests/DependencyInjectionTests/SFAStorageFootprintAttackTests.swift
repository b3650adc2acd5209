@testable import DependencyInjection
import Foundation
import Observation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Attacks on the three-word `@Dependency` storage: its one word of state (the container,
// the first read's frame, or the state in full) changed while a first read runs, by that
// read itself or by others; what it releases and when; the `valueType` test that tells
// the two initializers apart; and the process-wide declaration records with their
// lock-free cache.

// MARK: - Fixtures

final class SFAEngine: Sendable {
    let label: String
    let onDeinit: (@Sendable () -> Void)?
    init(label: String, onDeinit: (@Sendable () -> Void)? = nil) { (self.label, self.onDeinit) = (label, onDeinit) }
    deinit { onDeinit?() }
}

extension DependencyContainer {
    /// A new engine each time, labelled with the stored `"sfa.label"`. It counts its runs,
    /// passes the `OnceGate` at `"sfa.gate"` and fires the hook at `"sfa.during"`, when
    /// those are stored.
    var sfaEngine: Provider<SFAEngine> {
        factory {
            self.count("sfaEngine")
            (self.getValue(forKey: "sfa.gate") as OnceGate?)?.pass()
            (self.getValue(forKey: "sfa.during") as DeinitHook?)?.fire()
            return SFAEngine(label: self.getValue(forKey: "sfa.label") ?? "live")
        }
    }

    /// A singleton whose deinit fires the hook stored at `"sfa.sentinelDeinit"` when it
    /// was built: it goes with its container.
    var sfaSentinel: Provider<SFAEngine> {
        singleton {
            let hook: DeinitHook? = self.getValue(forKey: "sfa.sentinelDeinit")
            return SFAEngine(label: "sentinel", onDeinit: { hook?.fire() })
        }
    }

    var sfaKeeper: Provider<SFAKeeper> { singleton { SFAKeeper() } }
}

/// Thread-safe: its only state is a `@Dependency` property.
final class SFAHolder: @unchecked Sendable {
    @Dependency(\.sfaEngine) var engine
    init() {}
    var storage: DependencyStorage { _engine.storage }
}

/// A singleton that makes a holder while it is built: the holder's property holds the
/// container weakly.
final class SFAKeeper: @unchecked Sendable {
    let holder = SFAHolder()
    init() {}
}

/// The word a first read finds: the container alone, the state in full with the
/// container held strongly (after a reset, before or after a value), or held weakly.
enum SFAStart: String, CaseIterable, Sendable {
    case containerWord, stateInFull, republished, weaklyHeld
}

/// What happens to the property while its first read runs.
enum SFAChange: String, CaseIterable, Sendable {
    case nothing, reset, set, switchContainer
}

/// A property about to be read for the first time, from `start`: the container it
/// resolves `"first"` from, another that resolves `"other"`, and the count of its builds.
func sfaWorld(_ start: SFAStart) -> (DependencyContainer, DependencyContainer, SFAHolder, Counter) {
    let container = DependencyContainer()
    container.setValue("first", forKey: "sfa.label")
    let other = DependencyContainer()
    other.setValue("other", forKey: "sfa.label")
    let holder = sfaHolder(start, in: container)
    return (container, other, holder, container.counter("sfaEngine"))
}

func sfaHolder(_ start: SFAStart, in container: DependencyContainer) -> SFAHolder {
    switch start {
    case .containerWord:
        return DependencyContainer.withMain(container) { SFAHolder() }
    case .stateInFull:
        let holder = DependencyContainer.withMain(container) { SFAHolder() }
        holder.$engine.reset()
        return holder
    case .republished:
        let holder = DependencyContainer.withMain(container) { SFAHolder() }
        _ = holder.engine
        holder.$engine.reset()
        return holder
    case .weaklyHeld:
        return container.sfaKeeper().holder
    }
}

/// A read of `holder.engine` on a thread of its own.
final class SFARead: Sendable {
    private let value = Collected<SFAEngine>()
    private let done = DispatchSemaphore(value: 0)

    init(_ holder: SFAHolder) {
        let (value, done) = (value, done)
        Thread {
            value.append(holder.engine)
            done.signal()
        }.start()
    }

    /// Whether the read has returned.
    var hasEnded: Bool { !value.values.isEmpty }

    /// What the read returned, once it has.
    func result() -> SFAEngine {
        done.wait()
        done.signal()
        return value.values[0]
    }
}

/// Returns once another owner waits for the first read of `storage`, or once `reader`
/// has returned (then it did not wait, and the caller's checks fail). Each pass reads
/// the storage's state under its lock.
func sfaAwaitWaiter(on storage: DependencyStorage, orEndOf reader: SFARead) {
    while !storage.isAwaited && !reader.hasEnded { sched_yield() }
}

/// Applies `change` to `holder`'s property.
func sfaApply(_ change: SFAChange, to holder: SFAHolder, chosen: SFAEngine, other: DependencyContainer) {
    switch change {
    case .nothing: break
    case .reset: holder.$engine.reset()
    case .set: holder.engine = chosen
    case .switchContainer: holder.$engine.container = other
    }
}

/// What reads see after a first read that returned `first` ran through `change`; nil when
/// they see what they should.
func sfaLaterReadsProblem(
    after change: SFAChange, first: SFAEngine, holder: SFAHolder, builds: Counter, chosen: SFAEngine,
    other: DependencyContainer
) -> String? {
    let later = holder.engine
    let again = holder.engine
    guard later === again else { return "two later reads differ: the value was not published" }
    switch change {
    case .nothing:
        if later !== first { return "the first read's value was not published" }
        if builds.count != 1 { return "\(builds.count) builds" }
    case .reset:
        if later === first { return "a resolution begun before a reset published its value" }
        if later.label != "first" { return "resolved \(later.label)" }
        if builds.count != 2 { return "\(builds.count) builds, expected 2" }
    case .set:
        if later !== chosen { return "the value set while the first read ran was lost (\(later.label))" }
        if builds.count != 1 { return "\(builds.count) builds" }
    case .switchContainer:
        if later.label != "other" { return "resolved from the old container (\(later.label))" }
        if holder.$engine.container !== other { return "the property's container is not the one switched to" }
    }
    return nil
}

// A holder whose deinit uses its properties.

final class SFADeinitHolder: @unchecked Sendable {
    @Dependency(\.sfaEngine) var first
    @Dependency(\.sfaEngine) var second
    let report: Collected<String>
    init(report: Collected<String>) { self.report = report }
    deinit {
        $first.reset()
        report.append(second.label)
        report.append($first.container === $second.container ? "same container" : "another container")
        first = SFAEngine(label: "late")
        report.append(first.label)
    }
}

// The two initializers, told apart by the key path's value type.

protocol SFAShape: Sendable { var name: String { get } }
struct SFASquare: SFAShape { let name: String }

extension DependencyContainer {
    var sfaOptionalName: String? { getValue(forKey: "sfa.optionalName") }
    var sfaOptionalEngine: Provider<SFAEngine?> { factory { SFAEngine(label: "optional") } }
    var sfaShape: Provider<any SFAShape> { factory { SFASquare(name: "square") } }
    var sfaNestedEngine: Provider<Provider<SFAEngine>> { factory { self.sfaEngine } }
    var sfaAnything: Any { "anything" }
    var sfaAnyService: Provider<Any> { factory { 42 as Any } }
    var sfaOptionalProvider: Provider<SFAEngine>? { sfaEngine }
}

final class SFAShapes: @unchecked Sendable {
    @Dependency(\.sfaOptionalName) var optionalName
    @Dependency(\.sfaOptionalEngine) var optionalEngine
    @Dependency(\.sfaShape) var shape
    @Dependency(\.sfaShape) var shapeProvider: Provider<any SFAShape>
    @Dependency(\.sfaNestedEngine) var innerProvider
    @Dependency(\.sfaNestedEngine) var outerProvider: Provider<Provider<SFAEngine>>
    @Dependency(\.sfaAnything) var anything: Any
    @Dependency(\.sfaAnyService) var anyService: Any
    @Dependency(\.sfaOptionalProvider) var optionalProvider
    // One line, one key path, both initializers: one declaration record.
    @Dependency(\.sfaShape) var sameLineShape; @Dependency(\.sfaShape) var sameLineProvider: Provider<any SFAShape>
    init() {}

    var sameLineSharesRecord: Bool {
        _sameLineShape.words.site.sharesRecord(with: _sameLineProvider.words.site)
    }
}

final class SFAGenericHolder<Value>: @unchecked Sendable {
    @Dependency var value: Value
    init(provider keyPath: KeyPath<DependencyContainer, Provider<Value>>, in container: DependencyContainer) {
        _value = Dependency(keyPath, container: container)
    }
    init(plain keyPath: KeyPath<DependencyContainer, Value>, in container: DependencyContainer) {
        _value = Dependency(keyPath, container: container)
    }
}

// Many declarations at one site: a helper that makes the wrapper for any key path, with
// the line its caller gives.

extension DependencyContainer {
    var sfaSlot0: Int { 0 }
    var sfaSlot1: Int { 1 }
    var sfaSlot2: Int { 2 }
    var sfaSlot3: Int { 3 }
    var sfaSlot4: Int { 4 }
    var sfaSlot5: Int { 5 }
    var sfaSlot6: Int { 6 }
    var sfaSlot7: Int { 7 }
    subscript(sfaNumbered number: Int) -> Provider<Int> { factory(number) { number } }
    var sfaTable: SFATable { SFATable(container: self) }
}

/// Reached only by appending to `\DependencyContainer.sfaTable`.
struct SFATable {
    let container: DependencyContainer
    subscript(row: Int) -> Provider<Int> { container[sfaNumbered: row * 1_000] }
}

/// One key path object per literal: slots of the cache hold these.
nonisolated(unsafe) let sfaSlotPaths: [KeyPath<DependencyContainer, Int>] = [
    \.sfaSlot0, \.sfaSlot1, \.sfaSlot2, \.sfaSlot3, \.sfaSlot4, \.sfaSlot5, \.sfaSlot6, \.sfaSlot7,
]

func sfaInjected(_ keyPath: KeyPath<DependencyContainer, Int>, line: UInt, in container: DependencyContainer)
    -> Dependency<Int>
{
    Dependency(keyPath, container: container, function: "SFACache", fileID: "SFA/Cache.swift", line: line)
}

func sfaInjected(
    _ keyPath: KeyPath<DependencyContainer, Provider<Int>>, line: UInt, in container: DependencyContainer
) -> Dependency<Int> {
    Dependency(keyPath, container: container, function: "SFACache", fileID: "SFA/Cache.swift", line: line)
}

/// What is wrong with a property made by ``sfaInjected`` for `expected` at `line`, if anything.
func sfaProblem(_ property: Dependency<Int>, expected: Int, line: UInt) -> String? {
    let site = property.words.site.site
    if site.line != line || site.fileID.description != "SFA/Cache.swift" || site.nameText != "@Dependency in SFACache" {
        return "a declaration at line \(line) names \(site)"
    }
    let value = property.wrappedValue
    return value == expected ? nil : "a property of \(expected) resolved \(value)"
}

// Parameterized registrations whose arguments the records keep.

/// An argument whose instances say when they go.
final class SFAToken: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: SFAToken, rhs: SFAToken) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Equal by identity only, as apps write `Identifiable` models: two values of one id are
/// equal while their names differ.
struct SFAProfile: Hashable, Sendable {
    let id: Int
    let name: String
    static func == (lhs: SFAProfile, rhs: SFAProfile) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension DependencyContainer {
    subscript(sfaTokened token: SFAToken) -> Provider<Int> { factory(token) { token.id } }
    subscript(sfaProfileName profile: SFAProfile) -> Provider<String> { factory(profile) { profile.name } }
}

final class SFATokenHolder: @unchecked Sendable {
    @Dependency var id: Int
    init(_ token: SFAToken, in container: DependencyContainer) {
        _id = Dependency(\.[sfaTokened: token], container: container)
    }
}

final class SFAProfileHolder: @unchecked Sendable {
    @Dependency var name: String
    init(_ profile: SFAProfile, in container: DependencyContainer) {
        _name = Dependency(\.[sfaProfileName: profile], container: container)
    }
}

// Holders that apps isolate or observe.

@MainActor final class SFAScreenModel {
    @Dependency var engine: SFAEngine
    init(container: DependencyContainer) { _engine = Dependency(\.sfaEngine, container: container) }
}

@Observable final class SFAObservedModel: @unchecked Sendable {
    @ObservationIgnored @Dependency var engine: SFAEngine
    var title = "feed"
    init(container: DependencyContainer) { _engine = Dependency(\.sfaEngine, container: container) }
}

// MARK: - Tests

@Suite struct SFAStorageFootprintAttackTests {
    // MARK: - A change while the first read runs, from another thread

    /// The first read runs on a thread and is held in its factory; the test resets, sets
    /// or switches the property meanwhile, from every word the read can start from. The
    /// read returns what it resolved; later reads see the change, or the published value.
    @Test(arguments: SFAStart.allCases, SFAChange.allCases)
    func aChangeWhileTheFirstReadRunsIsWhatLaterReadsSee(start: SFAStart, change: SFAChange) {
        let (container, other, holder, builds) = sfaWorld(start)
        let once = OnceGate()
        container.setValue(once, forKey: "sfa.gate")
        let read = SFARead(holder)
        once.gate.entered.wait()
        #expect(holder.$engine.container === container, "the container while the first read runs")
        let chosen = SFAEngine(label: "chosen")
        sfaApply(change, to: holder, chosen: chosen, other: other)
        once.gate.open()
        let first = read.result()
        #expect(first.label == "first")
        let problem = sfaLaterReadsProblem(
            after: change, first: first, holder: holder, builds: builds, chosen: chosen, other: other)
        #expect(problem == nil, "\(start), \(change): \(problem ?? "")")
        withExtendedLifetime(container) {}
    }

    /// As above, with a second thread waiting for the first read when the change comes:
    /// it gets the first read's value, and nothing resolves twice.
    @Test(arguments: SFAStart.allCases, SFAChange.allCases)
    func aWaiterGetsTheFirstReadsValueWhateverChangedMeanwhile(start: SFAStart, change: SFAChange) {
        let (container, other, holder, builds) = sfaWorld(start)
        let once = OnceGate()
        container.setValue(once, forKey: "sfa.gate")
        let read = SFARead(holder)
        once.gate.entered.wait()
        let waiter = SFARead(holder)
        sfaAwaitWaiter(on: holder.storage, orEndOf: waiter)
        let chosen = SFAEngine(label: "chosen")
        sfaApply(change, to: holder, chosen: chosen, other: other)
        once.gate.open()
        let (first, waited) = (read.result(), waiter.result())
        #expect(waited === first, "\(start), \(change): the waiter got \(waited.label)")
        #expect(builds.count == 1, "\(start), \(change): \(builds.count) builds while the first read ran")
        let problem = sfaLaterReadsProblem(
            after: change, first: first, holder: holder, builds: builds, chosen: chosen, other: other)
        #expect(problem == nil, "\(start), \(change): \(problem ?? "")")
        withExtendedLifetime(container) {}
    }

    // MARK: - A change by the first read itself

    /// The first read's own resolution resets, sets, switches or reads the container of
    /// the property it resolves: it moves the word from the frame to the state in full on
    /// its own thread.
    @Test(arguments: SFAStart.allCases, SFAChange.allCases)
    func theFirstReadsOwnResolutionChangesItsProperty(start: SFAStart, change: SFAChange) {
        let (container, other, holder, builds) = sfaWorld(start)
        let chosen = SFAEngine(label: "chosen")
        let containers = Collected<Bool>()
        let hook = DeinitHook()
        container.setValue(hook, forKey: "sfa.during")
        hook.set { [weak holder] in
            guard let holder else { return }
            containers.append(holder.$engine.container === container)
            sfaApply(change, to: holder, chosen: chosen, other: other)
            containers.append(holder.$engine.container === (change == .switchContainer ? other : container))
        }
        let first = holder.engine
        #expect(hook.fired == 1)
        #expect(containers.values == [true, true], "\(start), \(change): the container seen during the resolution")
        #expect(first.label == "first")
        let problem = sfaLaterReadsProblem(
            after: change, first: first, holder: holder, builds: builds, chosen: chosen, other: other)
        #expect(problem == nil, "\(start), \(change): \(problem ?? "")")
    }

    /// A resolution that resets its own property and reads it again is still a cycle: the
    /// reset moved the word to the state in full, which keeps the frame of the read.
    @Test func aResolutionThatResetsItsPropertyAndReadsItStopsWithTheCycle() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property read back after a reset by its own resolution")
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { SFAHolder() }
            let hook = DeinitHook()
            container.setValue(hook, forKey: "sfa.during")
            hook.set { [weak holder] in
                holder?.$engine.reset()
                _ = holder?.engine
            }
            _ = holder.engine
        }
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        #expect(chain.names.first == "@Dependency in SFAHolder", "\(chain)")
        #expect(chain.names.last == "@Dependency in SFAHolder", "\(chain)")
    }

    /// The same, switching the container (to the one it has) before reading it back.
    @Test func aResolutionThatSwitchesItsPropertyAndReadsItStopsWithTheCycle() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property read back after a switch by its own resolution")
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { SFAHolder() }
            let hook = DeinitHook()
            container.setValue(hook, forKey: "sfa.during")
            hook.set { [weak holder] in
                holder?.$engine.container = container
                _ = holder?.engine
            }
            _ = holder.engine
        }
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        #expect(chain.names.first == "@Dependency in SFAHolder", "\(chain)")
    }

    // MARK: - Containers held weakly

    /// A kept object's property whose container is gone is not read: a value set on it is
    /// what it reads, and after a switch it resolves from the new container, held strongly
    /// (nothing else holds it).
    @Test func aWeaklyHeldPropertyWhoseContainerIsGoneTakesAValueAndAnotherContainer() async {
        await #expect(processExitsWith: .success) {
            let (holder, gone): (SFAHolder, Released) = {
                let container = DependencyContainer()
                return (container.sfaKeeper().holder, Released(container))
            }()
            precondition(gone.object == nil, "the kept object's property held its container")
            holder.engine = SFAEngine(label: "set")
            precondition(holder.engine.label == "set")
            holder.$engine.reset()
            let switched: Released = {
                let other = DependencyContainer()
                other.setValue("other", forKey: "sfa.label")
                holder.$engine.container = other
                return Released(other)
            }()
            precondition(switched.object != nil, "the property switched to a container does not hold it")
            precondition(holder.engine.label == "other")
            precondition(holder.$engine.container === switched.object)
        }
    }

    // MARK: - What is released, and when

    /// Replaced values stay alive while lock-free readers may hold them: until the holder
    /// goes. Then every value and the container go with it.
    @Test func replacedValuesLiveAsLongAsTheHolderAndGoWithIt() {
        let values = Collected<Released>()
        let container: Released
        do {
            let owner = DependencyContainer()
            container = Released(owner)
            var holder: SFAHolder? = DependencyContainer.withMain(owner) { SFAHolder() }
            values.append(Released(holder!.engine))
            holder!.engine = SFAEngine(label: "set")
            values.append(Released(holder!.engine))
            holder!.$engine.reset()
            values.append(Released(holder!.engine))
            let replacement = DependencyContainer()
            holder!.$engine.container = replacement
            values.append(Released(holder!.engine))
            #expect(values.values.allSatisfy { $0.object != nil }, "a replaced value went while its holder lives")
            holder = nil
        }
        #expect(values.values.allSatisfy { $0.object == nil }, "a value outlived its holder")
        #expect(container.object == nil, "the container outlived the holder")
    }

    /// A value replaced by a set or a reset is not released then, under the property's
    /// lock: its deinit, which resets and reads that property, runs when the holder goes.
    @Test func aReplacedValueWhoseDeinitUsesThePropertyIsNotReleasedUnderItsLock() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a replaced value's deinit using its property")
            let fired = DeinitHook()
            let container = DependencyContainer()
            var holder: SFAHolder? = DependencyContainer.withMain(container) { SFAHolder() }
            let target = Released(holder!)
            holder!.engine = SFAEngine(label: "reentrant") {
                fired.fire()
                guard let holder = target.object as? SFAHolder else { return }
                holder.$engine.reset()
                _ = holder.engine
            }
            holder!.engine = SFAEngine(label: "second")
            holder!.$engine.reset()
            precondition(holder!.engine.label == "live")
            precondition(fired.fired == 0, "a replaced value was released while its holder lives")
            holder = nil
            precondition(fired.fired == 1, "a replaced value outlived its holder")
        }
    }

    /// Switching drops the old container outside the lock: the old container's singleton,
    /// whose deinit reads and resets the property, goes with it.
    @Test func aContainerSwitchedAwayIsReleasedOutsideThePropertysLock() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a switched-away container's singleton using the property")
            let hook = DeinitHook()
            let second = DependencyContainer()
            second.setValue("second", forKey: "sfa.label")
            let holder: SFAHolder
            do {
                let first = DependencyContainer()
                first.setValue(hook, forKey: "sfa.sentinelDeinit")
                _ = first.sfaSentinel()
                holder = DependencyContainer.withMain(first) { SFAHolder() }
                precondition(holder.engine.label == "live")
            }
            let seen = Collected<String>()
            hook.set { [weak holder] in
                guard let holder else { return }
                seen.append(holder.engine.label)
                holder.$engine.reset()
                seen.append(holder.$engine.container === second ? "second" : "other")
            }
            holder.$engine.container = second
            precondition(hook.fired == 1, "the switched-away container is alive")
            precondition(seen.values == ["second", "second"], "\(seen.values)")
        }
    }

    /// The first read's own resolution switches the property away from a container that
    /// only that read still holds: the read drops it after its lock, and the container's
    /// singleton, whose deinit reads the property, goes then.
    @Test func aContainerOnlyTheFirstReadHoldsIsReleasedAfterItsLock() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a container dropped by the first read")
            let sentinel = DeinitHook()
            let during = DeinitHook()
            let second = DependencyContainer()
            second.setValue("second", forKey: "sfa.label")
            let holder: SFAHolder
            let gone: Released
            do {
                let first = DependencyContainer()
                gone = Released(first)
                first.setValue(sentinel, forKey: "sfa.sentinelDeinit")
                first.setValue(during, forKey: "sfa.during")
                _ = first.sfaSentinel()
                holder = DependencyContainer.withMain(first) { SFAHolder() }
            }
            let seen = Collected<String>()
            during.set { [weak holder] in holder?.$engine.container = second }
            sentinel.set { [weak holder] in
                guard let holder else { return }
                seen.append(holder.engine.label)
            }
            let firstRead = holder.engine
            precondition(firstRead.label == "live", firstRead.label)
            precondition(gone.object == nil && sentinel.fired == 1, "the first read kept its old container")
            precondition(seen.values == ["second"], "\(seen.values)")
            precondition(holder.engine.label == "second")
        }
    }

    /// A holder's deinit resets one property, reads another never read, and compares
    /// their containers.
    @Test func aHoldersDeinitUsesItsProperties() {
        let container = DependencyContainer()
        container.setValue("first", forKey: "sfa.label")
        let report = Collected<String>()
        do {
            let holder = DependencyContainer.withMain(container) { SFADeinitHolder(report: report) }
            _ = holder.first
        }
        #expect(report.values == ["first", "same container", "late"])
    }

    // MARK: - Lock-free reads racing changes

    /// Threads read a property without a lock while another sets, resets and switches it:
    /// every read is a whole value, and retired values stay readable.
    @Test func lockFreeReadsRacingSetsResetsAndSwitchesSeeWholeValues() async {
        let container = DependencyContainer()
        let other = DependencyContainer()
        other.setValue("other", forKey: "sfa.label")
        let holders = DependencyContainer.withMain(container) { (0..<64).map { _ in SFAHolder() } }
        let wrong = Collected<String>()
        let threadsEnded = await concurrentlyOffThePool(threads: 5) { thread in
            if thread == 0 {
                for round in 0..<40 {
                    for (index, holder) in holders.enumerated() {
                        switch (round + index) % 4 {
                        case 0: holder.engine = SFAEngine(label: "set")
                        case 1: holder.$engine.reset()
                        case 2: holder.$engine.container = round % 8 < 4 ? other : container
                        default: holder.$engine.reset()
                        }
                    }
                }
            } else {
                for _ in 0..<40 {
                    for holder in thread % 2 == 0 ? holders : holders.reversed() {
                        let label = holder.engine.label
                        if !["live", "other", "set"].contains(label) { wrong.append(label) }
                    }
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        #expect(holders.allSatisfy { $0.engine === $0.engine })
    }

    // MARK: - The two initializers

    /// Optional, existential, `Any`, nested providers and generic holders, through both
    /// initializers, and both on one line: each property injects what its type says.
    @Test func eachInitializerInjectsWhatItsTypeSays() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            container.setValue("named", forKey: "sfa.optionalName")
            let shapes = DependencyContainer.withMain(container) { SFAShapes() }
            precondition(shapes.optionalName == "named")
            precondition(shapes.optionalEngine?.label == "optional")
            precondition(shapes.shape.name == "square")
            precondition(shapes.shapeProvider().name == "square")
            precondition(shapes.innerProvider().label == "live")
            precondition(shapes.outerProvider()().label == "live")
            precondition(shapes.anything as? String == "anything")
            precondition(shapes.anyService as? Int == 42)
            precondition(shapes.optionalProvider?().label == "live")
            precondition(shapes.sameLineShape.name == "square")
            precondition(shapes.sameLineProvider().name == "square")
            precondition(shapes.sameLineSharesRecord, "one line, one key path: two records")

            let nested = SFAGenericHolder<Provider<SFAEngine>>(provider: \.sfaNestedEngine, in: container)
            precondition(nested.value().label == "live")
            let plain = SFAGenericHolder<Provider<SFAEngine>>(plain: \.sfaEngine, in: container)
            precondition(plain.value().label == "live")
            let optional = SFAGenericHolder<SFAEngine?>(provider: \.sfaOptionalEngine, in: container)
            precondition(optional.value?.label == "optional")
            let existential = SFAGenericHolder<any SFAShape>(provider: \.sfaShape, in: container)
            precondition(existential.value.name == "square")
            let anyValue = SFAGenericHolder<Any>(plain: \.sfaAnything, in: container)
            precondition(anyValue.value as? String == "anything")
        }
    }

    // MARK: - Declaration records

    /// Eight threads released together make properties through one helper, at one type
    /// and file: eight literal key paths on each of 1,500 lines, and key paths built at
    /// run time among them. Far more declarations than the cache has slots, so slots are
    /// replaced while others read them; each property resolves its own key path and names
    /// its own line, and a declaration made on several threads has one record.
    @Test func declarationsMadeOnEightThreadsAtOneSiteEachKeepTheirKeyPathAndLine() async {
        let container = DependencyContainer()
        let wrong = Collected<String>()
        let sample = Collected<PropertySite>()
        let threadsEnded = await concurrentlyOffThePool(threads: 8) { thread in
            for step in 0..<1_500 {
                let line = UInt((step * 7 + thread * 211) % 1_500 + 1)
                for offset in 0..<sfaSlotPaths.count {
                    let index = (offset + thread) % sfaSlotPaths.count
                    let property = sfaInjected(sfaSlotPaths[index], line: line, in: container)
                    if let problem = sfaProblem(property, expected: index, line: line) { wrong.append(problem) }
                    if line == 777 && index == 3 { sample.append(property.words.site) }
                }
                if step % 25 == thread {
                    let number = Int(line)
                    let numbered = sfaInjected(\DependencyContainer.[sfaNumbered: number], line: line, in: container)
                    if let problem = sfaProblem(numbered, expected: number, line: line) { wrong.append(problem) }
                    let appended = (\DependencyContainer.sfaTable).appending(path: \SFATable.[number])
                    let row = sfaInjected(appended, line: line, in: container)
                    if let problem = sfaProblem(row, expected: number * 1_000, line: line) { wrong.append(problem) }
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        #expect(wrong.values.isEmpty, "\(wrong.values.count) wrong, first: \(wrong.values.prefix(3))")
        let declarations = sample.values
        #expect(declarations.count == 8)
        #expect(declarations.allSatisfy { $0.sharesRecord(with: declarations[0]) }, "one declaration, several records")
    }

    /// A property held by a main-actor class or an `@Observable` class resolves, resets
    /// and switches like any other.
    @MainActor @Test func isolatedAndObservedHoldersResolveResetAndSwitch() {
        let container = DependencyContainer()
        let other = DependencyContainer()
        other.setValue("other", forKey: "sfa.label")
        let screen = SFAScreenModel(container: container)
        let first = screen.engine
        #expect(screen.engine === first)
        screen.$engine.reset()
        #expect(screen.engine !== first)
        screen.$engine.container = other
        #expect(screen.engine.label == "other")

        let observed = SFAObservedModel(container: container)
        let engine = observed.engine
        #expect(observed.engine === engine)
        observed.title = "changed"
        observed.$engine.container = other
        #expect(observed.engine.label == "other")
        #expect(observed.title == "changed")
    }

    // MARK: - Key paths that carry arguments

    /// A key path to a parameterized registration carries its argument. An object made
    /// for one argument, read and dropped with its container, must not keep the argument:
    /// apps make such objects per request or per id. (Records of declarations that kept
    /// their key paths for the life of the process kept every argument with them.)
    @Test func anArgumentOfAnInjectedKeyPathGoesWithItsObject() {
        let tokens: [Released] = (0..<100).map { id in
            let container = DependencyContainer()
            let token = SFAToken(id: id)
            let holder = SFATokenHolder(token, in: container)
            #expect(holder.id == id)
            return Released(token)
        }
        let kept = tokens.filter { $0.object != nil }.count
        #expect(kept == 0, "\(kept) of 100 arguments outlived their object, their container and the test's references")
    }

    /// Two objects injecting one parameterized registration with equal arguments that
    /// differ (a profile renamed, equal by its id): each resolves its own key path, as it
    /// does since each storage keeps its key path. (A record shared by equal key paths
    /// resolved the first one's argument.)
    @Test func anObjectResolvesItsOwnKeyPathNotAnEqualOneMadeBefore() {
        let container = DependencyContainer()
        let before = SFAProfileHolder(SFAProfile(id: 7, name: "Ada"), in: container)
        #expect(before.name == "Ada")
        let renamed = SFAProfileHolder(SFAProfile(id: 7, name: "Ada Lovelace"), in: container)
        #expect(renamed.name == "Ada Lovelace", "the property resolved an argument another object passed")
        #expect(container[sfaProfileName: SFAProfile(id: 7, name: "Ada Lovelace")]() == "Ada Lovelace")
    }
}
