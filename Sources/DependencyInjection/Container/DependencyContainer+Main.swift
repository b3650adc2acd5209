extension DependencyContainer {
    /// The container of the app as it runs.
    ///
    /// It is the initial value of ``main``, so registrations resolve from it unless
    /// something switches `main`. A composition root configures it at launch:
    ///
    /// ```swift
    /// DependencyContainer.default.compose(RootComposer())
    /// ```
    public static let `default` = DependencyContainer()

    /// A container whose ``isMocked`` is `true`, for tests and previews.
    ///
    /// Registrations that branch on ``isMocked`` serve their test doubles from it. Rather
    /// than changing `mocks` itself, which every test shares, give each test a child of
    /// it, as the `DependencyInjectionTesting` product does:
    ///
    /// ```swift
    /// let world = DependencyContainer(parent: .mocks)
    /// DependencyContainer.withMain(world) { /* run the test */ }
    /// ```
    ///
    /// `mocks.removeAll()` clears its stored values and leaves it mocked.
    public static let mocks = DependencyContainer(isMocked: true)

    /// What reading ``main`` needs, under one lock: the process-wide container, and
    /// whether any ``withMain(_:_:)`` call has begun, ever. Until one has, no task can
    /// have a container bound, and reading `main` skips the task-local lookup. The flag is
    /// never cleared: a task created inside `withMain` keeps its container after the call
    /// returns.
    ///
    /// One static and one lock: two statics cost every read of `main` a second one-time
    /// initialization check, and an atomic counter beside the lock a third memory access.
    struct MainSwitch {
        var container: DependencyContainer
        var taskLocalsBound = false
    }

    private static let mainSwitch = _Locked(MainSwitch(container: .default))

    @TaskLocal static var scopedMain: DependencyContainer?

    /// The container bound by the innermost ``withMain(_:_:)`` around this task, else
    /// `global`. Out of line: inlined into ``main``, the task-local lookup made every read
    /// save and restore registers it does not use.
    @inline(never)
    private static func boundMain(orElse global: DependencyContainer) -> DependencyContainer {
        scopedMain ?? global
    }

    /// Notes that a ``withMain(_:_:)`` call has begun, before it binds its container.
    private static func bindingTaskLocal() {
        mainSwitch.withLock { $0.taskLocalsBound = true }
    }

    /// The container that ``Dependency`` uses when none is given.
    ///
    /// It starts as ``default``. Setting it switches every later resolution in the
    /// process, from any thread, which is how the original API switches to mocks:
    ///
    /// ```swift
    /// DependencyContainer.main = .mocks
    /// ```
    ///
    /// Inside ``withMain(_:_:)`` reading `main` returns that call's container instead,
    /// for the current task and its child tasks only; setting `main` there still sets
    /// the process-wide value.
    public static var main: DependencyContainer {
        get {
            let (global, taskLocalsBound) = mainSwitch.withLock { ($0.container, $0.taskLocalsBound) }
            return taskLocalsBound ? boundMain(orElse: global) : global
        }
        set {
            mainSwitch.withLock(releasingAfter: { state, released in
                released.append(state.container)
                state.container = newValue
            })
        }
    }

    /// Runs `operation` with `container` as ``main`` for the current task and the
    /// child tasks it creates, and for nothing else.
    ///
    /// Unlike assigning ``main``, this switch cannot leak into code that runs at the
    /// same time, which is what parallel tests need:
    ///
    /// ```swift
    /// let world = DependencyContainer(parent: .mocks)
    /// DependencyContainer.withMain(world) {
    ///     let model = FeedViewModel()   // its @Dependency properties use `world`
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - container: The container to use as ``main``.
    ///   - operation: The code to run.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func withMain<Result>(
        _ container: DependencyContainer,
        _ operation: () throws -> Result
    ) rethrows -> Result {
        bindingTaskLocal()
        return try $scopedMain.withValue(container, operation: operation)
    }

    /// Runs the asynchronous `operation` with `container` as ``main`` for the current
    /// task and the child tasks it creates, and for nothing else.
    ///
    /// ```swift
    /// await DependencyContainer.withMain(world) {
    ///     await model.load()
    /// }
    /// ```
    ///
    /// Detached tasks (`Task.detached`) do not inherit task-local values, so they see
    /// the process-wide ``main``.
    ///
    /// - Parameters:
    ///   - container: The container to use as ``main``.
    ///   - isolation: The actor the operation runs on; inferred from the caller.
    ///   - operation: The code to run.
    /// - Returns: What `operation` returns.
    /// - Throws: What `operation` throws.
    public static func withMain<Result>(
        _ container: DependencyContainer,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> Result
    ) async rethrows -> Result {
        bindingTaskLocal()
        return try await $scopedMain.withValue(container, operation: operation, isolation: isolation)
    }
}
