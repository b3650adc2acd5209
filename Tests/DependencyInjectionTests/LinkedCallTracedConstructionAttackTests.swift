import DependencyInjection
import Foundation
import Testing

final class LinkedTraceUser: Sendable {
    let item: LinkedCallItem
    init(_ item: LinkedCallItem) { self.item = item }
}

final class LinkedTraceOuter: Sendable {
    let user: LinkedTraceUser
    init(_ user: LinkedTraceUser) { self.user = user }
}

final class LinkedTraceCanary: Sendable {
    init() {}
}

final class LinkedTraceWeakCanary: @unchecked Sendable {
    weak var canary: LinkedTraceCanary?
    init() {}
}

final class LinkedTraceCycleHolder: @unchecked Sendable {
    @Dependency(\.linkedTraceCycleFamily) var items: ProviderFamily<Int, LinkedCallItem>
    init() {}
}

extension DependencyContainer {
    /// The holder a test keeps in the app container, read from a value.
    var linkedTraceHolder: LinkedCallTracedHolder { getValue(forKey: "linkedTrace-holder")! }

    /// A singleton whose construction calls the kept holder's linked family.
    var linkedTraceSingletonUser: Provider<LinkedTraceUser> {
        singleton { LinkedTraceUser(self.linkedTraceHolder.items(7)) }
    }
    /// The same as a factory: each resolution is a traced construction.
    var linkedTraceFactoryUser: Provider<LinkedTraceUser> {
        factory { LinkedTraceUser(self.linkedTraceHolder.items(3)) }
    }
    /// A singleton built from the user: the linked call two levels down.
    var linkedTraceOuter: Provider<LinkedTraceOuter> {
        singleton { LinkedTraceOuter(self.linkedTraceSingletonUser()) }
    }
    /// A construction that calls the linked async provider in a task it awaits.
    var linkedTraceTaskUser: AsyncProvider<LinkedTraceUser> {
        factory {
            let holder = self.linkedTraceHolder
            let item = try await Task { try await holder.makeItem() }.value
            return LinkedTraceUser(item)
        }
    }
    /// A construction that calls the linked family in a task it awaits.
    var linkedTraceSyncTaskUser: AsyncProvider<LinkedTraceUser> {
        factory {
            let holder = self.linkedTraceHolder
            let item = await Task { holder.items(9) }.value
            return LinkedTraceUser(item)
        }
    }

    var linkedTraceCycleHolder: Provider<LinkedTraceCycleHolder> { singleton { LinkedTraceCycleHolder() } }
    /// A member that calls itself, same argument, through the kept holder's linked family.
    var linkedTraceCycleFamily: ProviderFamily<Int, LinkedCallItem> {
        factory { n in
            let holder: LinkedTraceCycleHolder = self.getValue(forKey: "linkedTrace-cycleHolder")!
            return LinkedCallItem(holder.items(n).label)
        }
    }
    var linkedTraceCycleUser: Provider<LinkedTraceUser> {
        singleton {
            let holder: LinkedTraceCycleHolder = self.getValue(forKey: "linkedTrace-cycleHolder")!
            return LinkedTraceUser(holder.items(1))
        }
    }
}

private func described(_ events: [ResolutionEvent]) -> [String] { events.map { "\($0.name) \($0.depth)" } }

@Suite struct LinkedCallTracedConstructionAttackTests {
    static func appWithHolder() -> (DependencyContainer, LinkedCallTracedHolder) {
        let app = DependencyContainer()
        let holder = app.linkedCallTracedHolder()
        app.setValue(holder, forKey: "linkedTrace-holder")
        // Read the linked properties once, so their first reads are not part of a trace.
        _ = holder.items
        _ = holder.makeItem
        return (app, holder)
    }

