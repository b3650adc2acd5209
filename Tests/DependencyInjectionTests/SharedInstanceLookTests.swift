import Foundation
import Testing
@testable import DependencyInjection

/// A shared instance whose `deinit` uses the container it was asked for: released under
/// that container's lock, it waits forever for the lock its own thread holds.
final class LookedAtShared: @unchecked Sendable {
    // @unchecked: set once, in `init`.
    let container: DependencyContainer
    let builtFrom: String
    init(_ container: DependencyContainer, builtFrom: String) { (self.container, self.builtFrom) = (container, builtFrom) }
    deinit { _ = container.getValue(forKey: "anything") as Int? }
}

final class LookedAtPart: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

extension DependencyContainer {
    /// What the app container builds `lookedAtShared` from besides `lookedAtScoped`.
    var lookedAtAppPart: Provider<LookedAtPart> { singleton { LookedAtPart("app") } }
    /// What a scope overrides, so that it builds its own `lookedAtShared`.
    var lookedAtScoped: Provider<LookedAtPart> { singleton { LookedAtPart("app's") } }
    /// Built from `lookedAtScoped`, and in the app container from `lookedAtAppPart` too: an
    /// override of `lookedAtAppPart` in the app names the scope's instance as stale, and
    /// the scope then looks whether it keeps one of its own.
    var lookedAtShared: Provider<LookedAtShared> {
        shared {
            let scoped = self.lookedAtScoped()
            let inScope: Bool = self.getValue(forKey: "lookedAt.inScope") ?? false
            return LookedAtShared(self, builtFrom: inScope ? scoped.name : self.lookedAtAppPart().name)
        }
    }
}

/// A container holds its shared instances weakly, and telling whether one lives takes a
/// strong reference to it, under the container's lock. That reference must outlive the
/// lock: another thread may let go of the instance meanwhile, and the last release would
/// then run its `deinit` under the lock (``ContainerState/keepsInstance(of:lookedAt:)``).
@Suite struct SharedInstanceLookTests {
    /// The look hands its reference to the caller, which lets go of it after unlocking:
    /// the instance outlives its last other reference until then.
    @Test func theLookAtASharedInstanceHandsItsReferenceOutOfTheLock() {
        let container = DependencyContainer()
        var instance: LookedAtShared? = container.lookedAtShared()
        weak let watched = instance
        let key = container.lookedAtShared.key
        var lookedAt: AnyObject?
        let kept = container.withStateLock { $0.keepsInstance(of: key, lookedAt: &lookedAt) }
        #expect(kept)
        instance = nil
        #expect(watched != nil, "the look let go of its reference under the lock")
        lookedAt = nil
        #expect(watched == nil, "the caller's reference kept the instance after it went")
    }

    /// A shared instance no one holds any more is not kept, and the look hands out nothing.
    @Test func aDeadSharedInstanceIsNotKeptAndTheLookHandsOutNothing() {
        let container = DependencyContainer()
        _ = container.lookedAtShared()
        var lookedAt: AnyObject?
        #expect(!container.withStateLock { $0.keepsInstance(of: container.lookedAtShared.key, lookedAt: &lookedAt) })
        #expect(lookedAt == nil)
        #expect(!container.keepsInstanceNow(of: container.lookedAtShared.key))
    }

    /// A scope keeps its own shared instance, built from what it overrides, while the app
    /// container's changes name it stale: the scope's users of it stay, and so does the
    /// instance while someone holds it.
    @Test func aScopeKeepsItsOwnSharedInstanceThroughAnAppChange() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.setValue(true, forKey: "lookedAt.inScope")
        scope.override(\.lookedAtScoped) { LookedAtPart("scope's") }
        let own = scope.lookedAtShared()
        #expect(own.builtFrom == "scope's")
        _ = app.lookedAtShared()
        app.override(\.lookedAtAppPart) { LookedAtPart("app, overridden") }
        #expect(scope.lookedAtShared() === own)
    }

    /// The race itself: one thread keeps making and dropping the scope's own shared
    /// instance, whose `deinit` uses the scope, while another overrides what the app's
    /// instance is built from, which makes the scope look at its own under its lock. The
    /// threads start together behind a barrier; a `deinit` run under the scope's lock hangs
    /// the test, which the hang guard reports. The window is a few instructions wide, so
    /// one run catches a regression only now and then.
    @Test func aSharedInstanceDyingWhileItsScopeLooksAtIt() async {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        scope.setValue(true, forKey: "lookedAt.inScope")
        scope.override(\.lookedAtScoped) { LookedAtPart("scope's") }
        #expect(await finishesWithoutHangingOffThePool {
            concurrently(threads: 3) { index in
                switch index {
                case 0:
                    for _ in 0..<20_000 { _ = scope.lookedAtShared() }
                case 1:
                    for round in 0..<2_000 {
                        withExtendedLifetime(app.lookedAtShared()) {}
                        app.override(\.lookedAtAppPart) { LookedAtPart("app \(round)") }
                    }
                default:
                    // A scope's handover looks at the app container's instance under the
                    // app container's lock.
                    for _ in 0..<2_000 {
                        let request = DependencyContainer(scopeOf: app)
                        request.override(\.lookedAtScoped) { LookedAtPart("request's") }
                        _ = request.lookedAtShared()
                    }
                }
            }
        }, "a shared instance's deinit ran under its container's lock")
    }
}

extension DependencyContainer {
    /// Whether this container keeps an instance of `key` right now
    /// (``ContainerState/keepsInstance(of:lookedAt:)``), letting go of the look's reference
    /// to a shared instance after unlocking, as the engine does.
    ///
    /// ```swift
    /// #expect(!request.keepsInstanceNow(of: key), "the request keeps its copy")
    /// ```
    func keepsInstanceNow(of key: RegistrationKey) -> Bool {
        var lookedAt: AnyObject?
        defer { withExtendedLifetime(lookedAt) {} }
        return withStateLock { $0.keepsInstance(of: key, lookedAt: &lookedAt) }
    }
}
