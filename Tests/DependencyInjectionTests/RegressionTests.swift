import DependencyInjection
import Foundation
import Testing

// Regressions found in review. Each test failed (or crashed, or hung) before its fix.

/// A flag set from another thread or task.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// A singleton whose `deinit` uses the container that built it.
final class ContainerUser: @unchecked Sendable {
    let container: DependencyContainer
    init(_ container: DependencyContainer) { self.container = container }
    deinit { _ = container.getValue(forKey: "anything") as Int? }
}

extension DependencyContainer {
    var needsSlow: Provider<Node> { singleton { _ = self.slowToBuild(); return Node() } }
    var slowToBuild: Provider<Node> { singleton { Thread.sleep(forTimeInterval: 0.03); return Node() } }

    var slowOnce: Provider<Node> {
        singleton {
            self.count("slowOnce")
            Thread.sleep(forTimeInterval: 0.05)
            return Node()
        }
    }

    /// Starts a task that resolves this very singleton after it has been built.
    var spawner: AsyncProvider<Node> {
        singleton {
            let container = self
            Task {
                try await Task.sleep(nanoseconds: 20_000_000)
                _ = try await container.spawner()
                (container.getValue(forKey: "done") as Flag?)?.set()
            }
            return Node()
        }
    }

    var containerUser: Provider<ContainerUser> { singleton { ContainerUser(self) } }
}

@Suite struct RegressionTests {
    /// Thread 2 builds `slowToBuild` while thread 1 waits for it inside `needsSlow`;
    /// thread 2 then asks for `needsSlow`. Nothing deadlocks, so nothing may stop.
    @Test func aFinishedConstructionIsNeverPartOfACycle() async {
        await #expect(processExitsWith: .success) {
            for _ in 0..<30 {
                let container = DependencyContainer()
                let done = DispatchGroup()
                done.enter()
                Thread {
                    _ = container.slowToBuild()
                    _ = container.needsSlow()
                    done.leave()
                }.start()
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 0.01)
                _ = container.needsSlow()
                done.wait()
            }
        }
    }

    @Test func anUnrelatedOverrideDuringAConstructionKeepsOneSingleton() {
        let container = DependencyContainer()
        let builds = container.counter("slowOnce")
        let first = Collected<Node>()
        let done = DispatchGroup()
        done.enter()
        Thread {
            first.append(container.slowOnce())
            done.leave()
        }.start()
        Thread.sleep(forTimeInterval: 0.01)
        container.override(\.imageCache) { ImageCache() }
        done.wait()
        #expect(container.slowOnce() === first.values.first)
        #expect(builds.count == 1)
    }

    /// A task started by a construction outlives it; resolving the singleton from there
    /// later is not a cycle.
    @Test func aTaskStartedByAnAsyncConstructionMayResolveItLater() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            let flag = Flag()
            container.setValue(flag, forKey: "done")
            _ = try? await container.spawner()
            for _ in 0..<100 where !flag.isSet {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            if !flag.isSet { exit(3) }
        }
    }

    // MARK: - No user code under a container lock

    private func finishes(_ work: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchGroup()
        done.enter()
        Thread {
            work()
            done.leave()
        }.start()
        return done.wait(timeout: .now() + 5) == .success
    }

    @Test func resetReleasesInstancesOutsideTheLock() {
        let container = DependencyContainer()
        _ = container.containerUser()
        #expect(finishes { container.reset() }, "reset() deadlocked in a singleton's deinit")
    }

    @Test func overrideReleasesWhatItDropsOutsideTheLock() {
        let container = DependencyContainer()
        _ = container.containerUser()
        #expect(finishes {
            container.override(\.containerUser) { ContainerUser(DependencyContainer()) }
        }, "override deadlocked in a singleton's deinit")
        #expect(finishes { container.reset(\.containerUser) }, "reset(_:) deadlocked")
    }

    @Test func replacedStoredValuesAreReleasedOutsideTheLock() {
        let container = DependencyContainer()
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(finishes { container.setValue(0, forKey: "user") }, "setValue deadlocked")
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(finishes { container.removeValue(forKey: "user") }, "removeValue deadlocked")
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(finishes { container.removeAll() }, "removeAll deadlocked")
    }
}

/// Reads its own property while that property resolves: a cycle through one wrapper.
final class SelfReadingHolder: @unchecked Sendable {
    @Dependency(\.selfReader) var node
}

extension DependencyContainer {
    var selfReader: Provider<Node> {
        factory {
            _ = (self.getValue(forKey: "holder") as SelfReadingHolder?)?.node
            return Node()
        }
    }
}

@Suite struct DependencyPropertyCycleTests {
    @Test func readingAPropertyWhileItResolvesNamesTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { SelfReadingHolder() }
            container.setValue(holder, forKey: "holder")
            _ = holder.node
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["@Dependency in SelfReadingHolder", "selfReader", "@Dependency in SelfReadingHolder"],
            "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(cycle?.names ?? []) == true)
    }
}

/// Holds a property whose registration needs `crossSingleton`, whose factory reads the
/// property back: a cycle that two threads can enter from both ends.
final class CrossHolder: @unchecked Sendable {
    @Dependency(\.crossFactory) var node
}

