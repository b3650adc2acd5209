@testable import DependencyInjection
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Attacks on a `@Dependency` property's first read served without a frame: the read that
// finds the container alone in the property's word, runs the provider's getter outside any
// frame, and publishes the container's cached instance if the word still holds that
// container. What it must keep: every reader of one object sees the value the object
// keeps, a cycle through getters stops with its chain, the value matches the container
// the property resolves from, nothing leaks and nothing hangs.

// MARK: - Fixtures

final class URANode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

/// What a registration's getter or closure calls on its way: a gate, or a change made
/// from inside it.
protocol URAHook: AnyObject, Sendable {
    func pass()
}

/// Stops the first caller after it is armed, until the test opens it; every other caller
/// passes. Armed once, it stops one caller only.
final class URAGate: URAHook, @unchecked Sendable {
    // @unchecked: `armed` and `didEnter` only under `lock`.
    private let lock = NSLock()
    private var armed = false
    private var didEnter = false
    let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)
    init() {}

    func arm() { lock.withLock { armed = true } }

    /// Whether the caller it stopped is inside.
    var hasEntered: Bool { lock.withLock { didEnter } }

    func pass() {
        let stops: Bool = lock.withLock {
            defer { armed = false }
            if armed { didEnter = true }
            return armed
        }
        guard stops else { return }
        entered.signal()
        released.wait()
    }

    func open() { released.signal() }
}

extension DependencyContainer {
    /// A singleton, or a factory when the stored "ura.scope" says so. Its getter passes the
    /// gate stored under "ura.getterGate", the factory's closure the one under
    /// "ura.factoryGate"; the node is tagged with the stored "ura.tag".
    var uraNode: Provider<URANode> {
        (getValue(forKey: "ura.getterGate") as (any URAHook)?)?.pass()
        let tag: String = getValue(forKey: "ura.tag") ?? "untagged"
        if getValue(forKey: "ura.scope") == "factory" {
            return factory {
                (self.getValue(forKey: "ura.factoryGate") as URAGate?)?.pass()
                return URANode(tag)
            }
        }
        return singleton { URANode(tag) }
    }
}

final class URAHolder: @unchecked Sendable {
    @Dependency(\.uraNode) var node
    init() {}
}

/// A read of `holder.node` on a thread of its own.
final class URARead: Sendable {
    private let value = Collected<URANode>()
    private let done = DispatchSemaphore(value: 0)

    init(_ holder: URAHolder) {
        let (value, done) = (value, done)
        Thread {
            value.append(holder.node)
            done.signal()
        }.start()
    }

    var hasEnded: Bool { !value.values.isEmpty }

    func result() -> URANode {
        done.wait()
        done.signal()
        return value.values[0]
    }
}

/// Returns once `holds()` is true; each pass yields the processor. For states another
/// thread reaches without any signal the test could wait on (another owner waiting for a
/// property's first read), paired with a state that ends the wait if the read goes
/// another way.
private func uraSpin(until holds: () -> Bool) {
    while !holds() { sched_yield() }
}

// Cycles through providers' getters.

/// Two properties whose providers' getters read each other's property.
final class URAPing: @unchecked Sendable {
    @Dependency(\.uraPing) var node
    init() {}
}

final class URAPong: @unchecked Sendable {
    @Dependency(\.uraPong) var node
    init() {}
}

/// A provider's property whose getter reads a plain registration's property, whose
/// computed getter reads the first property back.
final class URARing: @unchecked Sendable {
    @Dependency(\.uraRing) var node
    init() {}
}

final class URAPlainRing: @unchecked Sendable {
    @Dependency(\.uraPlainRing) var word
    init() {}
}

/// A property whose provider's getter resolves a singleton whose closure reads the
/// property: a cycle entered from the singleton's construction.
final class URAConfigured: @unchecked Sendable {
    @Dependency(\.uraConfigured) var node
    init() {}
}

/// A property whose provider's getter makes an object with a property, and notes the
/// container that object resolves from under "ura.probe".
final class URAProbeOwner: @unchecked Sendable {
    @Dependency(\.uraProbed) var node
    init() {}
}

/// A property whose provider's getter reads a fresh object's property (served without a
/// frame), then its own.
final class URARereader: @unchecked Sendable {
    @Dependency(\.uraRereader) var node
    init() {}
}

