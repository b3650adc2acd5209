import Foundation
import Testing
@testable import DependencyInjection

// Attacks on the walk a scope's check makes through its record of uses when its own
// construction of an app-wide registration ends (`ContainerState.complete(_:keeping:weakly:
// teardown:checkingOwnAgainst:released:)`): a 200-deep chain of own instances, a
// construction that uses thousands of a family's arguments, waiters of a construction the
// check drops, deinits that use the scope, the async road, and a later change that must
// still drop what the scope built from the overrides.
//
// `KRAPart`, `KRAWatch` and the `kra*` registrations come from KeepRecheckAttackTests.swift;
// `HCABeforeClock` and `appSessionAndRequest()` from HandoverCacheAttackTests.swift; the
// gates, `Findings` and `onThread` from InFlightBookkeepingAttackTests.swift.

/// A link of a chain of app-wide singletons; the last is built from the clock.
final class KTALink: Sendable {
    let next: KTALink?
    let clock: IFBPart?
    let watcher: KRAWatcher?
    init(next: KTALink?, clock: IFBPart?, watch: KRAWatch?) {
        (self.next, self.clock) = (next, clock)
        watcher = watch.map(KRAWatcher.init)
    }
    var last: KTALink { var link = self; while let next = link.next { link = next }; return link }
}

/// A request-scoped instance built from the request's `kraTimed`.
final class KTAUser: Sendable {
    let timed: KRAPart
    init(_ timed: KRAPart) { self.timed = timed }
}

let ktaDepth = 200
let ktaWide = 3_000

extension DependencyContainer {
    /// Link `n` of a chain of `ktaDepth` app-wide singletons, the last built from the clock
    /// after the hook stored under "kra.beforeClock", if any.
    var ktaChain: ProviderFamily<Int, KTALink> {
        singleton { (n: Int) in
            self.count("ktaChain")
            let watch: KRAWatch? = self.getValue(forKey: "kra.watch")
            if n < ktaDepth { return KTALink(next: self.ktaChain(n + 1), clock: nil, watch: watch) }
            (self.getValue(forKey: "kra.beforeClock") as HCABeforeClock?)?.run()
            return KTALink(next: nil, clock: self.kraClock(), watch: watch)
        }
    }

    /// An app-wide singleton built from `ktaWide` clocks of the clock family, then from the clock.
    var ktaWideTimed: Provider<[IFBPart]> {
        singleton {
            self.count("ktaWideTimed")
            var parts = (0..<ktaWide).map { self.kraClocks($0) }
            (self.getValue(forKey: "kra.beforeClock") as HCABeforeClock?)?.run()
            parts.append(self.kraClock())
            return parts
        }
    }

    /// Request-scoped: built from `kraTimed`, then held at the next of the gates stored under
    /// "kta.gates", if any.
    var ktaUser: Provider<KTAUser> {
        scoped {
            self.count("ktaUser")
            let timed = self.kraTimed()
            (self.getValue(forKey: "kta.gates") as IFBGates?)?.pass()
            return KTAUser(timed)
        }
    }

    /// Request-scoped, async: built from `kraAsyncTimed`.
    var ktaAsyncUser: AsyncProvider<KTAUser> {
        scoped {
            self.count("ktaAsyncUser")
            return KTAUser(try! await self.kraAsyncTimed())
        }
    }
}

/// Runs `work` on a thread with a stack deep enough for the chain, and waits for it.
func ktaOnDeepStack(_ work: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        work()
        done.signal()
    }
    thread.stackSize = 64 << 20
    thread.start()
    done.wait()
}

@Suite struct KeepCheckThirdAttackTests {
    // MARK: - Large records

