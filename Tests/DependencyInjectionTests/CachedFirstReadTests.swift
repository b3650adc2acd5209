@testable import DependencyInjection
import Foundation
import Testing

/// Holds one property whose registration is a singleton: its first read finds the
/// container's instance, and is served without a frame.
final class CachedClientHolder: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    init() {}
}

/// Holds one property whose provider's getter switches the property's container the first
/// time it runs, as a change made on another thread between the read's start and its end:
/// the property of a factory. A declaration of its own, since the road of a declaration's
/// first reads follows what its last one found (``PropertySite/lastReadFoundItKept``).
final class SwitchingFactoryHolder: @unchecked Sendable {
    @Dependency(\.switchingNode) var node
    init() {}
}

/// The same for a singleton, found kept in the container it is first read from.
final class SwitchingSingletonHolder: @unchecked Sendable {
    @Dependency(\.switchingNode) var node
    init() {}
}

/// What the getter of `switchingNode` does the first time it runs: switch a property.
final class PendingSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (() -> Void)?

    init(_ action: @escaping () -> Void) { self.action = action }

    /// Runs the action, the first time only.
    func fire() {
        lock.lock()
        let action = self.action
        self.action = nil
        lock.unlock()
        action?()
    }
}

extension DependencyContainer {
    /// A singleton or a factory, by the container's stored "scope", named by the container
    /// that builds it; its getter fires the container's pending switch, if any.
    var switchingNode: Provider<TaggedNode> {
        (getValue(forKey: "switch") as PendingSwitch?)?.fire()
        let tag: String = getValue(forKey: "tag") ?? "untagged"
        if getValue(forKey: "scope") == "factory" { return factory { TaggedNode(tag) } }
        return singleton { TaggedNode(tag) }
    }
}

/// Declarations with sites of their own, for tests that follow the hint of their first
/// reads: each is read by one test only.
final class FactoryHintProbe: @unchecked Sendable {
    @Dependency(\.feedLoader, function: "FactoryHintProbe", line: 9_001) var loader
    init() {}
}

final class SingletonHintProbe: @unchecked Sendable {
    @Dependency(\.httpClient, function: "SingletonHintProbe", line: 9_002) var client
    init() {}
}

final class PlainHintProbe: @unchecked Sendable {
    @Dependency(\.baseURL, function: "PlainHintProbe", line: 9_003) var baseURL
    init() {}
}

final class TaggedNode: Sendable {
    let tag: String
    init(_ tag: String) { self.tag = tag }
}

/// A property's first read of what its container already keeps (the common case: a
/// singleton built at launch, read by every new view model) is served without the frame a
/// construction needs. These tests pin what that read still promises: it resolves from the
/// property's container as it is when the read ends, publishes only what that container
/// serves, and every reader of one property sees one value.
@Suite struct CachedFirstReadTests {
    /// Two containers, each naming what it builds.
    private func containers(scope: String) -> (old: DependencyContainer, new: DependencyContainer) {
        let (old, new) = (DependencyContainer(), DependencyContainer())
        for (container, tag) in [(old, "old"), (new, "new")] {
            container.setValue(tag, forKey: "tag")
            container.setValue(scope, forKey: "scope")
        }
        return (old, new)
    }

