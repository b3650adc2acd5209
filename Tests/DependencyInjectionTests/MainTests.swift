import DependencyInjection
import Testing

/// Tests of the process-wide switch. They change global state, so they run one at a time
/// and restore `main`; every other suite uses `withMain` or explicit containers.
@Suite(.serialized) struct MainSwitchTests {
    @Test func mainStartsAsDefaultAndSwitchesEverywhere() async {
        #expect(DependencyContainer.main === DependencyContainer.default)
        DependencyContainer.main = .mocks
        defer { DependencyContainer.main = .default }

        #expect(DependencyContainer.main === DependencyContainer.mocks)
        let seenElsewhere = await Task.detached { DependencyContainer.main }.value
        #expect(seenElsewhere === DependencyContainer.mocks)
        #expect(DependencyContainer.main.baseURL == "http://localhost:8080")
    }

    @Test func settingMainInsideWithMainSetsTheGlobalValue() {
        let scoped = DependencyContainer()
        DependencyContainer.withMain(scoped) {
            DependencyContainer.main = .mocks
            #expect(DependencyContainer.main === scoped)
        }
        #expect(DependencyContainer.main === DependencyContainer.mocks)
        DependencyContainer.main = .default
    }

    @Test func mainSwitchesFromManyThreadsWithoutARace() async {
        let containers = [DependencyContainer.default, .mocks, DependencyContainer()]
        let strangers = Collected<DependencyContainer>()
        let threadsEnded = await concurrentlyOffThePool { index in
            for round in 0..<500 {
                if (index + round).isMultiple(of: 3) {
                    DependencyContainer.main = containers[round % 3]
                } else {
                    let seen = DependencyContainer.main
                    if !containers.contains(where: { $0 === seen }) { strangers.append(seen) }
                }
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        DependencyContainer.main = .default
        #expect(strangers.values.isEmpty)
        #expect(DependencyContainer.main === DependencyContainer.default)
    }
}

@Suite struct WithMainTests {
    @Test func syncScopeSwitchesMainAndRestores() {
        // The outer scope pins what "before" is: the process-wide `main` may be switched
        // by the serialized suite above while this runs.
        let outer = DependencyContainer()
        let container = DependencyContainer()
        DependencyContainer.withMain(outer) {
            let inside = DependencyContainer.withMain(container) { DependencyContainer.main }
            #expect(inside === container)
            #expect(DependencyContainer.main === outer)
        }
    }

    @Test func nestedScopesUseTheInnermost() {
        let outer = DependencyContainer()
        let inner = DependencyContainer()
        DependencyContainer.withMain(outer) {
            DependencyContainer.withMain(inner) {
                #expect(DependencyContainer.main === inner)
            }
            #expect(DependencyContainer.main === outer)
        }
    }

    @Test func childTasksInheritScopeDetachedTasksDoNot() async {
        let container = DependencyContainer()
        await DependencyContainer.withMain(container) {
            let child = await Task { DependencyContainer.main }.value
            #expect(child === container)
            await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<10 { group.addTask { DependencyContainer.main === container } }
                for await sameContainer in group { #expect(sameContainer) }
            }
            let detached = await Task.detached { DependencyContainer.main }.value
            #expect(detached !== container)
        }
    }

    @Test func asyncScopeReturnsAndRethrows() async throws {
        struct Failure: Error {}
        let container = DependencyContainer()
        let value = await DependencyContainer.withMain(container) {
            await Task.yield()
            return DependencyContainer.main === container
        }
        #expect(value)
        await #expect(throws: Failure.self) {
            try await DependencyContainer.withMain(container) {
                await Task.yield()
                throw Failure()
            }
        }
        #expect(throws: Failure.self) {
            try DependencyContainer.withMain(container) { throw Failure() }
        }
    }

    @Test func parallelScopesDoNotSeeEachOther() async {
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let mine = DependencyContainer()
                    return await DependencyContainer.withMain(mine) {
                        await Task.yield()
                        return DependencyContainer.main === mine
                    }
                }
            }
            for await isolated in group { #expect(isolated) }
        }
    }
}
