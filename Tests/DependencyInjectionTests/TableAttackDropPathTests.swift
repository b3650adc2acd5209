import DependencyInjection
import Foundation
import Testing

/// A singleton that, when released, resolves from the container that built it (taking its
/// lock), then counts its release.
final class TableAttackProbe: @unchecked Sendable {
    // @unchecked: `container` is written once, in init.
    weak var container: DependencyContainer?
    let number: Int
    let deinits: Counter
    let resolvedInDeinit: Counter
    init(_ container: DependencyContainer, _ number: Int) {
        self.container = container
        self.number = number
        self.deinits = container.getValue(forKey: "tableAttack.deinits") ?? Counter()
        self.resolvedInDeinit = container.getValue(forKey: "tableAttack.resolved") ?? Counter()
    }
    deinit {
        if let container {
            _ = container.tableAttackDep()
            _ = container.instanceIfBuilt(\.tableAttackP1)
            resolvedInDeinit.increment()
        }
        deinits.increment()
    }
}

extension DependencyContainer {
    var tableAttackDep: Provider<String> { factory { "dep" } }
    var tableAttackP1: Provider<TableAttackProbe> { singleton { TableAttackProbe(self, 1) } }
    var tableAttackP2: Provider<TableAttackProbe> {
        singleton {
            _ = self.tableAttackDep()
            return TableAttackProbe(self, 2)
        }
    }
    var tableAttackP3: Provider<TableAttackProbe> { singleton { TableAttackProbe(self, 3) } }
    var tableAttackS1: Provider<TableAttackProbe> { scoped { TableAttackProbe(self, 11) } }
    var tableAttackS2: Provider<TableAttackProbe> {
        scoped {
            _ = self.tableAttackDep()
            return TableAttackProbe(self, 12)
        }
    }
    var tableAttackS3: Provider<TableAttackProbe> { scoped { TableAttackProbe(self, 13) } }

    /// A scoped instance built from an app singleton.
    var tableAttackScopedUser: Provider<TableAttackUser> { scoped { TableAttackUser(self.tableAttackAppA()) } }
    var tableAttackAppA: Provider<TableAttackMarker> { singleton { TableAttackMarker(100) } }
    var tableAttackAppB: Provider<TableAttackMarker> { singleton { TableAttackMarker(101) } }
    var tableAttackAppC: Provider<TableAttackMarker> { singleton { TableAttackMarker(102) } }

    var tableAttackT1: Provider<MailResource> {
        singleton { MailResource("t1", log: self.shutdownLog) }.onShutdown { $0.close() }
    }
    var tableAttackT2: Provider<MailResource> { singleton { MailResource("t2", log: self.shutdownLog) } }
    var tableAttackT3: Provider<MailResource> {
        singleton { MailResource("t3", log: self.shutdownLog) }.onShutdown { $0.close() }
    }
    subscript(tableAttackParam id: Int) -> Provider<TableAttackMarker> { singleton(id) { TableAttackMarker(id) } }
}

final class TableAttackUser: Sendable {
    let app: TableAttackMarker
    init(_ app: TableAttackMarker) { self.app = app }
}

private func configured(_ container: DependencyContainer, _ deinits: Counter, _ resolved: Counter) {
    container.setValue(deinits, forKey: "tableAttack.deinits")
    container.setValue(resolved, forKey: "tableAttack.resolved")
}

/// Builds the first `count` of P1, P2, P3 (or S1, S2, S3 when `scoped`) in `container`.
private func build(_ count: Int, in container: DependencyContainer, scoped: Bool = false) -> [ObjectIdentifier] {
    let all: [KeyPath<DependencyContainer, Provider<TableAttackProbe>>] =
        scoped ? [\.tableAttackS1, \.tableAttackS2, \.tableAttackS3] : [\.tableAttackP1, \.tableAttackP2, \.tableAttackP3]
    return all.prefix(count).map { ObjectIdentifier(container[keyPath: $0]()) }
}