    /// The session overrides the clock; the app keeps the 200-deep chain, so the request
    /// builds its own, every link. Before the last link uses the clock, the session removes
    /// the override: every link is refused, the request shares the app's chain afterwards,
    /// the copies' watchers (which use the request) run their deinits once each, and
    /// nothing hangs. Or the app shuts down instead (its record is gone): the request's
    /// own record must keep its chain, built once, and a later override of the clock in
    /// the session must still drop it.
    @Test(arguments: ["remove", "app shutdown"])
    func aDeepChainOfOwnInstances(change: String) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            ktaOnDeepStack {
                let (app, session, request) = appSessionAndRequest()
                let appChain = app.ktaChain(0)
                session.override(\.kraClock) { IFBPart("session clock") }
                let watch = KRAWatch(request)
                request.setValue(watch, forKey: "kra.watch")
                request.setValue(
                    HCABeforeClock { change == "remove" ? session.reset(\.kraClock) : app.shutdown() },
                    forKey: "kra.beforeClock")
                let counter = request.counter("ktaChain")
                do {
                    let first = request.ktaChain(0)
                    findings.check(counter.count == ktaDepth + 1, "\(change): built \(counter.count) links")
                    if change == "remove" {
                        findings.check(first.last.clock?.source == "app clock", "the removal came first")
                        findings.check(request.ktaChain(0) === app.ktaChain(0), "the request kept its copy")
                        findings.check(request.ktaChain(ktaDepth) === app.ktaChain(ktaDepth), "kept a copy of the last link")
                    } else {
                        findings.check(first.last.clock?.source == "session clock", "the session's clock")
                        findings.check(request.ktaChain(0) === first, "the request dropped its own chain")
                        findings.check(request.ktaChain(ktaDepth) === first.last, "dropped its own last link")
                        findings.check(counter.count == ktaDepth + 1, "built again")
                        session.override(\.kraClock) { IFBPart("new session clock") }
                        let again = request.ktaChain(0)
                        findings.check(again !== first, "a later override did not drop the chain")
                        findings.check(again.last.clock?.source == "new session clock", "a later override did not reach the last link")
                    }
                    withExtendedLifetime(appChain) {}
                }
                if change == "remove" {
                    findings.check(watch.releases.count == ktaDepth + 1, "\(watch.releases.count) deinits of the copies")
                }
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// A construction that uses 3,000 arguments of the clock family, then the clock: the
    /// request builds its own (the app's record says it is built from the clock) while the
    /// session overrides the clock family, and the session removes the clock family's
    /// override (refused: the request shares the app's), or the app shuts down (kept, from
    /// the session's clocks; a later override of the family drops it).
    @Test(arguments: ["remove", "app shutdown"])
    func aConstructionThatUsesThousandsOfArguments(change: String) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appWide = app.ktaWideTimed()
            session.override(\.kraClocks) { IFBPart("session clock", argument: $0) }
            request.setValue(
                HCABeforeClock { change == "remove" ? session.reset(\.kraClocks) : app.shutdown() },
                forKey: "kra.beforeClock")
            let counter = request.counter("ktaWideTimed")
            let first = request.ktaWideTimed()
            findings.check(counter.count == 1, "\(change): built \(counter.count) times")
            findings.check(first.count == ktaWide + 1 && first[0].source == "session clock", "not the session's clocks")
            if change == "remove" {
                findings.check(request.ktaWideTimed().first === app.ktaWideTimed().first, "the request kept its copy")
                withExtendedLifetime(appWide) {}
            } else {
                findings.check(request.ktaWideTimed().first === first.first, "the request dropped its own")
                session.override(\.kraClocks) { IFBPart("new session clock", argument: $0) }
                findings.check(request.ktaWideTimed().first?.source == "new session clock", "a later override did not drop it")
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    // MARK: - A dropped construction in flight

    /// The request builds `ktaUser` from its own `kraTimed` (the session overrides the
    /// clock, and removes it before `kraTimed` uses it); `ktaUser` is dropped in flight,
    /// held at a gate while six threads wait for it. Every waiter gets the dropped
    /// construction's value or the next one's, nothing hangs, and the request ends with
    /// one `ktaUser` built from the app's `kraTimed`.
    @Test func waitersOfAConstructionDroppedByTheCheckAllGetAValue() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = app.kraTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
            let gates = IFBGates(1)
            request.setValue(gates, forKey: "kta.gates")
            let held = onThread { request.ktaUser() }
            gates[0].entered.wait()
            // The check has run: `kraTimed` ended before the gate.
            findings.check(request.kraTimed() === appTimed, "the request kept its copy of kraTimed")
            let asking = Arrivals()
            let waiters = (0..<6).map { _ in
                onThread {
                    asking.arrive()
                    return request.ktaUser()
                }
            }
            asking.wait(for: 6)
            gates[0].open()
            let dropped = held()
            let values = waiters.map { $0() }
            let kept = request.ktaUser()
            findings.check(dropped.timed !== appTimed, "the held construction used the app's instance")
            findings.check(kept.timed === appTimed, "the request keeps a user of its copy")
            findings.check(request.ktaUser() === kept, "the request does not keep its user")
            for value in values {
                findings.check(value === dropped || value === kept, "a waiter got something else")
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The async road: the request's `ktaAsyncUser` uses its own `kraAsyncTimed`, held at
    /// a gate while the session removes the clock's override: the copy is refused, and the
    /// user built from it is not kept; tasks awaiting it all get a value, the held one's or
    /// one built from the app's `kraAsyncTimed`. Such a task may build that one while the
    /// held construction still ends: the refused copy then drops it too (it merely
    /// overlapped the copy, a known issue of the time-window record), and the request keeps
    /// the next one.
    @Test func anAsyncUserOfARefusedCopyIsNotKept() async throws {
        let (app, session, request) = appSessionAndRequest()
        let appTimed = try await app.kraAsyncTimed()
        session.override(\.kraClock) { IFBPart("session clock") }
        let gate = IFBAsyncGate()
        request.setValue(gate, forKey: "kra.asyncGate")
        request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
        let held = Task { try await request.ktaAsyncUser() }
        await gate.entered.wait()
        let asking = AsyncBarrier(parties: 5)
        let waiters = (0..<4).map { _ in
            Task {
                await asking.arrive()
                return try await request.ktaAsyncUser()
            }
        }
        await asking.arrive()
        gate.opened.open()
        let finished = await endsWithoutHanging {
            _ = try? await held.value
            for waiter in waiters { _ = try? await waiter.value }
        }
        #expect(finished)
        do {
            let first = try await held.value
            #expect(first.timed !== appTimed && first.timed.isFromTheApp)
            let kept = try await request.ktaAsyncUser()
            #expect(kept.timed === appTimed, "the request keeps a user of its copy")
            #expect(try await request.ktaAsyncUser() === kept, "the request does not keep its user")
            for waiter in waiters {
                let value = try await waiter.value
                #expect(value === first || value.timed === appTimed, "a waiter got a user of the refused copy")
            }
        }
    }
}
