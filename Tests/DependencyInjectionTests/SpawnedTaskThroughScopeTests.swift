import DependencyInjection
import Foundation
import Testing

final class SpawnedThroughScopeService: Sendable {
    let tag: Int
    init(tag: Int) { self.tag = tag }
}

final class SpawnedThroughScopeProbeBox: Sendable {
    let probe = SpawnedTaskProbe<SpawnedThroughScopeService>()
    let started = AsyncLatch()
}

extension DependencyContainer {
    var spawnedThroughScopeProbe: SpawnedThroughScopeProbeBox? { getValue(forKey: "spawned-through-scope.probe") }

    /// An app-wide singleton whose closure spawns a task that resolves, through `self`
    /// (which may be a scope), the singleton being built.
    var spawnedThroughScopeService: Provider<SpawnedThroughScopeService> {
        singleton {
            if let box = self.spawnedThroughScopeProbe {
                Task {
                    box.probe.asking.open()
                    box.probe.resolved.put(self.spawnedThroughScopeService())
                }
            }
            return SpawnedThroughScopeService(tag: 1)
        }
    }

    var spawnedThroughScopeUser: Provider<String> { unimplemented() }

    /// A scoped instance whose construction spawns a task asking for the scoped instance
    /// itself, through the scope.
    var spawnedThroughScopeScoped: Provider<SpawnedThroughScopeService> {
        scoped {
            if let box = self.spawnedThroughScopeProbe {
                Task {
                    box.probe.asking.open()
                    box.probe.resolved.put(self.spawnedThroughScopeScoped())
                }
            }
            return SpawnedThroughScopeService(tag: 2)
        }
    }
}

@Suite struct SpawnedTaskThroughScopeTests {
    @Test func aTaskSpawnedByAnAppSingletonFirstAskedByAScopeGetsTheFinishedInstance() async {
        let app = DependencyContainer()
        let box = SpawnedThroughScopeProbeBox()
        app.setValue(box, forKey: "spawned-through-scope.probe")
        let scope = DependencyContainer(scopeOf: app)
        var built: SpawnedThroughScopeService?
        let wrong = Counter()
        let finished = await endsWithoutHanging {
            let service = scope.spawnedThroughScopeService()
            let fromTask = await box.probe.resolved.value()
            if fromTask !== service { wrong.increment() }
            if app.spawnedThroughScopeService() !== service { wrong.increment() }
        }
        #expect(finished, "the spawned task hung")
        #expect(wrong.count == 0, "the spawned task or the app got another instance")
        built = app.instanceIfBuilt(\.spawnedThroughScopeService)
        #expect(built != nil)
        #expect(scope.spawnedThroughScopeService() === built)
    }

    @Test func aTaskSpawnedByAScopedConstructionGetsTheScopesInstance() async {
        let app = DependencyContainer()
        let box = SpawnedThroughScopeProbeBox()
        app.setValue(box, forKey: "spawned-through-scope.probe")
        let scope = DependencyContainer(scopeOf: app)
        let wrong = Counter()
        let finished = await endsWithoutHanging {
            let service = scope.spawnedThroughScopeScoped()
            let fromTask = await box.probe.resolved.value()
            if fromTask !== service { wrong.increment() }
            if scope.spawnedThroughScopeScoped() !== service { wrong.increment() }
        }
        #expect(finished, "the spawned task hung")
        #expect(wrong.count == 0, "the spawned task got another scoped instance")
    }

    @Test func manyScopesAskForAnAppSingletonWhoseTaskAsksThroughTheFirstScope() async {
        let app = DependencyContainer()
        let box = SpawnedThroughScopeProbeBox()
        app.setValue(box, forKey: "spawned-through-scope.probe")
        let mismatches = Counter()
        let finished = await endsWithoutHanging {
            await withTaskGroup(of: SpawnedThroughScopeService.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        let scope = DependencyContainer(scopeOf: app)
                        return scope.spawnedThroughScopeService()
                    }
                }
                var first: SpawnedThroughScopeService?
                for await service in group {
                    if first == nil { first = service } else if first !== service { mismatches.increment() }
                }
                let fromTask = await box.probe.resolved.value()
                if fromTask !== first { mismatches.increment() }
            }
        }
        #expect(finished, "hung")
        #expect(mismatches.count == 0)
    }
}

final class SpawnedThroughScopeLeaf: Sendable {
    let source: String
    init(_ source: String) { self.source = source }
}

final class SpawnedThroughScopeBuilt: Sendable {
    let leaf: SpawnedThroughScopeLeaf
    init(_ leaf: SpawnedThroughScopeLeaf) { self.leaf = leaf }
}

extension DependencyContainer {
    var spawnedThroughScopeLeaf: Provider<SpawnedThroughScopeLeaf> { singleton { SpawnedThroughScopeLeaf("app") } }
    var spawnedThroughScopeGate: ConstructionGate? { getValue(forKey: "spawned-through-scope.gate") }
    var spawnedThroughScopeResult: Handoff<SpawnedThroughScopeBuilt>? { getValue(forKey: "spawned-through-scope.result") }
    /// An app-wide singleton built from `spawnedThroughScopeLeaf`, whose closure first spawns a task asking
    /// for it through `self`, then waits until that task asks, then resolves the leaf.
    var spawnedThroughScopeBuilt: Provider<SpawnedThroughScopeBuilt> {
        singleton {
            if let gate = self.spawnedThroughScopeGate, let result = self.spawnedThroughScopeResult {
                Task {
                    gate.entered.signal()
                    result.put(self.spawnedThroughScopeBuilt())
                }
                gate.entered.wait()
            }
            return SpawnedThroughScopeBuilt(self.spawnedThroughScopeLeaf())
        }
    }
}

@Suite struct SpawnedTaskInAnOverridingScopeTests {
    @Test func aTaskSpawnedByASingletonTheScopeMustBuildItselfGetsTheScopesCopy() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.spawnedThroughScopeLeaf) { SpawnedThroughScopeLeaf("scope") }
        let gate = ConstructionGate()
        let result = Handoff<SpawnedThroughScopeBuilt>()
        scope.setValue(gate, forKey: "spawned-through-scope.gate")
        scope.setValue(result, forKey: "spawned-through-scope.result")
        let wrong = Collected<String>()
        let finished = await endsWithoutHanging {
            let built = await Task.detached { scope.spawnedThroughScopeBuilt() }.value
            let fromTask = await result.value()
            if built.leaf.source != "scope" { wrong.append("the scope's copy has the \(built.leaf.source) leaf") }
            if fromTask.leaf.source != "scope" { wrong.append("the task got one with the \(fromTask.leaf.source) leaf") }
            if fromTask !== built { wrong.append("the task got another instance") }
            if scope.spawnedThroughScopeBuilt() !== built { wrong.append("the scope serves another instance") }
        }
        #expect(finished, "hung")
        #expect(wrong.values.isEmpty, "\(wrong.values)")
    }
}
