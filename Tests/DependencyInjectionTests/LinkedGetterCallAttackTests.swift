import DependencyInjection
import Foundation
import Testing

final class LinkedCallNode: @unchecked Sendable {
    let value: Int
    let container: String
    let next: LinkedCallNode?
    init(_ value: Int, _ container: String, next: LinkedCallNode?) {
        (self.value, self.container, self.next) = (value, container, next)
    }
    var chain: [String] { ["\(container)\(value)"] + (next?.chain ?? []) }
}

final class LinkedCallItem: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

final class LinkedCallCountdownHolder: @unchecked Sendable {
    @Dependency(\.linkedCallCountdown) var countdown: ProviderFamily<Int, LinkedCallNode>
    init() {}
}

final class LinkedCallPingHolder: @unchecked Sendable {
    @Dependency(\.linkedCallPings) var pings: ProviderFamily<Int, LinkedCallNode>
    init() {}
}

final class LinkedCallPeer: @unchecked Sendable {
    weak var holder: LinkedCallPingHolder?
    init() {}
}

final class LinkedCallTracedHolder: @unchecked Sendable {
    @Dependency(\.linkedCallTracedFamily) var items: ProviderFamily<Int, LinkedCallItem>
    @Dependency(\.linkedCallTracedAsync) var makeItem: AsyncProvider<LinkedCallItem>
    init() {}
}

final class LinkedCallMarkedHolder: @unchecked Sendable {
    @Dependency(\.linkedCallMarkedFamily) var items: ProviderFamily<Int, LinkedCallItem>
    init() {}
}

final class LinkedCallGatedHolder: @unchecked Sendable {
    @Dependency(\.linkedCallGatedAsync) var makeItem: AsyncProvider<LinkedCallItem>
    init() {}
}

final class LinkedCallGate: Sendable {
    let entered = AsyncLatch()
    let proceed = AsyncLatch()
    init() {}
}

final class LinkedCallWeak: @unchecked Sendable {
    weak var container: DependencyContainer?
    init() {}
}

final class LinkedCallUser: Sendable {
    let relay: LinkedGetterRelay
    init(_ relay: LinkedGetterRelay) { self.relay = relay }
}

final class LinkedCallSelfReadingHolder: @unchecked Sendable {
    @Dependency(\.linkedCallSelfReadingFamily) var items: ProviderFamily<Int, LinkedCallItem>
    init() {}
}

extension DependencyContainer {
    var linkedCallName: String { getValue(forKey: "linkedCall-name") ?? "?" }
    var linkedCallCountdownHolder: Provider<LinkedCallCountdownHolder> { singleton { LinkedCallCountdownHolder() } }
    /// Each member resolves the one below it through the kept holder's linked family.
    var linkedCallCountdown: ProviderFamily<Int, LinkedCallNode> {
        singleton { n in
            LinkedCallNode(n, self.linkedCallName, next: n > 0 ? self.linkedCallCountdownHolder().countdown(n - 1) : nil)
        }
    }

    var linkedCallPingHolder: Provider<LinkedCallPingHolder> { singleton { LinkedCallPingHolder() } }
    /// A member resolves through the other container's holder: the first container passes
    /// the same argument on, the second one less.
    var linkedCallPings: ProviderFamily<Int, LinkedCallNode> {
        singleton { n in
            let peer: LinkedCallPeer? = self.getValue(forKey: "linkedCall-peer")
            let first: Bool = self.getValue(forKey: "linkedCall-first") ?? false
            let next: LinkedCallNode? =
                first ? peer?.holder?.pings(n) : (n > 0 ? peer?.holder?.pings(n - 1) : nil)
            return LinkedCallNode(n, self.linkedCallName, next: next)
        }
    }

    var linkedCallConfig: Provider<String> { factory { "config" } }
    var linkedCallTracedHolder: Provider<LinkedCallTracedHolder> { singleton { LinkedCallTracedHolder() } }
    /// A getter that resolves before it makes its provider.
    var linkedCallTracedFamily: ProviderFamily<Int, LinkedCallItem> {
        let config = linkedCallConfig()
        return factory { n in LinkedCallItem("\(config) \(n)") }
    }
    var linkedCallTracedAsync: AsyncProvider<LinkedCallItem> {
        let config = linkedCallConfig()
        return factory { LinkedCallItem(config) }
    }

    var linkedCallMarkedHolder: Provider<LinkedCallMarkedHolder> { singleton { LinkedCallMarkedHolder() } }
    var linkedCallMarkedFamily: ProviderFamily<Int, LinkedCallItem> {
        let helper = LinkedGetterHelper()
        return factory { n in LinkedCallItem("\(helper.marker) \(n)") }
    }

