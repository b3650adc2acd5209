import Testing
@testable import DependencyInjection

/// Every state in the package lives in a `_Locked`. On Linux its lock is an atomic word
/// with a mutex and condition to sleep on, of the package's own; `LockContentionTests`
/// stress it under contention; this checks the uncontended road leaves it free, and that
/// a state no lock can hold inside its object is refused.
@Suite struct LockedTests {
    @Test func aLockTakenAndGivenBackOnOneThreadStaysFree() throws {
        let counter = _Locked(0)
        for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        let finished = finishesWithoutHanging { counter.withLock { $0 += 1 } }
        try #require(finished, "the lock stayed taken after every holder gave it back")
        #expect(counter.withLock { $0 } == 1_001)
    }

    @Test func aLockWithAZeroSizeStateStopsAndNamesTheStateToUse() async {
        // Its state would sit one past the end of the lock's object, in another object.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = _Locked(())
        }
        #expect(standardError(of: result).contains("use _Locked<_Elsewhere>"))
    }
}