/// A property whose provider's getter resolves a singleton whose closure reads the
/// property back.
final class URAIndirect: @unchecked Sendable {
    @Dependency(\.uraIndirect) var node
    init() {}
}

extension DependencyContainer {
    var uraPing: Provider<Node> {
        _ = (getValue(forKey: "ura.pong") as URAPong?)?.node
        return singleton { Node() }
    }
    var uraPong: Provider<Node> {
        _ = (getValue(forKey: "ura.ping") as URAPing?)?.node
        return singleton { Node() }
    }
    var uraRing: Provider<Node> {
        _ = (getValue(forKey: "ura.plainRing") as URAPlainRing?)?.word
        return singleton { Node() }
    }
    /// Not a provider: a computed property, whose getter is the construction.
    var uraPlainRing: String {
        _ = (getValue(forKey: "ura.ring") as URARing?)?.node
        return "word"
    }
    var uraConfigured: Provider<Node> {
        _ = uraConfig()
        return singleton { Node() }
    }
    var uraConfig: Provider<Node> {
        singleton {
            _ = (self.getValue(forKey: "ura.configured") as URAConfigured?)?.node
            return Node()
        }
    }
    var uraProbed: Provider<Node> {
        let made = CachedClientHolder()
        (getValue(forKey: "ura.probe") as Collected<DependencyContainer>?)?.append(made.$client.container)
        return singleton { Node() }
    }
    var uraRereader: Provider<Node> {
        _ = withMain(self) { CachedClientHolder() }.client
        _ = (getValue(forKey: "ura.rereader") as URARereader?)?.node
        return singleton { Node() }
    }
    var uraIndirect: Provider<Node> {
        _ = uraIndirectHelper()
        return singleton { Node() }
    }
    var uraIndirectHelper: Provider<Node> {
        singleton {
            _ = (self.getValue(forKey: "ura.indirect") as URAIndirect?)?.node
            return Node()
        }
    }

    /// A withMain the registrations above can call: the static one, by another name.
    fileprivate func withMain<Result>(_ container: DependencyContainer, _ body: () -> Result) -> Result {
        DependencyContainer.withMain(container, body)
    }
}

// Construction in flight, uses, leaks.

/// A singleton whose closure passes the gate stored under "ura.buildGate".
extension DependencyContainer {
    var uraSlowSingleton: Provider<URANode> {
        singleton {
            (self.getValue(forKey: "ura.buildGate") as URAGate?)?.pass()
            return URANode("slow")
        }
    }

    /// A singleton whose closure reads the property of the holder stored under
    /// "ura.usedHolder": the use must be recorded, so that an override of what it read
    /// drops it.
    var uraUser: Provider<URANode> {
        singleton {
            let holder: CachedClientHolder? = self.getValue(forKey: "ura.usedHolder")
            return URANode(holder?.client.name ?? "none")
        }
    }

    /// A singleton whose closure makes an object whose property holds the container
    /// weakly, and reads it.
    var uraKeeper: Provider<URAKeeper> {
        singleton {
            let keeper = URAKeeper()
            _ = keeper.client
            return keeper
        }
    }

    /// A scoped instance: a scope keeps its own.
    var uraScoped: Provider<URANode> { scoped { URANode("scoped") } }
}

final class URAKeeper: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    init() {}
}

/// Holds an app-wide singleton and a scoped instance, read from a scope.
final class URAScopeHolder: @unchecked Sendable {
    @Dependency(\.scheduler) var scheduler
    @Dependency(\.uraScoped) var scoped
    init() {}
}

/// Reads first reads of fresh objects in its deinit.
final class URADeinitReader: Sendable {
    let container: DependencyContainer
    let seen: Collected<ObjectIdentifier>
    init(_ container: DependencyContainer, _ seen: Collected<ObjectIdentifier>) { (self.container, self.seen) = (container, seen) }
    deinit {
        let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
        seen.append(ObjectIdentifier(holder.client))
    }
}

extension DependencyContainer {
    var uraDeinitReader: Provider<URADeinitReader> {
        singleton { URADeinitReader(self, self.getValue(forKey: "ura.seen") ?? Collected()) }
    }
}

// MARK: - Tests

@Suite struct UnframedReadAttackTests {
    // MARK: Cycles through getters

