import Foundation
import Testing
@testable import DependencyInjection

// Concurrency attacks on `SeldomUsedState` (a810b2c): its object is made by the first
// change, under the lock, while other threads read its tables through the state's
// computed properties; window-only uses are filed while a construction is in flight.

extension DependencyContainer {
    /// Waits at the gate stored under "saGate" the first time it is built.
    var saSlow: Provider<SAPart> {
        singleton {
            let gate: OnceGate? = self.getValue(forKey: "saGate")
            gate?.pass()
            return SAPart("slow")
        }
    }
    var saSharedB: Provider<SAPart> { shared { SAPart("shared b", inner: self.saX()) } }
}

@Suite struct SeldomAttackConcurrencyTests {
    /// While `saSlow` is built on one thread, others resolve `saX` in the same container:
    /// window-only uses. A scope overriding `saX` still shares the app's `saSlow`, and an
    /// app override of `saX` drops it.
    @Test func windowOnlyUsesFiledUnderContentionAreReadBack() async {
        let findings = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let gate = OnceGate()
            app.setValue(gate, forKey: "saGate")
            let slow = Collected<SAPart>()
            let builder = Thread { slow.append(app.saSlow()) }
            builder.start()
            gate.gate.entered.wait()
            concurrently(threads: 6) { index in
                for round in 0..<50 {
                    _ = app.saX()
                    _ = app.saFamily(index * 100 + round)
                    if round % 10 == 0 { _ = app.saSharedB() }
                }
            }
            let filed = app.withStateLock { $0.hasWindowOnlyUses }
            gate.gate.open()
            let built = app.saSlow()  // waits for the construction
            if !filed { findings.append("no window-only use was filed while saSlow was in flight") }
            let session = DependencyContainer(scopeOf: app)
            session.override(\.saX) { SAPart("session x") }
            if session.saSlow() !== built { findings.append("the scope built its own saSlow from a window-only use") }
            app.override(\.saX) { SAPart("app override") }
            if app.instanceIfBuilt(\.saSlow) === built {
                findings.append("an app override of saX kept saSlow, which it was filed as using")
            }
            _ = slow
        }
        #expect(finished)
        #expect(findings.values.isEmpty, "\(findings.values)")
    }

    /// Threads released together each make the first change of a different seldom table in
    /// one new container, while others read them: every write is kept.
    @Test(arguments: 0..<4)
    func firstChangesOfEveryTableRaceAndAllAreKept(round: Int) async {
        let findings = Collected<String>()
        let done = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            let shared = Collected<SAPart>()
            concurrently(threads: 8) { index in
                switch index {
                case 0: container.setValue(index, forKey: "v\(index)")
                case 1: container.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
                case 2: shared.append(container.saShared())
                case 3: _ = container.saFamily(3)
                case 4: _ = container.saTorn()
                case 5: shared.append(container.saSharedFamily(5))
                case 6: container.setValue(index, forKey: "v\(index)")
                default:
                    for _ in 0..<20 {
                        let v: Int? = container.getValue(forKey: "v0")
                        _ = v
                        _ = container.instanceIfBuilt(\.saShared)
                    }
                }
            }
            if (container.getValue(forKey: "v0") as Int?) != 0 { findings.append("lost v0") }
            if (container.getValue(forKey: "v6") as Int?) != 6 { findings.append("lost v6") }
            // The decoration may have come after saPlain was built: resolve after a reset of it.
            container.withStateLock { state in
                if !state.hasDecorations { findings.append("lost the decoration") }
                if !state.hasSharedInstances { findings.append("lost the shared instances") }
                if !state.hasArguments { findings.append("lost the arguments") }
                if !state.hasTeardowns { findings.append("lost the teardown") }
            }
            if container.instanceIfBuilt(\.saShared) !== shared.values.first(where: { $0.source == "shared" }) {
                findings.append("the shared instance is not the one handed out")
            }
        }
        #expect(done)
        #expect(findings.values.isEmpty, "\(findings.values)")
    }

    /// Everything at once on an app, a session and requests: values, decorations, shared
    /// instances, families, teardowns, resets and shutdowns. Nothing hangs (a deinit of a
    /// shared instance resolves from the app), and the containers end consistent.
    @Test func mixedChangesOfEverySeldomTableUnderContention() async {
        let findings = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let counter = Counter()
            app.setValue(counter, forKey: "saTeardowns")
            concurrently(threads: 8) { index in
                for round in 0..<60 {
                    switch (index + round) % 8 {
                    case 0:
                        app.setValue(round, forKey: "k\(index)")
                        _ = app.getValue(forKey: "k\(index)") as Int?
                        if round % 3 == 0 { app.removeValue(forKey: "k\(index)") }
                    case 1:
                        session.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
                        _ = session.saPlain()
                        session.reset(\.saPlain)
                    case 2:
                        let hooked = app.saHookedShared(index * 1000 + round)
                        hooked.hook.set { _ = app.saPlain(); _ = app.saX() }
                    case 3:
                        _ = app.saFamily(round)
                        if round % 4 == 0 { app.override(\.saFamily) { n in SAPart("o", argument: n) } }
                        if round % 4 == 2 { app.reset(\.saFamily) }
                    case 4:
                        let request = DependencyContainer(scopeOf: session)
                        request.override(\.saX) { SAPart("request x") }
                        if request.saY().inner?.source != "request x" {
                            findings.append("a request's y was not built from its x")
                        }
                        _ = request.saSharedB()
                    case 5:
                        _ = app.saTorn()
                        if round % 5 == 0 { app.shutdown() }
                    case 6:
                        if round % 6 == 0 { app.reset() }
                        _ = session.saY()
                    default:
                        session.override(\.saX) { SAPart("session x") }
                        _ = session.saY()
                        session.reset(\.saX)
                    }
                }
            }
            app.reset()
            session.reset()
            app.shutdown()
            if session.saY() !== app.saY() { findings.append("after both resets the session has its own y") }
            if session.saPlain().source != "plain" { findings.append("a session decoration survived its reset") }
            if app.saFamily(1).source != "family" { findings.append("a family override survived reset()") }
            app.withStateLock { state in
                if state.hasStaleUnderWay { findings.append("the app kept a stale handing") }
                if state.hasTeardowns { findings.append("teardowns left after shutdown") }
            }
            session.withStateLock { state in
                if state.hasStaleUnderWay { findings.append("the session kept a stale handing") }
                if state.hasLearnedOwn { findings.append("the session kept a learned key after its reset") }
            }
        }
        #expect(finished, "mixed changes hung")
        #expect(findings.values.isEmpty, "\(Set(findings.values))")
    }

    /// Shared family instances whose deinit resolves from the container, let go on several
    /// threads while others build new arguments, which sweeps the dead ones.
    @Test func sweepsOfSharedInstancesRaceTheirDeinits() async {
        let deinits = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            concurrently(threads: 8) { index in
                for round in 0..<200 {
                    let hooked = container.saHookedShared(index * 10_000 + round)
                    hooked.hook.set {
                        _ = container.saPlain()
                        _ = container.saSharedFamily(round)
                        deinits.increment()
                    }
                }
            }
            container.withStateLock { state in
                #expect(state.sharedInstances.count < 1_600)
            }
        }
        #expect(finished)
        #expect(deinits.count == 1_600)
    }
}
