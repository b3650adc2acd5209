import DependencyInjection
import Foundation
import Testing

// Attacks on the providers a kept instance's @Dependency publishes linked (PropertyLink):
// the value types around them, the owners that keep them, cycles, shutdown, and load.

final class LPAItem: Sendable {
    let label: String
    init(label: String = "live") { self.label = label }
}

/// A property over an optional async provider: a registration that may be absent.
final class LPAOptionalReader: @unchecked Sendable {
    @Dependency(\.lpaMaybeItem) var maybeItem: AsyncProvider<LPAItem>?
    init() {}
}

/// A property over a type-erased value that holds an async provider.
final class LPAAnyReader: @unchecked Sendable {
    @Dependency(\.lpaAnyItem) var anyItem: Any
    init() {}
}

/// A property over an optional family.
final class LPAOptionalFamilyReader: @unchecked Sendable {
    @Dependency(\.lpaMaybeFamily) var maybeFamily: ProviderFamily<String, LPAItem>?
    init() {}
}

/// Reads an async provider and a family: kept by its container.
final class LPAReader: @unchecked Sendable {
    @Dependency(\.lpaItem) var item
    @Dependency(\.lpaFamily) var family
    init() {}
}

/// Holds a reader it got from a factory during its own construction.
final class LPAHolder: @unchecked Sendable {
    let reader: LPAReader
    init(reader: LPAReader) { self.reader = reader }
}

/// A property over a Provider kept as a value (a factory it calls many times).
final class LPAProviderValueReader: @unchecked Sendable {
    @Dependency(\.lpaFactoryItem) var makeItem: Provider<LPAItem>
    init() {}
}

/// An async provider with an argument (a subscript registration).
final class LPASubscriptReader: @unchecked Sendable {
    @Dependency(\.[lpaID: 7]) var seventh: AsyncProvider<LPAItem>
    init() {}
}

extension DependencyContainer {
    var lpaItem: AsyncProvider<LPAItem> { singleton { LPAItem() } }
    var lpaFamily: ProviderFamily<String, LPAItem> { singleton { (name: String) in LPAItem(label: name) } }
    var lpaFactoryItem: Provider<LPAItem> { factory { LPAItem() } }
    var lpaMaybeItem: AsyncProvider<LPAItem>? { lpaItem }
    var lpaAnyItem: Any { lpaItem }
    var lpaMaybeFamily: ProviderFamily<String, LPAItem>? { lpaFamily }
    subscript(lpaID id: Int) -> AsyncProvider<LPAItem> { singleton { LPAItem(label: "id \(id)") } }

    var lpaOptionalReader: Provider<LPAOptionalReader> { singleton { LPAOptionalReader() } }
    var lpaAnyReader: Provider<LPAAnyReader> { singleton { LPAAnyReader() } }
    var lpaOptionalFamilyReader: Provider<LPAOptionalFamilyReader> { singleton { LPAOptionalFamilyReader() } }
    var lpaReader: Provider<LPAReader> { singleton { LPAReader() } }
    var lpaScopedReader: Provider<LPAReader> { scoped { LPAReader() } }
    var lpaSharedReader: Provider<LPAReader> { shared { LPAReader() } }
    var lpaGraphReader: Provider<LPAReader> { graph { LPAReader() } }
    var lpaFactoryReader: Provider<LPAReader> { factory { LPAReader() } }
    var lpaHolder: Provider<LPAHolder> { singleton { LPAHolder(reader: self.lpaFactoryReader()) } }
    var lpaAsyncReader: AsyncProvider<LPAReader> { singleton { LPAReader() } }
    var lpaAsyncScopedReader: AsyncProvider<LPAReader> { scoped { LPAReader() } }
    var lpaProviderValueReader: Provider<LPAProviderValueReader> { singleton { LPAProviderValueReader() } }
    var lpaSubscriptReader: Provider<LPASubscriptReader> { singleton { LPASubscriptReader() } }
}

@Suite struct LinkedProviderAttackTests {
    // MARK: - Value types that are not exactly the provider

