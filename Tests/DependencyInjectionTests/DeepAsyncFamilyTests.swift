import Testing
import DependencyInjection

// A recursive async family: each level's construction runs in a task of its own and
// resolves the level below, so the chain of constructions in flight is as deep as the
// family. Each use recorded while it builds asks, of every construction in flight,
// whether the resolving code runs inside it.

/// A level of a family whose arguments count how often they are compared by value: the
/// argument's `==` is the user's code, and how often the package calls it is the work it
/// does per level.
struct CountedLevel: Hashable, Sendable {
    let number: Int
    let comparisons: Counter

    static func == (lhs: CountedLevel, rhs: CountedLevel) -> Bool {
        lhs.comparisons.increment()
        return lhs.number == rhs.number
    }

    func hash(into hasher: inout Hasher) { hasher.combine(number) }

    var below: CountedLevel { CountedLevel(number: number - 1, comparisons: comparisons) }
}

extension DependencyContainer {
    /// An async singleton family that builds each level from the one below it.
    subscript(deepAsyncLevel level: CountedLevel) -> AsyncProvider<Int> {
        singleton(level) { level.number == 0 ? 0 : 1 + (try await self[deepAsyncLevel: level.below]()) }
    }

    /// The same family, synchronous.
    subscript(deepLevel level: CountedLevel) -> Provider<Int> {
        singleton(level) { level.number == 0 ? 0 : 1 + self[deepLevel: level.below]() }
    }

    /// What the family below stands on, which scopes override.
    subscript(deepAsyncFloor n: Int) -> AsyncProvider<Int> { singleton(n) { 0 } }

    /// An async singleton family built on the floor.
    subscript(deepAsyncOnFloor n: Int) -> AsyncProvider<Int> {
        singleton(n) {
            n == 0 ? try await self[deepAsyncFloor: 0]() : 1 + (try await self[deepAsyncOnFloor: n - 1]())
        }
    }
}

@Suite struct DeepAsyncFamilyTests {
    /// Building 300 levels runs the arguments' `==` about once a level, not as the square
    /// or the cube of the depth. The question whether the resolving code runs inside an
    /// asynchronous construction walked the whole chain for each construction in flight,
    /// comparing each frame's key by value (the family took time as the cube of its depth);
    /// then the look for a construction of the key among those in flight still compared the
    /// argument with each of them, about 117,000 calls of `==` for 300 levels, each under
    /// the container's lock. Arguments are now compared by value only when their kept
    /// hashes agree.
    @Test func aDeepAsyncFamilyComparesItsArgumentsAboutOnceALevel() async throws {
        let depth = 300
        let comparisons = Counter()
        let app = DependencyContainer()
        #expect(try await app[deepAsyncLevel: CountedLevel(number: depth, comparisons: comparisons)]() == depth)
        #expect(
            comparisons.count <= 2 * depth,
            "\(comparisons.count) comparisons of arguments for \(depth) levels: more than a few a level")
    }

    /// The same for a synchronous family, whose levels build on one stack: each new level
    /// looks for a construction of its key among those in flight, and the cycle check
    /// compares it with the frames of its bucket.
    @Test func aDeepFamilyComparesItsArgumentsAboutOnceALevel() {
        let depth = 120
        let comparisons = Counter()
        let app = DependencyContainer()
        #expect(app[deepLevel: CountedLevel(number: depth, comparisons: comparisons)]() == depth)
        #expect(
            comparisons.count <= 2 * depth,
            "\(comparisons.count) comparisons of arguments for \(depth) levels: more than a few a level")
    }

    /// What the deep family recorded is what each level resolved itself, in its own task:
    /// a scope that overrides the floor builds every level of its own from it, and shares
    /// what was built from nothing it overrides.
    @Test func aScopeOverridingTheFloorOfADeepAsyncFamilyBuildsEveryLevelItself() async throws {
        let depth = 120
        let app = DependencyContainer()
        #expect(try await app[deepAsyncOnFloor: depth]() == depth)
        let level = CountedLevel(number: 30, comparisons: Counter())
        let plain = try await app[deepAsyncLevel: level]()
        let request = DependencyContainer(scopeOf: app)
        request.override(\.[deepAsyncFloor: 0]) { 1_000 }
        #expect(try await request[deepAsyncOnFloor: depth]() == 1_000 + depth)
        #expect(try await request[deepAsyncOnFloor: 7]() == 1_007)
        #expect(try await request[deepAsyncLevel: level]() == plain)
        #expect(try await app[deepAsyncOnFloor: depth]() == depth)
    }
}
