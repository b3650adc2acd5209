import DependencyInjection
import Foundation
import Testing

// A registration whose getter does work besides making its provider: it creates a
// helper object, whose `@Dependency` takes a container when it is created. Called
// through the provider a kept instance publishes (a linked provider), the getter runs
// inside that provider's call: what it creates must take the container the link reads,
// as it takes the property's container on a property's first read, never the private
// container the call runs in, which has no values and no overrides.

final class LinkedGetterHelper: @unchecked Sendable {
    @Dependency(\.linkedGetterMarker) var marker: String
    init() {}
}

final class LinkedGetterRelay: @unchecked Sendable {
    let helper: LinkedGetterHelper
    init(helper: LinkedGetterHelper) { self.helper = helper }
}

final class LinkedGetterHolder: @unchecked Sendable {
    @Dependency(\.linkedGetterRelay) var makeRelay: Provider<LinkedGetterRelay>
    init() {}
}

/// Creates a helper whose `deinit` creates another, whose marker it reports: a `deinit`
/// that runs while the linked call reads the registration.
final class LinkedGetterDroppedHelper: @unchecked Sendable {
    let report: @Sendable (String) -> Void
    init(report: @escaping @Sendable (String) -> Void) { self.report = report }
    deinit { report(LinkedGetterHelper().marker) }
}

extension DependencyContainer {
    var linkedGetterMarker: Provider<String> { factory { self.getValue(forKey: "linked-getter-marker") ?? "none" } }
    var linkedGetterRelay: Provider<LinkedGetterRelay> {
        let helper = LinkedGetterHelper()
        return factory { LinkedGetterRelay(helper: helper) }
    }
    var linkedGetterHolder: Provider<LinkedGetterHolder> { singleton { LinkedGetterHolder() } }
    /// A getter that makes and drops a helper, whose `deinit` reports a marker.
    var linkedGetterDropping: Provider<String> {
        let reports: Collected<String>? = getValue(forKey: "linked-getter-reports")
        _ = LinkedGetterDroppedHelper(report: { reports?.append($0) })
        return factory { "made" }
    }
    var linkedGetterDroppingHolder: Provider<LinkedGetterDroppingHolder> { singleton { LinkedGetterDroppingHolder() } }
}

final class LinkedGetterDroppingHolder: @unchecked Sendable {
    @Dependency(\.linkedGetterDropping) var makeDropping: Provider<String>
    init() {}
}

@Suite struct LinkedProviderGetterTests {
    @Test func anObjectTheGetterCreatesDuringALinkedCallTakesTheLinkedContainer() {
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedGetterHolder()

        let relay = holder.makeRelay()

        #expect(relay.helper.$marker.container === container)
        #expect(relay.helper.marker == "linked")
    }

    /// Under another `main`: the getter's object still takes the container the link reads,
    /// as on a property's first read, not the private one and not `main`.
    @Test func theLinkedContainerWinsOverTaskLocalMain() {
        let other = DependencyContainer()
        other.setValue("main", forKey: "linked-getter-marker")
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let holder = container.linkedGetterHolder()

        let relay = DependencyContainer.withMain(other) { holder.makeRelay() }

        #expect(relay.helper.marker == "linked")
    }

    /// An override of the marker in the linked container reaches the getter's object.
    @Test func anOverrideInTheLinkedContainerReachesWhatTheGetterCreates() {
        let container = DependencyContainer()
        let holder = container.linkedGetterHolder()
        container.override(\.linkedGetterMarker) { "overridden" }

        #expect(holder.makeRelay().helper.marker == "overridden")
    }

    /// A `deinit` that runs inside the linked call, while the getter reads the
    /// registration, creates its objects in the linked container too.
    @Test func aDeinitRunInsideTheLinkedCallCreatesInTheLinkedContainer() {
        let container = DependencyContainer()
        container.setValue("linked", forKey: "linked-getter-marker")
        let reported = Collected<String>()
        container.setValue(reported, forKey: "linked-getter-reports")
        let makeDropping = container.linkedGetterDroppingHolder().makeDropping
        // The property's first read ran the getter once already, outside any call.
        _ = reported.takeAll()

        #expect(makeDropping() == "made")

        #expect(reported.values == ["linked"])
    }
}

// MARK: - What the call's reading creates does not keep the container

final class LinkedGetterKeptRelayHolder: @unchecked Sendable {
    @Dependency(\.linkedGetterKeptRelay) var makeRelay: Provider<LinkedGetterRelay>
    init() {}
}

