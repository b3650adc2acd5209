import DependencyInjection
import Foundation
import Testing

// The quick look (`appInstanceShared(_:overriddenInScope:)`) also serves a scope that builds: a scoped
// construction resolving an app singleton the app keeps notes the use (a2) instead of
// taking the handover's road. These tests pin that what the scope built from the app's
// instance is dropped exactly when something it used changes, in the scope, in an enclosing
// scope or in the app, including when the change lands inside the look's window.

final class BuildingLookPart: Sendable {
    let source: String
    let inner: BuildingLookPart?
    init(_ source: String, inner: BuildingLookPart? = nil) { (self.source, self.inner) = (source, inner) }
    var root: String { inner?.root ?? source }
}

/// A scoped object that reads the app singleton through a `@Dependency` property while it is built.
final class BuildingLookReader: @unchecked Sendable {
    @Dependency(\.buildingLookService) var service
    var seen: BuildingLookPart?
    init() { seen = service }
}

extension DependencyContainer {
    var buildingLookLocal: Provider<BuildingLookPart> { singleton { BuildingLookPart("app local") } }
    var buildingLookUnrelated: Provider<BuildingLookPart> { singleton { BuildingLookPart("app unrelated") } }
    var buildingLookService: Provider<BuildingLookPart> {
        singleton { BuildingLookPart("app service", inner: self.buildingLookLocal()) }
    }
    /// Not cached up front: the scope hands it over, and its closure resolves through the scope.
    var buildingLookOuter: Provider<BuildingLookPart> {
        singleton { BuildingLookPart("app outer", inner: self.buildingLookService()) }
    }
    var buildingLookHandler: Provider<BuildingLookPart> {
        scoped { BuildingLookPart("handler", inner: self.buildingLookService()) }
    }
    var buildingLookReaderHandler: Provider<BuildingLookPart> {
        scoped { BuildingLookPart("reader handler", inner: BuildingLookReader().seen) }
    }
    var buildingLookThreadHandler: Provider<BuildingLookPart> {
        scoped { BuildingLookPart("thread handler", inner: onThread { self.buildingLookService() }()) }
    }
    var buildingLookTaskHandler: Provider<BuildingLookPart> {
        scoped {
            let got = Collected<BuildingLookPart>()
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                got.append(self.buildingLookService())
                done.signal()
            }
            done.wait()
            return BuildingLookPart("task handler", inner: got.values[0])
        }
    }
    var buildingLookAsyncHandler: AsyncProvider<BuildingLookPart> {
        scoped { BuildingLookPart("async handler", inner: self.buildingLookService()) }
    }
    /// A scoped handler that resolves the app's cached service, then the app singleton `buildingLookOuter`.
    var buildingLookOuterHandler: Provider<BuildingLookPart> {
        scoped {
            _ = self.buildingLookService()
            return BuildingLookPart("outer handler", inner: self.buildingLookOuter())
        }
    }
    /// A scoped handler built from the `sharedLookFamily` member named by its scope's stored argument.
    var buildingLookMemberHandlerPart: Provider<SharedLookPart> {
        scoped {
            let argument: SharedLookArgument = self.getValue(forKey: "buildingLook.argument")!
            return SharedLookPart("member handler", inner: self.sharedLookFamily(argument))
        }
    }
    // A cycle: a scoped handler resolving an app singleton that resolves the handler back.
    var buildingLookCycleHandler: Provider<BuildingLookPart> {
        scoped {
            _ = self.buildingLookService()
            return BuildingLookPart("cycle handler", inner: self.buildingLookCycleSingleton())
        }
    }
    var buildingLookCycleSingleton: Provider<BuildingLookPart> {
        singleton { BuildingLookPart("cycle singleton", inner: self.buildingLookCycleHandler()) }
    }
}

/// Runs `body` on a thread of its own and awaits it, leaving the cooperative pool free.
private func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

@Suite struct AppInstanceLookWhileBuildingAttackTests {
    enum Shape: String, CaseIterable, Sendable { case direct, dependencyProperty, helperThread, task }

