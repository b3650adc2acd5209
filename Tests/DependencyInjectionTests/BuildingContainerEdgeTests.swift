import DependencyInjection
import Foundation
import Testing

// Edges of "a @Dependency created while a container builds an object takes that
// container": tasks that inherit a finished construction's frames, containers kept by what
// they cache, and which container wins where several could.

/// An object with one injected property, naming its container by the stored value
/// "building-owner" (see `buildingOwner` in BuildingContainerTests.swift).
final class Tag: @unchecked Sendable {
    @Dependency(\.buildingOwner) var owner
}

// MARK: - Fixtures: a task that takes the identity of a finished construction task

/// What the tasks of one round share.
final class ReuseProbe: @unchecked Sendable {
    let lock = NSLock()
    /// The task that ran the construction, by the identity `Owner` uses (its address).
    var constructionTask: Int?
    var containerAddress: Int?
    /// Tasks started after the construction that got the construction task's identity.
    var reusedIdentities = 0
    /// Tags created in those tasks that took the building container.
    var tagsThatTookTheContainer = 0
    let containerGone = AsyncLatch()
    let done = AsyncLatch()
    let readTags: Bool
    init(readTags: Bool) { self.readTags = readTags }
}

/// Starts a task through one helper, so that the construction's task and the later tasks
/// have the same allocation size (and the allocator hands out the freed block again).
@discardableResult
func launch(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
    Task { await body() }
}

func currentTaskIdentity() -> Int? { withUnsafeCurrentTask { $0?.hashValue } }

extension DependencyContainer {
    /// Records the task running this construction and starts a task, which inherits the
    /// construction's frame. Once the test says so (after the construction has ended),
    /// that task starts more tasks, one at a time, and creates a `Tag` in each.
    var reuseSpawner: Provider<Int> {
        factory {
            let probe: ReuseProbe = self.getValue(forKey: "reuse-probe")!
            probe.constructionTask = currentTaskIdentity()
            probe.containerAddress = ObjectIdentifier(self).hashValue
            Task {
                await probe.containerGone.wait()
                for _ in 0..<4 {
                    await launch {
                        let tag = Tag()
                        let reused = currentTaskIdentity() == probe.constructionTask
                        let took = ObjectIdentifier(tag.$owner.container).hashValue == probe.containerAddress
                        probe.lock.withLock {
                            if reused { probe.reusedIdentities += 1 }
                            if took { probe.tagsThatTookTheContainer += 1 }
                        }
                        if probe.readTags { _ = tag.owner }   // reads the container's state
                    }.value
                }
                probe.done.open()
            }
            return 0
        }
    }
}

extension DependencyContainer {
    /// Like `reuseSpawner`, but the later tasks resolve this same registration again in this
    /// same (live) container: a task that got the construction task's identity sees the
    /// inherited frame as its own construction of it, and `checkNoCycle` stops.
    var respawner: Provider<Int> {
        factory {
            let probe: ReuseProbe = self.getValue(forKey: "reuse-probe")!
            guard probe.constructionTask == nil else { return 1 }
            probe.constructionTask = currentTaskIdentity()
            Task {
                await probe.containerGone.wait()
                for _ in 0..<4 { await launch { _ = self.respawner() }.value }
                probe.done.open()
            }
            return 0
        }
    }
}

/// Builds `reuseSpawner` in a task of its own, `rounds` times. With `releaseContainer`, the
/// container is gone before the later tasks run; otherwise the caller's `keep` holds it.
func reuseRounds(_ rounds: Int, releaseContainer: Bool, readTags: Bool) async -> (reused: Int, took: Int) {
    var reused = 0
    var took = 0
    var kept: [DependencyContainer] = []
    for _ in 0..<rounds {
        let probe = ReuseProbe(readTags: readTags)
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            container.setValue(probe, forKey: "reuse-probe")
            container.setValue("built", forKey: "building-owner")
            released = container
            if !releaseContainer { kept.append(container) }
            await launch { _ = container.reuseSpawner() }.value
        }
        precondition(releaseContainer == (released == nil))
        probe.containerGone.open()
        await probe.done.wait()
        reused += probe.reusedIdentities
        took += probe.tagsThatTookTheContainer
    }
    return (reused, took)
}

@Suite struct BuildingContainerEdgeTests {
    // MARK: - A frame inherited by a later task is not the caller's own

