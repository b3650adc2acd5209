import DependencyInjection
import Testing

/// An instance that counts its own release in the counter it was built with.
final class ReleaseCountedInstance: Sendable {
    let number: Int
    private let releases: Counter
    init(number: Int, releases: Counter) { (self.number, self.releases) = (number, releases) }
    deinit { releases.increment() }
}

extension DependencyContainer {
    subscript(releaseCounted number: Int) -> Provider<ReleaseCountedInstance> {
        singleton(number) {
            self.count("releaseCounted")
            return ReleaseCountedInstance(number: number, releases: self.getValue(forKey: "releases")!)
        }
    }
    subscript(releaseCountedColliding id: CollidingID) -> Provider<ReleaseCountedInstance> {
        singleton(id) { ReleaseCountedInstance(number: id.raw, releases: self.getValue(forKey: "releases")!) }
    }
}

/// A container's singletons live in a table that grows as they are built: every instance
/// must stay found, built once, and released once, however many there are.
@Suite struct SingletonTableGrowthTests {
    @Test func everySingletonStaysCachedAcrossManyGrowthsAndIsReleasedOnce() {
        let releases = Counter()
        var container: DependencyContainer? = DependencyContainer()
        container!.setValue(releases, forKey: "releases")
        let builds = container!.counter("releaseCounted")
        let built = (0..<3_000).map { container![releaseCounted: $0]() }
        #expect(builds.count == 3_000)
        for number in 0..<3_000 {
            let again = container![releaseCounted: number]()
            #expect(again === built[number] && again.number == number)
        }
        #expect(builds.count == 3_000)
        #expect(releases.count == 0)
        container = nil
        withExtendedLifetime(built) {}
        #expect(releases.count == 0, "the test's own references keep them")
        _ = consume built
        #expect(releases.count == 3_000)
    }

    @Test func keysThatShareOneHashSurviveGrowthInOneCluster() {
        let releases = Counter()
        let container = DependencyContainer()
        container.setValue(releases, forKey: "releases")
        let ids = (0..<300).map(CollidingID.init(raw:))
        let built = ids.map { container[releaseCountedColliding: $0]() }
        for (id, instance) in zip(ids, built) {
            #expect(container[releaseCountedColliding: id]() === instance)
        }
        container.reset()
        let rebuilt = container[releaseCountedColliding: ids[150]]()
        #expect(rebuilt !== built[150] && rebuilt.number == 150)
    }

    @Test func resetReleasesEveryGrownSingletonExactlyOnce() {
        let releases = Counter()
        let container = DependencyContainer()
        container.setValue(releases, forKey: "releases")
        for number in 0..<1_000 { _ = container[releaseCounted: number]() }
        #expect(releases.count == 0)
        container.reset()
        #expect(releases.count == 1_000)
        _ = container[releaseCounted: 7]()
        container.reset()
        #expect(releases.count == 1_001)
    }
}