    @Test func aFirstReadServesTheInstanceItsContainerKeeps() {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let kept = container.httpClient()
        let holders = (0..<3).map { _ in DependencyContainer.withMain(container) { CachedClientHolder() } }
        for holder in holders { #expect(holder.client === kept) }
        #expect(builds.count == 1)
    }

    /// The getter makes the provider of the old container, and the switch lands before the
    /// read builds. The read overlaps the switch, so it may yield either container's
    /// value; the property then resolves from the new container, and keeps what it
    /// resolves there. A read that built from the old container's provider and published
    /// it would keep the old value after the switch.
    @Test func aReadThatMustBuildAcrossASwitchLeavesTheNewContainersValue() {
        let (old, new) = containers(scope: "factory")
        let holder = DependencyContainer.withMain(old) { SwitchingFactoryHolder() }
        old.setValue(PendingSwitch { holder.$node.container = new }, forKey: "switch")
        #expect(["old", "new"].contains(holder.node.tag))
        let kept = holder.node
        #expect(kept.tag == "new", "a value resolved before the switch was published after it")
        #expect(holder.node === kept)
        #expect(holder.$node.container === new)
    }

    /// The old container serves its instance before the read sees the switch. The read may
    /// yield it, but must not publish it over the switch: the property then serves the new
    /// container's instance.
    @Test func aReadServedAcrossASwitchLeavesTheNewContainersInstance() {
        let (old, new) = containers(scope: "singleton")
        let oldInstance = old.switchingNode()
        let holder = DependencyContainer.withMain(old) { SwitchingSingletonHolder() }
        old.setValue(PendingSwitch { holder.$node.container = new }, forKey: "switch")
        let first = holder.node
        #expect(first === oldInstance || first === new.switchingNode())
        #expect(holder.node === new.switchingNode(), "the old container's instance was published after the switch")
    }

    /// A factory builds on every first read: after one, the declaration's reads take the
    /// frame at once, as every first read did before, and still build once per object.
    @Test func aFactoryDeclarationTakesTheFrameOnceAReadBuilt() {
        let site = PropertySite(declaredIn: "FactoryHintProbe", fileID: #fileID, line: 9_001)
        let container = DependencyContainer()
        let probes = (0..<3).map { _ in DependencyContainer.withMain(container) { FactoryHintProbe() } }
        var loaders: [ObjectIdentifier] = []
        for probe in probes {
            loaders.append(ObjectIdentifier(probe.loader))
            #expect(!site.lastReadFoundItKept, "a read that built left the declaration looking first")
            #expect(ObjectIdentifier(probe.loader) == loaders.last, "a second read of one object built again")
        }
        #expect(Set(loaders).count == 3)
    }

    /// A singleton's first read builds it; the next object's read, in the frame, finds it
    /// kept, and the declaration's reads look first again.
    @Test func aSingletonDeclarationLooksFirstAgainOnceAReadFindsItKept() {
        let site = PropertySite(declaredIn: "SingletonHintProbe", fileID: #fileID, line: 9_002)
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let probes = (0..<3).map { _ in DependencyContainer.withMain(container) { SingletonHintProbe() } }
        _ = probes[0].client
        #expect(!site.lastReadFoundItKept, "the read that built the singleton")
        _ = probes[1].client
        #expect(site.lastReadFoundItKept, "the read that found it kept")
        _ = probes[2].client
        #expect(site.lastReadFoundItKept)
        #expect(probes.allSatisfy { $0.client === container.httpClient() })
        #expect(builds.count == 1)
    }

    @Test func aPlainDeclarationTakesTheFrameOnceARead() {
        let site = PropertySite(declaredIn: "PlainHintProbe", fileID: #fileID, line: 9_003)
        let mocked = DependencyContainer(isMocked: true)
        let probe = DependencyContainer.withMain(mocked) { PlainHintProbe() }
        #expect(probe.baseURL == "http://localhost:8080")
        #expect(!site.lastReadFoundItKept)
    }

    /// Readers of new objects race an override that replaces the singleton they read: each
    /// reader may get the instance before or after the override, but all the readers of
    /// one object get the same one, and the object keeps it.
    @Test func everyReaderOfOneObjectSeesOneInstanceWhileTheSingletonIsReplaced() async {
        for round in 0..<200 {
            let container = DependencyContainer()
            _ = container.httpClient()
            let holders = (0..<100).map { _ in DependencyContainer.withMain(container) { CachedClientHolder() } }
            let seen = holders.map { _ in Collected<ObjectIdentifier>() }
            let readers = 6
            let ended = await concurrentlyOffThePool(threads: readers + 1) { thread in
                guard thread < readers else {
                    for index in holders.indices where index.isMultiple(of: 10) {
                        container.override(\.httpClient) { StubHTTPClient("\(round).\(index)") }
                        _ = container.httpClient()
                    }
                    return
                }
                // Each reader walks the holders from a place of its own.
                for step in holders.indices {
                    let index = (step + thread * 17) % holders.count
                    seen[index].append(ObjectIdentifier(holders[index].client))
                }
            }
            #expect(ended, "the threads did not end before the hang limit")
            for (holder, readers) in zip(holders, seen) {
                let kept = ObjectIdentifier(holder.client)
                #expect(readers.values.allSatisfy { $0 == kept }, "round \(round): readers of one object disagree")
            }
        }
    }
}
