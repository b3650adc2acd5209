// Promises of the articles (OverridesAndMocks, Concurrency, WritingTests) that no other
// suite pinned: decorations through three levels, a child's family override before its
// parent's argument override, one trace batch for nested async singletons, what a
// property keeps until its owner goes, main-actor overrides served off the main actor,
// assigning `main` inside `withMain`, and a cancelled first asker.
import DependencyInjection
import Foundation
import Testing

final class DPASession: Sendable {
    let label: String
    init(_ label: String) { self.label = label }
}

final class DPAValue: Sendable {}

actor DPAStore {
    let label: String
    init(_ label: String) { self.label = label }
}

final class DPAOwner: @unchecked Sendable {
    @Dependency(\.dpaFresh) var fresh
}

extension DependencyContainer {
    var dpaSession: ProviderFamily<String, DPASession> { singleton { id in DPASession("live " + id) } }
    var dpaFresh: Provider<DPAValue> { factory { DPAValue() } }
    var dpaLeaf: Provider<DPAValue> { singleton { DPAValue() } }
    var dpaInner: AsyncProvider<DPAStore> {
        singleton {
            _ = self.dpaLeaf()
            return DPAStore("inner")
        }
    }
    var dpaCancelProbe: AsyncProvider<DPAStore> {
        singleton {
            (self.getValue(forKey: "sawCancel") as Collected<Bool>?)?.append(Task.isCancelled)
            try Task.checkCancellation()
            return DPAStore("built")
        }
    }
    var dpaOuter: AsyncProvider<DPAStore> {
        singleton {
            _ = try await self.dpaInner()
            return DPAStore("outer")
        }
    }
}

