#if canImport(XCTest)
public import DependencyInjection
public import XCTest

/// An `XCTestCase` that runs each test with its own container as
/// `DependencyContainer.main`.
///
/// Subclass it instead of `XCTestCase`. Every test method gets a fresh child of
/// `DependencyContainer.mocks` (or of ``dependencyParent``), set as the task-local `main`
/// around `setUp`, the test and `tearDown`; overrides made in one test never reach
/// another, and the container is released when the test ends.
///
/// ```swift
/// final class FeedViewModelTests: DependencyTestCase {
///     override func configureDependencies(_ container: DependencyContainer) {
///         container.override(\.httpClient) { StubHTTPClient() }
///     }
///
///     func testShowsTheStubbedFeed() {
///         dependencies.setValue("token", forKey: "token")   // this test only
///         let model = FeedViewModel()                        // resolves from the test's container
///         XCTAssertEqual(model.client.name, "stub")
///     }
/// }
/// ```
///
/// A `DependencyIssue`, such as a resolved `unimplemented(placeholder:)`, becomes a
/// failure of the running test: at once on the test's thread and its child tasks, and
/// when the test returns for issues raised for ``dependencies`` on a dispatch queue or a
/// detached task the test handed it to (the test must wait for that work).
///
/// When the test ends, its container is reset, its stored values removed and its tracer
/// dropped: an override, a singleton or a tracer that captures the container does not
/// keep it alive.
///
/// To isolate a test class that must keep another base class, wrap `invokeTest()` the
/// same way:
///
/// ```swift
/// override func invokeTest() {
///     DependencyContainer.withMain(DependencyContainer(parent: .mocks)) { super.invokeTest() }
/// }
/// ```
///
/// > Important: Detached tasks and threads the test starts itself do not inherit
/// > task-local values and see the process-wide `main`; pass them ``dependencies``.
open class DependencyTestCase: XCTestCase {
    /// The running test's container, a child of ``dependencyParent``.
    private var testContainer: DependencyContainer?

    /// The container each test's container is a child of: `DependencyContainer.mocks`
    /// unless a subclass returns another.
    ///
    /// ```swift
    /// override var dependencyParent: DependencyContainer { .default }
    /// ```
    open var dependencyParent: DependencyContainer { .mocks }

    /// Prepares each test's container before `setUp` runs; does nothing by default.
    ///
    /// Override it to install the overrides and values every test of the class needs.
    /// Call `super` to keep a base class's configuration. It runs on the main actor, where
    /// XCTest runs tests, with the container already set as `main`, so it may name the
    /// registrations of a main-actor app module and build its objects:
    ///
    /// ```swift
    /// override func configureDependencies(_ container: DependencyContainer) {
    ///     super.configureDependencies(container)
    ///     container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["a"]) }
    /// }
    /// ```
    ///
    /// To prepare the container with `await` (seeding an async store, say), do it in
    /// `setUp() async throws`, which XCTest runs inside the same container:
    ///
    /// ```swift
    /// override func setUp() async throws {
    ///     try await super.setUp()
    ///     try await dependencies.database().insert("a")
    /// }
    /// ```
    ///
    /// - Parameter container: The container of the test about to run.
    @MainActor
    open func configureDependencies(_ container: DependencyContainer) {}

    /// The container of the running test; the same as `DependencyContainer.main` inside it.
    ///
    /// Use it in `setUp` or in a test to add overrides for that test only, and hand it to
    /// threads or detached tasks, which do not see the task-local `main`.
    ///
    /// > Important: Only available while a test runs.
    public var dependencies: DependencyContainer {
        guard let testContainer else {
            preconditionFailure("DependencyTestCase.dependencies is only available while a test runs")
        }
        return testContainer
    }

    /// Runs the test, with its `setUp` and `tearDown`, inside its own container.
    ///
    /// XCTest calls it once per test method. It makes a child of ``dependencyParent``,
    /// calls ``configureDependencies(_:)`` on it, and runs the test with it as the
    /// task-local `DependencyContainer.main`. When the test returns, it fails the test
    /// with the issues raised for the container off the test's thread, then resets the
    /// container, removes its stored values and releases it. A subclass that overrides it
    /// must call `super.invokeTest()`, or the test runs without its container; code after
    /// that call runs once the test's container is gone:
    ///
    /// ```swift
    /// override func invokeTest() {
    ///     super.invokeTest()
    ///     XCTAssertNil(weakModel, "the model outlived its test")
    /// }
    /// ```
    open override func invokeTest() {
        TestRunnerReporter.install()
        let container = DependencyContainer(parent: dependencyParent)
        testContainer = container
        LiveTestContainers.shared.begin(container)
        let run = TestCaseRun(framework: .xcTest)
        DependencyContainer.withMain(container) {
            // XCTest runs a test case's methods on the main thread, one at a time; say so
            // to the compiler, checked at run time.
            nonisolated(unsafe) let testCase = self
            MainActor.assumeIsolated { testCase.configureDependencies(container) }
            TestCaseRun.$current.withValue(run) { super.invokeTest() }
        }
        // Tasks the test started, which run on, raise no more issues in it.
        run.end()
        // Issues raised for this container off the test's thread fail the test now.
        for issue in LiveTestContainers.shared.end(container) { TestRunnerReporter.fail(issue) }
        // Drop what the test cached, overrode, stored and traced with, so that a closure or
        // an object holding the container does not keep it alive; XCTest keeps test case
        // objects until the run ends, so drop the container itself too.
        container.reset()
        container.removeAll()
        container.tracer = nil
        testContainer = nil
    }
}

#endif