    /// An optional async provider in a kept instance: the link reads the key path as if it
    /// led to the provider itself.
    @Test func anOptionalAsyncProviderPropertyInAKeptInstanceCanBeCalled() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("optional async provider")
            let container = DependencyContainer()
            let reader = container.lpaOptionalReader()
            guard let provider = reader.maybeItem else { exit(3) }
            let item = try? await provider()
            guard let item, item === container.instanceIfBuilt(\.lpaItem) else { exit(4) }
            withExtendedLifetime(container) {}
        }
        if let result, result.exitStatus != .exitCode(0) { Issue.record("stderr: \(standardError(of: result))") }
    }

    @Test func anOptionalProviderFamilyPropertyInAKeptInstanceCanBeCalled() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("optional family")
            let container = DependencyContainer()
            let reader = container.lpaOptionalFamilyReader()
            guard let family = reader.maybeFamily else { exit(3) }
            guard family("a") === container.lpaFamily("a") else { exit(4) }
            withExtendedLifetime(container) {}
        }
        if let result, result.exitStatus != .exitCode(0) { Issue.record("stderr: \(standardError(of: result))") }
    }

    @Test func anAnyPropertyHoldingAnAsyncProviderInAKeptInstanceCanBeCalled() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("Any property")
            let container = DependencyContainer()
            let reader = container.lpaAnyReader()
            guard let provider = reader.anyItem as? AsyncProvider<LPAItem> else { exit(3) }
            let item = try? await provider()
            guard let item, item === container.instanceIfBuilt(\.lpaItem) else { exit(4) }
            withExtendedLifetime(container) {}
        }
        if let result, result.exitStatus != .exitCode(0) { Issue.record("stderr: \(standardError(of: result))") }
    }

    /// Same, but the optional read outside an exit test (to see the message in-process when
    /// the exit test fails).
    @Test func anOptionalAsyncProviderPropertyOfAnAppObjectWorks() async throws {
        let container = DependencyContainer()
        let reader = DependencyContainer.withMain(container) { LPAOptionalReader() }
        let item = try await reader.maybeItem!()
        #expect(item === container.instanceIfBuilt(\.lpaItem))
    }

    // MARK: - Owners that keep the property

    @Test func aSingletonBuiltInsideWithMainDoesNotKeepItsContainer() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = DependencyContainer.withMain(container) { container.lpaReader() }
            _ = try await reader.item()
            _ = reader.family("a")
        }()
        #expect(released == nil)
    }

    @Test func aFactoryProductHeldByASingletonDoesNotKeepItsContainer() async throws {
        weak var released: DependencyContainer?
        weak var releasedReader: LPAReader?
        try await {
            let container = DependencyContainer()
            released = container
            let holder = container.lpaHolder()
            releasedReader = holder.reader
            _ = try await holder.reader.item()
            _ = holder.reader.family("a")
        }()
        #expect(released == nil)
        #expect(releasedReader == nil)
    }

    @Test func anAsyncSingletonsPropertiesDoNotKeepItsContainer() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = try await container.lpaAsyncReader()
            _ = try await reader.item()
            _ = reader.family("a")
        }()
        #expect(released == nil)
    }

    @Test func anAsyncScopedInstancesPropertiesDoNotKeepItsScope() async throws {
        let app = DependencyContainer()
        weak var released: DependencyContainer?
        try await {
            let scope = DependencyContainer(scopeOf: app)
            released = scope
            let reader = try await scope.lpaAsyncScopedReader()
            _ = try await reader.item()
            _ = reader.family("a")
        }()
        #expect(released == nil)
    }

    @Test func aNestedScopesScopedInstanceDoesNotKeepItsScope() async throws {
        let app = DependencyContainer()
        weak var releasedOuter: DependencyContainer?
        weak var releasedInner: DependencyContainer?
        try await {
            let outer = DependencyContainer(scopeOf: app)
            let inner = DependencyContainer(scopeOf: outer)
            releasedOuter = outer
            releasedInner = inner
            let reader = inner.lpaScopedReader()
            let outerReader = outer.lpaScopedReader()
            #expect(reader !== outerReader)
            _ = try await reader.item()
            _ = reader.family("a")
            _ = try await outerReader.item()
        }()
        #expect(releasedInner == nil)
        #expect(releasedOuter == nil)
    }

    @Test func aChildContainersSingletonDoesNotKeepTheChild() async throws {
        let parent = DependencyContainer()
        weak var released: DependencyContainer?
        try await {
            let child = DependencyContainer(parent: parent)
            released = child
            let reader = child.lpaReader()
            _ = try await reader.item()
            _ = reader.family("a")
        }()
        #expect(released == nil)
    }

    @Test func aSharedOrGraphInstanceDoesNotKeepTheContainerAfterItIsGone() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let shared = container.lpaSharedReader()
            let graph = container.lpaGraphReader()
            _ = try await shared.item()
            _ = try await graph.item()
        }()
        #expect(released == nil)
    }

    /// A singleton's property over a Provider kept as the value (a factory it calls).
    @Test func aSingletonsProviderValuedPropertyDoesNotKeepItsContainer() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaProviderValueReader()
            _ = reader.makeItem()
        }
        #expect(released == nil, "a Provider kept as a property's value keeps the container")
    }

    @Test func aSubscriptAsyncProviderPropertyIsLinkedAndResolvesItsArgument() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaSubscriptReader()
            let item = try await reader.seventh()
            #expect(item.label == "id 7")
            #expect(try await container[lpaID: 7]() === item)
        }()
        #expect(released == nil)
    }

    /// `@Dependency(\.x, container: c)` where `c` is the container building the owner.
    @Test func anExplicitContainerArgumentThatKeepsTheOwnerDoesNotLeak() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaExplicitReader()
            _ = try await reader.item()
        }()
        #expect(released == nil)
    }

    /// After reset the property reads again and still publishes a link.
    @Test func aResetKeptPropertyStillDoesNotKeepItsContainer() async throws {
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            _ = try await reader.item()
            reader.$item.reset()
            reader.$family.reset()
            _ = try await reader.item()
            _ = reader.family("a")
        }()
        #expect(released == nil)
    }

    /// A switch to another container: the property holds that one (strongly, as before);
    /// the original container is not kept.
    @Test func aSwitchedKeptPropertyReadsTheNewContainerAndFreesTheOld() async throws {
        let other = DependencyContainer()
        weak var released: DependencyContainer?
        try await {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            _ = try await reader.item()
            reader.$item.container = other
            #expect(try await reader.item() === other.instanceIfBuilt(\.lpaItem))
        }()
        #expect(released == nil)
    }

    // MARK: - Behaviour

    /// The provider copied out of a singleton, called while the container lives through
    /// another reference.
    @Test func aCopiedOutLinkedProviderWorksWhileTheContainerLives() async throws {
        let container = DependencyContainer()
        let (item, family) = { () -> (AsyncProvider<LPAItem>, ProviderFamily<String, LPAItem>) in
            let reader = container.lpaReader()
            return (reader.item, reader.family)
        }()
        await container.shutdown()
        #expect(try await item() === container.instanceIfBuilt(\.lpaItem))
        #expect(family("x") === container.lpaFamily("x"))
    }

    /// A family member's provider taken from a linked family keeps the container (it is a
    /// Provider): it works after the container's other holders are gone.
    @Test func aMemberProviderFromALinkedFamilyOutlivesTheContainersHolders() {
        weak var released: DependencyContainer?
        let member = { () -> Provider<LPAItem> in
            let container = DependencyContainer()
            released = container
            return container.lpaReader().family["a"]
        }()
        #expect(released != nil)
        #expect(member().label == "a")
    }

    /// Decorations installed after the first read reach the linked provider.
    @Test func aDecorationInstalledAfterTheFirstReadReachesTheLinkedProvider() async throws {
        let container = DependencyContainer()
        let reader = container.lpaReader()
        let first = try await reader.item()
        container.override(\.lpaItem) { LPAItem(label: "stub") }
        let stubbed = try await reader.item()
        #expect(stubbed.label == "stub")
        #expect(stubbed !== first)
    }

    /// shutdown() runs the async registration's teardown for an instance built through the
    /// linked provider.
    @Test func shutdownTearsDownAnInstanceBuiltThroughTheLinkedProvider() async throws {
        let container = DependencyContainer()
        let reader = container.lpaTornReader()
        let item = try await reader.item()
        #expect(item.label == "tearable")
        await container.shutdown()
        #expect(LPATeardowns.shared.values.contains(ObjectIdentifier(item)))
    }
}

