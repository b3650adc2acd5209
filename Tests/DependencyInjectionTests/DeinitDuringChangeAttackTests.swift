import DependencyInjection
import Foundation
import Testing

// `deinit`s that use the container dropping them (an override, a reset, a shutdown, a scope
// or a world that goes): they resolve, override, reset and make children there, and get
// what the change installed, without a hang, and everything they make is freed.

/// Runs an action (with the container that built the instance) when an instance goes.
final class DropHook: @unchecked Sendable {
    private let lock = NSLock()
    private var action: (@Sendable (DependencyContainer?) -> Void)?
    private var repeats: Bool
    private(set) var fired = 0
    init(repeats: Bool = false, _ action: @escaping @Sendable (DependencyContainer?) -> Void) {
        self.action = action
        self.repeats = repeats
    }
    func fire(_ container: DependencyContainer?) {
        let a: (@Sendable (DependencyContainer?) -> Void)? = lock.withLock {
            fired += 1
            defer { if !repeats { action = nil } }
            return action
        }
        a?(container)
    }
    var count: Int { lock.withLock { fired } }
}

final class DropProbe: @unchecked Sendable {
    let gen: Int
    weak var container: DependencyContainer?
    let hook: DropHook?
    init(gen: Int, container: DependencyContainer?, hook: DropHook?) {
        (self.gen, self.container, self.hook) = (gen, container, hook)
    }
    deinit { hook?.fire(container) }
}

extension DependencyContainer {
    var dropProbeGeneration: Provider<ChurnClock> { singleton { ChurnClock(gen: 0) } }
    var dropProbe: Provider<DropProbe> {
        singleton { [weak self] in
            DropProbe(gen: self?.dropProbeGeneration().gen ?? -1, container: self, hook: self?.getValue(forKey: "hook"))
        }
    }
    var dropScopedProbe: Provider<DropProbe> {
        scoped { [weak self] in
            DropProbe(gen: self?.dropProbeGeneration().gen ?? -1, container: self, hook: self?.getValue(forKey: "hook"))
        }
    }
    var dropFactoryProbe: Provider<DropProbe> {
        factory { [weak self] in
            DropProbe(gen: self?.dropProbeGeneration().gen ?? -1, container: self, hook: self?.getValue(forKey: "hook"))
        }
    }
}

@Suite struct DeinitDuringChangeAttackTests {
    /// An override of what the singleton was built from drops it; its deinit, which runs
    /// before the override returns, resolves it again from the same container and gets one
    /// built from the new override.
    @Test func deinitResolvesTheSameSingletonDuringTheOverrideThatDropsIt() async {
        let seen = ChurnCell<[Int]>([])
        let ok = await finishesWithoutHangingOffThePool {
            for g in 1...200 {
                let c = DependencyContainer()
                c.setValue(DropHook { c in if let c { seen.mutate { $0.append(c.dropProbe().gen) } } }, forKey: "hook")
                _ = c.dropProbe()
                c.override(\.dropProbeGeneration) { ChurnClock(gen: g) }
                #expect(c.dropProbe().gen == g)
            }
        }
        #expect(ok)
        #expect(seen.get() == Array(1...200))
    }

    /// The dropped instance's deinit overrides another key, resets the container, creates a
    /// child and resolves there: nothing hangs, and the container ends consistent.
    @Test(arguments: 0..<4) func deinitChangesTheContainerThatDropsIt(kind: Int) async {
        let ok = await finishesWithoutHangingOffThePool {
            for g in 1...200 {
                let c = DependencyContainer()
                let childWeak = ChurnCell<ChurnWeak<DependencyContainer>?>(nil)
                c.setValue(DropHook(repeats: kind == 1) { c in
                    guard let c else { return }
                    switch kind {
                    case 0: c.override(\.dropProbeGeneration) { ChurnClock(gen: -g) }
                    case 1: c.reset()
                    case 2:
                        let child = DependencyContainer(parent: c)
                        childWeak.set(ChurnWeak(child))
                        _ = child.dropProbe()
                        child.override(\.dropProbeGeneration) { ChurnClock(gen: 7) }
                        _ = child.dropProbe()
                    default:
                        let scope = DependencyContainer(scopeOf: c)
                        childWeak.set(ChurnWeak(scope))
                        _ = scope.dropScopedProbe()
                        _ = scope.dropProbe()
                        scope.shutdown()
                    }
                }, forKey: "hook")
                _ = c.dropProbe()
                switch g % 3 {
                case 0: c.override(\.dropProbeGeneration) { ChurnClock(gen: g) }
                case 1: c.reset()
                default: c.shutdown()
                }
                let now = c.dropProbe().gen
                if kind == 0, g % 3 == 0 {
                    // The deinit's override came after the test's: it wins.
                    #expect(now == -g)
                }
                if kind == 1 {
                    #expect(now == 0)
                }
                c.reset()
                #expect(childWeak.get()?.object == nil)
            }
        }
        #expect(ok)
    }

