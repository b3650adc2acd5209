#if canImport(XCTest)
import DependencyInjection
import DependencyInjectionTesting
import XCTest
import Foundation

/// Main-actor configuration and async preparation, as an app's test class writes them.
final class AsyncPreparationTests: DependencyTestCase {
    override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        // Runs on the main actor: it may build and override main-actor registrations.
        container.override(\.screenModel) { @MainActor in ScreenModel(title: "configured") }
    }

    override func setUp() async throws {
        try await super.setUp()
        XCTAssertTrue(DependencyContainer.main === dependencies)
        try await dependencies.eventStore().record("seeded in setUp")
    }

    func testAsyncSetUpSeedsTheTestsOwnStore() async throws {
        let events = try await DependencyContainer.main.eventStore().events
        XCTAssertEqual(events, ["seeded in setUp"])
    }

    /// XCTest runs a test on the main thread; main-actor code that uses a serial queue as a
    /// lock resolves main-actor registrations inside it.
    @MainActor func testAMainActorRegistrationResolvesInAnotherQueuesSyncBlockOnTheMainThread() {
        XCTAssertTrue(Thread.isMainThread)
        let queue = DispatchQueue(label: "lock")
        XCTAssertEqual(queue.sync { dependencies.screenModel().title }, "configured")
    }

    @MainActor func testTheConfigurationOverridesAMainActorRegistration() {
        XCTAssertEqual(dependencies.screenModel().title, "configured")
        XCTAssertEqual(DependencyContainer.mocks.screenModel().title, "live")
    }
}

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

/// A placeholder reached on a dispatch queue or a detached task that the test handed its
/// container to fails that test when it returns. The failure is captured instead of
/// recorded, and `invokeTest` checks, once the test and its container are done, that
/// exactly one was captured: without it, that check fails the test.
final class DependencyTestCaseOffTaskTests: DependencyTestCase {
    private let captured = Locked<[String]>([])

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        guard Self.namesAnalytics(issue.compactDescription) else { return super.record(issue) }
        captured.withValue { $0.append(issue.compactDescription) }
    }
    #else
    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
        expected: Bool
    ) {
        guard Self.namesAnalytics(description) else {
            return super.recordFailure(
                withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        captured.withValue { $0.append("\(description) at \(filePath):\(lineNumber)") }
    }
    #endif

    private static func namesAnalytics(_ failure: String) -> Bool {
        failure.contains("analytics is not implemented in this module")
    }

    override func invokeTest() {
        super.invokeTest()
        let failures = captured.value
        XCTAssertEqual(failures.count, 1, "the placeholder did not fail its test once: \(failures)")
        XCTAssertTrue(failures.allSatisfy { $0.contains("Fixtures.swift") }, "\(failures)")
    }

    func testAPlaceholderOnADispatchQueueFailsTheTest() {
        let container = dependencies
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = container.analytics()
            done.signal()
        }
        done.wait()
    }

    func testAPlaceholderInADetachedTaskFailsTheTest() async {
        let container = dependencies
        let resolved = await Task.detached { container.analytics() }.value
        XCTAssertEqual(resolved.name, "placeholder")
    }
}

/// The test's container is released when the test ends, even when what it cached or
/// overrode holds it. `invokeTest` checks once the test is done.
final class DependencyTestCaseReleaseTests: DependencyTestCase {
    private let released = WeakReference<DependencyContainer>()

    override func invokeTest() {
        super.invokeTest()
        XCTAssertNil(released.object, "the test's container outlived its test")
    }

    func testAContainerCapturedByItsOwnOverrideIsReleased() {
        let container = dependencies
        released.object = container
        container.override(\.feedLoader) { FeedLoader(client: container.httpClient()) }
        XCTAssertEqual(DependencyContainer.main.feedLoader().client.name, "live")
    }

    func testAContainerCapturedByASingletonItCachedIsReleased() {
        released.object = dependencies
        dependencies.setValue("token", forKey: "token")
        XCTAssertEqual(dependencies.tokenReader().read(), "token")
    }

    func testAContainerCapturedByItsTracerIsReleased() {
        let container = dependencies
        released.object = container
        container.tracer = ResolutionTracer { _ in _ = container.isMocked }
        XCTAssertEqual(container.feedLoader().client.name, "live")
    }
}
#endif