@Suite struct ArticlePromiseTests {
    // OverridesAndMocks: "A child that overrides the provider itself is not decorated by its
    // parent ... (the child's own decorations wrap it)"; "A child applies its parent's
    // decorations, then its own". Three levels.
    @Test func aGrandchildUnderAnOverridingChildGetsOnlyTheDecorationsFromTheOverrideDown() {
        let a = DependencyContainer()
        a.decorate(\.httpClient) { WrappingHTTPClient("a", wrapping: $0) }
        let b = DependencyContainer(parent: a)
        b.override(\.httpClient) { StubHTTPClient("b") }
        b.decorate(\.httpClient) { WrappingHTTPClient("b", wrapping: $0) }
        let c = DependencyContainer(parent: b)
        c.decorate(\.httpClient) { WrappingHTTPClient("c", wrapping: $0) }
        #expect(a.httpClient().name == "a(live)")
        #expect(b.httpClient().name == "b(b)")
        #expect(c.httpClient().name == "c(b(b))")
        // "Reset removes it": a child's reset removes its own decorations and override only.
        b.reset(\.httpClient)
        #expect(c.httpClient().name == "c(a(live))")
        c.reset(\.httpClient)
        #expect(c.httpClient().name == "a(live)")
        a.reset(\.httpClient)
        #expect(c.httpClient().name == "live")
    }
    // RegisteringDependencies/OverridesAndMocks: per-argument override wins in the same
    // container; a container's own overrides, of either kind, come before its parents'.
    @Test func aChildsFamilyOverrideComesBeforeItsParentsArgumentOverride() {
        let parent = DependencyContainer()
        parent.override(\.dpaSession["42"]) { DPASession("parent 42") }
        let child = DependencyContainer(parent: parent)
        #expect(child.dpaSession("42").label == "parent 42")
        child.override(\.dpaSession) { id in DPASession("child " + id) }
        #expect(child.dpaSession("42").label == "child 42")
        #expect(child.dpaSession("7").label == "child 7")
        child.override(\.dpaSession["42"]) { DPASession("child 42 alone") }
        #expect(child.dpaSession("42").label == "child 42 alone")
        child.reset(\.dpaSession)
        #expect(child.dpaSession("42").label == "parent 42")
        #expect(child.dpaSession("7").label == "live 7")
        #expect(parent.dpaSession("42").label == "parent 42")
    }
    // CompositionRoot: "A tracer receives the events of each outermost resolution as one
    // batch ... in the order the resolutions in it started ... Synchronous and asynchronous
    // resolutions are delivered the same way."
    @Test func nestedAsyncSingletonsAreOneBatchInStartOrder() async throws {
        let container = DependencyContainer()
        let batches = Collected<[ResolutionEvent]>()
        container.tracer = ResolutionTracer { batches.append($0) }
        _ = try await container.dpaOuter()
        let all = batches.values
        #expect(all.count == 1)
        #expect(all.first?.map(\.name) == ["dpaOuter", "dpaInner", "dpaLeaf"])
        #expect(all.first?.map(\.depth) == [0, 1, 2])
    }
    // Concurrency: "A value replaced by the setter, `$x.reset()` or a container switch is
    // kept until the owning object is released".
    @Test func replacedPropertyValuesAreKeptUntilTheOwnerGoesThenFreed() {
        weak var first: DPAValue?
        weak var second: DPAValue?
        weak var third: DPAValue?
        let world = DependencyContainer()
        do {
            let owner = DependencyContainer.withMain(world) { DPAOwner() }
            first = owner.fresh
            owner.$fresh.reset()
            second = owner.fresh
            owner.fresh = DPAValue()
            third = owner.fresh
            owner.$fresh.container = DependencyContainer()
            _ = owner.fresh
            #expect(first != nil && second != nil && third != nil)
        }
        #expect(first == nil && second == nil && third == nil)
    }
    // Apps: "A singleton the replacement already built on the main actor is Sendable ... and
    // is served anywhere."
    @Test func aMainActorOverridesSingletonBuiltOnMainIsServedOffTheMainActor() async {
        let container = DependencyContainer()
        let built = await MainActor.run {
            container.override(\.httpClient) { @MainActor in StubHTTPClient("main") }
            return container.httpClient()
        }
        let elsewhere = await Task.detached { container.httpClient() }.value
        #expect(elsewhere === built)
        let loader = await Task.detached { container.feedLoader() }.value
        #expect(loader.client === built)
    }
    // OverridesAndMocks: "Assigning `main` inside `withMain` changes the process-wide value,
    // while reads in that call still return the call's container", and detached tasks and
    // threads see the process-wide `main`. In a process of its own, since it assigns `main`.
    @Test func assigningMainInsideWithMainChangesTheProcessWideValueOnly() async {
        await #expect(processExitsWith: .success) {
            let world = DependencyContainer()
            let other = DependencyContainer()
            await DependencyContainer.withMain(world) {
                DependencyContainer.main = other
                precondition(DependencyContainer.main === world, "the call's container")
                let detached = await Task.detached { DependencyContainer.main }.value
                precondition(detached === other, "a detached task sees the process-wide main")
                let child = await Task { DependencyContainer.main }.value
                precondition(child === world, "a child task sees the call's container")
            }
            precondition(DependencyContainer.main === other, "the process-wide main")
            DependencyContainer.mocks.removeAll()
            precondition(DependencyContainer.mocks.isMocked)
        }
    }
    // Concurrency: an async singleton "runs in a task of its own, so cancelling one waiting
    // task does not cancel it for the others". Also when the first asker is already cancelled.
    @Test func anAlreadyCancelledFirstAskerDoesNotCancelTheConstruction() async throws {
        let container = DependencyContainer()
        let saw = Collected<Bool>()
        container.setValue(saw, forKey: "sawCancel")
        let go = AsyncLatch()
        let first = Task { await go.wait(); return try await container.dpaCancelProbe() }
        first.cancel()
        go.open()
        _ = try? await first.value
        let store = try await container.dpaCancelProbe()
        #expect(store.label == "built")
        #expect(saw.values.allSatisfy { !$0 })
        #expect(saw.values.count == 1)
    }
}
