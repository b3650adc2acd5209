public import DependencyInjection
public import Testing

/// A Swift Testing trait that runs each test with its own container as
/// `DependencyContainer.main`.
///
/// Swift Testing runs tests in parallel, so tests that switch the process-wide `main` or
/// override dependencies in a shared container see each other's stubs. With this trait,
/// every test case gets a fresh child of `DependencyContainer.mocks` (or of the parent you
/// choose), made the task-local `main` for that test case alone. Objects the test
/// creates, their `@Dependency` properties and the child tasks it starts all resolve from
/// it; its singletons, overrides and stored values go away when the test ends.
///
/// ```swift
/// @Suite(.dependencies { $0.override(\.httpClient) { StubHTTPClient() } })
/// struct FeedTests {
///     let model = FeedViewModel()            // built inside the test's container
///
///     @Test func showsTheStubbedFeed() async {
///         await model.load()
///         #expect(model.items == StubHTTPClient.items)
///     }
///
///     @Test(.dependencies { $0.setValue("token", forKey: "token") })
///     func sendsTheToken() async { … }        // the suite's override and this value
/// }
/// ```
///
/// On a suite the trait applies to every test in it, nested suites included. A test
/// under several of these traits still gets one container: the outermost suite's
/// configuration runs first and the test's own runs last, on top. The parent is the one
/// named by the innermost trait that names one, or `mocks`.
///
/// Create it with `.dependencies`, `.dependencies { … }` or
/// `.dependencies(parent:_:)`. One trait value may go on a suite and on tests in it
/// (`let stubbed: DependenciesTrait = .dependencies { … }`, then `@Suite(stubbed)` and
/// `@Test(stubbed)`): its configuration still runs once per test case.
///
/// It also turns each `DependencyIssue`, such as a resolved `unimplemented(placeholder:)`,
/// into a failure of the test that caused it. An issue raised on the test's task, or a
/// child task of it, is recorded at once. One raised elsewhere for the test's container
/// or a child of it, as on a detached task or a dispatch queue the test handed the
/// container to, is recorded when the test body returns, so the test must wait for that
/// work; an issue raised after the test ended goes to standard error.
///
/// When the test case ends, its container is reset, its stored values removed and its
/// tracer dropped before it is released: an override, a singleton or a tracer that
/// captures the container does not keep it, or anything it built, alive.
///
/// > Important: Isolation covers what the test reaches through `DependencyContainer.main`.
/// > A test that writes to `DependencyContainer.mocks` or `.default` by name, or assigns
/// > `DependencyContainer.main`, still changes state that other tests share. Detached
/// > tasks (`Task.detached`) do not inherit task-local values and see the process-wide
/// > `main`.
public struct DependenciesTrait: TestTrait, SuiteTrait, TestScoping {
    /// Prepares a test's container: installs overrides, stores values, seeds stores.
    ///
    /// It runs before the test, with the container already set as `main`, so objects it
    /// creates resolve from the test's container too. It runs on the main actor, so it may
    /// name the registrations of a main-actor app module and build its objects, and it may
    /// `await`, to seed an async store before the test starts:
    ///
    /// ```swift
    /// @Test(.dependencies { container in
    ///     container.override(\.feedStore) { @MainActor in StubFeedStore(items: ["a"]) }
    ///     try await container.database().insert("a")
    /// })
    /// func showsWhatIsStored() async throws { … }
    /// ```
    ///
    /// An error it throws fails the test.
    public typealias Configuration = @MainActor @Sendable (DependencyContainer) async throws -> Void

    let parent: DependencyContainer?
    let configure: Configuration?
    /// Tells this trait apart from others with the same settings: a test lists the
    /// traits of its suites beside its own, and each must run once.
    private let identity = Identity()

    init(parent: DependencyContainer?, configure: Configuration?) {
        self.parent = parent
        self.configure = configure
    }

    /// `true`: on a suite, the trait applies to every test in it, nested suites included.
    ///
    /// Swift Testing reads it to decide whether a suite's trait reaches the tests inside;
    /// it is what lets one `@Suite(.dependencies { … })` isolate a whole suite.
    public var isRecursive: Bool { true }

