import Foundation
import Testing
@testable import DependencyInjection

#if canImport(Glibc)
import Glibc
#endif

/// `_Locked` under contention far beyond the cores: many more threads than cores, each
/// holding the lock for a few plain stores into arrays and dictionaries, so that nearly
/// every unlock finds a thread waiting and hands the lock over. Run under
/// ThreadSanitizer, every hand-over must be seen as happening before the next holder's
/// accesses, whether the next holder slept or not.
@Suite struct LockContentionTests {
    /// What the threads change under one lock: copy-on-write containers whose buffers a
    /// missed hand-over would corrupt or race on.
    struct Ledger {
        var entries: [Int] = []
        var perThread: [Int: Int] = [:]
        var holders = 0
        var mostHoldersAtOnce = 0
    }

    // MARK: - One lock

    @Test func manyMoreThreadsThanCoresAppendToArraysAndDictionariesUnderOneLock() async throws {
        let threads = 32
        let rounds = 2_000
        for _ in 0..<3 {
            let ledger = _Locked(Ledger())
            let finished = await finishesWithoutHangingOffThePool {
                concurrently(threads: threads) { thread in
                    for round in 0..<rounds {
                        ledger.withLock { ledger in
                            ledger.holders += 1
                            ledger.mostHoldersAtOnce = max(ledger.mostHoldersAtOnce, ledger.holders)
                            ledger.entries.append(thread * rounds + round)
                            ledger.perThread[thread, default: 0] += 1
                            ledger.holders -= 1
                        }
                    }
                }
            }
            try #require(finished, "a thread waiting for the lock was never handed it")
            let seen = ledger.withLock { $0 }
            #expect(seen.mostHoldersAtOnce == 1)
            #expect(seen.entries.count == threads * rounds)
            #expect(Set(seen.entries).count == threads * rounds)
            #expect(seen.perThread.count == threads)
            #expect(seen.perThread.values.allSatisfy { $0 == rounds })
        }
    }

