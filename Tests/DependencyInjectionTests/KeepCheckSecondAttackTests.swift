import Foundation
import Testing
@testable import DependencyInjection

// More attacks on a scope's check, when its own construction of an app-wide registration
// ends, that it still builds its own (`DependencyContainer.complete(_:_:scope:teardown:)`
// and `ContainerState.complete(_:keeping:weakly:teardown:checkingOwnAgainst:released:)`):
// the scope's record of uses, kept by time window, read by the check; a construction that
// uses an overridden key only through an instance the scope already keeps; and what a copy
// the scope does not keep takes with it.
//
// `KRAPart`, `KRAShape` and the `kra*` registrations come from KeepRecheckAttackTests.swift;
// `HCABeforeClock` and `appSessionAndRequest()` from HandoverCacheAttackTests.swift; the
// gates, `Findings` and `onThread` from InFlightBookkeepingAttackTests.swift.

/// An app-wide singleton built from `kraTimed` alone.
final class KCSHolder: Sendable {
    let timed: KRAPart
    init(_ timed: KRAPart) { self.timed = timed }
}

extension DependencyContainer {
    /// Built from `kraTimed`; then runs the action stored under "kcs.afterTimed", if any.
    var kcsHolder: Provider<KCSHolder> {
        singleton {
            self.count("kcsHolder")
            let timed = self.kraTimed()
            (self.getValue(forKey: "kcs.afterTimed") as HCABeforeClock?)?.run()
            return KCSHolder(timed)
        }
    }

    /// Built once per scope, from nothing, held at the next of the gates stored under
    /// "kcs.gates", if any.
    var kcsScoped: Provider<IFBPart> {
        scoped {
            self.count("kcsScoped")
            (self.getValue(forKey: "kcs.gates") as IFBGates?)?.pass()
            return IFBPart("scoped")
        }
    }
}

/// Who resolves `kraUnrelated` while the request builds its copy, waited for by the
/// construction.
enum KCSResolver: String, CaseIterable, CustomStringConvertible {
    case nobody = "nobody"
    case anotherThread = "another thread"
    case aTaskItStarts = "a task it starts"
    case aDetachedTask = "a detached task"

    var description: String { rawValue }

    func resolve(_ resolution: @escaping @Sendable () -> Void) {
        switch self {
        case .nobody: break
        case .anotherThread: onThread(resolution)()
        case .aTaskItStarts:
            let resolved = DispatchSemaphore(value: 0)
            Task {
                resolution()
                resolved.signal()
            }
            resolved.wait()
        case .aDetachedTask:
            let resolved = DispatchSemaphore(value: 0)
            Task.detached {
                resolution()
                resolved.signal()
            }
            resolved.wait()
        }
    }
}

@Suite struct KeepCheckSecondAttackTests {
    // MARK: - The time-window record read by the check