final class LinkedGetterScopedRelayHolder: @unchecked Sendable {
    @Dependency(\.linkedGetterScopedRelay) var makeRelay: Provider<LinkedGetterRelay>
    init() {}
}

/// Holds a container until a construction lets go of it.
final class LinkedGetterKeeper: @unchecked Sendable {
    private let lock = NSLock()
    private var held: DependencyContainer?
    init(_ container: DependencyContainer) { held = container }
    func letGo() {
        lock.lock()
        let container = held
        held = nil
        lock.unlock()
        withExtendedLifetime(container) {}
    }
}

final class LinkedGetterLastCallHolder: @unchecked Sendable {
    @Dependency(\.linkedGetterLastCall) var makeLast: Provider<String>
    init() {}
}

extension DependencyContainer {
    /// A singleton whose getter creates the helper the singleton keeps.
    var linkedGetterKeptRelay: Provider<LinkedGetterRelay> {
        let helper = LinkedGetterHelper()
        return singleton { LinkedGetterRelay(helper: helper) }
    }
    var linkedGetterKeptRelayHolder: Provider<LinkedGetterKeptRelayHolder> {
        singleton { LinkedGetterKeptRelayHolder() }
    }
    var linkedGetterScopedRelay: Provider<LinkedGetterRelay> {
        let helper = LinkedGetterHelper()
        return scoped { LinkedGetterRelay(helper: helper) }
    }
    var linkedGetterScopedRelayHolder: Provider<LinkedGetterScopedRelayHolder> {
        scoped { LinkedGetterScopedRelayHolder() }
    }
    /// A factory that lets go of the last reference to its container but the provider's
    /// own, which goes when the linked call ends: the container goes inside that call,
    /// and the `deinit` of what it kept creates a helper there.
    var linkedGetterLastCall: Provider<String> {
        factory {
            let keeper: LinkedGetterKeeper? = self.getValue(forKey: "linked-getter-keeper")
            keeper?.letGo()
            return "made"
        }
    }
    var linkedGetterLastCallHolder: Provider<LinkedGetterLastCallHolder> { singleton { LinkedGetterLastCallHolder() } }
    var linkedGetterReporter: Provider<LinkedGetterDroppedHelper> {
        singleton {
            let reports: Collected<String>? = self.getValue(forKey: "linked-getter-reports")
            return LinkedGetterDroppedHelper(report: { reports?.append($0) })
        }
    }
}

extension LinkedProviderGetterTests {
    /// The singleton the call builds keeps the helper its getter created, which holds
    /// the container weakly, as a first read's would: the container goes with the test.
    @Test func whatALinkedCallsGetterCreatesForAKeptInstanceDoesNotKeepTheContainer() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            container.setValue("linked", forKey: "linked-getter-marker")
            released = container
            let relay = container.linkedGetterKeptRelayHolder().makeRelay()
            #expect(relay.helper.$marker.container === container)
            #expect(relay.helper.marker == "linked")
        }
        #expect(released == nil)
    }

    /// The same in a request's scope, which a server makes and drops per request.
    @Test func aLinkedCallInAScopeDoesNotKeepTheScope() {
        let app = DependencyContainer()
        weak var released: DependencyContainer?
        do {
            let request = DependencyContainer(scopeOf: app)
            request.setValue("request", forKey: "linked-getter-marker")
            released = request
            #expect(request.linkedGetterScopedRelayHolder().makeRelay().helper.marker == "request")
        }
        #expect(released == nil)
    }

    /// A container that goes inside a linked call, while the call still runs: what the
    /// `deinit`s of what it kept create there takes `main`, never the call's private
    /// container, which has no values.
    @Test func whatTheCallCreatesAfterItsContainerWentTakesMain() {
        let other = DependencyContainer()
        other.setValue("main", forKey: "linked-getter-marker")
        let reported = Collected<String>()
        weak var released: DependencyContainer?
        var makeLast: Provider<String>?
        do {
            let container = DependencyContainer()
            released = container
            container.setValue(reported, forKey: "linked-getter-reports")
            container.setValue(LinkedGetterKeeper(container), forKey: "linked-getter-keeper")
            _ = container.linkedGetterReporter()
            makeLast = container.linkedGetterLastCallHolder().makeLast
        }
        #expect(released != nil, "the keeper holds it until the call")

        let made = DependencyContainer.withMain(other) { makeLast?() }

        #expect(made == "made")
        #expect(released == nil)
        #expect(reported.values == ["main"])
    }
}
