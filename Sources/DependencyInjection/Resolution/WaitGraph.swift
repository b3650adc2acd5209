/// Which owner waits for which construction, to turn a cycle of constructions waiting for
/// each other (task 1 builds `a` and needs `b`, task 2 builds `b` and needs `a`) into a
/// message instead of a deadlock.
///
/// Each owner (a task, or a thread outside any task) waits for at most one construction at
/// a time, and each construction has one builder, so following "waits for, built by" from
/// a construction either ends or comes back to the owner about to wait: that is a cycle.
/// Only waits inside the package are seen. A cycle closed by the user's own blocking (a
/// thread the construction joins, a semaphore, awaiting a task that asks for the
/// construction in progress) is invisible to it.
///
/// ```swift
/// WaitGraph.beginWaiting(owner, innermost: Frame.current, on: inFlight)  // may stop with the chain
/// signal.wait()
/// WaitGraph.endWaiting(owner)
/// ```
enum WaitGraph {
    private struct Wait {
        let target: InFlight
        /// The waiting owner's innermost frame, where its part of a cycle message ends.
        let innermost: Frame?
        /// For an owner that waits only because a task started with `Task.immediate`
        /// above it on its thread blocks the thread: that task's owner. Nil for an owner
        /// that waits itself.
        var blockedAbove: Owner? = nil
        /// For an owner that waits itself, blocking its thread: the owners below it on the
        /// thread, which wait with it (``ThreadFrames/ownersBelow(_:)``).
        var blocksBelow: [Owner] = []
    }

    private static let waits = _Locked([Owner: Wait]())

    /// Records that `frame` builds `inFlight`.
    static func start(_ inFlight: InFlight, builtBy frame: Frame) {
        waits.withLock { _ in inFlight.builder = frame }
    }

    /// Marks `inFlight` finished; call before waking its waiters.
    static func finish(_ inFlight: InFlight) {
        waits.withLock(releasingAfter: { _, released in
            released.keep(inFlight.builder)
            inFlight.builder = nil
            inFlight.isDone = true
        })
    }

    /// Records that `owner` waits for `target`, or stops with the chain when that would
    /// close a cycle. A wait that blocks its thread (`blocksThread`) also stops when
    /// another owner builds `target` on this very thread (``CycleReport/stopWaitingOnItsOwnThread(for:)``).
    ///
    /// A wait that blocks its thread also blocks the owners whose constructions run below
    /// it there: a task started with `Task.immediate` inside a construction runs on the
    /// construction's thread, above it, and while the task waits the construction cannot
    /// go on. They are recorded as waiting for `target` too, so that a cycle through
    /// another thread (the task waits for what another thread builds, which waits for the
    /// construction below the task) stops with the chain, whichever of the two waits last.
    static func beginWaiting(_ owner: Owner, innermost: Frame?, on target: InFlight, blocksThread: Bool = false) {
        if blocksThread, let builder = builderOnThisThread(of: target, otherThan: owner) {
            CycleReport.stopWaitingOnItsOwnThread(for: builder)
        }
        let below = blocksThread ? ThreadFrames.ownersBelow(owner) : []
        let cycle: (steps: [CycleStep], immediateTask: (started: CycleStep, asks: CycleStep)?)? = waits.withLock { waits in
            // Each owner's part of the cycle, if it is one: its construction, down to where
            // it waits for the next part's, from the one `owner` is about to wait for.
            var parts: [CyclePart] = []
            var next = target
            // Where a task started with `Task.immediate` blocks a construction below it, if
            // the cycle goes through one: that construction, and what the task asks for.
            var immediateTask: (started: CycleStep, asks: CycleStep)?
            for _ in 0...waits.count + below.count {
                guard !next.isDone, let builder = next.builder else { break }
                if builder.owner == owner {
                    // Every owner met on the way is blocked, so its frames are stable.
                    parts.append(CyclePart(builder: builder, steps: builder.steps(to: innermost)))
                    return (chain(of: parts), immediateTask)
                }
                if let blocked = below.first(where: { $0.owner == builder.owner }) {
                    parts.append(CyclePart(builder: builder, steps: builder.steps(to: blocked.innermost)))
                    return (chain(of: parts), (blocked.innermost.step, target.builder?.step ?? builder.step))
                }
                guard let wait = waits[builder.owner] else { break }
                parts.append(CyclePart(builder: builder, steps: builder.steps(to: wait.innermost)))
                if wait.blockedAbove != nil, let innermost = wait.innermost, let asked = wait.target.builder {
                    immediateTask = (innermost.step, asked.step)
                }
                next = wait.target
            }
            var wait = Wait(target: target, innermost: innermost)
            for blocked in below where waits[blocked.owner] == nil {
                waits[blocked.owner] = Wait(target: target, innermost: blocked.innermost, blockedAbove: owner)
                wait.blocksBelow.append(blocked.owner)
            }
            waits[owner] = wait
            return nil
        }
        if let cycle {
            let steps = cycle.steps
            CycleReport.stop(
                Array(steps.dropLast()), closing: steps[steps.count - 1],
                cause: cycle.immediateTask.map { .immediateTaskThroughAnotherThread(started: $0.started, asked: $0.asks) }
                    ?? .plain)
        }
    }

    /// One owner's part of a cycle of waits: the construction it builds, and the steps
    /// from it down to where the owner waits.
    private struct CyclePart {
        let builder: Frame
        let steps: [CycleStep]
    }

    /// The chain of a cycle whose parts each wait for the next, the last for the first,
    /// read from the construction that none of the others encloses: the one the app asked
    /// for, as a cycle on one thread reads (`a -> b -> a`: `a` needs `b`, which needs
    /// `a`), whichever of the owners closed it. Async singletons, each built in a task of
    /// its own, close a cycle in whichever task waits last.
    ///
    /// ```swift
    /// chain(of: [outbox's part, engine's part])   // engine -> outbox -> engine
    /// ```
    private static func chain(of parts: [CyclePart]) -> [CycleStep] {
        let builders = Set(parts.map { ObjectIdentifier($0.builder) })
        let first =
            parts.firstIndex { part in
                var frame = part.builder.parent
                while let enclosing = frame {
                    if builders.contains(ObjectIdentifier(enclosing)) { return false }
                    frame = enclosing.parent
                }
                return true
            } ?? 0
        let steps = (parts[first...] + parts[..<first]).flatMap(\.steps)
        return steps + [steps[0]]
    }

    /// The construction `target` stands for, when another owner than `owner` runs it on
    /// this thread: a task started with `Task.immediate` inside it, or inside what it
    /// resolves, runs here before it goes on, so it cannot end while the thread waits.
    /// What it names is stable: its owner is blocked below, on this thread's stack.
    private static func builderOnThisThread(of target: InFlight, otherThan owner: Owner) -> CycleStep? {
        waits.withLock { _ in
            guard !target.isDone, let builder = target.builder, builder.owner != owner,
                ThreadFrames.runs(builder)
            else { return nil }
            return builder.step
        }
    }

    /// Records that `owner` no longer waits, nor the owners below it on its thread that
    /// waited with it.
    static func endWaiting(_ owner: Owner) {
        waits.withLock(releasingAfter: { waits, released in
            guard let ended = waits.removeValue(forKey: owner) else { return }
            for blocked in ended.blocksBelow where waits[blocked]?.blockedAbove == owner {
                released.keep(waits.removeValue(forKey: blocked))
            }
            released.keep(ended)
        })
    }
}
