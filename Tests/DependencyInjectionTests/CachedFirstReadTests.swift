import DependencyInjection
import Foundation
import Testing

/// Holds one property whose registration is a singleton: its first read finds the
/// container's instance, and is served without a frame.
final class CachedClientHolder: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    init() {}
}

/// Holds one property whose provider's getter switches the property's container the first
/// time it runs, as a change made on another thread between the read's start and its end.
final class SwitchingGetterHolder: @unchecked Sendable {
    @Dependency(\.switchingNode) var node
    init() {}
}

/// Where the getter of `switchingNode` finds the holder to switch, and the container to
/// switch it to, once.
final class PendingSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private var target: (SwitchingGetterHolder, DependencyContainer)?

    init(_ holder: SwitchingGetterHolder, to container: DependencyContainer) { target = (holder, container) }

    /// Switches the holder's property to the container, the first time only.
    func fire() {
        lock.lock()
        let target = self.target
        self.target = nil
        lock.unlock()
        if let (holder, container) = target { holder.$node.container = container }
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

    /// The getter makes the provider of the old container; the switch lands before the read
    /// takes its frame to build. What it builds must be the new container's.
    @Test func aReadThatMustBuildAfterASwitchBuildsFromTheNewContainer() {
        let (old, new) = containers(scope: "factory")
        let holder = DependencyContainer.withMain(old) { SwitchingGetterHolder() }
        old.setValue(PendingSwitch(holder, to: new), forKey: "switch")
        #expect(holder.node.tag == "new")
        #expect(holder.node.tag == "new", "the read published another container's value")
        #expect(holder.$node.container === new)
    }

    /// The old container serves its instance before the read sees the switch: the read
    /// goes on from the new container, as a read that began after the switch, and the old
    /// instance is not published over it.
    @Test func aReadServedAcrossASwitchResolvesFromTheNewContainer() {
        let (old, new) = containers(scope: "singleton")
        let oldInstance = old.switchingNode()
        let holder = DependencyContainer.withMain(old) { SwitchingGetterHolder() }
        old.setValue(PendingSwitch(holder, to: new), forKey: "switch")
        let first = holder.node
        #expect(first !== oldInstance, "the old container's instance was served after the switch")
        #expect(first === new.switchingNode())
        #expect(holder.node === first)
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
