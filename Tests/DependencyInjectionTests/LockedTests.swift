import Testing
@testable import DependencyInjection

/// Every state in the package lives in a `_Locked`. On Linux its lock is an atomic word
/// with a mutex and condition to sleep on, of the package's own; `LockContentionTests`
/// stress it under contention; this checks the uncontended road leaves it free, and that
/// a state no lock can hold inside its object is refused.
@Suite struct LockedTests {
    @Test func aLockTakenAndGivenBackOnOneThreadStaysFree() async throws {
        let counter = _Locked(0)
        for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        let finished = await finishesWithoutHangingOffThePool { counter.withLock { $0 += 1 } }
        try #require(finished, "the lock stayed taken after every holder gave it back")
        #expect(counter.withLock { $0 } == 1_001)
    }

    /// A change under a lock hands what it takes out to a bag that is released once the
    /// lock is free: a `deinit` that takes the lock would deadlock otherwise. The bag keeps
    /// four objects in itself, and values and a fifth object in an object of its own (two
    /// there, the rest in an array); every one of them is released. They go in as objects
    /// only, inside arrays (values) only, or by turns.
    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 50], ["turns", "objects", "values"])
    func everythingTakenOutUnderTheLockIsReleasedOnceTheLockIsFree(count: Int, kinds: String) async throws {
        let releases = _Locked(0)
        let finished = await finishesWithoutHangingOffThePool {
            releases.withLock(releasingAfter: { _, released in
                for index in 0..<count {
                    let object = LockTakingObject(releases)
                    let asObject = kinds == "objects" || (kinds == "turns" && index.isMultiple(of: 2))
                    if asObject { released.append(object) } else { released.keep([object]) }
                }
                released.keep(nil as LockTakingObject?)
                released.keep(nil as [LockTakingObject]?)
                #expect(released.count == count)
            })
        }
        try #require(finished, "a value was released while the lock was held: its deinit took the lock")
        #expect(releases.withLock { $0 } == count, "not every value taken out was released")
    }

    @Test func aLockWithAZeroSizeStateStopsAndNamesTheStateToUse() async {
        // Its state would sit one past the end of the lock's object, in another object.
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = _Locked(())
        }
        #expect(standardError(of: result).contains("use _Locked<_Elsewhere>"))
    }
}

/// An object whose `deinit` takes a lock, counting its release there.
private final class LockTakingObject: Sendable {
    let releases: _Locked<Int>
    init(_ releases: _Locked<Int>) { self.releases = releases }
    deinit { releases.withLock { $0 += 1 } }
}