final class LPATeardowns: @unchecked Sendable {
    static let shared = Collected<ObjectIdentifier>()
}

final class LPATornReader: @unchecked Sendable {
    @Dependency(\.lpaTearable) var item
    init() {}
}

extension DependencyContainer {
    var lpaTearable: AsyncProvider<LPAItem> {
        singleton { LPAItem(label: "tearable") }.onShutdown { LPATeardowns.shared.append(ObjectIdentifier($0)) }
    }
    var lpaTornReader: Provider<LPATornReader> { singleton { LPATornReader() } }
}

final class LPAExplicitReader: @unchecked Sendable {
    @Dependency var item: AsyncProvider<LPAItem>
    init(container: DependencyContainer) { _item = Dependency(\.lpaItem, container: container) }
}

extension DependencyContainer {
    var lpaExplicitReader: Provider<LPAExplicitReader> { singleton { LPAExplicitReader(container: self) } }
}

// MARK: - Cycles, shutdown, nested owners, load

/// Reads the async registration that builds it: a cycle through the linked provider.
final class LPACycleReader: @unchecked Sendable {
    @Dependency(\.lpaCyclic) var cyclic
    @Dependency(\.lpaCyclicFamily) var family
    init() {}
}

/// Made by a plain property while a singleton's property is first read.
final class LPAHelper: @unchecked Sendable {
    @Dependency(\.lpaItem) var item
    @Dependency(\.lpaFamily) var family
    init() {}
}

