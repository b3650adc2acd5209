@testable import DependencyInjection
import Testing

/// A `shared(arg)` registration remembers each argument's instance weakly; what it keeps
/// for instances that died is pruned, so many distinct arguments do not grow the
/// container forever.
///
/// The count of remembered entries is internal: `_sharedEntryCount`.
@Suite struct SharedInstanceBookkeepingTests {
    // MARK: - Pruning

    @Test func entriesOfReleasedSharedInstancesArePruned() {
        let container = DependencyContainer()
        let held = (0..<8).map { container[thumbnails: $0]() }
        let distinct = 20_000
        for size in held.count..<distinct {
            _ = container[thumbnails: size]()  // released at once: nobody holds it
        }
        #expect(container._sharedEntryCount < distinct / 4, "\(container._sharedEntryCount) entries kept")
        for (size, thumbnails) in held.enumerated() {
            #expect(container[thumbnails: size]() === thumbnails, "a live instance was pruned")
        }
    }
}

extension DependencyContainer {
    /// How many constructions and shared instances, dead or alive, the container remembers.
    var _sharedEntryCount: Int { state.withLock { $0.entries.count } }
}