    /// The session overrides the clock and `kraUnrelated`; the request builds its own
    /// singleton (plain or a family's member), and the session removes the clock's override before the
    /// construction uses it: the construction gets the app's clocks. Meanwhile another
    /// thread resolves `kraUnrelated` (still overridden) through the request, which the
    /// construction never uses. The request must not keep its copy: the next resolution is
    /// the app's instance. Without the other thread (the control), it does not keep it. But
    /// a task the construction starts and waits for inherits its frame, so what the task
    /// resolves is the construction's own use: then the request keeps the copy, as it would
    /// had the construction resolved `kraUnrelated` on its own thread. A detached task
    /// inherits nothing: like another thread, it does not resolve for the construction.
    /// (A shared copy kept by mistake is kept weakly and never served: a scope hands a
    /// registration it does not build itself to its app container before it looks at its
    /// own cache, so nothing shows it.)
    @Test(arguments: [KRAShape.singleton, .familyMember])
    func anotherThreadsResolutionDuringTheConstructionDoesNotKeepAStaleCopy(shape: KRAShape) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            for resolver in KCSResolver.allCases {
                let (app, session, request) = appSessionAndRequest()
                let appValue = shape.value(in: app)
                session.override(\.kraClock) { IFBPart("session clock") }
                session.override(\.kraClocks) { IFBPart("session clock", argument: $0) }
                session.override(\.kraUnrelated) { IFBPart("session unrelated") }
                request.setValue(
                    HCABeforeClock {
                        session.reset(\.kraClock)
                        session.reset(\.kraClocks)
                        resolver.resolve { _ = request.kraUnrelated() }
                    }, forKey: "kra.beforeClock")
                let copy = shape.value(in: request)
                findings.check(copy.isFromTheApp && copy !== appValue, "\(resolver): not a copy from the app's clocks")
                let again = shape.value(in: request)
                if resolver == .aTaskItStarts {
                    findings.check(again === copy, "\(resolver): the request did not keep the copy built from its override")
                } else {
                    findings.check(again === appValue, "\(resolver): the request keeps its stale copy")
                }
                withExtendedLifetime((copy, appValue)) {}
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// The same on the async road: another task resolves the still-overridden
    /// `kraUnrelated` through the request while its own async construction runs. The async
    /// road hands the registration to the app container before it looks at the request's
    /// cache, so the request serves the app's instance, but it must not hold the copy.
    @Test func anotherTasksResolutionDuringAnAsyncConstructionDoesNotKeepAStaleCopy() async throws {
        var problems: [String] = []
        var staleProblems: [String] = []
        for bystander in [false, true] {
            let (app, session, request) = appSessionAndRequest()
            let appTimed = try await app.kraAsyncTimed()
            session.override(\.kraClock) { IFBPart("session clock") }
            session.override(\.kraUnrelated) { IFBPart("session unrelated") }
            let gate = IFBAsyncGate()
            request.setValue(gate, forKey: "kra.asyncGate")
            request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock")
            let held = Task { try await request.kraAsyncTimed() }
            await gate.entered.wait()
            if bystander { _ = await Task.detached { request.kraUnrelated() }.value }
            gate.opened.open()
            let first = try await held.value
            if !(first.isFromTheApp && first !== appTimed) { problems.append("bystander \(bystander): not a copy") }
            if try await request.kraAsyncTimed() !== appTimed { problems.append("bystander \(bystander): served a copy") }
            // What the request's own table keeps, not whether the copy is still alive: the
            // task that built it, and the room it was handed out from, go some time after
            // its waiters wake, which a weak reference read at once would count as kept.
            let key = request[keyPath: \.kraAsyncTimed].key
            if request.keepsInstanceNow(of: key) {
                if bystander { staleProblems.append("the request holds its stale copy") } else { problems.append("control holds its copy") }
            }
        }
        #expect(problems == [])
        #expect(staleProblems == [])
    }

    // MARK: - Uses through an instance the scope keeps

    /// The session overrides the clock; the request builds its own `kcsHolder` (the app's
    /// record says the holder is built from the clock), from its own `kraTimed`, from the
    /// session's clock: one it already keeps, or one it builds inside the holder's
    /// construction. After the holder has its `kraTimed`, the app changes (it shuts down or
    /// resets the clock, which stops at the session): the app's record is gone, but nothing
    /// the request builds from changed. The request must keep its holder and build it once.
    /// The control, a change nobody makes, keeps it; so does the holder that built its
    /// `kraTimed` inside (its construction was in flight when the clock was resolved).
    @Test(arguments: ["none", "shutdown()", "reset(\\.kraClock)"], [true, false])
    func anAppChangeDuringAConstructionThatUsesTheOverrideThroughAnotherOwnInstance(change: String, timedKeptFirst: Bool) async {
        let findings = Findings()
        let built = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appHolder = app.kcsHolder()
            session.override(\.kraClock) { IFBPart("session clock") }
            if timedKeptFirst {
                findings.check(request.kraTimed().clock.source == "session clock", "the request's kraTimed is not its own")
            }
            request.setValue(built, forKey: "builds.kcsHolder")
            request.setValue(
                HCABeforeClock {
                    switch change {
                    case "shutdown()": app.shutdown()
                    case "reset(\\.kraClock)": app.reset(\.kraClock)
                    default: break
                    }
                }, forKey: "kcs.afterTimed")
            let first = request.kcsHolder()
            let timed = request.kraTimed()
            findings.check(first !== appHolder && first.timed === timed, "not the request's own holder")
            findings.check(timed.clock.source == "session clock", "the request's kraTimed is not its own")
            findings.check(request.kcsHolder() === first, "\(change): the request did not keep its own holder")
        }
        #expect(finished)
        #expect(findings.problems == [])
        #expect(built.count == 1, "built \(built.count) times")
    }