    private func handler(_ shape: Shape, in scope: DependencyContainer) async -> BuildingLookPart {
        // On a thread of its own, awaited: the task shape waits for a task, never on the pool.
        await offThePool {
            switch shape {
            case .direct: scope.buildingLookHandler()
            case .dependencyProperty: scope.buildingLookReaderHandler()
            case .helperThread: scope.buildingLookThreadHandler()
            case .task: scope.buildingLookTaskHandler()
            }
        }
    }

    // MARK: - One thread

    @Test(arguments: Shape.allCases)
    func aScopedInstanceBuiltFromTheAppsServiceIsDroppedExactlyWhenWhatItUsedChanges(_ shape: Shape) async {
        let app = DependencyContainer()
        let appService = app.buildingLookService()
        let scope = DependencyContainer(scopeOf: app)
        let first = await handler(shape, in: scope)
        #expect(first.inner === appService)
        #expect(await handler(shape, in: scope) === first)

        // Something it did not use: kept.
        scope.override(\.buildingLookUnrelated) { BuildingLookPart("scope unrelated") }
        #expect(await handler(shape, in: scope) === first, "an override of something unused dropped the scoped instance")
        app.override(\.buildingLookUnrelated) { BuildingLookPart("app unrelated override") }
        #expect(await handler(shape, in: scope) === first, "an app override of something unused dropped the scoped instance")

        // What the app's service was built from, in the scope: dropped, rebuilt from the scope's own service.
        scope.override(\.buildingLookLocal) { BuildingLookPart("scope local") }
        let second = await handler(shape, in: scope)
        #expect(second !== first)
        #expect(second.inner?.inner?.source == "scope local")
        #expect(second.inner !== appService)

        scope.reset(\.buildingLookLocal)
        let third = await handler(shape, in: scope)
        #expect(third !== second)
        #expect(third.inner === appService)
        #expect(await handler(shape, in: scope) === third)

        // In the app: the app's new service.
        app.override(\.buildingLookLocal) { BuildingLookPart("app override") }
        let fourth = await handler(shape, in: scope)
        #expect(fourth !== third)
        #expect(fourth.inner?.inner?.source == "app override")
        #expect(fourth.inner === app.buildingLookService())

        // The service itself, in the scope.
        scope.override(\.buildingLookService) { BuildingLookPart("scope service") }
        let fifth = await handler(shape, in: scope)
        #expect(fifth !== fourth && fifth.inner?.source == "scope service")

        // An app reset drops the app's service; the scope still overrides it: the handler
        // built from the scope's override stays, and no app instance sneaks in.
        app.reset()
        #expect(await handler(shape, in: scope).inner?.source == "scope service")
        scope.reset()
        #expect(await handler(shape, in: scope).inner === app.buildingLookService())
    }

    @Test(arguments: Shape.allCases)
    func aScopedInstanceOfAScopeOfAScopeFollowsItsSessionsOverrides(_ shape: Shape) async {
        let app = DependencyContainer()
        let appService = app.buildingLookService()
        let session = DependencyContainer(scopeOf: app)
        let request = DependencyContainer(scopeOf: session)
        let first = await handler(shape, in: request)
        #expect(first.inner === appService)
        session.override(\.buildingLookUnrelated) { BuildingLookPart("session unrelated") }
        #expect(await handler(shape, in: request) === first)
        session.override(\.buildingLookLocal) { BuildingLookPart("session local") }
        let second = await handler(shape, in: request)
        #expect(second !== first && second.inner?.inner?.source == "session local")
        session.reset(\.buildingLookLocal)
        let third = await handler(shape, in: request)
        #expect(third.inner === appService)
        session.override(\.buildingLookService) { BuildingLookPart("session service") }
        #expect(await handler(shape, in: request).inner?.source == "session service")
        session.reset()
        #expect(await handler(shape, in: request).inner === appService)
    }

