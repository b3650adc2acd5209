import DependencyInjection
import Foundation

/// The containers of the test cases running now, and the issues raised for them off
/// their tests' tasks.
///
/// A `DependencyIssue` reaches the reporter on the thread that resolved the dependency.
/// On the test's own task the test framework knows which test is running; on a detached
/// task or a dispatch queue the test handed its container to, it does not. The issue's
/// container does: the nearest registered container among it and its parents is the
/// test's. Such issues wait here until the test body returns, and the test's scope then
/// records them in the test's context:
///
/// ```swift
/// LiveTestContainers.shared.begin(container)
/// runTheTest()
/// for issue in LiveTestContainers.shared.end(container) { record(issue) }
/// ```
final class LiveTestContainers: @unchecked Sendable {
    // @unchecked Sendable: `pending` is only touched while holding `lock`.

    static let shared = LiveTestContainers()

    private let lock = NSLock()

    /// The issues waiting for each running test, by its container. A container is
    /// registered only while its test holds it, so its identifier is not reused meanwhile.
    private var pending: [ObjectIdentifier: [DependencyIssue]] = [:]

    /// Registers the container of a test case that starts.
    func begin(_ container: DependencyContainer) {
        lock.withLock { pending[ObjectIdentifier(container)] = [] }
    }

    /// Unregisters the container of a test case that ends, and returns the issues kept
    /// for it, in the order they were raised.
    func end(_ container: DependencyContainer) -> [DependencyIssue] {
        lock.withLock { pending.removeValue(forKey: ObjectIdentifier(container)) } ?? []
    }

    /// Keeps `issue` for the running test whose container, or an ancestor of it, raised
    /// it; returns `false` when no running test owns the issue's container.
    func keep(_ issue: DependencyIssue) -> Bool {
        var lineage: [ObjectIdentifier] = []
        var candidate = issue.container
        while let container = candidate {
            lineage.append(ObjectIdentifier(container))
            candidate = container.parent
        }
        return lock.withLock {
            guard let owner = lineage.first(where: { pending[$0] != nil }) else { return false }
            pending[owner, default: []].append(issue)
            return true
        }
    }
}