    /// A getter reads a property whose getter reads the first property back: the read of
    /// the first property inside the second getter is its second, and a third must stop as
    /// a cycle, named, as it did when each first read took its frame before the getter.
    /// The thread's mark names one property only, so the second read of the first one,
    /// under the mark of the second, could recurse until the stack overflows.
    @Test func gettersThatReadEachOthersPropertyStopWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through two providers' getters")
            let container = DependencyContainer()
            let (ping, pong) = DependencyContainer.withMain(container) { (URAPing(), URAPong()) }
            container.setValue(ping, forKey: "ura.ping")
            container.setValue(pong, forKey: "ura.pong")
            _ = ping.node
        }
        let cycle = CycleChain(result)
        #expect(cycle != nil, "no cycle was reported; the process ended with \(String(describing: result?.exitStatus))")
        #expect(
            cycle?.isCycle(["@Dependency in URAPing", "@Dependency in URAPong", "@Dependency in URAPing"]) == true,
            "\(cycle?.description ?? "")")
    }

    /// A provider's getter reads a plain registration's property, whose computed getter
    /// (run in that property's frame) reads the first property back. The chain must name
    /// both properties, as it did when the first read took its frame before its getter: a
    /// report that names the second property alone ("B -> B") points at a self-reference
    /// that is not in the code.
    @Test func aGetterRingThroughAPlainRegistrationNamesBothProperties() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a getter and a plain registration")
            let container = DependencyContainer()
            let (ring, plain) = DependencyContainer.withMain(container) { (URARing(), URAPlainRing()) }
            container.setValue(ring, forKey: "ura.ring")
            container.setValue(plain, forKey: "ura.plainRing")
            _ = ring.node
        }
        let cycle = CycleChain(result)
        #expect(cycle != nil, "no cycle was reported; the process ended with \(String(describing: result?.exitStatus))")
        #expect(
            cycle?.isCycle(["@Dependency in URARing", "@Dependency in URAPlainRing", "@Dependency in URARing"]) == true,
            "\(cycle?.description ?? "")")
    }

    /// A singleton's closure reads a property (of an object made before, which holds its
    /// container alone) whose provider's getter resolves that singleton: the chain must
    /// name the property between the two links of the singleton, as it did when the read
    /// took its frame before the getter; "uraConfig -> uraConfig" names a self-reference
    /// the code does not have.
    @Test func aConstructionThatReadsAPropertyWhoseGetterNeedsItNamesTheProperty() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle from a construction through a property's getter")
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { URAConfigured() }
            container.setValue(holder, forKey: "ura.configured")
            _ = container.uraConfig()
        }
        let cycle = CycleChain(result)
        #expect(cycle != nil, "no cycle was reported; the process ended with \(String(describing: result?.exitStatus))")
        #expect(
            cycle?.isCycle(["uraConfig", "@Dependency in URAConfigured", "uraConfig"]) == true,
            "\(cycle?.description ?? "")")
    }

    /// A provider's getter that makes an object with a property, during a property's first
    /// read: the object is told which container builds it by the read's frame. Whether the
    /// property holds its container alone (a fresh object) or in full (after a reset), the
    /// read is the same read and must tell the object the same container; before reads of
    /// kept instances went without a frame, both told it the property's container.
    @Test func anObjectMadeInAGetterGetsOneContainerWhetherThePropertyIsFreshOrReset() {
        let (container, other) = (DependencyContainer(), DependencyContainer())
        let seen = Collected<DependencyContainer>()
        container.setValue(seen, forKey: "ura.probe")
        _ = container.uraProbed()
        let fresh = DependencyContainer.withMain(container) { URAProbeOwner() }
        let reset = DependencyContainer.withMain(container) { URAProbeOwner() }
        reset.$node.reset()
        DependencyContainer.withMain(other) {
            _ = fresh.node
            _ = reset.node
        }
        let names = seen.values.dropFirst().map { $0 === container ? "the property's" : $0 === other ? "main" : "another" }
        #expect(names.count == 2)
        #expect(names.first == names.last, "fresh read: \(names.first ?? ""), reset read: \(names.last ?? "")")
    }

    /// The getter first reads another object's property (a read without a frame of its own,
    /// which marks the thread with that property) and then its own: the mark of the first
    /// read must come back, and the chain name the property.
    @Test func aGetterThatReadsAnotherPropertyThenItsOwnStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property cycle after another property's read")
            let container = DependencyContainer()
            _ = container.httpClient()
            let holder = DependencyContainer.withMain(container) { URARereader() }
            container.setValue(holder, forKey: "ura.rereader")
            _ = holder.node
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["@Dependency in URARereader", "@Dependency in URARereader"],
            "\(standardError(of: result).suffix(600))")
    }

    /// The getter builds a singleton whose closure reads the property back: a cycle through
    /// a construction, entered from outside any frame.
    @Test func aGetterWhoseConstructionReadsThePropertyStopsWithTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property cycle through a getter's construction")
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { URAIndirect() }
            container.setValue(holder, forKey: "ura.indirect")
            _ = holder.node
        }
        let cycle = CycleChain(result)
        #expect(
            cycle?.isCycle(["@Dependency in URAIndirect", "uraIndirectHelper", "@Dependency in URAIndirect"]) == true,
            "\(standardError(of: result).suffix(600))")
    }

    // MARK: One value per object

    /// Reader 1 arrives first and is slow in the provider's getter; reader 2 arrives
    /// meanwhile. Whether reader 2 waits for reader 1 or resolves itself, both must end
    /// with the value the object keeps: "every reader sees the same value".
    ///
    /// Here reader 2's getter chooses a factory (the registration reads a stored value,
    /// which changes while reader 1 is in its getter) and builds in the property's frame;
    /// reader 1's getter then chooses the singleton and finds it cached, without a frame,
    /// but cannot publish it over reader 2's frame: it must not return it either.
    @Test func aSlowGetterThatMeetsAnotherReadersBuildSeesWhatTheObjectKeeps() async {
        let seen = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue("kept", forKey: "ura.tag")
            _ = container.uraNode()
            let holder = DependencyContainer.withMain(container) { URAHolder() }
            let (getterGate, factoryGate) = (URAGate(), URAGate())
            container.setValue(getterGate, forKey: "ura.getterGate")
            container.setValue(factoryGate, forKey: "ura.factoryGate")
            container.setValue("factory", forKey: "ura.scope")
            container.setValue("built", forKey: "ura.tag")
            getterGate.arm()
            factoryGate.arm()

            let first = URARead(holder)
            getterGate.entered.wait()
            let second = URARead(holder)
            // Reader 2 builds (reader 1 holds no frame) or waits for reader 1's frame.
            uraSpin { factoryGate.hasEntered || holder.$node.storage.isAwaited || second.hasEnded }
            container.setValue("singleton", forKey: "ura.scope")
            getterGate.open()
            // Reader 1 returns, or waits for reader 2's frame, which is still building.
            uraSpin { first.hasEnded || holder.$node.storage.isAwaited }
            factoryGate.open()
            let firstValue = first.result()
            let secondValue = second.result()
            let kept = holder.node
            if firstValue !== kept {
                seen.append("reader 1 saw '\(firstValue.tag)', the object keeps '\(kept.tag)'")
            }
            if secondValue !== kept {
                seen.append("reader 2 saw '\(secondValue.tag)', the object keeps '\(kept.tag)'")
            }
        }
        #expect(ended)
        #expect(seen.values.isEmpty, "\(seen.values)")
    }

    /// A tracer is installed while reader 1 is in the provider's getter, so that reader 2
    /// misses the cache and resolves in the property's frame, and publishes the old
    /// instance; the tracer then holds it, at the delivery of its trace (an outermost
    /// resolution's, once the read has published), until the singleton is overridden and
    /// rebuilt. Reader 1's getter ends: it finds the override's instance cached, cannot
    /// publish it over reader 2's, and must return what reader 2 published.
    @Test func aSlowGetterThatServesAfterAnotherReadPublishedReturnsWhatWasPublished() async {
        let seen = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue("old", forKey: "ura.tag")
            _ = container.uraNode()
            let holder = DependencyContainer.withMain(container) { URAHolder() }
            let (getterGate, tracerGate) = (URAGate(), URAGate())
            container.setValue(getterGate, forKey: "ura.getterGate")
            getterGate.arm()

            let first = URARead(holder)
            getterGate.entered.wait()
            tracerGate.arm()
            container.tracer = ResolutionTracer { _ in tracerGate.pass() }
            let second = URARead(holder)
            uraSpin { tracerGate.hasEntered || holder.$node.storage.isAwaited || second.hasEnded }
            container.tracer = nil
            container.override(\.uraNode) { URANode("override") }
            _ = container.uraNode()
            // Reader 2 is held in the tracer, or waits for reader 1, whichever took the
            // property's frame first: the one it waits for goes on first.
            let (firstValue, secondValue): (URANode, URANode)
            if tracerGate.hasEntered {
                tracerGate.open()
                secondValue = second.result()
                getterGate.open()
                firstValue = first.result()
            } else {
                getterGate.open()
                firstValue = first.result()
                tracerGate.open()
                secondValue = second.result()
            }
            let kept = holder.node
            if firstValue !== kept {
                seen.append("reader 1 saw '\(firstValue.tag)', the object keeps '\(kept.tag)'")
            }
            if secondValue !== kept {
                seen.append("reader 2 saw '\(secondValue.tag)', the object keeps '\(kept.tag)'")
            }
        }
        #expect(ended)
        #expect(seen.values.isEmpty, "\(seen.values)")
    }

    /// Many readers of fresh objects while the container's singleton is overridden, a tracer
    /// comes and goes, and other singletons are built in the container (so that some reads
    /// are served without a frame and others in one): all the readers of one object see one
    /// instance, and the object keeps it.
    @Test func everyReaderOfOneObjectSeesOneInstanceWhileTheContainerChurns() async {
        var disagreements: [String] = []
        for round in 0..<12 {
            let container = DependencyContainer()
            _ = container.httpClient()
            let holders = (0..<200).map { _ in DependencyContainer.withMain(container) { CachedClientHolder() } }
            let seen = holders.map { _ in Collected<ObjectIdentifier>() }
            let readers = 4
            let tracer = ResolutionTracer { _ in }
            let ended = await concurrentlyOffThePool(threads: readers + 2) { thread in
                if thread == readers {
                    for index in holders.indices where index.isMultiple(of: 8) {
                        container.override(\.httpClient) { StubHTTPClient("\(round).\(index)") }
                        _ = container.httpClient()
                        container.tracer = index.isMultiple(of: 16) ? tracer : nil
                    }
                    container.tracer = nil
                    return
                }
                if thread == readers + 1 {
                    for index in holders.indices where index.isMultiple(of: 4) {
                        _ = container[session: "\(round).\(index)"]()
                    }
                    return
                }
                for step in holders.indices {
                    let index = (step + thread * 37) % holders.count
                    seen[index].append(ObjectIdentifier(holders[index].client))
                }
            }
            #expect(ended, "the threads did not end before the hang limit")
            for (index, (holder, readers)) in zip(holders, seen).enumerated() {
                let kept = ObjectIdentifier(holder.client)
                if !readers.values.allSatisfy({ $0 == kept }) {
                    disagreements.append("round \(round), object \(index)")
                }
            }
        }
        #expect(disagreements.isEmpty, "readers of one object disagree: \(disagreements.prefix(10))")
    }

    /// Readers of fresh objects race a thread that switches each object's container back
    /// and forth, resets it and sets it: once everything has settled, an object that was
    /// switched last resolves from the container it names, and serves that container's
    /// instance.
    @Test func aSettledPropertyServesTheInstanceOfTheContainerItResolvesFrom() async {
        for round in 0..<10 {
            let (one, two) = (DependencyContainer(), DependencyContainer())
            let (oneClient, twoClient) = (one.httpClient(), two.httpClient())
            let holders = (0..<150).map { _ in DependencyContainer.withMain(one) { CachedClientHolder() } }
            let readers = 4
            let ended = await concurrentlyOffThePool(threads: readers + 1) { thread in
                if thread == readers {
                    for (index, holder) in holders.enumerated() {
                        switch index % 4 {
                        case 0: holder.$client.container = two
                        case 1: holder.$client.reset()
                        case 2: holder.client = StubHTTPClient("set")
                        default: holder.$client.container = one
                        }
                        if index % 4 == 2 { holder.$client.container = two }
                    }
                    return
                }
                for step in holders.indices {
                    _ = holders[(step + thread * 29) % holders.count].client
                }
            }
            #expect(ended, "round \(round): the threads did not end before the hang limit")
            for (index, holder) in holders.enumerated() {
                let expected: (any HTTPClient)? =
                    switch index % 4 {
                    case 0, 2: twoClient
                    case 3: oneClient
                    default: oneClient
                    }
                let container = holder.$client.container
                #expect(container === (index % 4 == 0 || index % 4 == 2 ? two : one), "round \(round), object \(index)")
                #expect(holder.client === expected, "round \(round), object \(index): \(holder.client.name)")
                #expect(holder.client === holder.client)
            }
        }
    }

    /// Readers of fresh objects while another thread shuts the container down, again and
    /// again, and rebuilds: each object's readers agree, and nothing hangs.
    @Test func readersAgreeWhileTheContainerShutsDown() async {
        for round in 0..<10 {
            let container = DependencyContainer()
            _ = container.httpClient()
            let holders = (0..<200).map { _ in DependencyContainer.withMain(container) { CachedClientHolder() } }
            let seen = holders.map { _ in Collected<ObjectIdentifier>() }
            let readers = 4
            let ended = await concurrentlyOffThePool(threads: readers + 1) { thread in
                if thread == readers {
                    for _ in 0..<30 {
                        container.shutdown()
                        _ = container.httpClient()
                    }
                    return
                }
                for step in holders.indices {
                    let index = (step + thread * 41) % holders.count
                    seen[index].append(ObjectIdentifier(holders[index].client))
                }
            }
            #expect(ended, "round \(round): the threads did not end before the hang limit")
            for (index, (holder, readers)) in zip(holders, seen).enumerated() {
                let kept = ObjectIdentifier(holder.client)
                #expect(readers.values.allSatisfy { $0 == kept }, "round \(round), object \(index)")
            }
        }
    }

    // MARK: Constructions in the container

    /// A first read while another thread builds something else in the container takes the
    /// frame road (the container is building) and must not wait for that construction.
    @Test func aFirstReadDuringAnotherConstructionDoesNotWaitForIt() async {
        let problems = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            let kept = container.httpClient()
            let gate = URAGate()
            container.setValue(gate, forKey: "ura.buildGate")
            gate.arm()
            let building = Thread { _ = container.uraSlowSingleton() }
            building.start()
            gate.entered.wait()
            let read = finishesWithoutHanging {
                let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
                if holder.client !== kept { problems.append("the read served another instance") }
            }
            if !read { problems.append("the first read waited for an unrelated construction") }
            gate.open()
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values)")
    }

    /// A construction that reads a property of an object made before it (whose word holds
    /// the container alone) uses what the property resolves: an override of that drops the
    /// construction's instance.
    @Test func aPropertyReadInsideAConstructionIsRecordedAsAUse() {
        let container = DependencyContainer()
        _ = container.httpClient()
        let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
        container.setValue(holder, forKey: "ura.usedHolder")
        let user = container.uraUser()
        #expect(user.tag == "live")
        container.override(\.httpClient) { StubHTTPClient("stub") }
        holder.$client.reset()
        let rebuilt = container.uraUser()
        #expect(rebuilt !== user, "a singleton built from a property's read survived an override of what it read")
        #expect(rebuilt.tag == "stub")
    }

    /// A property made inside a singleton's construction holds its container weakly, and
    /// its first read (of a cached singleton) takes the frame road; the container and what
    /// it kept are released once the last strong reference goes.
    @Test func aWeaklyHeldPropertyReadsTheCachedInstanceAndLeaksNothing() {
        weak var weakContainer: DependencyContainer?
        weak var weakKeeper: URAKeeper?
        weak var weakClient: AnyObject?
        do {
            let container = DependencyContainer()
            let client = container.httpClient()
            let keeper = container.uraKeeper()
            #expect(keeper.client === client)
            let later = DependencyContainer.withMain(container) { CachedClientHolder() }
            #expect(later.client === client)
            (weakContainer, weakKeeper, weakClient) = (container, keeper, client)
        }
        #expect(weakContainer == nil, "the container leaked")
        #expect(weakKeeper == nil, "the keeper leaked")
        #expect(weakClient == nil, "the singleton leaked")
    }

    /// Thousands of fresh objects read by several threads at once: each gets the container's
    /// singleton, it is built once, and once the objects and the container go, nothing stays.
    @Test func thousandsOfFirstReadsShareTheSingletonAndLeakNothing() async {
        weak var weakContainer: DependencyContainer?
        weak var weakClient: AnyObject?
        let problems = Collected<String>()
        do {
            let container = DependencyContainer()
            let builds = container.counter("httpClient")
            let holders = (0..<4_000).map { _ in DependencyContainer.withMain(container) { CachedClientHolder() } }
            let ended = await concurrentlyOffThePool(threads: 4) { thread in
                for step in holders.indices {
                    _ = holders[(step + thread * 1_000) % holders.count].client
                }
            }
            #expect(ended)
            let client = container.httpClient()
            for holder in holders where holder.client !== client { problems.append("an object holds another instance") }
            #expect(builds.count == 1)
            (weakContainer, weakClient) = (container, client)
        }
        #expect(problems.values.isEmpty, "\(problems.values.prefix(3))")
        #expect(weakContainer == nil, "the container leaked")
        #expect(weakClient == nil, "the singleton leaked")
    }

    /// A read whose property was switched to another container while its getter ran
    /// returns the old container's instance without publishing it; the next read resolves
    /// from the new container, and the old container and its instance are released.
    @Test func aReadOverlappingASwitchPublishesNothingAndLeaksNothing() {
        weak var weakOld: DependencyContainer?
        weak var weakOldNode: URANode?
        do {
            let (old, new) = (DependencyContainer(), DependencyContainer())
            old.setValue("old", forKey: "ura.tag")
            new.setValue("new", forKey: "ura.tag")
            let oldNode = old.uraNode()
            let gateHolder = DependencyContainer.withMain(old) { URAHolder() }
            old.setValue(URASwitchOnGetter(gateHolder, to: new), forKey: "ura.getterGate")
            let first = gateHolder.node
            #expect(first === oldNode || first === new.uraNode())
            #expect(gateHolder.$node.container === new)
            #expect(gateHolder.node === new.uraNode(), "the settled value is not the new container's")
            (weakOld, weakOldNode) = (old, oldNode)
            withExtendedLifetime(gateHolder) {}
        }
        #expect(weakOld == nil, "the old container leaked")
        #expect(weakOldNode == nil, "the old container's instance leaked")
    }

    // MARK: Scopes, tracers, deinits

    /// Objects read from a scope an app-wide singleton (kept by the app container) and a
    /// scoped instance (kept by the scope), while the app's singleton is overridden and the
    /// scope's instance reset: each object's readers agree, and once settled (and reset)
    /// each object serves the scope's answers.
    @Test func scopeReadersAgreeWhileTheAppAndTheScopeChange() async {
        for round in 0..<8 {
            let app = DependencyContainer()
            let scope = DependencyContainer(scopeOf: app)
            _ = (scope.scheduler(), scope.uraScoped())
            let holders = (0..<150).map { _ in DependencyContainer.withMain(scope) { URAScopeHolder() } }
            let seen = holders.map { _ in (Collected<ObjectIdentifier>(), Collected<ObjectIdentifier>()) }
            let readers = 4
            let ended = await concurrentlyOffThePool(threads: readers + 1) { thread in
                if thread == readers {
                    for index in holders.indices where index.isMultiple(of: 10) {
                        app.override(\.scopeClock) { ScopeClock(name: "\(round).\(index)") }
                        scope.reset(\.uraScoped)
                        _ = (scope.scheduler(), scope.uraScoped())
                    }
                    return
                }
                for step in holders.indices {
                    let index = (step + thread * 23) % holders.count
                    seen[index].0.append(ObjectIdentifier(holders[index].scheduler))
                    seen[index].1.append(ObjectIdentifier(holders[index].scoped))
                }
            }
            #expect(ended, "round \(round): the threads did not end before the hang limit")
            for (index, (holder, readers)) in zip(holders, seen).enumerated() {
                let (scheduler, scoped) = (ObjectIdentifier(holder.scheduler), ObjectIdentifier(holder.scoped))
                #expect(readers.0.values.allSatisfy { $0 == scheduler }, "round \(round), object \(index): scheduler")
                #expect(readers.1.values.allSatisfy { $0 == scoped }, "round \(round), object \(index): scoped")
                holder.$scheduler.reset()
                holder.$scoped.reset()
                #expect(holder.scheduler === app.scheduler(), "round \(round), object \(index)")
                #expect(holder.scheduler === scope.scheduler(), "round \(round), object \(index)")
                #expect(holder.scoped === scope.uraScoped(), "round \(round), object \(index)")
            }
        }
    }

    /// A tracer that makes and reads fresh objects while readers on other threads read
    /// theirs, with the tracer installed and removed meanwhile: nothing hangs, and every
    /// read yields the container's instance.
    @Test func aTracerThatReadsPropertiesWhileOthersDo() async {
        let container = DependencyContainer()
        let client = container.httpClient()
        let problems = Collected<String>()
        let tracer = ResolutionTracer { _ in
            let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
            if holder.client !== client { problems.append("the tracer's read served another instance") }
        }
        let ended = await concurrentlyOffThePool(threads: 5) { thread in
            if thread == 4 {
                for index in 0..<200 {
                    container.tracer = index.isMultiple(of: 2) ? tracer : nil
                    _ = container.feedLoader()
                }
                container.tracer = nil
                return
            }
            for _ in 0..<500 {
                let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
                if holder.client !== client { problems.append("a reader got another instance") }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(3))")
    }

    /// An override drops a singleton whose deinit makes and reads fresh objects, while
    /// readers of other fresh objects run: the deinit's reads get the container's instance
    /// of the moment, and nothing hangs.
    @Test func deinitsThatReadWhileOthersReadDoNotHang() async {
        let container = DependencyContainer()
        let seen = Collected<ObjectIdentifier>()
        container.setValue(seen, forKey: "ura.seen")
        _ = container.httpClient()
        let problems = Collected<String>()
        let ended = await concurrentlyOffThePool(threads: 4) { thread in
            if thread == 3 {
                for _ in 0..<100 {
                    _ = container.uraDeinitReader()
                    container.reset(\.uraDeinitReader)
                }
                return
            }
            for _ in 0..<400 {
                let holder = DependencyContainer.withMain(container) { CachedClientHolder() }
                let first = holder.client
                if holder.client !== first { problems.append("two reads of one object differ") }
            }
        }
        #expect(ended)
        #expect(problems.values.isEmpty, "\(problems.values.prefix(3))")
        #expect(seen.values.count == 100, "\(seen.values.count) deinits read")
        let client = ObjectIdentifier(container.httpClient())
        #expect(seen.values.allSatisfy { $0 == client })
    }

    /// Parent and child change at once while objects read from the child: the child's
    /// override of the parent's registration and the parent's override both come and go.
    /// Each object's readers agree, and once settled and reset, each object serves the
    /// child's answer.
    @Test func childReadersAgreeWhileParentAndChildChange() async {
        for round in 0..<8 {
            let parent = DependencyContainer()
            let child = DependencyContainer(parent: parent)
            _ = child.httpClient()
            let holders = (0..<150).map { _ in DependencyContainer.withMain(child) { CachedClientHolder() } }
            let seen = holders.map { _ in Collected<ObjectIdentifier>() }
            let readers = 3
            let ended = await concurrentlyOffThePool(threads: readers + 2) { thread in
                if thread == readers {
                    for index in 0..<20 {
                        parent.override(\.httpClient) { StubHTTPClient("parent \(round).\(index)") }
                        _ = parent.httpClient()
                    }
                    return
                }
                if thread == readers + 1 {
                    for index in 0..<20 {
                        if index.isMultiple(of: 2) {
                            child.override(\.httpClient) { StubHTTPClient("child \(round).\(index)") }
                        } else {
                            child.reset(\.httpClient)
                        }
                        _ = child.httpClient()
                    }
                    return
                }
                for step in holders.indices {
                    let index = (step + thread * 31) % holders.count
                    seen[index].append(ObjectIdentifier(holders[index].client))
                }
            }
            #expect(ended, "round \(round): the threads did not end before the hang limit")
            for (index, (holder, readers)) in zip(holders, seen).enumerated() {
                let kept = ObjectIdentifier(holder.client)
                #expect(readers.values.allSatisfy { $0 == kept }, "round \(round), object \(index)")
                holder.$client.reset()
                #expect(holder.client === child.httpClient(), "round \(round), object \(index)")
            }
        }
    }
}

/// Stored under "ura.getterGate" for `uraNode`: switches the holder's property to another
/// container the first time the getter runs, from inside the getter.
final class URASwitchOnGetter: URAHook, @unchecked Sendable {
    private let lock = NSLock()
    private var target: (URAHolder, DependencyContainer)?
    init(_ holder: URAHolder, to container: DependencyContainer) { target = (holder, container) }
    func pass() {
        let target: (URAHolder, DependencyContainer)? = lock.withLock {
            defer { self.target = nil }
            return self.target
        }
        if let (holder, container) = target { holder.$node.container = container }
    }
}