    /// A tracer whose closure calls the same linked family, and resolves the construction
    /// again: no hang, no cycle, one batch per outermost resolution.
    @Test func aTracerCallingTheSameLinkedFamilyNeitherHangsNorCycles() async {
        let batches = Collected<[String]>()
        let labels = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, holder) = Self.appWithHolder()
            app.tracer = ResolutionTracer { events in
                batches.append(described(events))
                labels.append(holder.items(11).label)
                labels.append(app.linkedTraceSingletonUser().item.label)
                labels.append(app.linkedTraceFactoryUser().item.label)
            }
            _ = app.linkedTraceSingletonUser()
            _ = app.linkedTraceFactoryUser()
            app.tracer = nil
        }
        #expect(finished)
        #expect(
            batches.values.map(Set.init) == [
                ["linkedTraceSingletonUser 0", "linkedCallTracedFamily 1", "linkedCallConfig 1"],
                ["linkedTraceFactoryUser 0", "linkedCallTracedFamily 1", "linkedCallConfig 1"],
            ], "\(batches.values)")
        #expect(batches.values.count == 2, "\(batches.values)")
        #expect(labels.values == ["config 11", "config 7", "config 3", "config 11", "config 7", "config 3"])
    }

    /// Each event's set, in each batch: the outermost at 0, the linked call's at 1.
    @Test func aLinkedCallsEventsAreOneLevelBelowTheConstruction() {
        let (app, _) = Self.appWithHolder()
        let batches = Collected<[String]>()
        app.tracer = ResolutionTracer { batches.append(described($0)) }
        _ = app.linkedTraceFactoryUser()
        app.tracer = nil
        #expect(batches.values.count == 1, "\(batches.values)")
        #expect(
            Set(batches.values.first ?? []) == ["linkedTraceFactoryUser 0", "linkedCallTracedFamily 1", "linkedCallConfig 1"],
            "\(batches.values)")
    }

    /// Two levels of constructions around the linked call: its events at 2, none negative.
    @Test func aLinkedCallTwoConstructionsDownIsAtDepthTwo() {
        let (app, _) = Self.appWithHolder()
        let batches = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { batches.append($0) }
        _ = app.linkedTraceOuter()
        app.tracer = nil
        #expect(batches.values.count == 1)
        let events = batches.values.flatMap { $0 }
        #expect(events.allSatisfy { $0.depth >= 0 }, "\(described(events))")
        #expect(
            Set(described(events)) == [
                "linkedTraceOuter 0", "linkedTraceSingletonUser 1", "linkedCallTracedFamily 2", "linkedCallConfig 2",
            ], "\(described(events))")
        #expect(events.first?.name == "linkedTraceOuter", "\(described(events))")
    }

    /// A linked call after the construction, outside every construction, is traced as the
    /// direct call is: what the getter resolves, then the member, each a batch of its own
    /// at depth 0.
    @Test func aLinkedCallAfterATracedConstructionIsTracedAsADirectCall() {
        let (app, _) = Self.appWithHolder()
        let batches = Collected<[String]>()
        app.tracer = ResolutionTracer { batches.append(described($0)) }
        _ = app.linkedTraceSingletonUser()
        let afterConstruction = batches.values.count
        _ = app.linkedTraceHolder.items(2)
        let linked = Array(batches.values.dropFirst(afterConstruction))
        _ = app.linkedCallTracedFamily(2)
        app.tracer = nil
        let direct = Array(batches.values.dropFirst(afterConstruction + linked.count))
        #expect(afterConstruction == 1, "\(batches.values)")
        #expect(linked == [["linkedCallConfig 0"], ["linkedCallTracedFamily 0"]], "\(batches.values)")
        #expect(linked == direct, "\(batches.values)")
    }

    /// A child container, or a request's scope, of the app container.
    enum Below: CaseIterable, CustomTestStringConvertible {
        case child, scope
        func of(_ app: DependencyContainer) -> DependencyContainer {
            self == .child ? DependencyContainer(parent: app) : DependencyContainer(scopeOf: app)
        }
        var testDescription: String { self == .child ? "a child" : "a request's scope" }
    }

    /// A child container (or a scope) with a tracer of its own builds a factory whose
    /// construction calls the app's kept holder's linked family: the app's tracer hears of
    /// what resolves in the app container, at depth 0; the child's hears only of its own
    /// construction.
    @Test(arguments: Below.allCases)
    func aLinkedCallInsideAConstructionBelowTheAppReachesEachTracerItsOwnEvents(_ below: Below) {
        let (app, _) = Self.appWithHolder()
        let child = below.of(app)
        let appBatches = Collected<[String]>()
        let childBatches = Collected<[String]>()
        app.tracer = ResolutionTracer { appBatches.append(described($0)) }
        child.tracer = ResolutionTracer { childBatches.append(described($0)) }
        _ = child.linkedTraceFactoryUser()
        app.tracer = nil
        child.tracer = nil
        #expect(childBatches.values == [["linkedTraceFactoryUser 0"]], "\(childBatches.values)")
        #expect(
            appBatches.values.map(Set.init) == [["linkedCallTracedFamily 0", "linkedCallConfig 0"]],
            "\(appBatches.values)")
    }

    /// Only the child (or the scope) has a tracer: it must not hear of what resolves in
    /// the app container.
    @Test(arguments: Below.allCases)
    func aTracerBelowTheAppDoesNotHearOfTheAppContainersLinkedResolutions(_ below: Below) {
        let (app, _) = Self.appWithHolder()
        let child = below.of(app)
        let childBatches = Collected<[String]>()
        child.tracer = ResolutionTracer { childBatches.append(described($0)) }
        _ = child.linkedTraceFactoryUser()
        child.tracer = nil
        #expect(childBatches.values == [["linkedTraceFactoryUser 0"]], "\(childBatches.values)")
    }

    /// Only the app has a tracer, the construction runs in the child, untraced: the linked
    /// call's events, in the app, are delivered as an outermost resolution would be, or not
    /// at all, but never inside the child's construction.
    @Test func anAppTracerAndAnUntracedChildConstruction() async {
        let appBatches = Collected<[String]>()
        let labels = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, holder) = Self.appWithHolder()
            let child = DependencyContainer(parent: app)
            app.tracer = ResolutionTracer { events in
                appBatches.append(described(events))
                labels.append(holder.items(11).label)
            }
            _ = child.linkedTraceFactoryUser()
            app.tracer = nil
        }
        #expect(finished)
        #expect(appBatches.values.flatMap { $0 }.allSatisfy { !$0.hasSuffix("-1") }, "\(appBatches.values)")
    }

    /// The construction calls a linked provider in a task it awaits: the async provider,
    /// or the family.
    @Test(arguments: [
        (\DependencyContainer.linkedTraceTaskUser, "linkedTraceTaskUser", "linkedCallTracedAsync"),
        (\DependencyContainer.linkedTraceSyncTaskUser, "linkedTraceSyncTaskUser", "linkedCallTracedFamily"),
    ])
    func aLinkedCallInATaskTheConstructionAwaitsJoinsItsBatch(
        _ user: any KeyPath<DependencyContainer, AsyncProvider<LinkedTraceUser>> & Sendable, _ name: String, _ linked: String
    ) async throws {
        let (app, _) = Self.appWithHolder()
        let batches = Collected<[String]>()
        app.tracer = ResolutionTracer { batches.append(described($0)) }
        _ = try await app[keyPath: user]()
        app.tracer = nil
        #expect(batches.values.count == 1, "\(batches.values)")
        #expect(Set(batches.values.first ?? []) == ["\(name) 0", "\(linked) 1", "linkedCallConfig 1"], "\(batches.values)")
    }

    /// A task the construction starts and does not await calls the linked family after
    /// the construction ended: no hang, and nothing delivered with a negative depth.
    @Test func aLinkedCallInATaskThatOutlivesTheConstruction() async {
        let batches = Collected<[String]>()
        let done = AsyncLatch()
        let ended = await endsWithoutHanging {
            let (app, holder) = Self.appWithHolder()
            let release = AsyncLatch()
            app.setValue(release, forKey: "linkedTrace-release")
            app.tracer = ResolutionTracer { events in
                batches.append(described(events))
                _ = holder.items(1)
            }
            let started = Handoff<Task<Void, Never>>()
            _ = app.linkedTraceOutlivingUser(started)
            let task = await started.value()
            release.open()
            await task.value
            app.tracer = nil
            done.open()
        }
        #expect(ended)
        await done.wait()
        #expect(batches.values.flatMap { $0 }.allSatisfy { !$0.hasSuffix("-1") }, "\(batches.values)")
        #expect(batches.values.first?.first == "linkedTraceOutlivingUser 0", "\(batches.values)")
    }

    /// Threads released together resolve a factory whose construction calls the linked
    /// family, while another sets and removes the tracer: no hang, and each tracer hears a
    /// tree of its own, the construction at depth 0 with its linked call at depth 1, or,
    /// when set while the construction ran, what that construction still resolved at depth 0.
    @Test func threadsCallingLinkedProvidersInsideConstructionsWhileTheTracerChanges() async {
        let batches = Collected<[String]>()
        let labels = Collected<String>()
        weak var released: DependencyContainer?
        var finished = false
        do {
            let (app, _) = Self.appWithHolder()
            released = app
            finished = await concurrentlyOffThePool(threads: 6) { index in
                for round in 0..<200 {
                    if index == 0 {
                        app.tracer = round.isMultiple(of: 2) ? ResolutionTracer { batches.append(described($0)) } : nil
                    } else {
                        labels.append(app.linkedTraceFactoryUser().item.label)
                    }
                }
            }
            app.tracer = nil
        }
        #expect(finished)
        #expect(released == nil)
        #expect(Set(labels.values) == ["config 3"])
        // A tracer set while a construction runs hears of what that construction still
        // resolves as a tree of its own, from depth 0; one set before it, of all of it.
        let whole: Set<String> = ["linkedTraceFactoryUser 0", "linkedCallTracedFamily 1", "linkedCallConfig 1"]
        let joinedLate: Set<String> = ["linkedCallTracedFamily 0", "linkedCallConfig 0"]
        let odd = batches.values.filter { batch in
            batch.first == "linkedTraceFactoryUser 0" ? !Set(batch).isSubset(of: whole) : !Set(batch).isSubset(of: joinedLate)
        }
        #expect(odd.isEmpty, "\(odd.prefix(5))")
    }

    /// What the tracer captures goes once the tracer is removed: the batch that held it
    /// is not kept by the link's frames after the construction ends.
    @Test func theBatchIsNotKeptAfterTheConstructionEnds() async throws {
        let weakCanary = LinkedTraceWeakCanary()
        let (app, holder) = Self.appWithHolder()
        do {
            let canary = LinkedTraceCanary()
            weakCanary.canary = canary
            app.tracer = ResolutionTracer { _ in _ = canary }
        }
        _ = app.linkedTraceFactoryUser()
        _ = app.linkedTraceSingletonUser()
        _ = try await app.linkedTraceTaskUser()
        app.tracer = nil
        #expect(weakCanary.canary == nil)
        // The link still works, untraced.
        #expect(holder.items(4).label == "config 4")
    }

    /// The same, the linked provider kept past its holder and the container.
    @Test func theBatchIsNotKeptByALinkedFamilyKeptPastItsContainer() {
        let weakCanary = LinkedTraceWeakCanary()
        weak var released: DependencyContainer?
        var family: ProviderFamily<Int, LinkedCallItem>?
        do {
            let (app, holder) = Self.appWithHolder()
            released = app
            let canary = LinkedTraceCanary()
            weakCanary.canary = canary
            app.tracer = ResolutionTracer { _ in _ = canary }
            _ = app.linkedTraceFactoryUser()
            family = holder.items
        }
        #expect(released == nil)
        #expect(weakCanary.canary == nil)
        #expect(family != nil)
    }
}

