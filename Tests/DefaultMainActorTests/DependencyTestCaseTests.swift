#if canImport(XCTest)
import DependencyInjection
import DependencyInjectionTesting
import XCTest

/// An XCTest case class of the app module: main-actor overrides in
/// `configureDependencies`, async seeding in `setUp() async throws`, a container per test.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
nonisolated final class FeedDependencyTestCaseTests: DependencyTestCase {
    @MainActor override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["configured"]) }
    }

    @concurrent override func setUp() async throws {
        try await super.setUp()
        XCTAssertTrue(DependencyContainer.main === dependencies)
        let rows = try await dependencies.database().all()
        XCTAssertEqual(rows, [], "rows written by another test are visible")
        try await dependencies.database().insert("set-up")
    }

    @MainActor func testTheConfigurationReachesObjectsTheTestCreates() {
        let model = FeedViewModel()
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
