#if canImport(XCTest)
import DependencyInjection
import DependencyInjectionTesting
import XCTest

final class DependencyTestCaseTests: DependencyTestCase {
    override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        container.override(\.httpClient) { StubHTTPClient("configured") }
    }

    override func setUp() {
        super.setUp()
        XCTAssertNil(dependencies.token, "a value written by another test is visible")
        dependencies.setValue("set-up", forKey: "token")
    }

    func testEachTestGetsAFreshChildOfMocks() {
        XCTAssertTrue(DependencyContainer.main === dependencies)
        XCTAssertTrue(dependencies.parent === DependencyContainer.mocks)
        XCTAssertTrue(dependencies.isMocked)
    }

    func testConfigurationAndSetUpApply() {
        XCTAssertEqual(dependencies.httpClient().name, "configured")
        XCTAssertEqual(dependencies.token, "set-up")
        let model = FeedViewModel()
        XCTAssertTrue(model.$loader.container === dependencies)
        XCTAssertEqual(model.loader.client.name, "configured")
    }

    // The next two write the same dependencies; whichever runs second checks that it
    // starts from the configuration, not from the other's writes (see also `setUp`).

    func testWritesOfOneTestStayInIt() {
        XCTAssertEqual(dependencies.httpClient().name, "configured")
        dependencies.override(\.httpClient) { StubHTTPClient("first") }
        dependencies.setValue("first", forKey: "token")
        XCTAssertEqual(FeedViewModel().loader.client.name, "first")
    }

    func testWritesOfAnotherTestStayInIt() {
        XCTAssertEqual(dependencies.httpClient().name, "configured")
        dependencies.override(\.httpClient) { StubHTTPClient("second") }
        dependencies.setValue("second", forKey: "token")
        XCTAssertEqual(FeedViewModel().loader.client.name, "second")
    }

    func testAsyncTestsAndTheirChildTasksSeeTheContainer() async {
        let container = dependencies
        await Task.yield()
        XCTAssertTrue(DependencyContainer.main === container)
        let fromChild = await Task { DependencyContainer.main }.value
        XCTAssertTrue(fromChild === container)
    }

    func testProcessWideMainIsUntouched() async {
        let global = await Task.detached { DependencyContainer.main }.value
        XCTAssertFalse(global === dependencies)
        XCTAssertNil(DependencyContainer.mocks.token)
    }
}

final class DependencyTestCaseParentTests: DependencyTestCase {
    override var dependencyParent: DependencyContainer { .default }

    func testAnotherParentCanBeChosen() {
        XCTAssertTrue(dependencies.parent === DependencyContainer.default)
        XCTAssertFalse(DependencyContainer.main.isMocked)
        XCTAssertEqual(DependencyContainer.main.baseURL, "https://api.example.com")
    }
}

/// A resolved placeholder fails the running XCTest test. The failures are captured
/// instead of recorded, so that the suite stays green while proving they happen.
final class DependencyTestCasePlaceholderTests: DependencyTestCase {
    private var captured: [String] = []

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        captured.append(issue.compactDescription)
    }
    #else
    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
        expected: Bool
    ) {
        captured.append("\(description) at \(filePath):\(lineNumber)")
    }
    #endif

    func testAPlaceholderFailsTheTestAndNamesTheDependency() {
        let resolved = DependencyContainer.main.analytics()
        XCTAssertEqual(resolved.name, "placeholder")
        XCTAssertEqual(captured.count, 1)
        let failure = captured.first ?? ""
        XCTAssertTrue(failure.contains("analytics is not implemented in this module"), failure)
        XCTAssertTrue(failure.contains("container.override(\\.analytics) { … }"), failure)
    }

    func testAnOverrideSuppliesIt() {
        dependencies.override(\.analytics) { RecordingAnalytics() }
        XCTAssertEqual(DependencyContainer.main.analytics().name, "recording")
        XCTAssertEqual(captured, [])
    }
}
#endif
