import Foundation
import Testing
@testable import DependencyInjection

// Attacks on `SeldomUsedState` (a810b2c): the eight seldom-used tables of a container's
// state moved into one object made on the first change, read through computed properties.

/// A class whose release is observable and whose `deinit` is user code that may use a
/// container.
final class SAHooked: @unchecked Sendable {
    let id: Int
    let hook: DeinitHook
    init(_ id: Int, hook: DeinitHook = DeinitHook()) { (self.id, self.hook) = (id, hook) }
    deinit { hook.fire() }
}

final class SAPart: Sendable {
    let source: String
    let inner: SAPart?
    let argument: Int
    init(_ source: String, inner: SAPart? = nil, argument: Int = 0) {
        (self.source, self.inner, self.argument) = (source, inner, argument)
    }
}

extension DependencyContainer {
    var saX: Provider<SAPart> { singleton { SAPart("app x") } }
    var saY: Provider<SAPart> { singleton { SAPart("y", inner: self.saX()) } }
    var saPlain: Provider<SAPart> { singleton { SAPart("plain") } }
    var saShared: Provider<SAPart> { shared { SAPart("shared") } }
    var saFamily: ProviderFamily<Int, SAPart> { singleton { (n: Int) in SAPart("family", argument: n) } }
    var saSharedFamily: ProviderFamily<Int, SAPart> { shared { (n: Int) in SAPart("shared family", argument: n) } }
    var saTorn: Provider<SAPart> {
        singleton { SAPart("torn") }.onShutdown { _ in self.saTeardowns.increment() }
    }
    var saTeardowns: Counter {
        if let counter: Counter = getValue(forKey: "saTeardowns") { return counter }
        return Counter()
    }
    var saTornHooked: Provider<SAPart> {
        let captured: SAHooked? = getValue(forKey: "saHook")
        return singleton { SAPart("torn hooked") }.onShutdown { _ in
            withExtendedLifetime(captured) {}
            self.saTeardowns.increment()
        }
    }
    var saHookedShared: ProviderFamily<Int, SAHooked> {
        shared { (n: Int) in SAHooked(n) }
    }
}

@Suite struct SeldomAttackStateTests {
    private func seldomIsMade(_ container: DependencyContainer) -> Bool {
        container.withStateLock { $0.seldom != nil }
    }

    // MARK: - Made on the first change only

    /// Reads, resolutions, overrides and decorations-free work make no object; a change of
    /// one of its tables does. Each read-only operation is checked on its own.
    @Test(arguments: ["resolve", "getValue", "instanceIfBuilt", "override", "resetKey"])
    func readsAndUnrelatedChangesMakeNoSeldomObject(operation: String) {
        let container = DependencyContainer()
        switch operation {
        case "resolve":
            _ = container.saPlain()
            _ = container.saY()
        case "getValue":
            let value: String? = container.getValue(forKey: "missing")
            #expect(value == nil)
        case "instanceIfBuilt":
            #expect(container.instanceIfBuilt(\.saPlain) == nil)
            #expect(container.instanceIfBuilt(\.saShared) == nil)
        case "override":
            container.override(\.saPlain) { SAPart("o") }
            _ = container.saPlain()
        default:
            _ = container.saPlain()
            container.reset(\.saPlain)
        }
        #expect(!seldomIsMade(container), "\(operation) made the seldom-used state")
    }

    /// What a test world does at its end (reset, shutdown, removeAll) on a container that
    /// never touched a seldom-used table: each makes the object only to empty it.
    @Test(arguments: ["reset", "shutdown", "removeAll"])
    func clearingAnUntouchedContainerMakesNoSeldomObject(operation: String) {
        let container = DependencyContainer()
        _ = container.saPlain()
        switch operation {
        case "reset": container.reset()
        case "shutdown": container.shutdown()
        default: container.removeAll()
        }
        #expect(!seldomIsMade(container), "\(operation) made an empty seldom-used state")
    }

    // MARK: - One object per container