extension DependencyContainer {
    /// A construction that starts a task calling the linked family once released, and
    /// hands the task out.
    func linkedTraceOutlivingUser(_ started: Handoff<Task<Void, Never>>) -> LinkedTraceUser {
        linkedTraceOutlivingUserProvider(started)()
    }
    func linkedTraceOutlivingUserProvider(_ started: Handoff<Task<Void, Never>>) -> Provider<LinkedTraceUser> {
        factory(name: "linkedTraceOutlivingUser") {
            let holder = self.linkedTraceHolder
            let release: AsyncLatch = self.getValue(forKey: "linkedTrace-release")!
            started.put(
                Task {
                    await release.wait()
                    _ = holder.items(8)
                })
            return LinkedTraceUser(holder.items(6))
        }
    }
}

@Suite struct LinkedCallTracedCycleAttackTests {
    /// A traced construction whose linked call calls itself with the same argument: the
    /// cycle still stops, it neither hangs nor overflows.
    @Test func aRealCycleThroughALinkedFamilyInsideATracedConstructionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a linked cycle inside a traced construction")
            let container = DependencyContainer()
            let holder = container.linkedTraceCycleHolder()
            container.setValue(holder, forKey: "linkedTrace-cycleHolder")
            container.tracer = ResolutionTracer { _ in }
            _ = container.linkedTraceCycleUser()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("linkedTraceCycleFamily"), "\(output)")
    }
}

