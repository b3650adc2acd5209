import DependencyInjection

// The loops whose instructions `instructions.sh` counts under callgrind: the two hot paths
// with instruction targets, and this package's side of scenarios A, C, D and F for
// profiling. Each loop is a function of its own, never inlined, so that
// `--toggle-collect` can name it; the setup (container, first build, first access)
// happens before it is entered.

enum HotPath: String, CaseIterable {
    /// `container.client()` for a singleton that is already built.
    case singleton
    /// Reading a `@Dependency` property after its first access.
    case wrapper
    /// The same loop consuming an object it already has: the cost of the loop and sink,
    /// to subtract from the two above.
    case baseline
    /// Scenario A: `container.leaf()`.
    case leaf
    /// Scenario C: `container.chainE()`.
    case chain
    /// Scenario D: a new `InjectedHolder`, its property read once.
    case property
    /// Scenario F: `container.override(\.client) { StubClient() }`, then `container.client()`.
    case override
}

@inline(never)
func hotPathSingletonLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.client())
    }
}

@inline(never)
func hotPathWrapperLoop(_ holder: InjectedHolder, _ count: Int) {
    for _ in 0..<count {
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathBaselineLoop(_ object: AnyObject, _ count: Int) {
    for _ in 0..<count {
        blackHole(object)
    }
}

@inline(never)
func hotPathLeafLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.leaf())
    }
}

@inline(never)
func hotPathChainLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        blackHole(container.chainE())
    }
}

@inline(never)
func hotPathPropertyLoop(_ count: Int) {
    for _ in 0..<count {
        let holder = InjectedHolder()
        blackHole(holder)
        blackHole(holder.client)
    }
}

@inline(never)
func hotPathOverrideLoop(_ container: DependencyContainer, _ count: Int) {
    for _ in 0..<count {
        container.override(\.client) { StubClient() }
        blackHole(container.client())
    }
}

/// Runs one hot path `count` times after its setup, for callgrind.
func runHotPath(_ path: HotPath, count: Int) {
    let container = DependencyContainer()
    let built = container.client()
    let holder = InjectedHolder()
    precondition(holder.client === DependencyContainer.main.client())
    switch path {
    case .singleton:
        hotPathSingletonLoop(container, count)
    case .wrapper:
        hotPathWrapperLoop(holder, count)
    case .baseline:
        hotPathBaselineLoop(built, count)
    case .leaf:
        _ = container.leaf()
        hotPathLeafLoop(container, count)
    case .chain:
        _ = container.chainE()
        hotPathChainLoop(container, count)
    case .property:
        hotPathPropertyLoop(count)
    case .override:
        container.override(\.client) { StubClient() }
        _ = container.client()
        hotPathOverrideLoop(container, count)
    }
}