    /// Values live in the container that stored them: a child, a scope and an unrelated
    /// container never share the object.
    @Test func valuesAreKeptPerContainer() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let scope = DependencyContainer(scopeOf: parent)
        let other = DependencyContainer()
        child.setValue("child", forKey: "k")
        #expect((parent.getValue(forKey: "k") as String?) == nil)
        #expect((scope.getValue(forKey: "k") as String?) == nil)
        #expect((other.getValue(forKey: "k") as String?) == nil)
        parent.setValue("parent", forKey: "k")
        #expect((child.getValue(forKey: "k") as String?) == "child")
        #expect((scope.getValue(forKey: "k") as String?) == "parent")
        scope.setValue("scope", forKey: "k")
        #expect((parent.getValue(forKey: "k") as String?) == "parent")
        child.removeAll()
        #expect((child.getValue(forKey: "k") as String?) == "parent")
        #expect((scope.getValue(forKey: "k") as String?) == "scope")
        scope.removeValue(forKey: "k")
        #expect((scope.getValue(forKey: "k") as String?) == "parent")
        parent.removeAll()
        #expect((child.getValue(forKey: "k") as String?) == nil)
        #expect(parent.withStateLock { $0.seldom } !== child.withStateLock { $0.seldom })
        #expect(parent.withStateLock { $0.seldom } !== scope.withStateLock { $0.seldom })
    }

    /// Every table a write goes to through the computed property keeps the write: written
    /// first on a fresh container (the object made by that write), and again once made.
    @Test func firstWritesThroughEachTableAreKept() {
        let container = DependencyContainer()
        container.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
        #expect(container.saPlain().source == "decorated")
        let second = DependencyContainer()
        let shared = second.saShared()
        #expect(second.saShared() === shared)
        #expect(second.instanceIfBuilt(\.saShared) === shared)
        let third = DependencyContainer()
        let one = third.saFamily(1)
        #expect(third.saFamily(1) === one)
        #expect(third.withStateLock { $0.arguments.values.first?.count } == 1)
        let fourth = DependencyContainer()
        _ = fourth.saTorn()
        #expect(fourth.withStateLock { $0.teardowns.count } == 1)
        let fifth = DependencyContainer()
        fifth.setValue(1, forKey: "a")
        #expect((fifth.getValue(forKey: "a") as Int?) == 1)
    }

    // MARK: - reset, removeAll, shutdown

    @Test func resetKeepsValuesAndDropsDecorationsSharedTeardownsAndArguments() {
        let container = DependencyContainer()
        let counter = Counter()
        container.setValue(counter, forKey: "saTeardowns")
        container.setValue("kept", forKey: "v")
        container.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
        let shared = container.saShared()
        let family = container.saFamily(1)
        _ = container.saTorn()
        container.reset()
        #expect((container.getValue(forKey: "v") as String?) == "kept")
        #expect(container.saPlain().source == "plain")
        #expect(container.saShared() !== shared)
        #expect(container.saFamily(1) !== family)
        container.withStateLock { state in
            #expect(!state.hasDecorations)
            #expect(state.teardowns.isEmpty)
        }
        container.shutdown()
        #expect(counter.count == 0, "reset kept a teardown of an instance it dropped")
        _ = container.saTorn()
        container.shutdown()
        #expect(counter.count == 1)
        container.shutdown()
        #expect(counter.count == 1)
        #expect((container.getValue(forKey: "v") as String?) == "kept")
    }

    @Test func shutdownKeepsValuesDecorationsAndOverridesButDropsArguments() {
        let container = DependencyContainer()
        container.setValue("kept", forKey: "v")
        container.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
        let one = container.saFamily(1)
        let shared = container.saSharedFamily(2)
        container.shutdown()
        #expect((container.getValue(forKey: "v") as String?) == "kept")
        #expect(container.saPlain().source == "decorated")
        #expect(container.withStateLock { $0.hasArguments } == false || container.saFamily(1) !== one)
        #expect(container.saFamily(1) !== one)
        _ = shared
        // A family override after shutdown drops only what was built since.
        let rebuilt = container.saFamily(3)
        container.override(\.saFamily) { n in SAPart("override", argument: n) }
        #expect(container.saFamily(3) !== rebuilt)
        #expect(container.saFamily(3).source == "override")
        container.reset(\.saFamily)
        #expect(container.saFamily(3).source == "family")
    }

    /// removeAll empties only the values: everything else in the object stays.
    @Test func removeAllLeavesTheOtherTables() {
        let container = DependencyContainer()
        container.setValue("v", forKey: "v")
        container.decorate(\.saPlain) { SAPart("decorated", inner: $0) }
        let shared = container.saShared()
        let family = container.saFamily(1)
        container.removeAll()
        #expect((container.getValue(forKey: "v") as String?) == nil)
        #expect(container.saPlain().source == "decorated")
        #expect(container.saShared() === shared)
        #expect(container.saFamily(1) === family)
        container.override(\.saFamily) { n in SAPart("override", argument: n) }
        #expect(container.saFamily(1).source == "override")
    }

    // MARK: - Nothing released under the lock

    /// A stored value whose deinit reads a value and resolves from the same container:
    /// released by a replacing setValue, removeValue, removeAll and the container's end.
    @Test(arguments: ["setValue", "removeValue", "removeAll"])
    func aValueWhoseDeinitUsesTheContainerIsReleasedAfterUnlocking(drop: String) async {
        let released = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            do {
                let value = SAHooked(1)
                value.hook.set {
                    let read: String? = container.getValue(forKey: "other")
                    #expect(read == (drop == "removeAll" ? nil : "o"))
                    _ = container.saPlain()
                    container.setValue(2, forKey: "fromDeinit")
                    released.increment()
                }
                container.setValue("o", forKey: "other")
                container.setValue(value, forKey: "hooked")
            }
            switch drop {
            case "setValue": container.setValue("replaced", forKey: "hooked")
            case "removeValue": container.removeValue(forKey: "hooked")
            default: container.removeAll()
            }
            #expect(released.count == 1)
            if drop != "removeAll" { #expect((container.getValue(forKey: "fromDeinit") as Int?) == 2) }
        }
        #expect(finished, "a stored value's deinit deadlocked (\(drop))")
    }

    /// A child's values go with the child, after its parent's lock is free: a value whose
    /// deinit resolves from the parent.
    @Test func aChildsValueWhoseDeinitUsesTheParentIsReleasedAfterUnlocking() async {
        let released = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let parent = DependencyContainer()
            do {
                let child = DependencyContainer(scopeOf: parent)
                let value = SAHooked(1)
                value.hook.set {
                    _ = parent.saPlain()
                    parent.setValue(1, forKey: "x")
                    released.increment()
                }
                child.setValue(value, forKey: "hooked")
                child.decorate(\.saPlain) { SAPart("d", inner: $0) }
                _ = child.saPlain()
            }
            #expect(released.count == 1)
        }
        #expect(finished)
    }

    /// A decoration capturing an object whose deinit resolves from the container, dropped
    /// by reset(), by reset of its key, and by a family reset.
    @Test(arguments: ["reset", "resetKey"])
    func aDecorationsCaptureIsReleasedAfterUnlocking(drop: String) async {
        let released = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            do {
                let captured = SAHooked(1)
                captured.hook.set {
                    _ = container.saPlain()
                    _ = container.saShared()
                    released.increment()
                }
                container.decorate(\.saPlain) { base in withExtendedLifetime(captured) { SAPart("decorated", inner: base) } }
            }
            #expect(container.saPlain().source == "decorated")
            if drop == "reset" { container.reset() } else { container.reset(\.saPlain) }
            #expect(released.count == 1)
            #expect(container.saPlain().source == "plain")
        }
        #expect(finished, "a decoration's capture deadlocked (\(drop))")
    }

    /// A teardown capturing an object whose deinit resolves from the container, dropped
    /// without running by reset(), by reset of its key, or run and released by shutdown().
    @Test(arguments: ["reset", "resetKey", "shutdown"])
    func aTeardownsCaptureIsReleasedAfterUnlocking(drop: String) async {
        let released = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            let ran = Counter()
            container.setValue(ran, forKey: "saTeardowns")
            do {
                let captured = SAHooked(1)
                captured.hook.set {
                    _ = container.saPlain()
                    container.setValue(1, forKey: "fromDeinit")
                    released.increment()
                }
                container.setValue(captured, forKey: "saHook")
                _ = container.saTornHooked()
                container.removeValue(forKey: "saHook")
            }
            #expect(released.count == 0, "the teardown does not hold its capture")
            switch drop {
            case "reset": container.reset()
            case "resetKey": container.reset(\.saTornHooked)
            default: container.shutdown()
            }
            #expect(ran.count == (drop == "shutdown" ? 1 : 0))
            #expect(released.count == 1)
            container.shutdown()
            #expect(ran.count == (drop == "shutdown" ? 1 : 0))
        }
        #expect(finished, "a teardown's capture deadlocked (\(drop))")
    }

    /// A family argument whose deinit resolves from the container, kept in the
    /// `arguments` table and the shared instances, dropped by a family override, a family
    /// reset, reset() and shutdown().
    @Test(arguments: ["override", "familyReset", "reset", "shutdown"])
    func aSharedFamilyArgumentIsReleasedAfterUnlocking(drop: String) async {
        let released = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            var held: SAPart?
            do {
                let token = TableAttackToken(7)
                token.hook.set {
                    _ = container.saPlain()
                    released.increment()
                }
                held = container.tableAttackSharedTokenUser(token)
                #expect(held?.argument == 7)
            }
            switch drop {
            case "override": container.override(\.tableAttackSharedTokenUser) { t in SAPart("o", argument: t.id) }
            case "familyReset": container.reset(\.tableAttackSharedTokenUser)
            case "reset": container.reset()
            default:
                // A shared instance still held is its holder's: shutdown keeps it filed, with
                // its argument, and forgets both once the holder has let go.
                container.shutdown()
                #expect(released.count == 0, "shutdown forgot a shared instance still held")
                held = nil
                container.shutdown()
            }
            #expect(released.count == 1, "the container still holds a dropped shared family argument (\(drop))")
            withExtendedLifetime(held) {}
        }
        #expect(finished, "a shared family argument's deinit deadlocked (\(drop))")
    }

    // MARK: - Scopes: learned own keys and stale handings

    /// A scope learns that the app-wide `saY` is built from its own `saX`; the app's reset
    /// leaves that learned; the scope's own change forgets it.
    @Test func aScopesLearnedOwnSurvivesTheAppsResetAndGoesWithItsOwnChange() {
        let app = DependencyContainer()
        let session = DependencyContainer(scopeOf: app)
        let appY = app.saY()
        session.override(\.saX) { SAPart("session x") }
        let sessionY = session.saY()
        #expect(sessionY !== appY)
        #expect(sessionY.inner?.source == "session x")
        #expect(session.withStateLock { $0.hasLearnedOwn } || session.saY() === sessionY)
        app.reset()
        let afterReset = session.saY()
        #expect(afterReset.inner?.source == "session x", "after the app's reset the scope served the app's y")
        #expect(afterReset !== app.saY())
        session.reset(\.saX)
        #expect(session.withStateLock { $0.learnedOwn.isEmpty })
        let plain = session.saY()
        #expect(plain.inner?.source == "app x")
        #expect(plain === app.saY())
    }

    /// An app override and an app reset that reach a request through a session.
    @Test func anAppChangeReachesARequestThroughItsSession() {
        let (app, session, request) = appSessionAndRequest()
        let first = request.saY()
        #expect(first === app.saY())
        app.override(\.saX) { SAPart("app override") }
        #expect(request.saY().inner?.source == "app override")
        session.override(\.saX) { SAPart("session x") }
        #expect(request.saY().inner?.source == "session x")
        app.reset()
        #expect(request.saY().inner?.source == "session x")
        session.reset()
        #expect(request.saY().inner?.source == "app x")
        #expect(app.withStateLock { !$0.hasStaleUnderWay })
        #expect(session.withStateLock { !$0.hasStaleUnderWay })
    }
}

extension DependencyContainer {
    var tableAttackSharedTokenUser: ProviderFamily<TableAttackToken, SAPart> {
        shared { (token: TableAttackToken) in SAPart("shared token", argument: token.id) }
    }
}
