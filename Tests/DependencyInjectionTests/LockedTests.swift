import Testing
@testable import DependencyInjection

/// Every state in the package lives in a `_Locked`; its lock must exclude, hand itself
/// over to a waiting thread, and publish what one holder wrote to the next. On Linux the
/// lock is a count and a semaphore of the package's own, so this is its stress test: run
/// under ThreadSanitizer, it also checks that each holder happens after the one before.
@Suite struct LockedTests {
    /// What the threads change under the lock: plain, non-atomic stores.
    struct Tally {
        var total = 0
        var holders = 0
        var mostHoldersAtOnce = 0
        var order: [Int] = []
    }

    @Test func threadsReleasedTogetherNeverHoldTheLockAtOnceAndLoseNoChange() throws {
        let tally = _Locked(Tally())
        let rounds = 20_000
        let threads = 8
        let finished = finishesWithoutHanging {
            concurrently(threads: threads) { thread in
                for round in 0..<rounds {
                    tally.withLock { tally in
                        tally.holders += 1
                        tally.mostHoldersAtOnce = max(tally.mostHoldersAtOnce, tally.holders)
                        tally.total += 1
                        if round % 1_000 == 0 { tally.order.append(thread) }
                        tally.holders -= 1
                    }
                }
            }
        }
        // Reading the tally would wait forever on a lock never handed over.
        try #require(finished, "a thread waiting for the lock was never handed it")
        let seen = tally.withLock { $0 }
        #expect(seen.total == threads * rounds)
        #expect(seen.mostHoldersAtOnce == 1)
        #expect(seen.order.count == threads * rounds / 1_000)
    }

    @Test func aLockTakenAndGivenBackOnOneThreadStaysFree() throws {
        let counter = _Locked(0)
        for _ in 0..<1_000 { counter.withLock { $0 += 1 } }
        let finished = finishesWithoutHanging { counter.withLock { $0 += 1 } }
        try #require(finished, "the lock stayed taken after every holder gave it back")
        #expect(counter.withLock { $0 } == 1_001)
    }
}
