import DependencyInjection

// The two hot paths whose instructions `instructions.sh` counts under callgrind. Each loop
// is a function of its own, never inlined, so that `--toggle-collect` can name it; the
// setup (container, first build, first access) happens before it is entered.

enum HotPath: String, CaseIterable {
    /// `container.client()` for a singleton that is already built.
    case singleton
    /// Reading a `@Dependency` property after its first access.
    case wrapper
    /// The same loop consuming an object it already has: the cost of the loop and sink,
    /// to subtract from the two above.
    case baseline
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
    }
}
