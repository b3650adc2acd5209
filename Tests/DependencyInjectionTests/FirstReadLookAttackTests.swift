@testable import DependencyInjection
import Foundation
import Testing

// Attacks on the look of a `@Dependency` property's first read (f7d4db2, on 5df40fa): a
// read that nothing encloses, of a declaration whose last first read found its instance
// kept, projects the provider outside any frame with the thread marked (objects made
// meanwhile resolve from the property's container) and publishes the container's cached
// instance. These compare the look with the framed road it replaces (a property that was
// reset takes that road for the same declaration), and load the hint of a declaration.

// MARK: - Fixtures

final class FRLNode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

extension DependencyContainer {
    /// A singleton whose getter starts a task with `Task.immediate` that makes an object
    /// with a property and notes the container it resolves from under "frl.immediate".
    var frlImmediate: Provider<FRLNode> {
        if let seen: Collected<String> = getValue(forKey: "frl.immediate") {
            let (me, main) = (self, DependencyContainer.main)
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate {
                    let container = CachedClientHolder().$client.container
                    seen.append(container === me ? "the property's" : container === main ? "main" : "another")
                }
            }
        }
        return singleton { FRLNode("immediate") }
    }

    /// A singleton or a factory, by the stored "frl.scope"; each instance is new.
    var frlFlip: Provider<FRLNode> {
        if getValue(forKey: "frl.scope") == "factory" { return factory { FRLNode("factory") } }
        return singleton { FRLNode("singleton") }
    }

    /// Another provider per container: a mocked one's, or a live one's.
    var frlMockable: Provider<FRLNode> {
        isMocked ? singleton { FRLNode("mock") } : singleton { FRLNode("live") }
    }

    /// One singleton per argument.
    var frlLedger: ProviderFamily<Int, FRLNode> {
        singleton { (n: Int) in FRLNode("\(n)") }
    }

    /// A singleton whose deinit makes and reads an object with a property.
    var frlDeinitMaker: Provider<FRLDeinitMaker> {
        singleton { FRLDeinitMaker(self.getValue(forKey: "frl.deinitSeen") ?? Collected()) }
    }

    /// A singleton whose getter fires the stored "frl.switch" the first time.
    var frlSwitching: Provider<FRLNode> {
        (getValue(forKey: "frl.switch") as PendingSwitch?)?.fire()
        return singleton { FRLNode("switching") }
    }
}

final class FRLImmediateHolder: @unchecked Sendable {
    @Dependency(\.frlImmediate) var node
    init() {}
}

final class FRLFlipHolder: @unchecked Sendable {
    @Dependency(\.frlFlip) var node
    init() {}
}

final class FRLMockableHolder: @unchecked Sendable {
    @Dependency(\.frlMockable) var node
    init() {}
}

final class FRLLedgerHolder: @unchecked Sendable {
    @Dependency var node: FRLNode
    init(_ n: Int) { _node = Dependency(\.frlLedger[n]) }
}

final class FRLSwitchingHolder: @unchecked Sendable {
    @Dependency(\.frlSwitching) var node
    init() {}
}

final class FRLTracedHolder: @unchecked Sendable {
    @Dependency(\.httpClient, function: "FRLTracedHolder", line: 9_101) var client
    init() {}
}

/// Notes, when it goes, the container a fresh object's property resolves from.
final class FRLDeinitMaker: Sendable {
    let seen: Collected<DependencyContainer>
    init(_ seen: Collected<DependencyContainer>) { self.seen = seen }
    deinit {
        let holder = CachedClientHolder()
        seen.append(holder.$client.container)
        _ = holder.client
    }
}

/// One property of a declaration of its own, made at run time: `line` names it.
final class FRLManySitesHolder: @unchecked Sendable {
    let singleton: Dependency<any HTTPClient>
    let factory: Dependency<any FeedLoader>
    init(line: UInt) {
        singleton = Dependency(\.httpClient, function: "FRLManySitesHolder", line: line)
        factory = Dependency(\.feedLoader, function: "FRLManySitesHolder", line: line)
    }
}

// MARK: - Tests

