import Testing
@testable import DependencyInjection

/// Every state in the package lives in a `_Locked`. On Linux its lock is an atomic word
/// with a mutex and condition to sleep on, of the package's own; `LockContentionTests`
/// stress it under contention, and this checks the uncontended road leaves it free.
@Suite struct LockedTests {
    @Test func aLockTakenAndGivenBackOnOneThreadStaysFree() throws {
        let counter = _Locked(0)
        for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        let finished = finishesWithoutHanging { counter.withLock { $0 += 1 } }
        try #require(finished, "the lock stayed taken after every holder gave it back")
        #expect(counter.withLock { $0 } == 1_001)
    }
}
