import DependencyInjection
import Observation
import Testing

// A main-actor app's checkout screen: its model is made per screen from a unit of work
// (one per top-level resolution), and an app-wide audit log takes the same unit. A
// test that replaces the clock the unit reads must get an audit log on the new clock.

protocol CheckoutClock: AnyObject {
    var now: Int { get }
}

final class LiveCheckoutClock: CheckoutClock {
    let now = 100
    init() {}
}

final class FixedCheckoutClock: CheckoutClock {
    let now: Int
    init(now: Int) { self.now = now }
}

final class CheckoutUnitOfWork {
    let clock: any CheckoutClock
    init(clock: any CheckoutClock) { self.clock = clock }
}

final class CheckoutAuditLog {
    let unit: CheckoutUnitOfWork
    init(unit: CheckoutUnitOfWork) { self.unit = unit }
    var stampedAt: Int { unit.clock.now }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class CheckoutScreenModel {
    let unit: CheckoutUnitOfWork
    let audit: CheckoutAuditLog
    init(unit: CheckoutUnitOfWork, audit: CheckoutAuditLog) { (self.unit, self.audit) = (unit, audit) }
}

extension DependencyContainer {
    var checkoutClock: Provider<any CheckoutClock> { singleton { @MainActor in LiveCheckoutClock() } }
    var checkoutUnit: Provider<CheckoutUnitOfWork> { graph { @MainActor in CheckoutUnitOfWork(clock: self.checkoutClock()) } }
    var checkoutAudit: Provider<CheckoutAuditLog> { singleton { @MainActor in CheckoutAuditLog(unit: self.checkoutUnit()) } }
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    var checkoutScreenModel: Provider<CheckoutScreenModel> {
        factory { @MainActor in CheckoutScreenModel(unit: self.checkoutUnit(), audit: self.checkoutAudit()) }
    }
}

@Suite struct GraphInstanceAppTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func anOverriddenClockReachesTheAuditLogThatTookTheScreensUnitOfWork() {
        let container = DependencyContainer()
        let live = container.checkoutScreenModel()
        #expect(live.audit.unit === live.unit)
        #expect(live.audit.stampedAt == 100)

        container.override(\.checkoutClock) { @MainActor in FixedCheckoutClock(now: 7) }
        let fixed = container.checkoutScreenModel()
        #expect(fixed.unit.clock.now == 7)
        #expect(fixed.audit.stampedAt == 7)
        #expect(fixed.audit.unit === fixed.unit)
    }
}