    var linkedCallGatedHolder: Provider<LinkedCallGatedHolder> { singleton { LinkedCallGatedHolder() } }
    var linkedCallGatedAsync: AsyncProvider<LinkedCallItem> {
        let gate: LinkedCallGate? = getValue(forKey: "linkedCall-gate")
        return factory {
            if let gate {
                gate.entered.open()
                await gate.proceed.wait()
            }
            return LinkedCallItem("gated")
        }
    }

    var linkedCallUser: Provider<LinkedCallUser> { singleton { LinkedCallUser(self.linkedFamilyHolder().relays(4)) } }

    var linkedCallSelfReadingHolder: Provider<LinkedCallSelfReadingHolder> { singleton { LinkedCallSelfReadingHolder() } }
    /// A getter that, once told to, calls the linked family that reads it.
    var linkedCallSelfReadingFamily: ProviderFamily<Int, LinkedCallItem> {
        if getValue(forKey: "linkedCall-recurse") ?? false {
            _ = linkedCallSelfReadingHolder().items(0)
        }
        return factory { n in LinkedCallItem("\(n)") }
    }
}

@Suite struct LinkedGetterCallAttackTests {
    /// A family member resolving the same family with another argument through the kept
    /// holder's linked property: recursion on arguments, not a cycle.
    @Test func aRecursiveFamilyThroughItsLinkedPropertyIsNoCycle() async {
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue("c", forKey: "linkedCall-name")
            let holder = container.linkedCallCountdownHolder()
            #expect(holder.countdown(4).chain == ["c4", "c3", "c2", "c1", "c0"])
            #expect(holder.countdown(6).chain == ["c6", "c5", "c4", "c3", "c2", "c1", "c0"])
            #expect(container.linkedCallCountdown(3) === holder.countdown(3))
        }
        #expect(finished)
    }

    /// The recursion starting from the container, before the holder exists.
    @Test func aRecursiveFamilyStartedFromTheContainerBuildsItsHolderOnTheWay() async {
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue("c", forKey: "linkedCall-name")
            #expect(container.linkedCallCountdown(3).chain == ["c3", "c2", "c1", "c0"])
        }
        #expect(finished)
    }

    /// Two containers' links to one registration call each other, with the same argument
    /// and with others.
    @Test func twoLinksToOneRegistrationInTwoContainersCallEachOther() async {
        let finished = await finishesWithoutHangingOffThePool {
            let first = DependencyContainer()
            let second = DependencyContainer()
            first.setValue("a", forKey: "linkedCall-name")
            second.setValue("b", forKey: "linkedCall-name")
            first.setValue(true, forKey: "linkedCall-first")
            let (toSecond, toFirst) = (LinkedCallPeer(), LinkedCallPeer())
            first.setValue(toSecond, forKey: "linkedCall-peer")
            second.setValue(toFirst, forKey: "linkedCall-peer")
            let firstHolder = first.linkedCallPingHolder()
            let secondHolder = second.linkedCallPingHolder()
            toSecond.holder = secondHolder
            toFirst.holder = firstHolder
            #expect(firstHolder.pings(2).chain == ["a2", "b2", "a1", "b1", "a0", "b0"])
            #expect(secondHolder.pings(3).chain == ["b3", "a2", "b2", "a1", "b1", "a0", "b0"])
        }
        #expect(finished)
    }

    /// What a family's getter resolves while a direct call reads the registration is traced.
    @Test func whatAFamilysGetterResolvesIsTracedOnADirectCall() {
        let container = DependencyContainer()
        let names = Collected<String>()
        container.tracer = ResolutionTracer { events in for event in events { names.append(event.name) } }
        _ = container.linkedCallTracedFamily(1)
        container.tracer = nil
        #expect(names.values.contains("linkedCallConfig"), "\(names.values)")
    }

    /// The same through the kept holder's linked family: as at the direct call, and as
    /// before the call read its registration in a factory of the link's own container.
    @Test func whatAFamilysGetterResolvesIsTracedOnALinkedCall() {
        let container = DependencyContainer()
        let holder = container.linkedCallTracedHolder()
        let names = Collected<String>()
        container.tracer = ResolutionTracer { events in for event in events { names.append(event.name) } }
        #expect(holder.items(1).label == "config 1")
        container.tracer = nil
        #expect(names.values.contains("linkedCallTracedFamily"), "\(names.values)")
        #expect(names.values.contains("linkedCallConfig"), "the getter's resolution went untraced: \(names.values)")
    }

    @Test func whatAnAsyncProvidersGetterResolvesIsTracedOnALinkedCall() async throws {
        let container = DependencyContainer()
        let holder = container.linkedCallTracedHolder()
        let names = Collected<String>()
        container.tracer = ResolutionTracer { events in for event in events { names.append(event.name) } }
        #expect(try await holder.makeItem().label == "config")
        container.tracer = nil
        #expect(names.values.contains("linkedCallTracedAsync"), "\(names.values)")
        #expect(names.values.contains("linkedCallConfig"), "the getter's resolution went untraced: \(names.values)")
    }

    /// The link, and the container its calls read in, hold the container weakly: a linked
    /// family and a linked async provider kept past the holder let it go.
    @Test func linkedProvidersKeptOutsideDoNotKeepTheContainer() {
        weak var released: DependencyContainer?
        var family: ProviderFamily<Int, LinkedCallItem>?
        var makeItem: AsyncProvider<LinkedCallItem>?
        do {
            let container = DependencyContainer()
            released = container
            let holder = container.linkedCallTracedHolder()
            #expect(holder.items(2).label == "config 2")
            family = holder.items
            makeItem = holder.makeItem
        }
        #expect(released == nil)
        #expect(family != nil && makeItem != nil)
    }

    /// A linked call inside the construction of another singleton: what the getter creates
    /// takes the container building, in a child as in its parent.
    @Test func aLinkedCallInsideAnotherSingletonsConstruction() {
        let app = DependencyContainer()
        app.setValue("app", forKey: "linked-getter-marker")
        let child = DependencyContainer(parent: app)
        child.setValue("child", forKey: "linked-getter-marker")
        let appUser = app.linkedCallUser()
        let childUser = child.linkedCallUser()
        #expect(appUser.relay.helper.marker == "app")
        #expect(appUser.relay.helper.$marker.container === app)
        #expect(childUser.relay.helper.marker == "child")
        #expect(childUser.relay.helper.$marker.container === child)
    }

    /// Threads released together call a kept holder's linked family while another installs
    /// and removes overrides of the family and of what its getter's helper reads.
    @Test func threadsCallingALinkedFamilyWhileOverridesChange() async {
        weak var released: DependencyContainer?
        let labels = Collected<String>()
        var finished = false
        do {
            let container = DependencyContainer()
            container.setValue("linked", forKey: "linked-getter-marker")
            released = container
            let holder = container.linkedCallMarkedHolder()
            finished = await concurrentlyOffThePool(threads: 8) { index in
                for round in 0..<200 {
                    if index == 0 {
                        switch round % 4 {
                        case 0: container.override(\.linkedCallMarkedFamily) { n in LinkedCallItem("family \(n)") }
                        case 1: container.override(\.linkedGetterMarker) { "overridden" }
                        case 2: container.reset(\.linkedCallMarkedFamily)
                        default: container.reset(\.linkedGetterMarker)
                        }
                    } else {
                        labels.append(holder.items(round).label)
                    }
                }
            }
        }
        #expect(finished)
        #expect(released == nil)
        let unexpected = labels.values.filter { label in
            !(label.hasPrefix("linked ") || label.hasPrefix("overridden ") || label.hasPrefix("family "))
        }
        #expect(unexpected.isEmpty, "\(Set(unexpected))")
    }

    @Test func aLinkedAsyncCallOutlivesTheLastOutsideReferenceToItsContainer() async {
        let released = LinkedCallWeak()
        let gate = LinkedCallGate()
        let result = Handoff<String>()
        let ended = await endsWithoutHanging {
            var container: DependencyContainer? = DependencyContainer()
            released.container = container
            container!.setValue(gate, forKey: "linkedCall-gate")
            let holder = container!.linkedCallGatedHolder()
            let task = Task { try? await holder.makeItem().label }
            await gate.entered.wait()
            container = nil
            gate.proceed.open()
            result.put(await task.value ?? "threw")
        }
        #expect(ended)
        #expect(await result.value() == "gated")
        #expect(released.container == nil)
    }

    /// A getter that calls the very linked family reading it stops with the cycle, neither
    /// hanging nor overflowing the stack.
    @Test func aGetterCallingItsOwnLinkedFamilyStopsWithACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a getter calling its own linked family")
            let container = DependencyContainer()
            let holder = container.linkedCallSelfReadingHolder()
            precondition(holder.items(0).label == "0")
            container.setValue(true, forKey: "linkedCall-recurse")
            _ = holder.items(1)
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("linkedCallSelfReadingFamily"), "\(output)")
    }
}