    @Test func aLockGivenBackAndRetakenAtOnceByItsHolderStillReachesEveryWaiter() async throws {
        // Each holder takes the lock again straight after giving it back, so a hand-over
        // meant for a sleeping thread races with the holder's own next lock.
        let threads = 16
        let rounds = 3_000
        let ledger = _Locked(Ledger())
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: threads) { thread in
                for _ in 0..<rounds {
                    ledger.lock()
                    ledger.state.pointee.perThread[thread, default: 0] += 1
                    ledger.unlock()
                    ledger.lock()
                    ledger.state.pointee.entries.append(thread)
                    ledger.unlock()
                }
            }
        }
        try #require(finished, "a thread waiting for the lock was never handed it")
        let seen = ledger.withLock { $0 }
        #expect(seen.entries.count == threads * rounds)
        #expect(seen.perThread.values.reduce(0, +) == threads * rounds)
    }

    // MARK: - Many locks

    @Test func manyThreadsOnManyLocksAtOnceLoseNoChange() async throws {
        let locks = (0..<24).map { _ in _Locked([Int]()) }
        let threads = 16
        let rounds = 3_000
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: threads) { thread in
                for round in 0..<rounds {
                    // A few threads meet on every lock, in a different order each round.
                    locks[(thread &* 7 &+ round &* 5) % locks.count].withLock { $0.append(thread) }
                }
            }
        }
        try #require(finished, "a thread waiting for a lock was never handed it")
        let counts = locks.map { $0.withLock { $0.count } }
        #expect(counts.reduce(0, +) == threads * rounds)
    }

    @Test func locksMadeContendedAndDroppedWhileOthersAreInUseStayExclusive() async throws {
        // Slots hold locks that threads take and append to, while other threads put fresh
        // locks in their place: the old ones are destroyed, free, after their last use.
        let slots = _Locked((0..<8).map { _ in _Locked([Int]()) })
        let appended = _Locked(0)
        let threads = 12
        let rounds = 2_000
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: threads) { thread in
                var mine = 0
                for round in 0..<rounds {
                    let slot = (thread &+ round) % 8
                    if (thread &+ round).isMultiple(of: 5) {
                        slots.withLock(releasingAfter: { slots, released in
                            released.append(slots[slot])
                            slots[slot] = _Locked([])
                        })
                    } else {
                        let lock = slots.withLock { $0[slot] }
                        lock.withLock { entries in
                            entries.append(round)
                            entries.append(-round)
                            #expect(entries.count.isMultiple(of: 2))
                        }
                        mine += 1
                    }
                }
                appended.withLock { $0 += mine }
            }
        }
        try #require(finished, "a thread waiting for a lock was never handed it")
        #expect(appended.withLock { $0 } > 0)
    }

    @Test func aStripeGuardsWhatLivesOutsideItFromManyThreads() async throws {
        // A `_Locked<_Elsewhere>` holds no state: what it guards lives elsewhere, and only the
        // lock orders the accesses. Few objects, so many threads meet on each stripe.
        final class Owner: @unchecked Sendable {
            // @unchecked: `values` is only touched while holding the owner's stripe.
            var values: [Int] = []
        }
        let owners = (0..<3).map { _ in Owner() }
        let threads = 16
        let rounds = 2_000
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: threads) { thread in
                for round in 0..<rounds {
                    let owner = owners[(thread &+ round) % owners.count]
                    _LockStripes.lock(for: owner).withLock { _ in owner.values.append(round) }
                }
            }
        }
        try #require(finished, "a thread waiting for a stripe was never handed it")
        let total = owners.map { owner in _LockStripes.lock(for: owner).withLock { _ in owner.values.count } }
        #expect(total.reduce(0, +) == threads * rounds)
    }

    // MARK: - Signals

    #if canImport(Glibc)
    /// What the waiters below check when they get the lock.
    struct Handover {
        var heldByTheTest = false
        var takenWhileHeld = 0
        var taken = 0
    }

    @Test func waitersWokenBySignalsSleepAgainUntilTheLockIsHandedOver() async throws {
        // A signal handler installed without SA_RESTART may end a sleeping waiter's wait
        // early: the waiter must wait again, not take a lock that is still held.
        var quiet = sigaction()
        quiet.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&quiet.sa_mask)
        quiet.sa_flags = 0
        var previous = sigaction()
        try #require(sigaction(SIGUSR2, &quiet, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }

        let waiters = 4
        let handover = _Locked(Handover())
        let sleepers = Collected<(task: String, thread: pthread_t)>()
        let ended = Collected<Int>()
        let started = DispatchSemaphore(value: 0)
        let allEnded = DispatchGroup()
        let interrupted = Collected<Bool>()
        // The lock is taken and given back on one thread of its own, off the pool.
        let handedOver = await finishesWithoutHangingOffThePool {
            handover.lock()
            handover.state.pointee.heldByTheTest = true
            for index in 0..<waiters {
                allEnded.enter()
                Thread {
                    // Threads made from the test's own (descended from a dispatch
                    // worker) block every signal: this one takes SIGUSR2.
                    var usr2 = sigset_t()
                    sigemptyset(&usr2)
                    sigaddset(&usr2, SIGUSR2)
                    pthread_sigmask(SIG_UNBLOCK, &usr2, nil)
                    // The kernel's own name of this thread, "<pid>/task/<tid>".
                    let task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                    sleepers.append((task, pthread_self()))
                    started.signal()
                    // From here on the only wait is the lock's.
                    handover.withLock { handover in
                        if handover.heldByTheTest { handover.takenWhileHeld += 1 }
                        handover.taken += 1
                    }
                    ended.append(index)
                    allEnded.leave()
                }.start()
            }
            for _ in 0..<waiters { started.wait() }
            let threads = sleepers.values
            let asleep = finishesWithoutHanging {
                for _ in 0..<20 {
                    // Every waiter asleep in the lock (or, were it broken, past it): each
                    // signal below then ends a wait.
                    while ended.values.count < waiters, !threads.allSatisfy({ isAsleep($0.task) }) { sched_yield() }
                    for thread in threads { pthread_kill(thread.thread, SIGUSR2) }
                }
                while ended.values.count < waiters, !threads.allSatisfy({ isAsleep($0.task) }) { sched_yield() }
            }
            interrupted.append(asleep)
            guard asleep else { return }
            handover.state.pointee.heldByTheTest = false
            handover.unlock()
        }
        try #require(handedOver, "the thread holding the lock hung")
        try #require(interrupted.values == [true], "the waiters never fell asleep")
        try #require(await finishesWithoutHangingOffThePool { allEnded.wait() }, "a waiter was never handed the lock")
        let seen = handover.withLock { $0 }
        #expect(seen.takenWhileHeld == 0)
        #expect(seen.taken == waiters)
    }

    /// Whether the thread `task` ("<pid>/task/<tid>") sleeps, as the kernel reports it.
    private func isAsleep(_ task: String) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(task)/stat", encoding: .utf8),
              let afterName = stat.lastIndex(of: ")")
        else { return false }
        return stat[afterName...].dropFirst(2).first == "S"
    }
    #endif

    // MARK: - Layout

    @Test func statesOfEveryAlignmentLeaveTheLockBesideThemIntact() async throws {
        // A state that overlapped the lock would overwrite it with these all-ones bytes.
        try await stress(_Locked(UInt8.max), change: { $0 = $0 == .max ? .max - 1 : .max })
        try await stress(_Locked(UInt16.max), change: { $0 = $0 == .max ? .max - 1 : .max })
        try await stress(_Locked(UInt32.max), change: { $0 = $0 == .max ? .max - 1 : .max })
        try await stress(_Locked(UInt64.max), change: { $0 = $0 == .max ? .max - 1 : .max })
        try await stress(_Locked(SIMD4<UInt32>(repeating: .max)), change: { $0 = ~$0 })
        #expect(MemoryLayout<SIMD4<UInt32>>.alignment == 16)
    }

    #if canImport(Glibc)
    @Test func theMutexAndConditionSitAfterTheWordInsideTheLock() {
        let word = MemoryLayout<Int>.stride
        let condition = word + MemoryLayout<pthread_mutex_t>.stride
        #expect(MemoryLayout<_AtomicMutex>.size == condition + MemoryLayout<pthread_cond_t>.size)
        #expect(word.isMultiple(of: MemoryLayout<pthread_mutex_t>.alignment))
        #expect(condition.isMultiple(of: MemoryLayout<pthread_cond_t>.alignment))
    }
    #endif

    /// Changes the state of `lock` from many threads, and checks the lock still excludes
    /// and ends free.
    private func stress<State>(_ lock: _Locked<State>, change: @escaping @Sendable (inout State) -> Void) async throws {
        let holders = _Locked(0)
        let threads = 12
        let rounds = 1_000
        let overlaps = _Locked(0)
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: threads) { _ in
                for _ in 0..<rounds {
                    lock.withLock { state in
                        let inside = holders.withLock { $0 += 1; return $0 }
                        if inside > 1 { overlaps.withLock { $0 += 1 } }
                        change(&state)
                        change(&state)
                        holders.withLock { $0 -= 1 }
                    }
                }
            }
        }
        try #require(finished, "a thread waiting for the lock was never handed it")
        #expect(overlaps.withLock { $0 } == 0)
        #expect(await finishesWithoutHangingOffThePool { lock.withLock { _ in } })
    }
}