    /// A scoped instance goes with its scope; its deinit makes a new scope of the same app and
    /// resolves the scoped registration there, overrides in the app, and resolves app singletons.
    @Test func scopedInstanceDeinitMakesAScopeOfTheAppWhileTheScopeGoes() async {
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            let made = ChurnCell(0)
            let weaks = ChurnCell<[ChurnWeak<DependencyContainer>]>([])
            concurrently(threads: 4) { index in
                for g in 0..<150 {
                    let hook = DropHook { [unowned app] _ in
                        let again = DependencyContainer(scopeOf: app)
                        weaks.mutate { $0.append(ChurnWeak(again)) }
                        _ = again.dropScopedProbe()   // built with no hook (app has none)
                        app.override(\.dropProbeGeneration) { ChurnClock(gen: g) }
                        _ = app.dropProbe()
                        made.mutate { $0 += 1 }
                    }
                    let scope = DependencyContainer(scopeOf: app)
                    weaks.mutate { $0.append(ChurnWeak(scope)) }
                    scope.setValue(hook, forKey: "hook")
                    _ = scope.dropScopedProbe()
                    if (g + index) % 2 == 0 { scope.shutdown() }
                }
            }
            #expect(made.get() == 600)
        }
        #expect(ok)
    }

    /// A world ends (its last reference goes at the end of `withMain`) while its singleton's
    /// deinit resolves from `main` (the parent) and makes a new world.
    @Test func worldEndingRunsDeinitsThatUseTheParent() async {
        let parent = DependencyContainer(parent: .mocks)
        let weaks = ChurnCell<[ChurnWeak<DependencyContainer>]>([])
        let instanceWeaks = ChurnCell<[ChurnWeak<DropProbe>]>([])
        let ok = await endsWithoutHanging {
            for g in 0..<200 {
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            let world = DependencyContainer(parent: parent)
                            weaks.mutate { $0.append(ChurnWeak(world)) }
                            world.setValue(DropHook { [unowned parent] _ in
                                let w2 = DependencyContainer(parent: parent)
                                weaks.mutate { $0.append(ChurnWeak(w2)) }
                                _ = w2.dropProbe()
                                _ = parent.dropProbe()
                                parent.override(\.dropProbeGeneration) { ChurnClock(gen: g) }
                            }, forKey: "hook")
                            DependencyContainer.withMain(world) {
                                let p = DependencyContainer.main.dropProbe()
                                instanceWeaks.mutate { $0.append(ChurnWeak(p)) }
                                _ = DependencyContainer.main.dropFactoryProbe()
                            }
                        }
                    }
                }
            }
        }
        #expect(ok)
        let live = weaks.get().filter { $0.object != nil }.count
        #expect(live == 0, "\(live) worlds alive")
        let liveI = instanceWeaks.get().filter { $0.object != nil }.count
        #expect(liveI == 0, "\(liveI) probes alive")
    }

    /// A parent's override drops what its children built; each child's instance deinit
    /// resolves the same key from its child, which must see the new override.
    @Test func childInstanceDeinitDuringParentOverrideSeesNewOverride() async {
        let wrong = ChurnCell<[String]>([])
        let ok = await finishesWithoutHangingOffThePool {
            let app = DependencyContainer()
            for g in 1...100 {
                var children: [DependencyContainer] = []
                for i in 0..<20 {
                    let child = i % 2 == 0 ? DependencyContainer(parent: app) : DependencyContainer(scopeOf: app)
                    child.setValue(DropHook { c in
                        guard let c else { return }
                        let gen = c.dropProbe().gen
                        if gen != g { wrong.mutate { $0.append("child \(i) round \(g): \(gen)") } }
                    }, forKey: "hook")
                    _ = child.dropProbe()
                    _ = child.dropScopedProbe()
                    children.append(child)
                }
                app.override(\.dropProbeGeneration) { ChurnClock(gen: g) }
                for child in children { #expect(child.dropProbe().gen == g) }
                for child in children { child.removeValue(forKey: "hook") }
                children.removeAll()
            }
        }
        #expect(ok)
        let w = wrong.get()
        #expect(w.isEmpty, "\(w.count): \(w.prefix(5))")
    }
}