final class LinkedCallAsyncHolder: @unchecked Sendable {
    @Dependency(\.linkedCallMarkedAsync) var makeItem: AsyncProvider<LinkedCallItem>
    init() {}
}

extension DependencyContainer {
    var linkedCallAsyncHolder: Provider<LinkedCallAsyncHolder> { singleton { LinkedCallAsyncHolder() } }
    var linkedCallMarkedAsync: AsyncProvider<LinkedCallItem> {
        let helper = LinkedGetterHelper()
        return factory { LinkedCallItem("\(helper.marker)") }
    }
}

@Suite struct LinkedAsyncGetterLoadAttackTests {
    /// Tasks call a kept holder's linked async provider while overrides of what its
    /// getter's helper reads come and go: every helper takes the linked container. The
    /// task that changes the overrides does not yield between changes: yielding, it went
    /// through the cooperative pool's queue 200 times, behind every test running meanwhile,
    /// and took as long as the whole suite.
    @Test func tasksCallingALinkedAsyncProviderWhileOverridesChange() async {
        let released = LinkedCallWeak()
        let labels = Collected<String>()
        let containers = Collected<Bool>()
        let ended = await endsWithoutHanging {
            let container = DependencyContainer()
            released.container = container
            container.setValue("linked", forKey: "linked-getter-marker")
            let holder = container.linkedCallAsyncHolder()
            let other = DependencyContainer()
            other.setValue("main", forKey: "linked-getter-marker")
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for round in 0..<200 {
                        if round.isMultiple(of: 2) {
                            container.override(\.linkedGetterMarker) { "overridden" }
                        } else {
                            container.reset(\.linkedGetterMarker)
                        }
                    }
                }
                for _ in 0..<6 {
                    group.addTask {
                        for _ in 0..<100 {
                            let item = try? await DependencyContainer.withMain(other) { try await holder.makeItem() }
                            labels.append(item?.label ?? "threw")
                        }
                    }
                }
            }
            containers.append(true)
        }
        #expect(ended)
        #expect(released.container == nil)
        let unexpected = labels.values.filter { $0 != "linked" && $0 != "overridden" }
        #expect(unexpected.isEmpty, "\(Set(unexpected))")
        #expect(labels.values.count == 600)
    }
}

