import Foundation
import Testing
@testable import DependencyInjection

/// Counts the comparisons of a subscript's index, each of which overrides in a container
/// of its own: an override notes its key path in the debug build's check of key paths
/// (``RegistrationIdentity``), under that check's lock, which a comparison made under
/// it would wait for forever.
final class ComparisonNotes: @unchecked Sendable {
    // @unchecked: `comparisons` guards itself.
    let comparisons = Counter()

    func compare() {
        DependencyContainer().override(\.comparedProbe) { ArgumentSession(-1) }
        comparisons.increment()
    }
}

/// A subscript's index whose `==` is the app's code: it overrides, as app code may.
struct ComparedMode: Hashable, Sendable {
    let live: Bool
    let notes: ComparisonNotes?
    static func == (lhs: ComparedMode, rhs: ComparedMode) -> Bool {
        (lhs.notes ?? rhs.notes)?.compare()
        return lhs.live == rhs.live
    }
    func hash(into hasher: inout Hasher) { hasher.combine(live) }
}

extension DependencyContainer {
    /// A subscript that picks one of two registrations by its index, and passes the index
    /// to neither: the key path check compares its key paths, and so their indices.
    subscript(comparedBranch mode: ComparedMode) -> Provider<ArgumentSession> {
        mode.live ? singleton { ArgumentSession(1) } : singleton { ArgumentSession(2) }
    }
    var comparedProbe: Provider<ArgumentSession> { singleton { ArgumentSession(0) } }
}

/// Comparing two key paths compares their subscripts' indices with the indices' `==`, the
/// app's code, which may override, reset or read a `@Dependency`, each of which takes the
/// check's lock: the check compares them after unlocking.
@Suite struct KeyPathComparisonTests {
    @Test func aSubscriptIndexIsComparedOutsideTheKeyPathChecksLock() async {
        #if DEBUG
        let notes = ComparisonNotes()
        let container = DependencyContainer()
        container.override(\.[comparedBranch: ComparedMode(live: true, notes: nil)]) { ArgumentSession(10) }
        #expect(await finishesWithoutHangingOffThePool {
            container.override(\.[comparedBranch: ComparedMode(live: true, notes: notes)]) { ArgumentSession(11) }
        }, "an index's == ran under the key path check's lock, and its override waited for that lock")
        #expect(notes.comparisons.count > 0, "the check compared the two key paths")
        #expect(container[comparedBranch: ComparedMode(live: true, notes: nil)]().id == 11)
        #endif
    }
}
