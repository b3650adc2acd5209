import DependencyInjection
import Foundation
import Testing

// A test points a property of a singleton elsewhere, reads it there, and points it back.
// The value read elsewhere stays with the property until the singleton goes (a reader may
// still be copying it); whether the container goes with the test depends on what that
// value holds.

final class SwitchBackItem: @unchecked Sendable {
    init() {}
}

final class SwitchBackHolder: @unchecked Sendable {
    @Dependency(\.switchBackMakeItem) var makeItem: Provider<SwitchBackItem>
    @Dependency(\.switchBackItem) var item: SwitchBackItem
    init() {}
}

extension DependencyContainer {
    var switchBackMakeItem: Provider<SwitchBackItem> { factory { SwitchBackItem() } }
    var switchBackItem: Provider<SwitchBackItem> { factory { SwitchBackItem() } }
    var switchBackHolder: Provider<SwitchBackHolder> { singleton { SwitchBackHolder() } }
}

@Suite struct SwitchBackReleaseTests {
    /// Read from an unrelated container, then pointed back: the singleton's container goes
    /// when the test lets go of it, and the other container with it.
    @Test func readingFromAnotherContainerThenSwitchingBackKeepsNeither() {
        weak var released: DependencyContainer?
        weak var releasedOther: DependencyContainer?
        do {
            let container = DependencyContainer()
            let other = DependencyContainer()
            (released, releasedOther) = (container, other)
            let holder = container.switchBackHolder()
            holder.$makeItem.container = other
            holder.$item.container = other
            _ = holder.makeItem()
            _ = holder.item
            holder.$makeItem.container = container
            holder.$item.container = container
            _ = holder.makeItem()
            _ = holder.item
        }
        #expect(released == nil)
        #expect(releasedOther == nil)
    }

    /// Read from a child, which holds the container as its parent: the property keeps
    /// the child's provider, and the container keeps the singleton. A reset of the
    /// container, which the testing product makes at each test's end, ends that.
    @Test(arguments: [false, true])
    func readingFromAChildThenSwitchingBackEndsWithTheContainersReset(providerProperty: Bool) {
        weak var released: DependencyContainer?
        weak var releasedChild: DependencyContainer?
        do {
            let container = DependencyContainer()
            let child = DependencyContainer(parent: container)
            (released, releasedChild) = (container, child)
            let holder = container.switchBackHolder()
            if providerProperty {
                holder.$makeItem.container = child
                _ = holder.makeItem()
                holder.$makeItem.container = container
                _ = holder.makeItem()
            } else {
                holder.$item.container = child
                _ = holder.item
                holder.$item.container = container
                _ = holder.item
            }
            container.reset()
        }
        #expect(released == nil)
        #expect(releasedChild == nil)
    }

    /// Without that reset the two keep each other, as the property's documentation says.
    @Test func readingFromAChildThenSwitchingBackKeepsTheContainerUntilItsReset() {
        weak var released: DependencyContainer?
        var kept: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            let holder = container.switchBackHolder()
            holder.$makeItem.container = DependencyContainer(parent: container)
            _ = holder.makeItem()
            holder.$makeItem.container = container
        }
        withKnownIssue("a value read from a child keeps the container that keeps its property's object") {
            #expect(released == nil)
        }
        // Ends the cycle, so that the test itself leaks nothing.
        kept = released
        kept?.reset()
        kept = nil
        #expect(released == nil)
    }
}
