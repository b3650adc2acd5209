import DependencyInjection
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Fixtures

final class SPFToken: Hashable, Sendable {
    let id: Int
    init(id: Int) { self.id = id }
    static func == (lhs: SPFToken, rhs: SPFToken) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Reads `spfStoredName` from a container it is given.
final class SPFReader: @unchecked Sendable {
    @Dependency var name: String
    init(_ container: DependencyContainer) { _name = Dependency(\.spfStoredName, container: container) }
}

/// A chain of first reads, each nested in the one before.
final class SPFNest: @unchecked Sendable {
    @Dependency var depth: Int
    init(_ container: DependencyContainer) { _depth = Dependency(\.spfNested, container: container) }
}

final class SPFCycleA: @unchecked Sendable {
    @Dependency var a: Int
    init(_ container: DependencyContainer) { _a = Dependency(\.spfCycA, container: container) }
}
final class SPFCycleB: @unchecked Sendable {
    @Dependency var b: Int
    init(_ container: DependencyContainer) { _b = Dependency(\.spfCycB, container: container) }
}
final class SPFShelf: @unchecked Sendable {
    var a: SPFCycleA?
    var b: SPFCycleB?
    init() {}
}

final class SPFPayload: Sendable {
    let id: Int
    let onDeinit: (@Sendable () -> Void)?
    init(id: Int, onDeinit: (@Sendable () -> Void)? = nil) { (self.id, self.onDeinit) = (id, onDeinit) }
    deinit { onDeinit?() }
}

final class SPFTracerProbe: Sendable { init() {} }

extension DependencyContainer {
    /// Plain computed (no registration frame): every level is a first read of a new storage.
    var spfNested: Int {
        let remaining: Int = self.getValue(forKey: "spf.remaining")!
        if remaining == 0 { return 0 }
        self.setValue(remaining - 1, forKey: "spf.remaining")
        // A sibling read that ends first, then the nested one (which then runs in the
        // sibling's frame, kept).
        precondition(SPFReader(self).name != "none")
        return SPFNest(self).depth + 1
    }

    var spfCycA: Provider<Int> {
        factory {
            let shelf: SPFShelf = self.getValue(forKey: "spf.shelf")!
            // A sibling first read that ends and leaves its frame as the spare.
            _ = SPFReader(self).name
            return shelf.b!.b + 1
        }
    }
    var spfCycB: Provider<Int> {
        factory {
            let shelf: SPFShelf = self.getValue(forKey: "spf.shelf")!
            _ = SPFReader(self).name
            return shelf.a!.a + 1
        }
    }

    subscript(spfFamily token: SPFToken) -> Provider<String> {
        factory(token) { SPFReader(self).name + "\(token.id)" }
    }

    var spfPayload: Provider<SPFPayload> { factory { SPFPayload(id: 1) } }

    subscript(spfNumbered number: Int) -> Provider<SPFPayload> {
        singleton(number) { SPFPayload(id: number) }
    }
    subscript(spfReentrant number: Int) -> Provider<SPFPayload> {
        singleton(number) {
            SPFPayload(id: number) { [weak self] in
                // A singleton's deinit that resolves from the same container while its
                // table's storage is released.
                guard let self else { return }
                _ = self[spfNumbered: number + 100_000]()
                _ = SPFReader(self).name
            }
        }
    }
}

@Suite struct SpareFrameAttackTests {
    @Test func deepNestedFirstReadsEachResolveFromTheirContainer() {
        for round in 0..<3 {
            let container = DependencyContainer()
            container.setValue("nest", forKey: "spf.name")
            container.setValue(300, forKey: "spf.remaining")
            #expect(SPFNest(container).depth == 300, "round \(round)")
            // And a plain read after, in whatever frame was kept.
            let other = DependencyContainer()
            other.setValue("other", forKey: "spf.name")
            #expect(SPFReader(other).name == "other")
        }
    }

