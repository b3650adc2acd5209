import DependencyInjection
import Foundation
import Testing

// The provider family and the async provider that a kept instance's `@Dependency`
// publishes read their registration again on every call, as a linked `Provider` does.
// A getter that does work besides making its provider (it creates a helper whose
// `@Dependency` takes a container when it is created) must give that helper the
// container the link reads, as the property's first read does: never `main`, whose
// values and overrides are another world's.

final class LinkedFamilyHolder: @unchecked Sendable {
    @Dependency(\.linkedFamilyRelays) var relays: ProviderFamily<Int, LinkedGetterRelay>
    init() {}
}

final class LinkedAsyncHolder: @unchecked Sendable {
    @Dependency(\.linkedAsyncRelay) var makeRelay: AsyncProvider<LinkedGetterRelay>
    init() {}
}

extension DependencyContainer {
    /// A family whose getter creates the helper every member captures.
    var linkedFamilyRelays: ProviderFamily<Int, LinkedGetterRelay> {
        let helper = LinkedGetterHelper()
        return factory { (_: Int) in LinkedGetterRelay(helper: helper) }
    }
    var linkedFamilyHolder: Provider<LinkedFamilyHolder> { singleton { LinkedFamilyHolder() } }
    /// An async provider whose getter creates the helper its closure captures.
    var linkedAsyncRelay: AsyncProvider<LinkedGetterRelay> {
        let helper = LinkedGetterHelper()
        return factory { LinkedGetterRelay(helper: helper) }
    }
    var linkedAsyncHolder: Provider<LinkedAsyncHolder> { singleton { LinkedAsyncHolder() } }
}

@Suite struct LinkedFamilyAndAsyncGetterTests {
    @Test func anObjectAFamilysGetterCreatesDuringALinkedCallTakesTheLinkedContainer() {
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedFamilyHolder()

        let relay = holder.relays(7)

        #expect(relay.helper.$marker.container === container)
        #expect(relay.helper.marker == "linked")
    }

    /// Under another `main`, set for the call: the family's helper still takes the
    /// container the link reads.
    @Test func theLinkedContainerWinsOverTaskLocalMainForAFamily() {
        let other = DependencyContainer()
        other.setValue("main", forKey: "linked-getter-marker")
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedFamilyHolder()

        let relay = DependencyContainer.withMain(other) { holder.relays(1) }

        #expect(relay.helper.marker == "linked")
    }

    /// An override installed in the linked container after the property's first read
    /// reaches what the family's getter creates on the next call.
    @Test func anOverrideInTheLinkedContainerReachesWhatAFamilysGetterCreates() {
        let container = DependencyContainer()
        let holder = container.linkedFamilyHolder()
        _ = holder.relays(1)
        container.override(\.linkedGetterMarker) { "overridden" }

        #expect(holder.relays(2).helper.marker == "overridden")
    }

    @Test func anObjectAnAsyncProvidersGetterCreatesDuringALinkedCallTakesTheLinkedContainer() async throws {
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedAsyncHolder()

        let relay = try await holder.makeRelay()

        #expect(relay.helper.$marker.container === container)
        #expect(relay.helper.marker == "linked")
    }

    /// Under another `main`, for the task that calls: the async provider's helper still
    /// takes the container the link reads.
    @Test func theLinkedContainerWinsOverTaskLocalMainForAnAsyncProvider() async throws {
        let other = DependencyContainer()
        other.setValue("main", forKey: "linked-getter-marker")
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedAsyncHolder()

        let relay = try await DependencyContainer.withMain(other) { try await holder.makeRelay() }

        #expect(relay.helper.marker == "linked")
    }

    /// What the calls' reads create holds the container weakly, as a first read's does:
    /// the container goes when the test lets go of it.
    @Test func linkedCallsOfAFamilyAndAnAsyncProviderDoNotKeepTheContainer() async throws {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            container.setValue("linked", forKey: "linked-getter-marker")
            released = container
            #expect(container.linkedFamilyHolder().relays(3).helper.marker == "linked")
            #expect(try await container.linkedAsyncHolder().makeRelay().helper.marker == "linked")
        }
        #expect(released == nil)
    }
}