@Suite struct FirstReadLookAttackTests {
    /// A provider's getter starts a task with `Task.immediate`, which makes an object with
    /// a property. The task is another owner: on the framed road (a property that was
    /// reset) it is not inside the read's frame, and its object resolves from `main`. The
    /// look of a fresh property marks the thread, not the owner, so the same code in the
    /// same getter tells the task's object the property's container instead: one read of
    /// one declaration must tell the object the same container whichever road it takes.
    @Test func anObjectATaskMakesInAGetterGetsOneContainerWhetherThePropertyIsFreshOrReset() {
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else { return }
        let (container, other) = (DependencyContainer(), DependencyContainer())
        _ = container.frlImmediate()
        let seen = Collected<String>()
        container.setValue(seen, forKey: "frl.immediate")
        let fresh = DependencyContainer.withMain(container) { FRLImmediateHolder() }
        let reset = DependencyContainer.withMain(container) { FRLImmediateHolder() }
        reset.$node.reset()
        DependencyContainer.withMain(other) {
            let freshNode = fresh.node
            let resetNode = reset.node
            #expect(freshNode === container.frlImmediate())
            #expect(resetNode === container.frlImmediate())
        }
        // The reads above ran the getter (once each: a found instance); the last two entries
        // are theirs, the check above ran it twice more after.
        let names = seen.values
        #expect(names.count == 4, "\(names)")
        let (freshName, resetName) = (names.first ?? "", names.dropFirst().first ?? "")
        #expect(freshName == resetName, "fresh read (the look): \(freshName), reset read (the frame): \(resetName)")
    }

    /// With a tracer on the container, a fresh property's first read reports what the
    /// framed road (a reset property of the same declaration) reports for it: the look
    /// finds nothing cached while a tracer is set, so it takes the frame, and the
    /// resolution in it is an outermost one, reported as cached.
    @Test func aTracedFirstReadReportsWhatTheFramedRoadReports() {
        let container = DependencyContainer()
        let client = container.httpClient()
        let fresh = DependencyContainer.withMain(container) { FRLTracedHolder() }
        let reset = DependencyContainer.withMain(container) { FRLTracedHolder() }
        reset.$client.reset()
        let events = Collected<[String]>()
        container.tracer = ResolutionTracer { batch in events.append(batch.map { "\($0.name) \($0.outcome.rawValue)" }) }
        #expect(fresh.client === client)
        let freshEvents = events.takeAll()
        #expect(reset.client === client)
        let resetEvents = events.takeAll()
        container.tracer = nil
        #expect(freshEvents == resetEvents, "fresh: \(freshEvents), reset: \(resetEvents)")
        #expect(freshEvents == [["httpClient cached"]], "\(freshEvents)")
        // Once the tracer is gone, a fresh read serves the kept instance again.
        let later = DependencyContainer.withMain(container) { FRLTracedHolder() }
        #expect(later.client === client)
    }

    /// A declaration whose registration alternates between a singleton (kept) and a
    /// factory (built), with resets of the singleton, while readers released together read
    /// fresh objects: the hint flips under them. Every reader of one object sees one
    /// instance, and a settled object keeps it.
    @Test func readersAgreeWhileTheHintFlips() async {
        var disagreements: [String] = []
        weak var weakContainer: DependencyContainer?
        for round in 0..<8 {
            let container = DependencyContainer()
            _ = container.frlFlip()
            let holders = (0..<200).map { _ in DependencyContainer.withMain(container) { FRLFlipHolder() } }
            let seen = holders.map { _ in Collected<ObjectIdentifier>() }
            let readers = 4
            // Joined, not only finished: a thread that has not ended still holds what its
            // body captured, the container among it, which the last check must see freed.
            let ended = await finishesWithoutHangingOffThePool { onThreadsReleasedTogetherAndJoined(readers + 1) { thread in
                if thread == readers {
                    for index in 0..<100 {
                        container.setValue(index.isMultiple(of: 2) ? "factory" : "singleton", forKey: "frl.scope")
                        if index.isMultiple(of: 3) { container.reset(\.frlFlip) }
                        _ = container.frlFlip()
                    }
                    return
                }
                for step in holders.indices {
                    let index = (step + thread * 53) % holders.count
                    seen[index].append(ObjectIdentifier(holders[index].node))
                }
            } }
            #expect(ended, "round \(round): the threads did not end before the hang limit")
            for (index, (holder, readers)) in zip(holders, seen).enumerated() {
                let kept = ObjectIdentifier(holder.node)
                if readers.values.count != readers.values.filter({ $0 == kept }).count {
                    disagreements.append("round \(round), object \(index)")
                }
                #expect(holder.node === holder.node)
            }
            weakContainer = container
            withExtendedLifetime(holders) {}
        }
        #expect(disagreements.isEmpty, "readers of one object disagree: \(disagreements.prefix(10))")
        #expect(weakContainer == nil, "the last round's container leaked")
    }