    @Test func aCycleBetweenTwoPropertiesAfterReusedFramesNamesTheRightChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.setValue("x", forKey: "spf.name")
            // Warm the thread's spare frame.
            for _ in 0..<3 { _ = SPFReader(container).name }
            let shelf = SPFShelf()
            shelf.a = SPFCycleA(container)
            shelf.b = SPFCycleB(container)
            container.setValue(shelf, forKey: "spf.shelf")
            _ = shelf.a!.a
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == [
            "@Dependency in init(_:)", "spfCycA", "@Dependency in init(_:)", "spfCycB", "@Dependency in init(_:)",
        ], "\(standardError(of: result))")
        // A, then B, then A again: the properties' lines, in order (no sibling's frame).
        let locations = cycle?.links.compactMap(\.location) ?? []
        #expect(locations.count == 4 && locations[0] != locations[2],
            "\(standardError(of: result))")
    }

    @Test func aTracerThatReadsPropertiesAndResolvesKeepsWorking() {
        let container = DependencyContainer()
        container.setValue("traced", forKey: "spf.name")
        let seen = Collected<String>()
        weak var probeSeen: SPFTracerProbe?
        do {
            let probe = SPFTracerProbe()
            probeSeen = probe
            container.tracer = ResolutionTracer { events in
                withExtendedLifetime(probe) {}
                // First reads inside the tracer, nested and plain, and a resolution.
                seen.append(SPFReader(container).name)
                _ = container.spfPayload()
                for event in events { seen.append(event.name) }
            }
        }
        for token in 0..<20 {
            #expect(container[spfFamily: SPFToken(id: token)]() == "traced\(token)")
            #expect(SPFReader(container).name == "traced")
        }
        container.tracer = nil
        #expect(probeSeen == nil, "a tracer stays alive after it was removed")
        #expect(seen.values.filter { $0 == "traced" }.count >= 20)
    }

    @Test func containersTokensAndTracersGoWhenDroppedThoughThreadsKeepSpares() {
        weak var weakContainer: DependencyContainer?
        weak var weakToken: SPFToken?
        weak var weakProbe: SPFTracerProbe?

        do {
            let container = DependencyContainer()
            weakContainer = container
            container.setValue("c", forKey: "spf.name")
            let probe = SPFTracerProbe()
            weakProbe = probe
            container.tracer = ResolutionTracer { _ in withExtendedLifetime(probe) {} }
            let token = SPFToken(id: 7)
            weakToken = token
            #expect(container[spfFamily: token]() == "c7")
            #expect(SPFReader(container).name == "c")
            container.tracer = nil
        }
        #expect(weakToken == nil)
        #expect(weakProbe == nil)
        #expect(weakContainer == nil)
    }

    @Test func threadsThatExitHoldingSpareFramesLeakNothing() async {
        weak var weakContainer: DependencyContainer?
        do {
            let container = DependencyContainer()
            weakContainer = container
            container.setValue("t", forKey: "spf.name")
            #expect(await finishesWithoutHangingOffThePool {
                joiningThreadsThatRun(32) { index in
                    for round in 0..<50 {
                        precondition(SPFReader(container).name == "t")
                        precondition(container[spfFamily: SPFToken(id: index * 100 + round)]() == "t\(index * 100 + round)")
                    }
                }
            })
        }
        #expect(weakContainer == nil)
    }

    /// A thread-specific destructor that runs after the package's (a key made later) reads
    /// a property for the first time: a new slot, a new spare, freed on the next round.
    @Test func aDestructorAfterTheSlotsOwnReadsAPropertyForTheFirstTime() async {
        let container = DependencyContainer()
        container.setValue("late", forKey: "spf.name")
        _ = SPFReader(container).name  // the package's key exists now
        let reads = Counter()
        final class Context { let container: DependencyContainer; let reads: Counter
            init(_ c: DependencyContainer, _ r: Counter) { (container, reads) = (c, r) } }
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { raw in
            guard let raw else { return }
            let context = Unmanaged<Context>.fromOpaque(raw).takeRetainedValue()
            precondition(SPFReader(context.container).name == "late")
            precondition(SPFNest(context.container).depth >= 0)
            context.reads.increment()
        }
        precondition(status == 0)
        container.setValue(2, forKey: "spf.remaining")
        container.setValue("late", forKey: "spf.name")
        let keyCopy = key
        #expect(await finishesWithoutHangingOffThePool {
            joiningThreadsThatRun(8) { _ in
                _ = SPFReader(container).name
                pthread_setspecific(keyCopy, Unmanaged.passRetained(Context(container, reads)).toOpaque())
            }
        })
        #expect(reads.count == 8)
        pthread_key_delete(key)
    }

    @Test func aTaskStartedInAReadThatOutlivesItSeesTheReadsChainIntact() async {
        let finished = await finishesWithoutHangingOffThePool {
            let container = DependencyContainer()
            container.setValue("task", forKey: "spf.name")
            let other = DependencyContainer()
            other.setValue("other", forKey: "spf.name")
            let gate = DispatchSemaphore(value: 0)
            let done = DispatchSemaphore(value: 0)
            let names = Collected<String>()
            container.setValue(SPFTaskBox(gate: gate, done: done, names: names), forKey: "spf.taskbox")
            let holder = SPFTaskHolder(container)
            #expect(holder.value == 5)
            // The same thread reads more properties for the first time, cycling its spare.
            for _ in 0..<100 { precondition(SPFReader(other).name == "other") }
            gate.signal()
            done.wait()
            // Made in the task: a property with no container resolves from `main`, not
            // from `other` or `container`; one given the container resolves from it.
            #expect(names.values == ["main:none", "task"], "\(names.values)")
        }
        #expect(finished)
    }

    @Test func manySingletonsRemovedOverriddenAndResetWithReentrantDeinits() {
        let container = DependencyContainer()
        container.setValue("deinit", forKey: "spf.name")
        for round in 0..<3 {
            let built = (0..<4_000).map { container[spfNumbered: $0]() }
            for number in stride(from: 0, to: 4_000, by: 7) {
                #expect(container[spfNumbered: number]() === built[number], "round \(round)")
            }
            let reentrant = (0..<500).map { container[spfReentrant: $0]() }
            #expect(reentrant.map(\.id) == Array(0..<500))
            _ = consume reentrant
            container.reset()
            // The deinits resolved spfNumbered 100_000...100_499 into the table meanwhile.
            #expect(container[spfNumbered: 3]() !== built[3])
            #expect(container[spfNumbered: 100_003]().id == 100_003)
            container.reset()
        }
    }
}

final class SPFTaskBox: Sendable {
    let gate: DispatchSemaphore
    let done: DispatchSemaphore
    let names: Collected<String>
    init(gate: DispatchSemaphore, done: DispatchSemaphore, names: Collected<String>) {
        (self.gate, self.done, self.names) = (gate, done, names)
    }
}

final class SPFNoContainerReader: @unchecked Sendable {
    @Dependency(\.spfStoredName) var name: String
    init() {}
}

final class SPFTaskHolder: @unchecked Sendable {
    @Dependency var value: Int
    init(_ container: DependencyContainer) { _value = Dependency(\.spfTaskSingleton, container: container) }
}

extension DependencyContainer {
    var spfTaskSingleton: Provider<Int> {
        singleton {
            let box: SPFTaskBox = self.getValue(forKey: "spf.taskbox")!
            let container = self
            Task {
                box.gate.wait()
                box.names.append("main:" + SPFNoContainerReader().name)
                box.names.append(SPFReader(container).name)
                box.done.signal()
            }
            return 5
        }
    }
}
