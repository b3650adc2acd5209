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

    // MARK: - The arguments of provider families

    @Test func argumentsFiledForReleasedSharedInstancesArePruned() {
        let container = DependencyContainer()
        let distinct = 20_000
        for size in 0..<distinct {
            _ = container.avatarCache(size)  // released at once: nobody holds it
        }
        #expect(container._filedArgumentCount < distinct / 4, "\(container._filedArgumentCount) arguments filed")
    }

    @Test func argumentsAreUnfiledWithTheInstancesTheyFile() {
        let container = DependencyContainer()
        for raw in 0..<100 { _ = container.accountSession(AccountID(raw)) }
        #expect(container._filedArgumentCount == 100)
        container.override(\.accountSession[AccountID(0)]) { StubAccountSession(account: AccountID(0)) }
        #expect(container._filedArgumentCount == 99)
        container.override(\.accountSession) { account in StubAccountSession(account: account) }
        #expect(container._filedArgumentCount == 0)
        for raw in 0..<100 { _ = container.accountSession(AccountID(raw)) }
        container.shutdown()
        #expect(container._filedArgumentCount == 0)
        for raw in 0..<100 { _ = container.accountSession(AccountID(raw)) }
        container.reset()
        #expect(container._filedArgumentCount == 0)
    }
}

extension DependencyContainer {
    /// How many constructions and shared instances, dead or alive, the container remembers.
    var _sharedEntryCount: Int { withStateLock { $0.sharedInstances.count } }

    /// How many instances of parameterized registrations the container has filed under
    /// their registration.
    var _filedArgumentCount: Int { withStateLock { $0.arguments.values.reduce(0) { $0 + $1.count } } }
}
