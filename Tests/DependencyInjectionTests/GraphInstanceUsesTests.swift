@testable import DependencyInjection
import Testing

// A singleton that takes a graph instance its resolution already built holds what that
// instance was built from. The record of uses files what a graph construction resolves
// under the graph registration, so an override of the instance's clock reaches the
// singleton through it.

final class GIUClock: Sendable {
    let now: Int
    init(now: Int) { self.now = now }
}

final class GIUUnit: Sendable {
    let clock: GIUClock
    init(clock: GIUClock) { self.clock = clock }
}

final class GIUAudit: Sendable {
    let unit: GIUUnit
    init(unit: GIUUnit) { self.unit = unit }
}

final class GIUCheckout: Sendable {
    let unit: GIUUnit
    let audit: GIUAudit
    init(unit: GIUUnit, audit: GIUAudit) { (self.unit, self.audit) = (unit, audit) }
}

final class GIUDraft: Sendable {
    let order: Int
    let clock: GIUClock
    init(order: Int, clock: GIUClock) { (self.order, self.clock) = (order, clock) }
}

final class GIUReceipt: Sendable {
    let draft: GIUDraft
    init(draft: GIUDraft) { self.draft = draft }
}

extension DependencyContainer {
    var giuClock: Provider<GIUClock> { singleton { GIUClock(now: 1) } }
    var giuUnit: Provider<GIUUnit> { graph { GIUUnit(clock: self.giuClock()) } }
    var giuAudit: Provider<GIUAudit> { singleton { GIUAudit(unit: self.giuUnit()) } }
    var giuCheckout: Provider<GIUCheckout> { factory { GIUCheckout(unit: self.giuUnit(), audit: self.giuAudit()) } }

    subscript(giuDraft order: Int) -> Provider<GIUDraft> { graph(order) { GIUDraft(order: order, clock: self.giuClock()) } }
    subscript(giuReceipt order: Int) -> Provider<GIUReceipt> { singleton(order) { GIUReceipt(draft: self[giuDraft: order]()) } }
    subscript(giuPlacement order: Int) -> Provider<(GIUDraft, GIUReceipt)> {
        factory(order) { (self[giuDraft: order](), self[giuReceipt: order]()) }
    }

}

@Suite struct GraphInstanceUsesTests {
    /// A checkout builds the unit of work from the clock, then the audit, which takes the
    /// same unit. An override of the clock drops the audit, which holds the old clock
    /// through the unit.
    @Test func aSingletonHoldingAGraphInstanceGoesWithAnOverrideOfWhatTheInstanceWasBuiltFrom() {
        let container = DependencyContainer()
        let first = container.giuCheckout()
        #expect(first.audit.unit === first.unit)
        container.override(\.giuClock) { GIUClock(now: 2) }
        let second = container.giuCheckout()
        #expect(second.unit.clock.now == 2)
        #expect(second.audit.unit.clock.now == 2)
        #expect(second.audit !== first.audit)
    }

    /// A reset of the clock, rather than an override, reaches the audit the same way.
    @Test func aResetOfWhatTheGraphInstanceWasBuiltFromDropsTheSingletonToo() {
        let container = DependencyContainer()
        container.override(\.giuClock) { GIUClock(now: 5) }
        let first = container.giuCheckout()
        #expect(first.audit.unit.clock.now == 5)
        container.reset(\.giuClock)
        #expect(container.giuCheckout().audit.unit.clock.now == 1)
    }

    /// An override of something the unit was not built from leaves the audit.
    @Test func anOverrideOfSomethingElseKeepsTheSingleton() {
        let container = DependencyContainer()
        let first = container.giuCheckout()
        container.override(\.giuCheckout) { GIUCheckout(unit: container.giuUnit(), audit: container.giuAudit()) }
        #expect(container.giuAudit() === first.audit)
    }

    /// A graph family's arguments are one user in the record, however many there are: a
    /// server whose requests each build a draft of their own order does not grow it. And
    /// an override of the clock still drops every receipt that took a draft.
    @Test func aGraphFamilysArgumentsAreOneUserInTheRecord() {
        let container = DependencyContainer()
        var receipts: [GIUReceipt] = []
        for order in 0..<2_000 {
            let (draft, receipt) = container[giuPlacement: order]()
            #expect(receipt.draft === draft)
            receipts.append(receipt)
        }
        let usersOfClock = container.withStateLock { $0.dependents[container.giuClock.key]?.count ?? 0 }
        #expect(usersOfClock == 1)
        container.override(\.giuClock) { GIUClock(now: 9) }
        for order in [0, 999, 1_999] {
            let receipt = container[giuReceipt: order]()
            #expect(receipt !== receipts[order])
            #expect(receipt.draft.clock.now == 9)
        }
    }

    /// Nothing stays listed once a graph construction ends: the container's cached road,
    /// which steps aside while one runs, comes back.
    @Test func aGraphConstructionIsListedOnlyWhileItRuns() {
        let container = DependencyContainer()
        _ = container.giuCheckout()
        let listed = container.withStateLock { ($0.graphBuilds.count, $0.isBuilding) }
        #expect(listed == (0, false))
    }
}
