// A reference that does not keep its container (`UnkeptContainer`): what the `@Dependency`
// property of an instance the container keeps, the box of a main-actor value and a linked
// provider hold, in place of a weak reference, which gives the container a side table and
// every later retain and release of it the runtime's slow path (a cached resolution cost
// 427 instructions through such a `main`, where it costs 238).
import Foundation
import Testing

@testable import DependencyInjection

/// A service built by the container, whose `deinit` says when the container let go of it.
private final class UnkeptProbe: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

/// A singleton with an injected property, as an app's services are.
private final class UnkeptService: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.unkeptClock) var clock
    init() {}
}

private final class UnkeptClock: Sendable {}

/// A value of the main actor, which need not be `Sendable`.
private final class UnkeptScreen {
    var title = ""
}

/// The one strong reference to a container, which a test hands from the thread that made
/// it to the one that drops it.
final class LastContainerReference: @unchecked Sendable {
    // @unchecked: `container` is read and written under `lock`.
    private let lock = NSLock()
    private var container: DependencyContainer?
    init(_ container: DependencyContainer) { self.container = container }
    /// The container, unless it was dropped: a strong reference, used outside the lock.
    var held: DependencyContainer? {
        lock.lock()
        defer { lock.unlock() }
        return container
    }
    func drop() {
        lock.lock()
        let dropped = container
        container = nil
        lock.unlock()
        withExtendedLifetime(dropped) {}
    }
}

extension DependencyContainer {
    fileprivate var unkeptClock: Provider<UnkeptClock> { singleton { UnkeptClock() } }
    fileprivate var unkeptService: Provider<UnkeptService> { singleton { UnkeptService() } }
    @MainActor fileprivate var unkeptScreen: Provider<UnkeptScreen> { singleton { @MainActor in UnkeptScreen() } }
    fileprivate var unkeptProbeCallback: Provider<@Sendable () -> Void> { unimplemented() }
    fileprivate var unkeptProbe: Provider<UnkeptProbe> { singleton { UnkeptProbe(onDeinit: self.unkeptProbeCallback()) } }
}

@Suite struct UnkeptContainerTests {
    /// The weak references to `container` right now: one is the object's own, and each
    /// weak reference adds one.
    private static func weakReferences(to container: DependencyContainer) -> UInt {
        _getWeakRetainCount(container)
    }

    @Test func aCachedServiceWithAnInjectedPropertyHoldsItsContainerWithoutAWeakReference() {
        let container = DependencyContainer()
        let before = Self.weakReferences(to: container)
        let service = container.unkeptService()
        #expect(Self.weakReferences(to: container) == before, "the unread property took a weak reference")
        #expect(service.clock === container.unkeptClock())
        #expect(Self.weakReferences(to: container) == before, "the read property took a weak reference")
    }

    @MainActor
    @Test func aCachedMainActorValueHoldsItsContainerWithoutAWeakReference() {
        let container = DependencyContainer()
        let before = Self.weakReferences(to: container)
        let screen = container.unkeptScreen()
        #expect(container.unkeptScreen() === screen)
        #expect(Self.weakReferences(to: container) == before)
    }

    @Test func theReferenceGivesTheContainerWhileItLivesAndNothingOnceItIsGone() {
        var container: DependencyContainer? = DependencyContainer()
        let reference = UnkeptContainer(container!)
        #expect(reference.container === container)
        #expect(reference.refers(to: container!))
        #expect(!reference.refers(to: DependencyContainer()))
        container = nil
        #expect(reference.container == nil)
    }

    /// A container that built its probe, which calls `onDeinit` as it goes; the test keeps
    /// no reference to it but the one it hands to the thread that drops it.
    private static func containerWithProbe(
        onDeinit: @escaping @Sendable () -> Void
    ) -> (UnkeptContainer, LastContainerReference, ObjectIdentifier) {
        let container = DependencyContainer()
        container.override(\.unkeptProbeCallback) { onDeinit }
        return (UnkeptContainer(container), LastContainerReference(container), ObjectIdentifier(container.unkeptProbe()))
    }

    /// Reads from three threads while a fourth drops the last reference to the container:
    /// each read gets either the container, alive until the read lets it go, or nothing,
    /// and the container goes exactly once, whichever thread lets go of it last.
    @Test func readersRacingTheLastReleaseGetTheLiveContainerOrNothing() async {
        let rounds = 200
        let gone = Collected<Int>()
        let reads = Collected<String>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<rounds {
                let (reference, last, probe) = Self.containerWithProbe { gone.append(round) }
                onThreadsReleasedTogetherAndJoined(4) { index in
                    guard index > 0 else { return last.drop() }
                    for _ in 0..<20 {
                        guard let live = reference.container else { return reads.append("nothing") }
                        reads.append(ObjectIdentifier(live.unkeptProbe()) == probe ? "its probe" : "another probe")
                    }
                }
                #expect(reference.container == nil, "round \(round): the container outlived every reference")
            }
        }
        #expect(finished)
        #expect(gone.values.sorted() == Array(0..<rounds), "each container went once, with its probe")
        #expect(!reads.values.contains("another probe"), "a read got a container that had let go of its probe")
    }
}