final class LPAHelperOwner: @unchecked Sendable {
    @Dependency(\.lpaHelperValue) var helper
    init() {}
}

/// Calls its linked family from its deinit.
final class LPADeinitCaller: @unchecked Sendable {
    @Dependency(\.lpaFamily) var family
    let onDeinit: @Sendable (String?) -> Void
    init(onDeinit: @escaping @Sendable (String?) -> Void) { self.onDeinit = onDeinit }
    deinit {
        let family = family
        onDeinit(family("from deinit").label)
    }
}

extension DependencyContainer {
    var lpaCyclic: AsyncProvider<LPAItem> {
        singleton {
            let reader = self.lpaCycleReader()
            return try await reader.cyclic()
        }
    }
    var lpaCyclicFamily: ProviderFamily<String, LPAItem> {
        singleton { (name: String) in self.lpaCycleReader().family(name) }
    }
    var lpaCycleReader: Provider<LPACycleReader> { singleton { LPACycleReader() } }
    var lpaHelperValue: LPAHelper { LPAHelper() }
    var lpaHelperOwner: Provider<LPAHelperOwner> { singleton { LPAHelperOwner() } }
    var lpaDeinitSink: (@Sendable (String?) -> Void)? { getValue(forKey: "lpa.deinit") }
    var lpaDeinitCaller: Provider<LPADeinitCaller> {
        singleton { LPADeinitCaller(onDeinit: self.lpaDeinitSink ?? { _ in }) }
    }
}