    @Test func anAsyncScopedConstructionAndSyncOnesShareTheAppsServiceAndAreDroppedTogether() async throws {
        for _ in 0..<10 {
            let app = DependencyContainer()
            let appService = app.buildingLookService()
            let scope = DependencyContainer(scopeOf: app)
            async let a = scope.buildingLookAsyncHandler()
            async let b = Task.detached { scope.buildingLookHandler() }.value
            async let c = Task.detached { scope.buildingLookReaderHandler() }.value
            let (asyncHandler, syncHandler, readerHandler) = try await (a, b, c)
            #expect(asyncHandler.inner === appService)
            #expect(syncHandler.inner === appService)
            #expect(readerHandler.inner === appService)
            scope.override(\.buildingLookLocal) { BuildingLookPart("scope local") }
            let asyncAgain = try await scope.buildingLookAsyncHandler()
            #expect(asyncAgain !== asyncHandler && asyncAgain.inner?.inner?.source == "scope local")
            #expect(scope.buildingLookHandler().inner?.inner?.source == "scope local")
            #expect(scope.buildingLookReaderHandler().inner?.inner?.source == "scope local")
            scope.reset()
            #expect(try await scope.buildingLookAsyncHandler().inner === appService)
        }
    }

    /// A served construction: the scope hands `buildingLookOuter` over; its closure resolves
    /// the cached service through the scope and must get the app's, or the scope's own when
    /// the scope overrides what it was built from, which the scope then remembers.
    @Test func aServedConstructionInsideAScopedOneSeesTheAppsInstancesAndTheScopeLearnsItsOwn() {
        let app = DependencyContainer()
        let appService = app.buildingLookService()
        let plainScope = DependencyContainer(scopeOf: app)
        plainScope.override(\.buildingLookUnrelated) { BuildingLookPart("scope unrelated") }
        let handler = plainScope.buildingLookOuterHandler()
        #expect(handler.inner?.inner === appService)
        #expect(handler.inner === app.buildingLookOuter(), "the scope built its own outer though it overrides nothing it uses")

        let app2 = DependencyContainer()
        let appService2 = app2.buildingLookService()
        let overriding = DependencyContainer(scopeOf: app2)
        overriding.override(\.buildingLookLocal) { BuildingLookPart("scope local") }
        let own = overriding.buildingLookOuterHandler()
        #expect(own.inner?.root == "scope local", "the scope's handler got an outer built from \(own.inner?.root ?? "-")")
        #expect(own.inner?.inner !== appService2)
        #expect(overriding.buildingLookOuter() === own.inner)
        #expect(overriding.buildingLookOuter().root == "scope local")
        #expect(app2.buildingLookOuter().root == "app local")
        overriding.reset()
        #expect(overriding.buildingLookOuterHandler().inner === app2.buildingLookOuter())
    }

