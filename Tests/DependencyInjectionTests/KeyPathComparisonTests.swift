import Foundation
import Testing
@testable import DependencyInjection

/// Whether the debug build's check of key paths (``RegistrationIdentity``) can take its
/// lock now: another thread overrides, which notes a key path there, and must finish.
private func keyPathCheckIsFree() -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
        DependencyContainer().override(\.comparedProbe) { ArgumentSession(-1) }
        done.signal()
    }.start()
    return done.wait(timeout: .now() + .seconds(10)) == .success
}

/// Notes, each time a subscript's index is compared, whether the key path check's lock
/// was free then.
final class ComparisonNotes: @unchecked Sendable {
    // @unchecked: `lockWasFree` guards itself.
    let lockWasFree = Collected<Bool>()
}

/// A subscript's index whose `==` is the app's code: it notes whether it runs under a lock.
struct ComparedMode: Hashable, Sendable {
    let live: Bool
    let notes: ComparisonNotes?
    static func == (lhs: ComparedMode, rhs: ComparedMode) -> Bool {
        if let notes = lhs.notes ?? rhs.notes { notes.lockWasFree.append(keyPathCheckIsFree()) }
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
    @Test func aSubscriptIndexIsComparedOutsideTheKeyPathChecksLock() {
        #if DEBUG
        let notes = ComparisonNotes()
        let container = DependencyContainer()
        container.override(\.[comparedBranch: ComparedMode(live: true, notes: nil)]) { ArgumentSession(10) }
        container.override(\.[comparedBranch: ComparedMode(live: true, notes: notes)]) { ArgumentSession(11) }
        #expect(!notes.lockWasFree.values.isEmpty, "the check compared the two key paths")
        #expect(!notes.lockWasFree.values.contains(false), "an index's == ran under the key path check's lock")
        #expect(container[comparedBranch: ComparedMode(live: true, notes: nil)]().id == 11)
        #endif
    }
}
