import Foundation
import Testing
@testable import DependencyInjection

// Attacks on what a scope counts as a construction's own use (`ResolvingCode`): a task the
// construction starts, in every shape of registration; a task a shared construction starts,
// traced or not; and a task left over from an earlier construction of the same key.

extension DependencyContainer {
    var woaX: Provider<IFBPart> { singleton { IFBPart("app x") } }
    var woaDep: Provider<IFBPart> { singleton { IFBPart("app dep") } }

    /// Resolves `woaX` in a task it starts and waits for.
    func woaInTask() -> IFBPart {
        let result = Collected<IFBPart>()
        let done = DispatchSemaphore(value: 0)
        Task {
            result.append(self.woaX())
            done.signal()
        }
        done.wait()
        return result.values[0]
    }

    var woaSingletonDirect: Provider<IFBPart> { singleton { IFBPart("s direct", inner: self.woaX()) } }
    var woaSingletonTask: Provider<IFBPart> { singleton { IFBPart("s task", inner: self.woaInTask()) } }
    var woaSharedDirect: Provider<IFBPart> { shared { IFBPart("sh direct", inner: self.woaX()) } }
    var woaSharedTask: Provider<IFBPart> { shared { IFBPart("sh task", inner: self.woaInTask()) } }
    var woaFamilyTask: ProviderFamily<Int, IFBPart> {
        singleton { (n: Int) in IFBPart("f task", inner: self.woaInTask(), argument: n) }
    }
    var woaFamilyDirect: ProviderFamily<Int, IFBPart> {
        singleton { (n: Int) in IFBPart("f direct", inner: self.woaX(), argument: n) }
    }
}

enum WOAShape: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case singletonDirect, singletonTask, sharedDirect, sharedTask, familyDirect, familyTask
    var testDescription: String { rawValue }
    func value(in c: DependencyContainer) -> IFBPart {
        switch self {
        case .singletonDirect: c.woaSingletonDirect()
        case .singletonTask: c.woaSingletonTask()
        case .sharedDirect: c.woaSharedDirect()
        case .sharedTask: c.woaSharedTask()
        case .familyDirect: c.woaFamilyDirect(1)
        case .familyTask: c.woaFamilyTask(1)
        }
    }
}

@Suite struct OwnUseAttackTests {
    /// The app builds the instance first (its record learns what it used); then the session
    /// overrides `woaX`, and the request must build its own from the session's x.
    @Test(arguments: WOAShape.allCases, [false, true])
    func aScopeBuildsItsOwnCopyFromWhatATaskStartedInsideResolved(shape: WOAShape, appFirst: Bool) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            var appValue: IFBPart?
            if appFirst { appValue = shape.value(in: app) }
            session.override(\.woaX) { IFBPart("session x") }
            let value = shape.value(in: request)
            findings.check(
                value.inner?.source == "session x",
                "\(shape) appFirst \(appFirst): request got inner \(value.inner?.source ?? "nil")")
            withExtendedLifetime((appValue, value)) {}
        }
        #expect(finished)
        #expect(findings.problems == [])
    }
}

/// What the async construction below does on its first and second builds.
final class WOAAsyncPlan: Sendable {
    let leftoverMayResolve = AsyncLatch()
    let leftoverResolved = AsyncLatch()
    let secondBuild = IFBAsyncGate()
    let builds = Counter()
    /// Whether the first build starts the leftover task (else the test starts one itself).
    let leftoverInside: Bool
    init(leftoverInside: Bool) { self.leftoverInside = leftoverInside }
}

extension DependencyContainer {
    /// Resolves `woaDep`. Its first build starts a task that outlives it and later resolves
    /// `woaX`; its second build waits at a gate.
    var woaAsyncA: AsyncProvider<IFBPart> {
        singleton {
            let plan: WOAAsyncPlan? = self.getValue(forKey: "woa.plan")
            plan?.builds.increment()
            let build = plan?.builds.count ?? 0
            if let plan, build == 1, plan.leftoverInside {
                Task {
                    await plan.leftoverMayResolve.wait()
                    _ = self.woaX()
                    plan.leftoverResolved.open()
                }
            }
            _ = self.woaDep()
            if let plan, build == 2 { await plan.secondBuild.pass() }
            return IFBPart("a \(build)")
        }
    }
}

