import DependencyInjection
import Testing

@Suite struct ScopeTests {
    // MARK: - Factory

    @Test func factoryBuildsANewInstanceEachTime() {
        let container = DependencyContainer()
        #expect(container.feedLoader() !== container.feedLoader())
    }

    // MARK: - Singleton

    @Test func singletonIsBuiltOncePerContainer() {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let first = container.httpClient()
        let second = container.httpClient()
        #expect(first === second)
        #expect(builds.count == 1)
    }

    @Test func differentContainersHaveDifferentSingletons() {
        #expect(DependencyContainer().httpClient() !== DependencyContainer().httpClient())
    }

    @Test func factoryOverASingletonSharesTheSingleton() {
        let container = DependencyContainer()
        #expect(container.feedLoader().client === container.feedLoader().client)
    }

    @Test func resetBuildsSingletonsAgain() {
        let container = DependencyContainer()
        let builds = container.counter("httpClient")
        let first = container.httpClient()
        container.reset()
        #expect(container.httpClient() !== first)
        #expect(builds.count == 2)
    }

    // MARK: - Parameterized

    @Test func parameterizedSingletonKeepsOneInstancePerArgument() {
        let container = DependencyContainer()
        let first = container[session: "42"]()
        #expect(first.id == "42")
        #expect(container[session: "42"]() === first)
        #expect(container[session: "7"]() !== first)
        #expect(container[session: "7"]().id == "7")
    }

    @Test func argumentsWithCollidingHashesAreDistinct() {
        let container = DependencyContainer()
        let one = container[colliding: CollidingID(raw: 1)]()
        let two = container[colliding: CollidingID(raw: 2)]()
        #expect(one !== two)
        #expect(one.id == "1")
        #expect(two.id == "2")
        #expect(container[colliding: CollidingID(raw: 1)]() === one)
    }

    @Test func parameterizedSharedKeepsOneLiveInstancePerArgument() {
        let container = DependencyContainer()
        let small = container[thumbnails: 64]()
        #expect(container[thumbnails: 64]() === small)
        #expect(container[thumbnails: 128]() !== small)
    }

    // MARK: - Shared

    @Test func sharedIsReusedWhileHeld() {
        let container = DependencyContainer()
        let builds = container.counter("imageCache")
        let held = container.imageCache()
        #expect(container.imageCache() === held)
        #expect(builds.count == 1)
    }

    @Test func sharedIsNotKeptAliveByTheContainer() {
        let container = DependencyContainer()
        let builds = container.counter("imageCache")
        weak var released: ImageCache?
        do {
            let cache = container.imageCache()
            released = cache
        }
        #expect(released == nil)
        _ = container.imageCache()
        #expect(builds.count == 2)
    }

    @Test func sharedValueTypesAreBuiltEachTime() {
        let container = DependencyContainer()
        #expect(container.counterValue() == 7)
        #expect(container.counterValue() == 7)
    }

    // MARK: - Child containers

    @Test func childKeepsItsOwnInstances() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        let parentBuilds = parent.counter("httpClient")
        let fromChild = child.httpClient()
        #expect(fromChild !== parent.httpClient())
        #expect(child.httpClient() === fromChild)
        #expect(parentBuilds.count == 2)  // the child counts in the parent's counter, which it sees
    }
}