    @Test func aCycleThroughAnAppSingletonResolvedInsideAScopedConstructionIsReported() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle through a scope's construction and an app singleton")
            let app = DependencyContainer()
            _ = app.buildingLookService()
            _ = DependencyContainer(scopeOf: app).buildingLookCycleHandler()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency"), "\(output)")
        #expect(output.contains("buildingLookCycleHandler"), "\(output)")
    }

    // MARK: - A change inside the look's window, while the scope builds

    /// Builds `buildingLookMemberHandlerPart` in `scope` on a thread; its construction resolves
    /// `sharedLookFamily(2)`, whose look holds at its comparison with the override of member
    /// 1 (installed in `overriding`), between reading the overrides and noting the use;
    /// runs `change` there, and returns the handler.
    private func buildHandler(
        in scope: DependencyContainer, changingInsideTheLook change: @escaping @Sendable () -> Void
    ) async -> SharedLookPart {
        await offThePool {
            let hold = SharedLookHold()
            scope.setValue(SharedLookArgument(2, hold: hold), forKey: "buildingLook.argument")
            hold.arm()
            let resolved = onThread { scope.buildingLookMemberHandlerPart() }
            hold.gate.entered.wait()
            change()
            hold.gate.open()
            return resolved()
        }
    }

    private func world(scopeOfAScope: Bool = false)
        -> (app: DependencyContainer, session: DependencyContainer, scope: DependencyContainer, two: SharedLookPart)
    {
        let app = DependencyContainer()
        let two = app.sharedLookFamily(SharedLookArgument(2))
        let session = DependencyContainer(scopeOf: app)
        let scope = scopeOfAScope ? DependencyContainer(scopeOf: session) : session
        session.override(\.sharedLookFamily[SharedLookArgument(1)]) { SharedLookPart("scope member 1") }
        return (app, session, scope, two)
    }

    @Test(arguments: [false, true])
    func anOverrideOfWhatTheMemberWasBuiltFromDuringTheLookDropsOrRebuildsTheHandler(_ scopeOfAScope: Bool) async {
        let (_, session, scope, two) = world(scopeOfAScope: scopeOfAScope)
        let handler = await buildHandler(in: scope) {
            session.override(\.sharedLookLocal) { SharedLookPart("scope local") }
        }
        #expect(handler.inner === two || handler.inner?.inner?.source == "scope local")
        let after = scope.buildingLookMemberHandlerPart()
        #expect(after.inner?.inner?.source == "scope local", "the scope kept a handler built from \(after.inner?.root ?? "-")")
        #expect(after.inner !== two)
        session.reset(\.sharedLookLocal)
        #expect(scope.buildingLookMemberHandlerPart().inner === two)
    }

    @Test(arguments: [false, true])
    func anOverrideOfTheMemberItselfDuringTheLookDropsOrRebuildsTheHandler(_ scopeOfAScope: Bool) async {
        let (_, session, scope, two) = world(scopeOfAScope: scopeOfAScope)
        let handler = await buildHandler(in: scope) {
            session.override(\.sharedLookFamily[SharedLookArgument(2)]) { SharedLookPart("scope member 2") }
        }
        #expect(handler.inner === two || handler.inner?.source == "scope member 2")
        #expect(scope.buildingLookMemberHandlerPart().inner?.source == "scope member 2")
    }

    @Test func anAppOverrideOfWhatTheMemberWasBuiltFromDuringTheLookLeavesNoStaleHandler() async {
        let (app, _, scope, two) = world()
        let handler = await buildHandler(in: scope) {
            app.override(\.sharedLookLocal) { SharedLookPart("app override") }
        }
        let current = app.sharedLookFamily(SharedLookArgument(2))
        #expect(current !== two)
        #expect(handler.inner !== two, "the handler was built from the member the app dropped during the look")
        let after = scope.buildingLookMemberHandlerPart()
        #expect(after.inner === current, "the scope kept a handler built from \(after.inner?.root ?? "-")")
    }

    @Test func anAppResetAndRebuildDuringTheLookLeavesNoStaleHandler() async {
        let (app, _, scope, two) = world()
        let rebuilt = Collected<SharedLookPart>()
        let handler = await buildHandler(in: scope) {
            app.reset()
            rebuilt.append(app.sharedLookFamily(SharedLookArgument(2)))
        }
        #expect(handler.inner !== two)
        #expect(scope.buildingLookMemberHandlerPart().inner === rebuilt.values.first)
    }

    @Test func anUnrelatedOverrideDuringTheLookKeepsTheHandlerAndTheAppsMember() async {
        let (app, _, scope, two) = world()
        let handler = await buildHandler(in: scope) {
            scope.override(\.sharedLookOther) { SharedLookPart("scope other") }
        }
        #expect(handler.inner === two)
        #expect(scope.buildingLookMemberHandlerPart() === handler)
        // Still recorded: a later override of what the member was built from drops it.
        scope.override(\.sharedLookLocal) { SharedLookPart("scope local") }
        #expect(scope.buildingLookMemberHandlerPart().inner?.inner?.source == "scope local")
        app.override(\.sharedLookLocal) { SharedLookPart("app override") }
        #expect(scope.buildingLookMemberHandlerPart().inner?.inner?.source == "scope local")
    }

    @Test func aLaterOverrideOfTheMemberDropsAHandlerBuiltThroughTheLook() async {
        let (app, session, scope, two) = world(scopeOfAScope: true)
        let handler = await buildHandler(in: scope) {}
        #expect(handler.inner === two)
        #expect(scope.buildingLookMemberHandlerPart() === handler)
        scope.override(\.sharedLookFamily[SharedLookArgument(2)]) { SharedLookPart("request member 2") }
        #expect(scope.buildingLookMemberHandlerPart().inner?.source == "request member 2")
        scope.reset()
        let back = scope.buildingLookMemberHandlerPart()
        #expect(back.inner === two)
        session.override(\.sharedLookFamily) { argument in SharedLookPart("session family \(argument.number)") }
        #expect(scope.buildingLookMemberHandlerPart().inner?.source == "session family 2")
        session.reset()
        app.override(\.sharedLookFamily[SharedLookArgument(2)]) { SharedLookPart("app member 2") }
        #expect(scope.buildingLookMemberHandlerPart().inner?.source == "app member 2")
    }

    // MARK: - Threads released together

    /// Builders resolve the scoped handler while a changer toggles, in the scope, an
    /// enclosing scope or the app, what the app's service is built from; each round's
    /// scope is used once and reset: every handler is built from a consistent service, and
    /// once the threads end, the handler follows the final state.
    @Test(arguments: ["scope", "session", "app"])
    func buildersWhileOverridesToggleKeepNoStaleHandler(_ changer: String) async {
        for round in 0..<15 {
            let app = DependencyContainer()
            let appService = app.buildingLookService()
            let session = DependencyContainer(scopeOf: app)
            let scope = changer == "session" ? DependencyContainer(scopeOf: session) : session
            let changing = changer == "app" ? app : session
            let findings = SharedLookFindings()
            let builders = 5
            let finished = await concurrentlyOffThePool(threads: builders + 1) { index in
                guard index < builders else {
                    for _ in 0..<30 {
                        changing.override(\.buildingLookLocal) { BuildingLookPart("changed local") }
                        changing.reset(\.buildingLookLocal)
                    }
                    changing.override(\.buildingLookLocal) { BuildingLookPart("final local") }
                    return
                }
                for step in 0..<150 {
                    let part: BuildingLookPart
                    switch (index + step) % 3 {
                    case 0: part = scope.buildingLookHandler()
                    case 1: part = scope.buildingLookReaderHandler()
                    default: part = scope.buildingLookThreadHandler()
                    }
                    let root = part.inner?.inner?.source ?? "nothing"
                    findings.check(
                        ["app local", "changed local", "final local"].contains(root),
                        "\(part.source) built from a service built from \(root)")
                    if changer != "app" {
                        findings.check(app.buildingLookService() === appService, "the app's service changed")
                    }
                }
            }
            #expect(finished)
            #expect(findings.problems.isEmpty, "round \(round): \(findings.problems.prefix(3))")
            for handler in [scope.buildingLookHandler(), scope.buildingLookReaderHandler(), scope.buildingLookThreadHandler()] {
                #expect(handler.inner?.inner?.source == "final local", "round \(round): \(handler.source) kept, built from \(handler.inner?.root ?? "-")")
            }
            changing.reset(\.buildingLookLocal)
            let current = app.buildingLookService()
            for handler in [scope.buildingLookHandler(), scope.buildingLookReaderHandler(), scope.buildingLookThreadHandler()] {
                #expect(handler.inner === current, "round \(round): \(handler.source) kept after the reset")
            }
        }
    }

    /// Builders in many fresh scopes, each building its handler while the app overrides
    /// and resets the service's source: no scope keeps a handler built from an instance the
    /// app dropped.
    @Test func freshScopesBuildingWhileTheAppChangesKeepNoHandlerOfADroppedService() async {
        for round in 0..<15 {
            let app = DependencyContainer()
            _ = app.buildingLookService()
            let scopes = (0..<5).map { _ in DependencyContainer(scopeOf: app) }
            for (index, scope) in scopes.enumerated() where index % 2 == 0 {
                scope.override(\.buildingLookUnrelated) { BuildingLookPart("scope unrelated") }
            }
            let finished = await concurrentlyOffThePool(threads: scopes.count + 1) { index in
                guard index < scopes.count else {
                    for step in 0..<40 {
                        if step % 2 == 0 { app.reset() } else { app.override(\.buildingLookLocal) { BuildingLookPart("app override") } }
                        _ = app.buildingLookService()
                    }
                    app.override(\.buildingLookLocal) { BuildingLookPart("final") }
                    return
                }
                for _ in 0..<100 {
                    _ = scopes[index].buildingLookHandler()
                    _ = scopes[index].buildingLookThreadHandler()
                }
            }
            #expect(finished)
            let current = app.buildingLookService()
            #expect(current.inner?.source == "final")
            for scope in scopes {
                #expect(scope.buildingLookHandler().inner === current, "round \(round): a scope kept a stale handler")
                #expect(scope.buildingLookThreadHandler().inner === current, "round \(round): a scope kept a stale thread handler")
            }
        }
    }
}