extension DependencyContainer {
    /// A construction that starts the kept holder's recursive linked family.
    var linkedTraceCountdownUser: Provider<LinkedCallNode> {
        factory {
            let holder: LinkedCallCountdownHolder = self.getValue(forKey: "linkedTrace-countdownHolder")!
            return holder.countdown(3)
        }
    }
    /// A construction whose tasks call the linked family at once.
    var linkedTraceGroupUser: AsyncProvider<LinkedTraceUser> {
        factory {
            let holder = self.linkedTraceHolder
            let labels = await withTaskGroup(of: String.self) { group in
                for n in 0..<4 { group.addTask { holder.items(n).label } }
                var labels: [String] = []
                for await label in group { labels.append(label) }
                return labels
            }
            return LinkedTraceUser(LinkedCallItem(labels.sorted().joined(separator: ",")))
        }
    }
}

@Suite struct LinkedCallTracedNestingAttackTests {
    /// Linked calls inside linked calls inside a traced construction: each member one
    /// level below the one that called it.
    @Test func nestedLinkedCallsInsideATracedConstructionNestOneLevelEach() async {
        let batches = Collected<[String]>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            app.setValue("c", forKey: "linkedCall-name")
            let holder = app.linkedCallCountdownHolder()
            _ = holder.countdown
            app.setValue(holder, forKey: "linkedTrace-countdownHolder")
            app.tracer = ResolutionTracer { batches.append(described($0)) }
            #expect(app.linkedTraceCountdownUser().chain == ["c3", "c2", "c1", "c0"])
            app.tracer = nil
        }
        #expect(finished)
        let countdown = batches.values.flatMap { $0 }.filter { $0.hasPrefix("linkedCallCountdown ") }
        #expect(batches.values.count == 1, "\(batches.values)")
        #expect(batches.values.first?.first == "linkedTraceCountdownUser 0", "\(batches.values)")
        #expect(countdown == ["linkedCallCountdown 1", "linkedCallCountdown 2", "linkedCallCountdown 3", "linkedCallCountdown 4"], "\(batches.values)")
    }

    /// Tasks of a traced construction call the linked family at once: one batch, every
    /// linked event one level below the construction.
    @Test func tasksOfATracedConstructionCallingTheLinkedFamilyAtOnce() async throws {
        let (app, _) = LinkedCallTracedConstructionAttackTests.appWithHolder()
        let batches = Collected<[String]>()
        app.tracer = ResolutionTracer { batches.append(described($0)) }
        for _ in 0..<20 {
            #expect(try await app.linkedTraceGroupUser().item.label == "config 0,config 1,config 2,config 3")
        }
        app.tracer = nil
        #expect(batches.values.count == 20, "\(batches.values.count)")
        let odd = batches.values.filter { batch in
            batch.first != "linkedTraceGroupUser 0"
                || batch.filter { $0 == "linkedCallTracedFamily 1" }.count != 4
                || batch.filter { $0 == "linkedCallConfig 1" }.count != 4 || batch.count != 9
        }
        #expect(odd.isEmpty, "\(odd.prefix(3))")
    }
}