@Suite struct LinkedProviderAttackBatch2Tests {
    @Test func aCycleThroughALinkedAsyncProviderIsReported() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a linked async provider")
            let container = DependencyContainer()
            _ = try? await container.lpaCyclic()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("lpaCyclic"), "\(output)")
    }

    @Test func aCycleThroughALinkedFamilyIsReported() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a linked family")
            let container = DependencyContainer()
            _ = container.lpaCyclicFamily("a")
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("lpaCyclicFamily"), "\(output)")
    }

    /// An object a plain property makes while a singleton's property is first read holds
    /// the container weakly too, and so do its providers.
    @Test func anObjectMadeByAKeptOwnersFirstReadDoesNotKeepTheContainer() async throws {
        weak var released: DependencyContainer?
        weak var releasedHelper: LPAHelper?
        do {
            let container = DependencyContainer()
            released = container
            let helper = container.lpaHelperOwner().helper
            releasedHelper = helper
            let item = try await helper.item()
            #expect(item === container.instanceIfBuilt(\.lpaItem))
            #expect(helper.family("a") === container.lpaFamily("a"))
        }
        #expect(released == nil)
        #expect(releasedHelper == nil)
    }

    /// shutdown() releases the singleton while the container lives: its deinit may call the
    /// linked family, which resolves in the container.
    @Test func aKeptInstancesDeinitCallsItsLinkedFamilyDuringShutdown() async {
        let container = DependencyContainer()
        let seen = Collected<String?>()
        container.setValue({ @Sendable (label: String?) in seen.append(label) }, forKey: "lpa.deinit")
        let finished = await finishesWithoutHangingOffThePool {
            _ = container.lpaDeinitCaller().family("warm")
            container.shutdown()
        }
        #expect(finished)
        #expect(seen.values == ["from deinit"])
    }

    /// Threads call the linked providers while others override and reset the registration
    /// and reset the property: no race, every value is the live one or the stub.
    @Test func linkedCallsRacingOverridesAndResets() async {
        let container = DependencyContainer()
        let reader = container.lpaReader()
        let labels = Collected<String>()
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<200 {
                switch index % 4 {
                case 0:
                    container.override(\.lpaFamily) { name in LPAItem(label: "stub " + name) }
                    container.reset(\.lpaFamily)
                case 1:
                    reader.$family.reset()
                default:
                    labels.append(reader.family("n\(round % 3)").label)
                }
            }
        }
        #expect(finished)
        #expect(labels.values.allSatisfy { $0.hasPrefix("n") || $0.hasPrefix("stub n") })
    }

    /// Tasks await the linked async provider while the container is shut down and rebuilt.
    @Test func linkedAsyncCallsRacingShutdown() async {
        let container = DependencyContainer()
        let reader = container.lpaReader()
        let start = AsyncLatch()
        let finished = await endsWithoutHanging {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        await start.wait()
                        for _ in 0..<50 {
                            if index == 0 { await container.shutdown() } else { _ = try? await reader.item() }
                        }
                    }
                }
                start.open()
            }
        }
        #expect(finished)
    }

    /// Threads each make a container, call its singleton's linked family and let the
    /// container go, over and over: the links' weak loads run beside other threads'
    /// releases of their containers.
    @Test func linkedCallsWhileOtherHoldersLetGo() async {
        let finished = await concurrentlyOffThePool(threads: 8) { _ in
            for round in 0..<200 {
                let container = DependencyContainer()
                let family = container.lpaReader().family
                _ = family("r\(round)")
                withExtendedLifetime(container) {}
            }
        }
        #expect(finished)
    }

    /// Many threads read the kept owner's property for the first time together: one
    /// published value, linked.
    @Test func concurrentFirstReadsOfAKeptProperty() async throws {
        weak var released: DependencyContainer?
        let finished: Bool
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            finished = await concurrentlyOffThePool(threads: 8) { index in
                _ = reader.family("x\(index)")
            }
            #expect(reader.family("x0") === container.lpaFamily("x0"))
        }
        #expect(finished)
        #expect(released == nil)
    }
}

@Suite struct LinkedProviderAttackSwitchTests {
    /// A test points a singleton's property at the container that keeps it: the property
    /// holds it weakly, as before the switch, and publishes a linked provider.
    @Test func switchingAKeptPropertyToItsOwnContainerDoesNotKeepIt() async throws {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            reader.$item.container = container
            _ = try await reader.item()
        }
        #expect(released == nil, "the switch made the property hold its own container strongly")
    }

    /// A test points a singleton's property at another container, then back: while it
    /// points away it resolves there and holds that container, and once back it resolves
    /// in its own container again, weakly.
    @Test func switchingAKeptPropertyAwayAndBackDoesNotKeepItsOwnContainer() async throws {
        weak var released: DependencyContainer?
        let other = DependencyContainer()
        other.override(\.lpaItem) { LPAItem(label: "other") }
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            reader.$item.container = other
            #expect(try await reader.item().label == "other")
            #expect(reader.$item.container === other)
            reader.$item.container = container
            #expect(reader.$item.container === container)
            #expect(try await reader.item() === container.lpaItem())
        }
        #expect(released == nil, "switched back, the property held its own container strongly")
    }

    /// Threads released together read a kept instance's property while another switches
    /// it between its own container and another: every read gets one of the two
    /// containers' instances, and once the last switch is back, the own container is
    /// freed with its instance.
    @Test func readsRacingSwitchesBetweenTheOwnContainerAndAnother() async {
        weak var released: DependencyContainer?
        let other = DependencyContainer()
        let otherItem = other.lpaFamily("three")
        let seen = Collected<String>()
        var finished = false
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.lpaReader()
            let ownItem = container.lpaFamily("three")
            finished = await concurrentlyOffThePool(threads: 6) { index in
                for round in 0..<200 {
                    if index == 0 {
                        reader.$family.container = round.isMultiple(of: 2) ? other : container
                    } else {
                        let item = reader.family("three")
                        if item !== ownItem && item !== otherItem { seen.append("a third instance") }
                    }
                }
                if index == 0 { reader.$family.container = container }
            }
            #expect(reader.family("three") === ownItem)
        }
        #expect(finished)
        #expect(seen.values.isEmpty, "\(seen.values.prefix(3))")
        #expect(released == nil, "the property held its own container strongly after the last switch")
    }
}
