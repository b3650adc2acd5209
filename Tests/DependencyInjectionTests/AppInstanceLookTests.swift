import DependencyInjection
import Foundation
import Testing

/// A clock an app-wide service is built from; a scope may override it.
final class LookClock: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// An app-wide service, one per account, built from the clock.
final class LookLedger: Sendable {
    let account: LookAccount
    let clock: LookClock
    init(account: LookAccount, clock: LookClock) { (self.account, self.clock) = (account, clock) }
}

/// Work to run once, the first time something asks: here, from inside an argument's `==`.
final class RunOnce: @unchecked Sendable {
    // @unchecked: `work` is read and cleared under `lock`.
    private let lock = NSLock()
    private var work: (@Sendable () -> Void)?

    func arm(_ work: @escaping @Sendable () -> Void) { lock.withLock { self.work = work } }

    func run() {
        let taken = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { work = nil }
            return work
        }
        taken?()
    }
}

/// A family argument whose `==` runs the work its test armed: the one piece of app code
/// that runs while a scope looks for the app's instance, between reading what it overrides
/// and asking the app container.
struct LookAccount: Hashable, Sendable {
    let number: Int
    let onCompare: RunOnce

    static func == (lhs: LookAccount, rhs: LookAccount) -> Bool {
        lhs.onCompare.run()
        return lhs.number == rhs.number
    }

    // One hash for every number: the container compares arguments by value only when
    // their hashes agree, and the look must compare the two accounts.
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

extension DependencyContainer {
    var lookClock: Provider<LookClock> { singleton { LookClock("app") } }

    subscript(lookLedger account: LookAccount) -> Provider<LookLedger> {
        singleton(account) { LookLedger(account: account, clock: self.lookClock()) }
    }
}

/// A scope finds its app container's cached singleton without the handover's road only
/// while what it overrides stands still: these tests change the overrides in the middle of
/// that look.
@Suite struct AppInstanceLookTests {
    /// The scope reads what it overrides (one account's ledger), then, while it compares
    /// that account with the one it resolves, the app's ledger of that account is dropped,
    /// the scope overrides the clock, and the app builds the ledger again from its own
    /// clock. The ledger the app now keeps was built after the scope came to override its
    /// clock, and the override stays: at no moment of the resolution was that ledger the
    /// scope's to share. It must build its own, from its own clock.
    @Test func anOverrideInstalledDuringTheLookSendsTheResolutionTheLongWay() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let onCompare = RunOnce()
        let overridden = LookAccount(number: 1, onCompare: onCompare)
        let resolved = LookAccount(number: 2, onCompare: onCompare)
        request.override(\.[lookLedger: overridden]) { LookLedger(account: overridden, clock: LookClock("test")) }
        let first = app[lookLedger: resolved]()
        #expect(request[lookLedger: resolved]() === first, "the scope overrides nothing the ledger was built from")

        onCompare.arm {
            app.reset(\.[lookLedger: resolved])
            request.override(\.lookClock) { LookClock("request") }
            _ = app[lookLedger: resolved]()
        }
        let ledger = request[lookLedger: resolved]()

        let rebuilt = app.instanceIfBuilt(\.[lookLedger: resolved])
        #expect(rebuilt != nil && rebuilt !== first, "the app built the ledger again while the scope looked")
        #expect(ledger !== rebuilt, "the scope shared a ledger the app built from a clock the scope overrides")
        #expect(ledger.clock.name == "request")
        #expect(request[lookLedger: resolved]() === ledger)
    }

    /// Without the change in the middle, the same scope shares the app's ledger, on every
    /// resolution, and follows the app when it builds it again.
    @Test func aScopeThatOverridesSomethingElseSharesTheAppsInstance() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let never = RunOnce()
        let overridden = LookAccount(number: 1, onCompare: never)
        let resolved = LookAccount(number: 2, onCompare: never)
        request.override(\.[lookLedger: overridden]) { LookLedger(account: overridden, clock: LookClock("test")) }
        let first = app[lookLedger: resolved]()
        #expect(request[lookLedger: resolved]() === first)
        #expect(request[lookLedger: resolved]() === first)
        app.reset(\.[lookLedger: resolved])
        let second = request[lookLedger: resolved]()
        #expect(second !== first && second === app[lookLedger: resolved]())
        #expect(request[lookLedger: overridden]().clock.name == "test")
    }

    /// A tracer hears of an app-wide instance through the app container's tracer, however
    /// the scope finds it: the scope's own tracer hears nothing of it, and the app's hears
    /// that it was served from the cache.
    @Test func theAppsTracerHearsOfItsInstanceServedThroughAScope() {
        let app = DependencyContainer()
        let request = DependencyContainer(scopeOf: app)
        let clock = app.lookClock()
        let requestEvents = Collected<[ResolutionEvent]>()
        request.tracer = ResolutionTracer { requestEvents.append($0) }

        #expect(request.lookClock() === clock)
        #expect(requestEvents.values.isEmpty)

        let appEvents = Collected<[ResolutionEvent]>()
        app.tracer = ResolutionTracer { appEvents.append($0) }
        #expect(request.lookClock() === clock)
        #expect(appEvents.values.map { $0.map(\.name) } == [["lookClock"]])
        #expect(appEvents.values.first?.first?.outcome == .cached)
        #expect(requestEvents.values.isEmpty)
    }
}