final class LinkedCallTracedUser: Sendable {
    let item: LinkedCallItem
    init(_ item: LinkedCallItem) { self.item = item }
}

extension DependencyContainer {
    var linkedCallTracedUser: Provider<LinkedCallTracedUser> { singleton { LinkedCallTracedUser(self.linkedCallTracedHolder().items(5)) } }
    var linkedCallTracedAsyncUser: AsyncProvider<LinkedCallTracedUser> {
        singleton { LinkedCallTracedUser(try await self.linkedCallTracedHolder().makeItem()) }
    }
}

@Suite struct LinkedGetterTraceInConstructionAttackTests {
    /// Inside a traced construction, what a linked family's call resolves (its getter's
    /// resolution and its member) joins the construction's batch, as a direct call's does.
    @Test func aLinkedFamilysCallInsideATracedConstructionJoinsItsBatch() {
        let container = DependencyContainer()
        _ = container.linkedCallTracedHolder().items
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        _ = container.linkedCallTracedUser()
        container.tracer = nil
        let all = batches.values.flatMap { $0 }
        #expect(all.contains("linkedCallTracedUser 0"), "\(batches.values)")
        #expect(all.contains("linkedCallTracedFamily 1"), "\(batches.values)")
        #expect(all.contains("linkedCallConfig 1"), "\(batches.values)")
        #expect(batches.values.count == 1, "\(batches.values)")
    }

    @Test func aLinkedAsyncCallInsideATracedConstructionJoinsItsBatch() async throws {
        let container = DependencyContainer()
        _ = container.linkedCallTracedHolder().makeItem
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        _ = try await container.linkedCallTracedAsyncUser()
        container.tracer = nil
        let all = batches.values.flatMap { $0 }
        #expect(all.contains("linkedCallTracedAsyncUser 0"), "\(batches.values)")
        #expect(all.contains("linkedCallTracedAsync 1"), "\(batches.values)")
        #expect(all.contains("linkedCallConfig 1"), "\(batches.values)")
        #expect(batches.values.count == 1, "\(batches.values)")
    }
}

extension DependencyContainer {
    var linkedCallDirectTracedUser: Provider<LinkedCallTracedUser> { singleton { LinkedCallTracedUser(self.linkedCallTracedFamily(5)) } }
}

@Suite struct LinkedGetterTraceControlTests {
    /// Control: a direct call of the family inside a traced construction traces what its
    /// getter resolves.
    @Test func aDirectFamilyCallInsideATracedConstructionTracesItsGetter() {
        let container = DependencyContainer()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in batches.append(events.map { "\($0.name) \($0.depth)" }) }
        _ = container.linkedCallDirectTracedUser()
        container.tracer = nil
        #expect(batches.values == [["linkedCallDirectTracedUser 0", "linkedCallConfig 1", "linkedCallTracedFamily 1"]])
    }
}