    /// One declaration whose getter returns another provider per container (mocked or
    /// live), read from live and mocked containers, a scope and a child at once: each
    /// object serves the instance its own container serves.
    @Test func oneDeclarationServesEachContainersOwnProvider() async {
        let live = DependencyContainer()
        let mocked = DependencyContainer(isMocked: true)
        let scope = DependencyContainer(scopeOf: live)
        let child = DependencyContainer(parent: mocked)
        let containers = [live, mocked, scope, child]
        // Half the rounds build first (reads find the instance kept), half do not.
        var problems: [String] = []
        for round in 0..<6 {
            if round.isMultiple(of: 2) { for container in containers { _ = container.frlMockable() } }
            let holders = (0..<200).map { index in
                DependencyContainer.withMain(containers[index % 4]) { FRLMockableHolder() }
            }
            let ended = await concurrentlyOffThePool(threads: 4) { thread in
                for step in holders.indices { _ = holders[(step + thread * 47) % holders.count].node }
            }
            #expect(ended)
            for (index, holder) in holders.enumerated() {
                let container = containers[index % 4]
                let expected = container.frlMockable()
                if holder.node !== expected {
                    problems.append("round \(round), object \(index): \(holder.node.tag), its container serves \(expected.tag)")
                }
                if holder.node.tag != (container.isMocked ? "mock" : "live") {
                    problems.append("round \(round), object \(index): \(holder.node.tag) in a container mocked: \(container.isMocked)")
                }
            }
            for container in containers { container.reset(\.frlMockable) }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// A provider family read through properties, one argument per object, some built
    /// before and some not (the declaration's hint flips between them): each object serves
    /// its argument's instance, built once.
    @Test func aFamilyPropertyServesItsArgumentsInstance() async {
        let container = DependencyContainer()
        for n in 0..<64 where n.isMultiple(of: 2) { _ = container.frlLedger(n) }
        let holders = (0..<640).map { index in DependencyContainer.withMain(container) { FRLLedgerHolder(index % 64) } }
        let ended = await concurrentlyOffThePool(threads: 4) { thread in
            for step in holders.indices { _ = holders[(step + thread * 131) % holders.count].node }
        }
        #expect(ended)
        var problems: [String] = []
        for (index, holder) in holders.enumerated() {
            let n = index % 64
            if holder.node !== container.frlLedger(n) || holder.node.tag != "\(n)" {
                problems.append("object \(index): \(holder.node.tag)")
            }
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
    }

    /// The getter switches the property to another container during the look, so the
    /// look's reference is the last one of the old container: it goes when the read ends,
    /// and the deinit of what it kept makes and reads an object. That object must resolve
    /// from `main`, not from the dying container (the thread's mark must be gone), and
    /// nothing leaks.
    @Test func aContainerReleasedWhenALookEndsLeavesNoMarkForItsDeinits() {
        let (main, new) = (DependencyContainer(), DependencyContainer())
        let seen = Collected<DependencyContainer>()
        weak var weakOld: DependencyContainer?
        let holder: FRLSwitchingHolder = DependencyContainer.withMain(main) {
            let old = DependencyContainer()
            old.setValue(seen, forKey: "frl.deinitSeen")
            _ = old.frlDeinitMaker()
            _ = old.frlSwitching()
            let holder = DependencyContainer.withMain(old) { FRLSwitchingHolder() }
            old.setValue(PendingSwitch { [unowned holder] in holder.$node.container = new }, forKey: "frl.switch")
            weakOld = old
            return holder
        }
        DependencyContainer.withMain(main) {
            #expect(holder.node === new.frlSwitching())
        }
        #expect(weakOld == nil, "the old container leaked")
        #expect(seen.values.count == 1)
        #expect(seen.values.allSatisfy { $0 === main }, "the deinit's object resolves from another container than main")
    }

    /// Thousands of declarations (made at run time, one line each), half singletons and
    /// half factories, each read on several threads at once: each object's singleton is
    /// the container's, each factory property keeps one instance, and nothing leaks.
    @Test func thousandsOfDeclarationsKeepTheirOwnHints() async {
        weak var weakContainer: DependencyContainer?
        weak var weakClient: AnyObject?
        var problems: [String] = []
        do {
            let container = DependencyContainer()
            let client = container.httpClient()
            let holders = (0..<3_000).map { index in
                DependencyContainer.withMain(container) { FRLManySitesHolder(line: 200_000 + UInt(index % 1_500)) }
            }
            let loaders = holders.map { _ in Collected<ObjectIdentifier>() }
            let ended = await concurrentlyOffThePool(threads: 4) { thread in
                for step in holders.indices {
                    let index = (step + thread * 751) % holders.count
                    _ = holders[index].singleton.wrappedValue
                    loaders[index].append(ObjectIdentifier(holders[index].factory.wrappedValue as AnyObject))
                }
            }
            #expect(ended)
            for (index, holder) in holders.enumerated() {
                if holder.singleton.wrappedValue !== client { problems.append("object \(index): another client") }
                let kept = ObjectIdentifier(holder.factory.wrappedValue as AnyObject)
                if !loaders[index].values.allSatisfy({ $0 == kept }) { problems.append("object \(index): loaders differ") }
            }
            (weakContainer, weakClient) = (container, client)
        }
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(weakContainer == nil, "the container leaked")
        #expect(weakClient == nil, "the singleton leaked")
    }
}
