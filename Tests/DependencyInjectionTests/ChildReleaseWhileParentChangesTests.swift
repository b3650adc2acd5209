import DependencyInjection
import Foundation
import Testing

/// Runs an action with a container when released.
final class ParentChangingDeinitAction: Sendable {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}

final class ParentChangingHeld: Sendable {
    let hook: ParentChangingDeinitAction?
    init(_ hook: ParentChangingDeinitAction?) { self.hook = hook }
}

extension DependencyContainer {
    var parentChangingHook: (@Sendable (DependencyContainer) -> Void)? { getValue(forKey: "parent-changing.hook") }
    var parentChangingLeaf: Provider<ParentChangingHeld> { singleton { ParentChangingHeld(nil) } }
    /// A singleton whose deinit runs the hook stored in the container that built it.
    var parentChangingHeld: Provider<ParentChangingHeld> {
        singleton {
            _ = self.parentChangingLeaf()
            let hook = self.parentChangingHook
            let parent = self.getValue(forKey: "parent-changing.parent") as DependencyContainer?
            return ParentChangingHeld(ParentChangingDeinitAction { if let hook, let parent { hook(parent) } })
        }
    }
}

@Suite struct ChildReleaseWhileParentChangesTests {
    /// Children are released (without shutdown) while another thread overrides and resets
    /// the parent, and each child's singleton's deinit overrides, resets and resolves the parent.
    @Test func childrenGoingAwayWhoseSingletonsChangeTheParentWhileTheParentChanges() async {
        let parent = DependencyContainer()
        let deinits = Counter()
        parent.setValue(parent, forKey: "parent-changing.parent.self")
        let hook: @Sendable (DependencyContainer) -> Void = { parent in
            deinits.increment()
            parent.override(\.parentChangingLeaf) { ParentChangingHeld(nil) }
            _ = parent.parentChangingHeld()
            parent.reset(\.parentChangingLeaf)
            _ = DependencyContainer(parent: parent).parentChangingHeld()
        }
        parent.setValue(hook, forKey: "parent-changing.hook")
        let rounds = 300
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for round in 0..<rounds {
                switch thread {
                case 0, 1:
                    let child = DependencyContainer(parent: parent)
                    child.setValue(WeakParent(parent), forKey: "parent-changing.weak")
                    child.setValue(parent, forKey: "parent-changing.parent")
                    _ = child.parentChangingHeld()
                    if round % 2 == 0 { _ = DependencyContainer(scopeOf: child).parentChangingHeld() }
                // child released here
                case 2:
                    parent.override(\.parentChangingLeaf) { ParentChangingHeld(nil) }
                    _ = parent.parentChangingHeld()
                default:
                    parent.reset()
                    parent.setValue(hook, forKey: "parent-changing.hook")
                }
            }
        }, "hung")
        // The parent's own `parentChangingHeld` may also have run the hook; every child's ran it.
        #expect(deinits.count >= 2 * rounds)
        parent.removeValue(forKey: "parent-changing.parent.self")
    }

    /// A scope released while its app container shuts down on another thread, the scope's
    /// singleton copy's deinit resolving from the app: no resolution hangs. (Two
    /// resolutions of one app singleton there may give two instances: a shutdown on
    /// another thread may drop the first between them.)
    @Test func scopesGoingAwayWhileTheAppShutsDown() async {
        let app = DependencyContainer()
        let resolvedInDeinits = Counter()
        let hook: @Sendable (DependencyContainer) -> Void = { app in
            _ = app.parentChangingLeaf()
            resolvedInDeinits.increment()
        }
        app.setValue(hook, forKey: "parent-changing.hook")
        #expect(await concurrentlyOffThePool(threads: 4) { thread in
            for _ in 0..<300 {
                if thread < 3 {
                    let scope = DependencyContainer(scopeOf: app)
                    scope.setValue(app, forKey: "parent-changing.parent")
                    scope.override(\.parentChangingLeaf) { ParentChangingHeld(nil) }
                    _ = scope.parentChangingHeld()
                } else {
                    app.shutdown()
                }
            }
        }, "hung")
        #expect(resolvedInDeinits.count > 0)
    }
}

struct WeakParent: Sendable {
    weak var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
}