    /// The scope of each test case; nothing for a suite or a test function as a whole,
    /// so that every test case (every argument of a parameterized test) gets its own
    /// container.
    ///
    /// - Parameters:
    ///   - test: The test or suite.
    ///   - testCase: The test case, or `nil` for the test or suite as a whole.
    /// - Returns: This trait for a test case, `nil` otherwise.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> DependenciesTrait? {
        testCase == nil ? nil : self
    }

    /// Runs one test case with its own container as the task-local `main`.
    ///
    /// Swift Testing calls it around each test case. Called inside another test case's
    /// scope, it adds its configuration to that scope's container instead of making one,
    /// and its parent is not used. When the test case returns, it records the issues
    /// raised for the container off the test's task, then resets the container and
    /// removes its stored values.
    ///
    /// - Parameters:
    ///   - test: The running test.
    ///   - testCase: The running test case.
    ///   - function: The test case, and the scopes of traits inside this one.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        TestRunnerReporter.install()
        guard testCase != nil else { return try await function() }

        if let scope = TestScope.current {
            // An enclosing dependencies trait already made this test case's container:
            // configure that one (if not done yet), so the test keeps a single container.
            if scope.applied.contains(where: { $0 === identity }) {
                return try await function()
            }
            try await DependencyContainer.withMain(scope.container) { try await configure?(scope.container) }
            try await TestScope.$current.withValue(scope.adding(identity)) { try await function() }
            return
        }

        // The first dependencies trait to run for this test case builds one container
        // from all of them, suites first, whatever order the scopes nest in. One trait
        // value listed twice (on a suite and on a test in it) counts once.
        var traits: [DependenciesTrait] = []
        for case let trait as DependenciesTrait in test.traits + [self]
        where !traits.contains(where: { $0.identity === trait.identity }) {
            traits.append(trait)
        }
        let parent = traits.last(where: { $0.parent != nil })?.parent ?? .mocks
        let container = DependencyContainer(parent: parent)
        let scope = TestScope(container: container, applied: traits.map(\.identity))

        LiveTestContainers.shared.begin(container)
        let run = TestCaseRun(framework: .swiftTesting)
        let outcome: Result<Void, any Error>
        do {
            try await TestCaseRun.$current.withValue(run) {
                try await DependencyContainer.withMain(container) {
                    for trait in traits { try await trait.configure?(container) }
                    try await TestScope.$current.withValue(scope) { try await function() }
                }
            }
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        // Tasks the test started, which run on, raise no more issues in it.
        run.end()
        // Issues raised for this container off the test's task fail the test now, in
        // its context, pointing at the registrations that raised them.
        for issue in LiveTestContainers.shared.end(container) { TestRunnerReporter.record(issue) }
        // Drop what the test cached, overrode, stored and traced with, so that a closure or
        // an object holding the container does not keep it (and all it holds) alive.
        container.reset()
        container.removeAll()
        container.tracer = nil
        try outcome.get()
    }
}

extension Trait where Self == DependenciesTrait {
    /// Runs each test with a fresh child of `DependencyContainer.mocks` as its `main`.
    ///
    /// ```swift
    /// @Suite(.dependencies) struct CartTests { … }
    /// @Test(.dependencies) func addsAnItem() { … }
    /// ```
    public static var dependencies: Self {
        DependenciesTrait(parent: nil, configure: nil)
    }

    /// Runs each test with a fresh child of `DependencyContainer.mocks` as its `main`,
    /// prepared by `configure`.
    ///
    /// ```swift
    /// @Suite(.dependencies { container in
    ///     container.override(\.httpClient) { StubHTTPClient() }
    ///     container.setValue("token", forKey: "token")
    /// })
    /// struct FeedTests { … }
    /// ```
    ///
    /// On a suite, `configure` runs once for each test, on that test's container.
    ///
    /// - Parameter configure: Installs overrides and values in the test's container.
    /// - Returns: The trait.
    public static func dependencies(
        _ configure: @escaping DependenciesTrait.Configuration
    ) -> Self {
        DependenciesTrait(parent: nil, configure: configure)
    }

    /// Runs each test with a fresh child of `parent` as its `main`, optionally prepared
    /// by `configure`.
    ///
    /// Choose the parent to test against the app's real registrations, or against a
    /// container of your own:
    ///
    /// ```swift
    /// @Test(.dependencies(parent: .default)) func liveBaseURL() {
    ///     #expect(DependencyContainer.main.baseURL == "https://api.example.com")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - parent: The container each test's container is a child of.
    ///   - configure: Installs overrides and values in the test's container.
    /// - Returns: The trait.
    public static func dependencies(
        parent: DependencyContainer,
        _ configure: DependenciesTrait.Configuration? = nil
    ) -> Self {
        DependenciesTrait(parent: parent, configure: configure)
    }
}

/// The identity of one ``DependenciesTrait`` value.
private final class Identity: Sendable {}

/// The container a ``DependenciesTrait`` made for the running test case, and the traits
/// that have configured it.
private struct TestScope: Sendable {
    @TaskLocal static var current: TestScope?

    let container: DependencyContainer
    let applied: [Identity]

    func adding(_ identity: Identity) -> TestScope {
        TestScope(container: container, applied: applied + [identity])
    }
}
