import Foundation
import Testing
@testable import DependencyInjection

// Review of 0c305b5: the plain factory road walks its bucket of the thread's frames inline
// and calls `Frame.stopCycle` only to stop; `Frame.checkThreadBase` only with a base; the
// plain frame is written inline; `isKeptByContainer` is a switch. What the existing attack
// tests miss: a bucket whose matching frame is a `Frame` object (a resolution of the same
// key that took the whole road because an override, a decoration or a tracer was
// installed then, removed before the key is asked for again on the plain road), and the
// scopes the container keeps. Everything here is `IRR`/`irr`.

extension DependencyContainer {
    /// 1 on the plain road; overridden, decorated or traced by the tests below, whose
    /// replacement removes itself and asks for this again.
    var irrSelf: Provider<Int> { factory { 1 } }

    /// Asks for `irrSelf` on the plain road.
    var irrVia: Provider<Int> { factory { self.irrSelf() + 1 } }

    /// While `irr.traced` reads true: clears it and this container's tracer, and asks for
    /// itself again, now on the plain road. 1 otherwise.
    var irrTraced: Provider<Int> {
        factory {
            guard self.getValue(forKey: "irr.traced") == true else { return 1 }
            self.setValue(false, forKey: "irr.traced")
            self.tracer = nil
            return self.irrTraced() + 1
        }
    }
}

/// A family argument whose hash is the same for every id: the members of a family keyed
/// by it are filed in one bucket of their thread, in one container.
struct IRRSameBucket: Hashable, Sendable {
    let id: Int
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

extension DependencyContainer {
    /// Member n is n.
    var irrSameBucket: ProviderFamily<IRRSameBucket, Int> { factory { (member: IRRSameBucket) in member.id } }
}

@Suite struct IRRInlineRoadReviewTests {
    // MARK: - A frame object of the same key in the bucket

    /// An override of `irrSelf` (its frame a `Frame` object, filed in the thread's slot)
    /// resets itself and asks for `irrSelf`: that takes the plain road, whose bucket holds
    /// the override's frame, which builds the same key in the same container. It stops,
    /// from that frame.
    @Test func aPlainFactoryUnderTheOverriddenResolutionOfItsOwnKeyStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("irrSelf under its override")
            let container = DependencyContainer()
            container.override(\.irrSelf) {
                container.reset(\.irrSelf)
                return container.irrSelf() + 100
            }
            _ = container.irrSelf()
        })
        #expect(cycle?.names == ["irrSelf", "irrSelf"], "\(cycle?.description ?? "nil")")
        #expect(cycle?.locatesEveryLink(in: "DependencyInjectionTests") == true)
    }

    /// The same through a plain factory between them: the innermost frame is a plain one,
    /// the frame that closes the cycle an object, and the report names all three.
    @Test func aCycleFromAnOverriddenFrameThroughAPlainOneNamesEveryLink() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("irrSelf through irrVia")
            let container = DependencyContainer()
            container.override(\.irrSelf) {
                container.reset(\.irrSelf)
                return container.irrVia() + 100
            }
            _ = container.irrSelf()
        })
        #expect(cycle?.isCycle(["irrSelf", "irrVia", "irrSelf"]) == true, "\(cycle?.description ?? "nil")")
        #expect(cycle?.names.first == "irrSelf")
    }

    /// A decoration's frame: the registration's closure runs in it, and asks for its own
    /// key once the decoration is reset (from `irrVia`, on the plain road).
    @Test func aPlainFactoryUnderTheDecoratedResolutionOfItsOwnKeyStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("irrVia under a decorated irrVia")
            let container = DependencyContainer()
            // The decoration runs after the closure, so it is the override of `irrSelf`
            // that resets it: the decorated `irrVia` asks for the overridden `irrSelf`,
            // which drops both and asks for `irrVia` again.
            container.decorate(\.irrVia) { $0 + 1000 }
            container.override(\.irrSelf) {
                container.reset(\.irrVia)
                container.reset(\.irrSelf)
                return container.irrVia()
            }
            _ = container.irrVia()
        })
        #expect(cycle?.isCycle(["irrVia", "irrSelf", "irrVia"]) == true, "\(cycle?.description ?? "nil")")
    }

    /// A traced resolution's frame (filed on the thread, and bound for its tasks): the
    /// factory removes the tracer and asks for itself again, on the plain road.
    @Test func aPlainFactoryUnderTheTracedResolutionOfItsOwnKeyStops() async {
        let cycle = CycleChain(await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("irrTraced")
            let container = DependencyContainer()
            container.setValue(true, forKey: "irr.traced")
            container.tracer = ResolutionTracer { _ in }
            _ = container.irrTraced()
        })
        #expect(cycle?.names == ["irrTraced", "irrTraced"], "\(cycle?.description ?? "nil")")
    }

    /// Without the cycle, the same roads resolve: an override's frame object of another
    /// member of one family, filed in the same bucket, is compared and passed over; a reset
    /// override and a removed tracer leave the thread's slot empty.
    @Test func aFrameObjectOfAnotherKeyInTheBucketIsNoCycle() {
        let container = DependencyContainer()
        let (one, two) = (IRRSameBucket(id: 1), IRRSameBucket(id: 2))
        let id = ObjectIdentifier(container)
        #expect(
            Frame.bucket(of: container.irrSameBucket[one].key, in: id)
                == Frame.bucket(of: container.irrSameBucket[two].key, in: id))
        container.override(\.irrSameBucket[one]) {
            container.reset(\.irrSameBucket)
            return container.irrSameBucket(two) + 10
        }
        #expect(container.irrSameBucket(one) == 12)
        #expect(container.irrSameBucket(one) == 1)
        container.setValue(false, forKey: "irr.traced")
        container.tracer = ResolutionTracer { _ in }
        #expect(container.irrTraced() == 1)
        container.tracer = nil
        #expect(ThreadFrames.existingSlot?.innermostWord == nil)
        #expect(ThreadFrames.existingSlot?.base == nil)
    }

    // MARK: - The scopes a container keeps

    /// Only singletons and scoped registrations are kept by the container that builds them.
    @Test func onlySingletonsAndScopedInstancesAreKeptByTheirContainer() {
        let kept = DependencyScope.allCases.filter(\.isKeptByContainer)
        #expect(kept == [.singleton, .scoped])
        #expect(DependencyScope.allCases.count == 5)
    }
}