    /// `Owner` is a task's address. A task the construction started inherits the
    /// construction's frame; a task it starts after the construction's task has ended
    /// often gets that task's freed address. The frame has ended, so the new task does not
    /// take it as its own construction: "a task the closure starts is not part of it".
    @Test func aTaskStartedAfterTheConstructionEndedDoesNotTakeItsContainer() async {
        let (reused, took) = await reuseRounds(100, releaseContainer: false, readTags: false)
        #expect(took == 0, "\(took) tags took the container; \(reused) tasks reused the construction task's identity")
    }

    /// The same with the container released: the frame reaches its container without a
    /// reference count, so reading it from such a task would read a freed object.
    @Test func aTaskStartedAfterTheConstructionEndedNeverReadsAReleasedContainer() async {
        await #expect(processExitsWith: .success) {
            _ = await reuseRounds(200, releaseContainer: true, readTags: true)
        }
    }

    /// The same cause once stopped a program with a false "Circular dependency": a later
    /// task with the construction task's address resolving the same registration in the
    /// same container.
    @Test func aLaterTaskResolvingTheSameRegistrationIsNotACycle() async {
        // Run directly, the process stops with "Fatal error: Circular dependency:
        // respawner (DependencyInjectionTests/BuildingContainerEdgeTests.swift:…) -> respawner".
        await #expect(processExitsWith: .success) {
            for _ in 0..<100 {
                let probe = ReuseProbe(readTags: false)
                let container = DependencyContainer()
                container.setValue(probe, forKey: "reuse-probe")
                await launch { _ = container.respawner() }.value
                probe.containerGone.open()
                await probe.done.wait()
            }
        }
    }

    // MARK: - A singleton's container is not kept alive by what it reads later

    /// `container` keeps `TagHolder`; `holder.tag` is built by `container`'s factory after
    /// the singleton's construction. Were the tag's property to hold `container` strongly,
    /// container -> TagHolder -> Tag -> container would keep it forever.
    @Test func aSingletonsFactoryBuiltPropertyDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.tagHolder().tag
        }
        #expect(released == nil, "container -> TagHolder -> Tag -> container")
    }

    /// The same through a plain computed property: the `Tag` is created while the holder's
    /// property is first resolved, and the container keeps the holder.
    @Test func aSingletonsPlainPropertyDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.plainTagHolder().tag
        }
        #expect(released == nil, "container -> PlainTagHolder -> Tag -> container")
    }

    // MARK: - Which container, where several could be

    /// An explicit `withMain` inside the closure loses to the building container, although
    /// `main` reads `other` there.
    @Test func withMainInsideAConstructionDoesNotChooseTheContainer() {
        let built = named("built")
        let other = named("other")
        built.setValue(other, forKey: "other")
        let tag = built.tagInWithMain()
        #expect(tag.owner == "built")
    }

    /// A child task of an async construction (`async let`, a task group) is another owner:
    /// its objects take `main`, not the container building.
    @Test func childTasksOfAnAsyncConstructionTakeMain() async throws {
        let built = named("built")
        let main = named("main")
        let (fromAsyncLet, fromGroup) = try await DependencyContainer.withMain(main) {
            (try await built.tagFromAsyncLet(), try await built.tagFromGroup())
        }
        #expect(fromAsyncLet.owner == "main")
        #expect(fromGroup.owner == "main")
    }

    @Test func anAsyncSingletonsConstructionTaskTakesTheContainer() async throws {
        let built = named("built")
        let main = named("main")
        let tag = try await DependencyContainer.withMain(main) { try await built.asyncSingletonTag() }
        #expect(tag.owner == "built")
    }

    /// A parent's override run for a child takes the child, the container resolving.
    @Test func aParentsOverrideResolvedThroughAChildTakesTheChild() {
        let parent = named("parent")
        parent.override(\.attackTag) { Tag() }
        let child = DependencyContainer(parent: parent)
        child.setValue("child", forKey: "building-owner")
        #expect(child.attackTag().$owner.container === child)
    }

    /// In a child process: a placeholder reports an issue (see UnimplementedTests).
    @Test func aPlaceholderTakesTheContainer() async {
        await #expect(processExitsWith: .success) {
            let built = DependencyContainer()
            built.setValue("built", forKey: "building-owner")
            let main = DependencyContainer()
            let tag = DependencyContainer.withMain(main) { built.placeholderTag() }
            precondition(tag.$owner.container === built)
        }
    }

    /// A tracer runs outside every frame.
    @Test func aTracerCallbackTakesMain() {
        let traced = named("traced")
        let main = named("main")
        let seen = Collected<String>()
        traced.tracer = ResolutionTracer { _ in seen.append(Tag().owner ?? "nil") }
        DependencyContainer.withMain(main) { _ = traced.attackTag() }
        #expect(seen.values == ["main"])
    }

    /// A plain property read through a `@Dependency` builds in that property's container.
    @Test func aPlainPropertyReadThroughAPinnedDependencyTakesThatContainer() {
        let other = named("other")
        let holder = DependencyContainer.withMain(other) { PlainTagHolder() }
        #expect(holder.tag.$owner.container === other)
    }

    /// Lazily resolved properties that refer to each other are not a cycle, without
    /// `withMain` (CycleTests covers it only inside `withMain(container)`).
    @Test func lazyPropertiesReferringToEachOtherWorkWithoutWithMain() {
        let container = DependencyContainer()
        let parent = container.lazyParent()
        #expect(parent.child.parent === parent)
        #expect(parent.child === container.lazyChild())
        #expect(parent.$child.container === container)
    }

    /// A singleton's own properties hold its container weakly without `withMain`, sync and
    /// async (ContainerLifetimeTests covers them only inside `withMain(container)`).
    @Test func aSingletonsOwnPropertiesDoNotKeepItsContainerAliveWithoutWithMain() async throws {
        weak var released: DependencyContainer?
        weak var releasedAsync: DependencyContainer?
        do {
            let container = named("built")
            released = container
            #expect(container.lazyParent().$child.container === container)
        }
        do {
            let container = named("built")
            releasedAsync = container
            let tag = try await container.asyncSingletonTag()
            #expect(tag.owner == "built")
        }
        weak var releasedCard: DependencyContainer?
        do {
            let container = named("built")
            releasedCard = container
            #expect(container.card().badge.owner == "built")   // an object the singleton creates
        }
        #expect(released == nil)
        #expect(releasedAsync == nil)
        #expect(releasedCard == nil)
    }

    /// The caller's reference is the construction's: dropping every other reference while
    /// the construction runs on another thread leaves `building` alive.
    @Test func aContainerDroppedElsewhereDuringItsConstructionStaysAliveUntilItEnds() {
        releaseGate = ConstructionGate()
        weak var released: DependencyContainer?
        let holder = ContainerHolder(named("built"))
        released = holder.container
        let tags = Collected<Tag>()
        let done = DispatchSemaphore(value: 0)
        Thread {
            let built = holder.container!.gatedTag()
            tags.append(built)
            done.signal()
        }.start()
        releaseGate.entered.wait()
        holder.container = nil
        #expect(released != nil)   // the construction keeps it
        releaseGate.open()
        done.wait()
        #expect(tags.values.first?.owner == "built")
    }

    private func named(_ name: String) -> DependencyContainer {
        let container = DependencyContainer()
        container.setValue(name, forKey: "building-owner")
        return container
    }
}

