#if canImport(XCTest)
import DependencyInjection
import DependencyInjectionTesting
import XCTest

/// Pins WritingTests.md and DependencyTestCase.swift: each test method runs "with its own
/// child of `mocks` as `main`, around `setUp`, the test and `tearDown`". The test
/// remembers its container and stores a value; `tearDown` checks both.
final class TearDownContainerTests: DependencyTestCase {
    private var containerTheTestSaw: DependencyContainer?

    override func tearDown() {
        XCTAssertNotNil(containerTheTestSaw, "the test did not run")
        XCTAssertTrue(DependencyContainer.main === containerTheTestSaw, "tearDown ran outside the test's container")
        XCTAssertTrue(DependencyContainer.main === dependencies)
        XCTAssertFalse(DependencyContainer.main === DependencyContainer.mocks)
        XCTAssertEqual(DependencyContainer.main.token, "stored by the test")
        XCTAssertEqual(DependencyContainer.main.httpClient().name, "overridden by the test")
        super.tearDown()
    }

    func testTearDownRunsInTheTestsContainer() {
        containerTheTestSaw = DependencyContainer.main
        XCTAssertFalse(DependencyContainer.main === DependencyContainer.mocks)
        DependencyContainer.main.setValue("stored by the test", forKey: "token")
        DependencyContainer.main.override(\.httpClient) { StubHTTPClient("overridden by the test") }
    }
}

/// The same with an async `tearDown`.
final class AsyncTearDownContainerTests: DependencyTestCase {
    private var containerTheTestSaw: DependencyContainer?

    override func tearDown() async throws {
        XCTAssertNotNil(containerTheTestSaw, "the test did not run")
        XCTAssertTrue(DependencyContainer.main === containerTheTestSaw, "tearDown ran outside the test's container")
        XCTAssertEqual(DependencyContainer.main.token, "stored by the test")
        try await super.tearDown()
    }

    func testAsyncTearDownRunsInTheTestsContainer() async {
        containerTheTestSaw = DependencyContainer.main
        DependencyContainer.main.setValue("stored by the test", forKey: "token")
    }
}
#endif