    // MARK: - What the invalidation of a refused copy takes with it

    /// A `scoped` construction in the request, on another thread, is in flight when the
    /// request begins its own `kraTimed`; it resolves nothing the copy touches. The session
    /// removes its override before `kraTimed` uses it, so the request does not keep the
    /// copy, and drops what the copy built. The scoped instance merely overlapped the copy
    /// in time: whether it ended before the copy (kept) or after it (in flight), the request
    /// must keep it and build it once. The control, with the session's override left in
    /// place (the copy is kept), keeps it. With the removal, both orders are known issues:
    /// the record of uses files the scoped construction as a user of the copy, and both
    /// the refused copy and the session's change drop the users of `kraTimed`.
    @Test(arguments: [false, true])
    func aScopedConstructionThatOverlappedACopyNotKeptIsKept(scopedEndsFirst: Bool) async {
        let findings = Findings()
        let overlapped = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            for removes in [false, true] {
                let (app, session, request) = appSessionAndRequest()
                let appTimed = app.kraTimed()
                session.override(\.kraClock) { IFBPart("session clock") }
                let scopedBuilt = request.counter("kcsScoped")
                let scopedGates = IFBGates(1)
                request.setValue(scopedGates, forKey: "kcs.gates")
                let timedGates = request.ifbInstallGates(scopedEndsFirst ? 1 : 0)
                if removes { request.setValue(HCABeforeClock { session.reset(\.kraClock) }, forKey: "kra.beforeClock") }
                let scoped = onThread { request.kcsScoped() }
                scopedGates[0].entered.wait()
                let timed: KRAPart
                let first: IFBPart
                if scopedEndsFirst {
                    // kraTimed begins, then waits past the removal; the scoped one ends first.
                    let held = onThread { request.kraTimed() }
                    timedGates[0].entered.wait()
                    scopedGates[0].open()
                    first = scoped()
                    timedGates[0].open()
                    timed = held()
                } else {
                    timed = request.kraTimed()
                    scopedGates[0].open()
                    first = scoped()
                }
                let what = "removes \(removes), scoped ends first \(scopedEndsFirst)"
                findings.check(removes ? timed.isFromTheApp : timed.clock.source == "session clock", "\(what): wrong copy")
                findings.check((request.kraTimed() === appTimed) == removes, "\(what): the check decided wrongly")
                (removes ? overlapped : findings).check(request.kcsScoped() === first, "\(what): the scoped instance is dropped")
                (removes ? overlapped : findings).check(scopedBuilt.count == 1, "\(what): scoped built \(scopedBuilt.count) times")
            }
        }
        #expect(finished)
        #expect(findings.problems == [])
        if scopedEndsFirst {
            withKnownIssue(
                "The session's change drops, in the request, every user of the app-wide instances built from the changed key, even of the request's own copy: the time-window record files the scoped construction, which merely overlapped the copy, as its user"
            ) {
                #expect(overlapped.problems == [])
            }
        } else {
            withKnownIssue(
                "A refused copy drops the constructions in flight that the time-window record files as its users: one that merely overlapped it too"
            ) {
                #expect(overlapped.problems == [])
            }
        }
    }
}