/// A singleton that reads a factory-built `Tag` through `@Dependency`, after it is built.
final class TagHolder: @unchecked Sendable {
    @Dependency(\.attackTag) var tag
}

/// A singleton that reads a plain computed property that builds a `Tag`.
final class PlainTagHolder: @unchecked Sendable {
    @Dependency(\.plainTag) var tag
}

extension DependencyContainer {
    var attackTag: Provider<Tag> { factory { Tag() } }
    var plainTag: Tag { Tag() }
    var tagHolder: Provider<TagHolder> { singleton { TagHolder() } }
    var plainTagHolder: Provider<PlainTagHolder> { singleton { PlainTagHolder() } }
    var other: DependencyContainer { getValue(forKey: "other")! }
    var tagInWithMain: Provider<Tag> { factory { DependencyContainer.withMain(self.other) { Tag() } } }
    var tagFromAsyncLet: AsyncProvider<Tag> {
        factory {
            async let tag = Tag()
            return await tag
        }
    }
    var tagFromGroup: AsyncProvider<Tag> {
        factory {
            await withTaskGroup(of: Tag.self) { group in
                group.addTask { Tag() }
                return await group.next()!
            }
        }
    }
    var asyncSingletonTag: AsyncProvider<Tag> { singleton { Tag() } }
    var placeholderTag: Provider<Tag> { unimplemented(placeholder: Tag()) }
    /// Waits at `releaseGate` before it creates the tag; the closure does not capture the
    /// container, so only the resolution itself keeps it.
    var gatedTag: Provider<Tag> {
        factory {
            releaseGate.enterAndWait()
            return Tag()
        }
    }
}

nonisolated(unsafe) var releaseGate = ConstructionGate()

/// Holds a container until the test drops it.
final class ContainerHolder: @unchecked Sendable {
    var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
}
