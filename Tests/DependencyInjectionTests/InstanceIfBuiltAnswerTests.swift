import DependencyInjection
import Foundation
import Testing

extension DependencyContainer {
    var promiseSource: Provider<ImageCache> { singleton { ImageCache() } }
    /// Asks whether `promiseSource` was built while it is built, and keeps nothing of the answer.
    var promiseAsksIfBuilt: Provider<ImageCache> {
        singleton {
            _ = self.instanceIfBuilt(\.promiseSource)
            return ImageCache()
        }
    }
    /// Resolves `promiseSource` while it is built: the control, which does depend on it.
    var promiseResolvesSource: Provider<ImageCache> {
        singleton {
            _ = self.promiseSource()
            return ImageCache()
        }
    }
}

/// Pins `instanceIfBuilt(_:)` (DependencyContainer+InstanceIfBuilt.swift:28-32): "A
/// parent's instances are not this container's, as for resolution, except in a scope
/// (``init(scopeOf:)``): it answers with its app container's instance of an app-wide
/// registration it shares. It is not a resolution: it is not traced, and an instance being
/// built that asks does not depend on the answer."
@Suite struct InstanceIfBuiltAnswerTests {
    // MARK: - Asking does not make a dependency

    @Test func aSingletonThatAskedIfBuiltIsKeptWhenWhatItAskedAboutIsOverridden() {
        let container = DependencyContainer()
        _ = container.promiseSource()   // so the construction's question gets an instance as answer
        let asker = container.promiseAsksIfBuilt()
        let control = container.promiseResolvesSource()

        container.override(\.promiseSource) { ImageCache() }

        #expect(container.promiseAsksIfBuilt() === asker, "asking instanceIfBuilt made the singleton depend on promiseSource")
        #expect(container.instanceIfBuilt(\.promiseAsksIfBuilt) === asker)
        // The control shows the override does drop what depends on promiseSource.
        #expect(container.promiseResolvesSource() !== control)
    }

    @Test func aSingletonThatAskedIfBuiltIsKeptWhenWhatItAskedAboutIsReset() {
        let container = DependencyContainer()
        container.override(\.promiseSource) { ImageCache() }
        _ = container.promiseSource()
        let asker = container.promiseAsksIfBuilt()
        let control = container.promiseResolvesSource()

        container.reset(\.promiseSource)

        #expect(container.promiseAsksIfBuilt() === asker, "asking instanceIfBuilt made the singleton depend on promiseSource")
        #expect(container.instanceIfBuilt(\.promiseAsksIfBuilt) === asker)
        #expect(container.promiseResolvesSource() !== control)
    }

    // MARK: - Whose instances a container answers with

    @Test func aPlainChildAnswersNilForItsParentsInstance() {
        let parent = DependencyContainer()
        let database = parent.appDatabase()
        let child = DependencyContainer(parent: parent)
        #expect(parent.instanceIfBuilt(\.appDatabase) === database)
        #expect(child.instanceIfBuilt(\.appDatabase) == nil, "a plain child answered with its parent's instance")
    }

    @Test func aScopeAnswersWithItsOwnScopedInstanceAndAnotherScopeOfTheAppWithNil() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let other = DependencyContainer(scopeOf: app)
        let file = scope.requestLogFile()
        #expect(scope.instanceIfBuilt(\.requestLogFile) === file)
        #expect(other.instanceIfBuilt(\.requestLogFile) == nil, "another scope answered with this scope's instance")
    }

    @Test func aScopeAnswersWithItsAppContainersInstanceOfASharedSingleton() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let database = app.appDatabase()
        #expect(scope.instanceIfBuilt(\.appDatabase) === database)
    }

    @Test func aScopeThatKeepsItsOwnCopyOfASingletonAnswersWithItsCopy() {
        let app = DependencyContainer()
        let appScheduler = app.scheduler()
        let scope = DependencyContainer(scopeOf: app)
        scope.override(\.scopeClock) { ScopeClock(name: "the scope's clock") }
        let own = scope.scheduler()
        #expect(own.clock.name == "the scope's clock" && own !== appScheduler)   // the scope keeps its own copy

        #expect(scope.instanceIfBuilt(\.scheduler) === own, "the scope did not answer with its own copy")
        #expect(app.instanceIfBuilt(\.scheduler) === appScheduler)
    }
}