extension OwnUseAttackTests {
    /// A task that an earlier, finished construction of `woaAsyncA` started resolves `woaX`
    /// while the next construction of `woaAsyncA` runs. The new construction never resolves
    /// `woaX`; the request, whose session overrides `woaX`, must share the app's instance.
    @Test(arguments: [false, true])
    func aLeftoverTaskOfAnEarlierAsyncConstructionIsNotTheNewOnesOwnUse(leftoverInside: Bool) async throws {
        let (app, session, request) = appSessionAndRequest()
        let plan = WOAAsyncPlan(leftoverInside: leftoverInside)
        app.setValue(plan, forKey: "woa.plan")
        _ = try await app.woaAsyncA()
        app.override(\.woaDep) { IFBPart("app dep 2") }  // drops the first instance
        let held = Task { try await app.woaAsyncA() }
        await plan.secondBuild.entered.wait()
        if leftoverInside {
            plan.leftoverMayResolve.open()
        } else {
            Task {  // a bystander, for control
                _ = app.woaX()
                plan.leftoverResolved.open()
            }
        }
        await plan.leftoverResolved.wait()
        plan.secondBuild.opened.open()
        let second = try await held.value
        #expect(second.source == "a 2")
        session.override(\.woaX) { IFBPart("session x") }
        let inRequest = try await request.woaAsyncA()
        #expect(inRequest === second, "leftoverInside \(leftoverInside): the request built its own copy (\(inRequest.source)) of an instance built from nothing it overrides")
    }
}

extension DependencyContainer {
    /// A singleton built from `woaSharedTask` (which resolves `woaX` in a task it starts).
    var woaSingletonOverSharedTask: Provider<IFBPart> { singleton { IFBPart("s over sh", inner: self.woaSharedTask()) } }
}

extension OwnUseAttackTests {
    /// The same shared construction, with and without a tracer on the app: tracing binds
    /// the shared construction's frame as a task-local value, so the task it starts is
    /// then "inside" it; the outcome must not depend on tracing.
    @Test(arguments: [false, true])
    func aTaskStartedInASharedConstructionCountsTheSameWithOrWithoutATracer(traced: Bool) async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            if traced { app.tracer = ResolutionTracer { _ in } }
            let appValue = app.woaSharedTask()
            app.tracer = nil
            session.override(\.woaX) { IFBPart("session x") }
            let value = request.woaSharedTask()
            findings.check(value.inner?.source == "session x", "traced \(traced): request got inner \(value.inner?.source ?? "nil")")
            withExtendedLifetime((appValue, value)) {}
        }
        #expect(finished)
        #expect(findings.problems == [])
    }

    /// A singleton built from the shared instance is a copy in the request (the task runs
    /// inside the singleton's bound frame), while the shared instance itself is the app's:
    /// the request's singleton then holds an instance of `woaSharedTask` the request does
    /// not serve.
    @Test func aSingletonOverASharedInstanceAndTheSharedInstanceAgree() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let appOuter = app.woaSingletonOverSharedTask()
            session.override(\.woaX) { IFBPart("session x") }
            let outer = request.woaSingletonOverSharedTask()
            let shared = request.woaSharedTask()
            findings.check(outer.inner?.inner?.source == "session x", "outer built from \(outer.inner?.inner?.source ?? "nil")")
            findings.check(shared.inner?.source == "session x", "shared built from \(shared.inner?.source ?? "nil")")
            findings.check(outer.inner === shared, "the request's singleton holds a shared instance the request does not serve")
            withExtendedLifetime((appOuter, outer, shared)) {}
        }
        #expect(finished)
        #expect(findings.problems == [])
    }
}

extension DependencyContainer {
    /// A shared instance built from nothing, held at the `OnceGate` stored under
    /// "woa.sharedGate", if any.
    var woaSharedGated: Provider<IFBPart> {
        shared {
            (self.getValue(forKey: "woa.sharedGate") as OnceGate?)?.pass()
            return IFBPart("shared gated")
        }
    }
}

extension OwnUseAttackTests {
    /// A `shared` construction is not bound, so what another thread resolves while it runs
    /// counts as its use, as the Scopes article says: a request whose session overrides
    /// that builds its own instance, where a singleton's would share the app's.
    @Test func anotherThreadsResolutionDuringASharedConstructionCountsAsItsUse() async {
        let findings = Findings()
        let finished = await finishesWithoutHangingOffThePool {
            let (app, session, request) = appSessionAndRequest()
            let once = OnceGate()
            app.setValue(once, forKey: "woa.sharedGate")
            let building = onThread { app.woaSharedGated() }
            once.gate.entered.wait()
            _ = app.woaX()
            once.gate.open()
            let appValue = building()
            session.override(\.woaX) { IFBPart("session x") }
            let value = request.woaSharedGated()
            findings.check(value !== appValue, "the request shares the app's shared instance")
            withExtendedLifetime((appValue, value)) {}
        }
        #expect(finished)
        #expect(findings.problems == [])
    }
}