/// Every drop path of a container that keeps one, two or three singletons (the inline
/// entries, and the growth to storage): what must go goes, after unlocking; what must stay
/// stays the same instance.
@Suite struct TableAttackDropPathTests {
    @Test(arguments: [1, 2, 3], ["reset P1", "reset P2", "reset all", "shutdown", "override dep", "container gone"])
    func aContainerWithFewSingletonsDropsTheRightOnes(count: Int, drop: String) async throws {
        let deinits = Counter(), resolved = Counter()
        let expected = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
            var container: DependencyContainer? = DependencyContainer()
            configured(container!, deinits, resolved)
            let before = build(count, in: container!)
            var dropped: Set<Int> = []
            switch drop {
            case "reset P1": container!.reset(\.tableAttackP1); dropped = [1]
            case "reset P2": container!.reset(\.tableAttackP2); dropped = count >= 2 ? [2] : []
            case "reset all": container!.reset(); dropped = Set(1...count)
            case "shutdown": container!.shutdown(); dropped = Set(1...count)
            case "override dep": container!.override(\.tableAttackDep) { "stub" }; dropped = count >= 2 ? [2] : []
            default: container = nil; dropped = Set(1...count)
            }
            expected.append(dropped.count)
            if let container {
                #expect(deinits.count == dropped.count, "\(drop) with \(count)")
                let after = build(count, in: container)
                for index in 0..<count {
                    let same = before[index] == after[index]
                    // An ObjectIdentifier may be reused by a new instance after a drop; only
                    // check the ones that must have stayed.
                    if !dropped.contains(index + 1) { #expect(same, "P\(index + 1) was rebuilt by \(drop) with \(count)") }
                }
                #expect(container.instanceIfBuilt(\.tableAttackP1) != nil)
            }
        }
        try #require(finished, "a singleton's deinit waited for its container's lock (\(drop), \(count))")
        if drop == "container gone" { #expect(deinits.count == expected.values.first) }
    }

    /// A child keeps its own singletons; an override in the parent reaches them.
    @Test(arguments: [1, 2, 3], ["parent override", "parent reset", "child gone"])
    func aChildWithFewSingletonsDropsWhatTheParentChanged(count: Int, change: String) async throws {
        let deinits = Counter(), resolved = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let parent = DependencyContainer()
            var child: DependencyContainer? = DependencyContainer(parent: parent)
            configured(parent, deinits, resolved)
            let before = build(count, in: child!)
            #expect(parent.instanceIfBuilt(\.tableAttackP1) == nil, "a child must keep its own singletons")
            switch change {
            case "parent override":
                parent.override(\.tableAttackDep) { "stub" }
                #expect(deinits.count == (count >= 2 ? 1 : 0))
                let after = build(count, in: child!)
                #expect(before[0] == after[0])
                if count == 3 { #expect(before[2] == after[2]) }
                if count >= 2 { #expect(child!.tableAttackP2().number == 2) }
            case "parent reset":
                // The child built nothing from the parent's overrides: it keeps everything.
                parent.reset()
                #expect(deinits.count == 0)
                #expect(build(count, in: child!) == before)
            default:
                child = nil
                #expect(deinits.count == count)
            }
            withExtendedLifetime(child) {}
        }
        try #require(finished, "a child's singleton's deinit waited for a lock (\(change), \(count))")
    }

    /// A scope's own (scoped) instances, one to three of them, dropped by an app override
    /// of what one used, by the scope's reset, or with the scope.
    @Test(arguments: [1, 2, 3], ["app override", "scope reset", "scope gone", "scope shutdown"])
    func aScopeWithFewInstancesDropsTheRightOnes(count: Int, change: String) async throws {
        let deinits = Counter(), resolved = Counter()
        let finished = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            configured(app, deinits, resolved)
            var scope: DependencyContainer? = DependencyContainer(scopeOf: app)
            let before = build(count, in: scope!, scoped: true)
            #expect(build(count, in: scope!, scoped: true) == before)
            switch change {
            case "app override":
                app.override(\.tableAttackDep) { "stub" }
                #expect(deinits.count == (count >= 2 ? 1 : 0))
                let after = build(count, in: scope!, scoped: true)
                #expect(before[0] == after[0])
                if count == 3 { #expect(before[2] == after[2]) }
            case "scope reset":
                scope!.reset()
                #expect(deinits.count == count)
            case "scope shutdown":
                scope!.shutdown()
                #expect(deinits.count == count)
            default:
                scope = nil
                #expect(deinits.count == count)
            }
            withExtendedLifetime(scope) {}
        }
        try #require(finished, "a scope's instance's deinit waited for a lock (\(change), \(count))")
    }

    /// The app keeps one to three singletons (inline, then in storage); a scope built a
    /// scoped instance from the first. An app reset must reach the scope.
    @Test(arguments: [1, 2, 3], ["app reset", "app reset one", "app shutdown"])
    func aScopeDropsWhatItBuiltFromAnAppWithFewSingletons(appCount: Int, change: String) {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let user = scope.tableAttackScopedUser()
        if appCount >= 2 { _ = app.tableAttackAppB() }
        if appCount >= 3 { _ = app.tableAttackAppC() }
        let appA = app.tableAttackAppA()
        #expect(user.app === appA, "the scope shares the app's singleton")
        let appB = appCount >= 2 ? app.tableAttackAppB() : nil
        switch change {
        case "app reset": app.reset()
        case "app reset one": app.reset(\.tableAttackAppA)
        default: app.shutdown()
        }
        let rebuilt = app.tableAttackAppA()
        #expect(rebuilt !== appA)
        let again = scope.tableAttackScopedUser()
        if change == "app shutdown" {
            // Shutdown says scopes keep what they built (a later change rebuilds); only
            // note what happens.
            _ = again
        } else {
            #expect(again !== user, "the scope kept an instance built from a dropped app singleton (\(change), \(appCount))")
            #expect(again.app === rebuilt)
        }
        if change == "app reset one", let appB { #expect(app.tableAttackAppB() === appB) }
    }

    /// Teardowns of one to three singletons (the middle one without a teardown) run
    /// most recently built first, exactly once.
    @Test(arguments: [1, 2, 3])
    func teardownsOfFewSingletonsRunInReverseOnce(count: Int) {
        let container = DependencyContainer()
        let log = Collected<String>()
        container.setValue(log, forKey: "shutdownLog")
        let makers: [() -> MailResource] = [
            { container.tableAttackT1() }, { container.tableAttackT2() }, { container.tableAttackT3() },
        ]
        let all = makers.prefix(count).map { $0() }
        container.shutdown()
        container.shutdown()
        let expected = ["t3", "t1"].filter { name in all.contains { $0.name == name } }
        #expect(log.values == expected)
        for resource in all { #expect(resource.closeCount == (resource.name == "t2" ? 0 : 1)) }
        // Built anew after shutdown, torn down by the next.
        let t1 = container.tableAttackT1()
        #expect(!all.contains { $0 === t1 })
        container.shutdown()
        #expect(t1.closeCount == 1)
    }

    /// The inline entries hold keys with arguments (parameterized singletons): each stays
    /// found, replaced and dropped exactly, through removal of the first and growth.
    @Test func parameterizedSingletonsThroughTheInlineEntries() {
        let container = DependencyContainer()
        let a = container[tableAttackParam: 1]()
        let b = container[tableAttackParam: 2]()
        #expect(container[tableAttackParam: 1]() === a && container[tableAttackParam: 2]() === b)
        container.reset(\.[tableAttackParam: 1])
        #expect(container.instanceIfBuilt(\.[tableAttackParam: 1]) == nil)
        #expect(container.instanceIfBuilt(\.[tableAttackParam: 2]) === b)
        let c = container[tableAttackParam: 3]()  // fills the first slot again
        let a2 = container[tableAttackParam: 1]()  // grows
        #expect(a2 !== a)
        #expect(container[tableAttackParam: 2]() === b && container[tableAttackParam: 3]() === c)
        #expect(container[tableAttackParam: 1]() === a2)
        container.reset(\.[tableAttackParam: 2])
        #expect(container[tableAttackParam: 3]() === c && container[tableAttackParam: 1]() === a2)
        #expect(container.instanceIfBuilt(\.[tableAttackParam: 2]) == nil)
    }

    /// With a tracer (the slow path, through `claim`), one to three kept singletons are
    /// reported cached, and instanceIfBuilt sees each, before and after the first is reset.
    @Test(arguments: [1, 2, 3])
    func tracerAndInstanceIfBuiltSeeFewSingletons(count: Int) {
        let container = DependencyContainer()
        let deinits = Counter(), resolved = Counter()
        configured(container, deinits, resolved)
        let before = build(count, in: container)
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        #expect(build(count, in: container) == before)
        #expect(batches.values.map { $0.map(\.outcome) } == Array(repeating: [.cached], count: count))
        container.reset(\.tableAttackP1)
        #expect(container.instanceIfBuilt(\.tableAttackP1) == nil)
        if count >= 2 { #expect(container.instanceIfBuilt(\.tableAttackP2).map(ObjectIdentifier.init) == before[1]) }
        if count >= 3 { #expect(container.instanceIfBuilt(\.tableAttackP3).map(ObjectIdentifier.init) == before[2]) }
        let seen = batches.values.count
        let rebuilt = build(count, in: container)
        #expect(batches.values.dropFirst(seen).map { $0.map(\.outcome) } == [[.built]] + Array(repeating: [.cached], count: count - 1))
        #expect(Array(rebuilt.dropFirst()) == Array(before.dropFirst()))
        container.tracer = nil
        #expect(build(count, in: container) == rebuilt)
    }
}
