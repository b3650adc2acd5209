#if canImport(XCTest)
import DependencyInjection
import DependencyInjectionTesting
import XCTest

/// An XCTest case class of the app module: main-actor overrides in
/// `configureDependencies`, async seeding in `setUp() async throws`, a container per test.
///
/// How it is declared is what compiles in a main-actor module today (Swift 6.3):
/// - `nonisolated` class: with main-actor default isolation the class, and so the
///   initializer it inherits from `XCTestCase` (`init(name:testClosure:)` on Linux), would
///   be inferred `@MainActor`, which the compiler rejects as "different actor isolation
///   from nonisolated overridden declaration".
/// - `@MainActor` on each member that touches the app: XCTest calls them on the main
///   thread, and async ones hop to the main actor.
/// - No `super.setUp()` in the `@MainActor` async `setUp`: `XCTestCase`'s does nothing,
///   and calling it from the main actor sends `self` off it ("sending value of
///   non-Sendable type 'DependencyTestCase' risks causing data races").
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
nonisolated final class FeedDependencyTestCaseTests: DependencyTestCase {
    private var model: FeedViewModel?

    @MainActor override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["configured"]) }
    }

    @MainActor override func setUp() async throws {
        XCTAssertTrue(DependencyContainer.main === dependencies)
        let rows = try await dependencies.database().all()
        XCTAssertEqual(rows, [], "rows written by another test are visible")
        try await dependencies.database().insert("set-up")
        model = FeedViewModel()
    }

    @MainActor func testTheConfigurationReachesObjectsMadeInSetUp() throws {
        let model = try XCTUnwrap(model)
        model.load()
        XCTAssertEqual(model.items, ["configured"])
        XCTAssertTrue(model.$store.container === dependencies)
        XCTAssertTrue(dependencies.parent === DependencyContainer.mocks)
    }

    @MainActor func testSetUpSeedsTheTestsDatabase() async throws {
        let rows = try await DependencyContainer.main.database().all()
        XCTAssertEqual(rows, ["set-up"])
    }

    // The next two write the same registrations; whichever runs second checks that it
    // starts from the configuration and `setUp`, not from the other's writes.

    @MainActor func testWritesOfOneTestStayInIt() async throws {
        try await expectStartsFromTheConfiguration()
        try await writeOwnValues("first")
    }

    @MainActor func testWritesOfAnotherTestStayInIt() async throws {
        try await expectStartsFromTheConfiguration()
        try await writeOwnValues("second")
    }

    @MainActor private func expectStartsFromTheConfiguration() async throws {
        XCTAssertEqual(dependencies.feedService().headlines(), ["CONFIGURED"])
        let rows = try await dependencies.database().all()
        XCTAssertEqual(rows, ["set-up"])
    }

    @MainActor private func writeOwnValues(_ name: String) async throws {
        dependencies.override(\.feedStore) { @MainActor in StubFeedStore(items: [name]) }
        try await dependencies.database().insert(name)
        let model = FeedViewModel()
        model.load()
        XCTAssertEqual(model.items, [name])
    }
}
#endif
