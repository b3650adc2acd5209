import DependencyInjection
import Testing

// A singleton that takes a graph instance its resolution already built holds what that
// instance was built from, but the record of uses notes only what the singleton's own
// construction resolved: an override of the graph instance's clock does not reach the
// singleton. A known issue (the CHANGELOG's), pinned here.

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

extension DependencyContainer {
    var giuClock: Provider<GIUClock> { singleton { GIUClock(now: 1) } }
    var giuUnit: Provider<GIUUnit> { graph { GIUUnit(clock: self.giuClock()) } }
    var giuAudit: Provider<GIUAudit> { singleton { GIUAudit(unit: self.giuUnit()) } }
    var giuCheckout: Provider<GIUCheckout> { factory { GIUCheckout(unit: self.giuUnit(), audit: self.giuAudit()) } }
}

@Suite struct GraphInstanceUsesTests {
    /// A checkout builds the unit of work from the clock, then the audit, which takes the
    /// same unit. An override of the clock should drop the audit, which holds the old
    /// clock through the unit.
    @Test func aSingletonHoldingAGraphInstanceGoesWithAnOverrideOfWhatTheInstanceWasBuiltFrom() {
        let container = DependencyContainer()
        let first = container.giuCheckout()
        #expect(first.audit.unit === first.unit)
        container.override(\.giuClock) { GIUClock(now: 2) }
        let second = container.giuCheckout()
        #expect(second.unit.clock.now == 2)
        withKnownIssue("the audit keeps the clock its graph unit was built from") {
            #expect(second.audit.unit.clock.now == 2)
        }
    }
}
