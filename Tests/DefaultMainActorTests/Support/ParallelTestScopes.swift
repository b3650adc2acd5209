import DependencyInjectionTesting
import Testing

/// Runs `body` in `count` test scopes at once, each the scope of `trait(id)` that Swift
/// Testing gives a test case, as it runs a suite's cases in parallel, and returns once every
/// scope has ended and its world has been let go.
///
/// ```swift
/// try await inParallelTestScopes(200, of: { _ in .dependencies }) { id in await runCase(id) }
/// ```
func inParallelTestScopes(
    _ count: Int, of trait: (Int) -> DependenciesTrait, _ body: @escaping @Sendable (Int) async -> Void
) async throws {
    let test = try #require(Test.current)
    let testCase = Test.Case.current
    try await withThrowingTaskGroup(of: Void.self) { group in
        for id in 0..<count {
            let trait = trait(id)
            group.addTask {
                try await trait.provideScope(for: test, testCase: testCase) { await body(id) }
            }
        }
        try await group.waitForAll()
    }
    await Task.yield()
}