/// Orders the two threads of the cross-thread property cycle.
final class CrossCycleSignals: Sendable {
    /// The first thread is building `crossSingleton`.
    let singletonStarted = DispatchSemaphore(value: 0)
    /// The second thread has claimed the property and is resolving `crossFactory`.
    let propertyClaimed = DispatchSemaphore(value: 0)
    init() {}
}

extension DependencyContainer {
    var crossFactory: Provider<Node> {
        factory {
            (self.getValue(forKey: "signals") as CrossCycleSignals?)?.propertyClaimed.signal()
            _ = self.crossSingleton()
            return Node()
        }
    }
    var crossSingleton: Provider<Node> {
        singleton {
            let signals: CrossCycleSignals? = self.getValue(forKey: "signals")
            signals?.singletonStarted.signal()
            signals?.propertyClaimed.wait()
            _ = (self.getValue(forKey: "holder") as CrossHolder?)?.node
            return Node()
        }
    }
}

extension DependencyPropertyCycleTests {
    /// Thread 1 builds `crossSingleton`, which reads the property; thread 2 is resolving
    /// the property, which needs `crossSingleton`. Each waits for the other. Semaphores
    /// make both threads be inside their half of the cycle before either closes it.
    @Test func aCycleAcrossThreadsThroughAPropertyStopsInsteadOfDeadlocking() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cross-thread cycle through a property")
            let container = DependencyContainer()
            let signals = CrossCycleSignals()
            container.setValue(signals, forKey: "signals")
            let holder = DependencyContainer.withMain(container) { CrossHolder() }
            container.setValue(holder, forKey: "holder")
            Thread { _ = container.crossSingleton() }.start()
            signals.singletonStarted.wait()
            _ = holder.node  // one of the two threads stops the process
        }
        let chain = try #require(
            CycleChain(standardError: result?.standardErrorContent ?? []), "\(standardError(of: result))")
        #expect(chain.namesEachRegistrationOnce, "\(chain)")
        #expect(Set(chain.names) == ["crossSingleton", "crossFactory", "@Dependency in CrossHolder"],
                "\(chain)")
        #expect(chain.locatesEveryLink(in: "DependencyInjectionTests/RegressionTests.swift"), "\(chain)")
    }
}

extension DependencyContainer {
    /// Builds `detachingInner`, then keeps building for a while.
    var detachingOuter: AsyncProvider<Node> {
        singleton {
            _ = try await self.detachingInner()
            try await Task.sleep(nanoseconds: 300_000_000)
            return Node()
        }
    }
    /// Starts a task that, after this construction ends, asks for `detachingOuter`,
    /// which is still being built.
    var detachingInner: AsyncProvider<Node> {
        singleton {
            let container = self
            Task {
                try await Task.sleep(nanoseconds: 100_000_000)
                _ = try await container.detachingOuter()
                (container.getValue(forKey: "done") as Flag?)?.set()
            }
            return Node()
        }
    }

    /// Starts a task that resolves `laterDependency` after this construction ends.
    var laterUser: AsyncProvider<Node> {
        singleton {
            self.count("laterUser")
            let container = self
            Task {
                try await Task.sleep(nanoseconds: 50_000_000)
                _ = try await container.laterDependency()
                (container.getValue(forKey: "used") as Flag?)?.set()
            }
            return Node()
        }
    }
    var laterDependency: AsyncProvider<Node> { singleton { Node() } }

    var singletonOverFactory: AsyncProvider<Node> {
        singleton { _ = try await self.factoryBack(); return Node() }
    }
    var factoryBack: AsyncProvider<Node> {
        factory { _ = try await self.singletonOverFactory(); return Node() }
    }
}

@Suite struct DetachedTaskTests {
    /// A task started by a finished construction awaits an enclosing construction that is
    /// still in flight: that construction never awaits the task, so it is no cycle.
    @Test func aDetachedTaskMayAwaitAnEnclosingConstructionInFlight() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            let flag = Flag()
            container.setValue(flag, forKey: "done")
            _ = try? await container.detachingOuter()
            for _ in 0..<100 where !flag.isSet {
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            if !flag.isSet { exit(3) }
        }
    }

    @Test func whatADetachedTaskResolvesLaterIsNotADependency() async throws {
        let container = DependencyContainer()
        let builds = container.counter("laterUser")
        let used = Flag()
        container.setValue(used, forKey: "used")
        let first = try await container.laterUser()
        for _ in 0..<100 where !used.isSet {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(used.isSet)
        container.override(\.laterDependency) { Node() }
        #expect(try await container.laterUser() === first)
        #expect(builds.count == 1)
    }

    @Test func anAsyncCycleThroughAFactoryNamesTheFactory() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = try await DependencyContainer().singletonOverFactory()
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["singletonOverFactory", "factoryBack", "singletonOverFactory"], "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(["singletonOverFactory", "factoryBack", "singletonOverFactory"]) == true)
    }

    @Test func replacingTheTracerReleasesTheOldOneOutsideTheLock() {
        let container = DependencyContainer()
        do {
            let user = ContainerUser(container)
            container.tracer = ResolutionTracer { _ in _ = user }
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            container.tracer = nil
            done.leave()
        }.start()
        #expect(done.wait(timeout: .now() + 5) == .success, "setting the tracer deadlocked")
    }
}
