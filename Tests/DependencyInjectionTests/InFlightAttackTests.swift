import DependencyInjection
import Foundation
import Testing

// Races around a construction in flight: waiters that count themselves just before or just
// after the result is published, cancellation racing with the end of a construction, many
// waiters, chains of constructions waiting for each other, cycles with bystanders, and
// instances whose deinit resolves from their container.

/// What these registrations build.
final class Piece: Sendable {}

/// A shared instance that resolves from its container when it goes away.
final class InFlightDeinitResolver: Sendable {
    let container: DependencyContainer
    init(_ container: DependencyContainer) { self.container = container }
    deinit {
        _ = container.pieceForDeinit()
        container.count("deinitResolver.deinit")
    }
}

/// Lets `parties` threads go on together: each waits in ``arrive()`` until all have
/// arrived. Later arrivals go on at once.
final class Meeting: Sendable {
    private let arrivals = Arrivals()
    private let parties: Int
    init(parties: Int) { self.parties = parties }

    func arrive() {
        arrivals.arrive()
        arrivals.wait(for: parties)
    }
}

/// Reads `freshPieceEndingAtMeeting` through a property.
final class PieceHolder: @unchecked Sendable {
    @Dependency var piece: Piece
    init(_ container: DependencyContainer) {
        _piece = Dependency(\.freshPieceEndingAtMeeting, container: container)
    }
}

extension DependencyContainer {
    /// Meets the stored `Meeting` just before it returns: the other parties ask for it as
    /// its construction ends.
    var pieceEndingAtMeeting: Provider<Piece> {
        singleton {
            (self.getValue(forKey: "attack.meeting") as Meeting?)?.arrive()
            return Piece()
        }
    }
    /// Asks for `pieceEndingAtMeeting` once that construction is about to end.
    var needsPieceAsItEnds: Provider<Piece> {
        singleton {
            (self.getValue(forKey: "attack.meeting") as Meeting?)?.arrive()
            _ = self.pieceEndingAtMeeting()
            return Piece()
        }
    }
    /// A new piece each time, after meeting the stored `Meeting`.
    var freshPieceEndingAtMeeting: Provider<Piece> {
        factory {
            (self.getValue(forKey: "attack.meeting") as Meeting?)?.arrive()
            return Piece()
        }
    }
    /// Meets the stored `AsyncBarrier` just before it returns.
    var asyncPieceEndingAtBarrier: AsyncProvider<Piece> {
        singleton {
            await (self.getValue(forKey: "attack.barrier") as AsyncBarrier?)?.arrive()
            return Piece()
        }
    }
    /// Counted; held in its construction until the stored latch opens.
    var heldPiece: AsyncProvider<Piece> {
        singleton {
            self.count("heldPiece")
            await (self.getValue(forKey: "attack.latch") as AsyncLatch?)?.wait()
            return Piece()
        }
    }
    /// Link `n` of a chain of singletons, each needing the one below it.
    subscript(chainLink n: Int) -> Provider<Piece> {
        singleton(n) {
            if n > 0 { _ = self[chainLink: n - 1]() }
            return Piece()
        }
    }
    /// Link `n` of a chain of async singletons, each needing the one below it.
    subscript(asyncChainLink n: Int) -> AsyncProvider<Piece> {
        singleton(n) {
            if n > 0 { _ = try await self[asyncChainLink: n - 1]() }
            return Piece()
        }
    }
    /// Held at the stored gate; its instance resolves `pieceForDeinit` when it goes away.
    var deinitResolver: Provider<InFlightDeinitResolver> {
        shared {
            (self.getValue(forKey: "attack.gate") as ConstructionGate?)?.enterAndWait()
            return InFlightDeinitResolver(self)
        }
    }
    /// Held until the stored latch opens; its instance resolves `pieceForDeinit` when it
    /// goes away.
    var asyncInFlightDeinitResolver: AsyncProvider<InFlightDeinitResolver> {
        shared {
            await (self.getValue(forKey: "attack.latch") as AsyncLatch?)?.wait()
            return InFlightDeinitResolver(self)
        }
    }
    var pieceForDeinit: Provider<Piece> { singleton { Piece() } }

    /// `tangleA` and `tangleB` need each other. Each counts its start in the stored
    /// `Arrivals` and meets the other at the stored `Rendezvous` before asking for it.
    var tangleA: Provider<Piece> {
        singleton {
            (self.getValue(forKey: "attack.started") as Arrivals?)?.arrive()
            (self.getValue(forKey: "attack.rendezvous") as Rendezvous?)?.arrive()
            _ = self.tangleB()
            return Piece()
        }
    }
    var tangleB: Provider<Piece> {
        singleton {
            (self.getValue(forKey: "attack.started") as Arrivals?)?.arrive()
            (self.getValue(forKey: "attack.rendezvous") as Rendezvous?)?.arrive()
            _ = self.tangleA()
            return Piece()
        }
    }
}

@Suite struct InFlightAttackTests {
    // MARK: - Asking as the construction ends

    /// Pins: threads that ask for a singleton at the moment its construction ends (the
    /// meeting lets builder and askers go at once) get the one instance, whether each
    /// counts itself as a waiter just before the result is published (then the builder
    /// wakes it) or just after (then it is served without waiting). A waiter registered
    /// after the builder took its list of waiters but before the result was published
    /// would never be woken, and hang.
    @Test func threadsAskingAsTheConstructionEndsGetTheOneInstance() async {
        await expectThreadsToAgree { container in { container.pieceEndingAtMeeting() } }
    }

    /// Pins: a finished construction is never part of a cycle, at the tightest timing. A
    /// thread building `needsPieceAsItEnds` asks for `pieceEndingAtMeeting` exactly as
    /// another thread's construction of it ends; that thread then asks for
    /// `needsPieceAsItEnds`. Had the first thread counted itself as a waiter and the
    /// second walked the wait graph before its own finished construction was marked done,
    /// the walk would come back to the second thread and stop the process with a cycle
    /// that does not exist.
    @Test func aConstructionEndingAsItIsAskedForIsNeverPartOfACycle() async {
        await #expect(processExitsWith: .success) {
            endProcessIfHung("a construction ending as it is asked for")
            for _ in 0..<300 {
                let container = DependencyContainer()
                container.setValue(Meeting(parties: 2), forKey: "attack.meeting")
                let pieces = Collected<ObjectIdentifier>()
                let threadsEnded = await concurrentlyOffThePool(threads: 2) { index in
                    if index == 0 {
                        pieces.append(ObjectIdentifier(container.needsPieceAsItEnds()))
                    } else {
                        _ = container.pieceEndingAtMeeting()
                        pieces.append(ObjectIdentifier(container.needsPieceAsItEnds()))
                    }
                }
                // Exit tests report through the exit status.
                if !threadsEnded { exit(2) }
                if Set(pieces.values).count != 1 { exit(2) }
            }
        }
    }

    /// Pins: the record a later reader makes for a property's first resolution is finished
    /// by the first reader, on another thread. When the first reader ends before the later
    /// ones count themselves, the record ends with no waiter and its builder is cleared
    /// without the wait graph's lock; the storage's lock orders the record's making before
    /// that clearing (ThreadSanitizer would see a race otherwise), and every later reader
    /// is served the first reader's value. One resolving on its own would get another
    /// piece from the factory.
    @Test func propertyReadsAsItsFirstResolutionEndsGetThatValue() async {
        await expectThreadsToAgree { container in
            let holder = PieceHolder(container)
            return { holder.piece }
        }
    }

    /// Pins: tasks that ask for an async singleton as its construction ends, half of them
    /// cancelled at that same moment, each end exactly once: with the one instance, or
    /// with `CancellationError` only if cancelled. A continuation resumed twice (by the
    /// builder and by the cancellation) would crash; one resumed by neither would hang.
    /// Under ThreadSanitizer: a task counted as a waiter only after it walked the wait
    /// graph would let the builder clear the construction's builder unlocked under the walk.
    @Test func tasksAskingAsTheConstructionEndsWhileBeingCancelledEndOnce() async {
        await expectNoProblems { problems in
            for round in 0..<3000 {
                let container = DependencyContainer()
                // The builder, four askers and the canceller go on together.
                let barrier = AsyncBarrier(parties: 6)
                container.setValue(barrier, forKey: "attack.barrier")
                let starter = Task { try await container.asyncPieceEndingAtBarrier() }
                let askers = (0..<4).map { _ in
                    Task {
                        await barrier.arrive()
                        return try await container.asyncPieceEndingAtBarrier()
                    }
                }
                Task {
                    await barrier.arrive()
                    for index in [1, 3] { askers[index].cancel() }
                }
                guard let built = try? await starter.value else {
                    problems.append("round \(round): the construction failed")
                    continue
                }
                for (index, asker) in askers.enumerated() {
                    switch await asker.result {
                    case .success(let piece) where piece !== built:
                        problems.append("round \(round): an asker got another instance")
                    case .failure(let error) where !(index % 2 == 1 && error is CancellationError):
                        problems.append("round \(round): asker \(index) failed with \(error)")
                    default: break
                    }
                }
            }
        }
    }

    // MARK: - Cancellation

    /// Pins: cancelled waiters stop while the construction is still held, whether the
    /// cancellation came before they registered (checked under the lock as they register)
    /// or after (the cancellation handler resumes them), and the construction goes on for
    /// the one that was not cancelled. The test awaits every cancelled waiter before it
    /// opens the construction: one that only the construction's end would wake hangs it.
    @Test func cancelledWaitersStopWhileTheConstructionIsHeld() async {
        await expectNoProblems { problems in
            let (container, latch) = containerHeldAtALatch()
            let builds = container.counter("heldPiece")
            let starter = Task { try await container.heldPiece() }
            let waiters = (0..<500).map { _ in Task { try await container.heldPiece() } }
            for (index, waiter) in waiters.enumerated() {
                waiter.cancel()
                // Let some waiters register before they are cancelled.
                if index.isMultiple(of: 50) { await Task.yield() }
            }
            for waiter in waiters {
                if case .failure(let error) = await waiter.result, error is CancellationError { continue }
                problems.append("a cancelled waiter did not stop with CancellationError")
            }
            latch.open()
            let piece = try? await starter.value
            if piece == nil { problems.append("the waiter that was not cancelled failed") }
            if let again = try? await container.heldPiece(), again !== piece {
                problems.append("the construction was not kept")
            }
            if builds.count != 1 { problems.append("\(builds.count) constructions") }
        }
    }

    /// Pins: two thousand tasks wait for one construction; half of them are cancelled from
    /// another thread at the moment the construction is let go. Each waiter ends exactly
    /// once (a continuation resumed twice crashes), the ones not cancelled all get the one
    /// instance, the cancelled ones get it or `CancellationError`, and it is built once.
    @Test func thousandsOfWaitersHalfCancelledAsTheConstructionEnds() async {
        await expectNoProblems { problems in
            for round in 0..<3 {
                let (container, latch) = containerHeldAtALatch()
                let builds = container.counter("heldPiece")
                let waiters = (0..<2_000).map { _ in Task { try await container.heldPiece() } }
                while builds.count == 0 { await Task.yield() }
                let canceller = Rendezvous()
                Thread {
                    canceller.arrive()
                    for index in stride(from: 0, to: waiters.count, by: 2) { waiters[index].cancel() }
                }.start()
                canceller.arrive()
                latch.open()
                var pieces = Set<ObjectIdentifier>()
                for (index, waiter) in waiters.enumerated() {
                    switch await waiter.result {
                    case .success(let piece): pieces.insert(ObjectIdentifier(piece))
                    case .failure(let error) where index.isMultiple(of: 2) && error is CancellationError: break
                    case .failure(let error): problems.append("round \(round): waiter \(index) failed with \(error)")
                    }
                }
                if pieces.count != 1 { problems.append("round \(round): \(pieces.count) instances") }
                if builds.count != 1 { problems.append("round \(round): \(builds.count) constructions") }
            }
        }
    }

    // MARK: - Chains of waits

    /// Pins: eight threads each build and wait along a chain of singletons (each link needs
    /// the one below), so threads wait for constructions whose builders wait for others',
    /// and the wait graph is walked while other constructions end, waited for or not. No
    /// false cycle stops the process, nothing hangs, and every link has one instance.
    /// Under ThreadSanitizer, a walk reading a construction's builder while a construction
    /// no one waited for clears its own without the lock would be reported.
    @Test func threadsBuildingAndWaitingAlongAChainAgree() async {
        await expectNoProblemsOnAThread { problems in
            for round in 0..<40 {
                let container = DependencyContainer()
                let seen = Collected<(link: Int, piece: ObjectIdentifier)>()
                concurrently(threads: 8) { index in
                    for step in 0..<6 {
                        let link = (index * 5 + step * 11) % 32
                        seen.append((link, ObjectIdentifier(container[chainLink: link]())))
                    }
                }
                for (link, piece) in seen.values where piece != ObjectIdentifier(container[chainLink: link]()) {
                    problems.append("round \(round): link \(link) has two instances")
                }
            }
        }
    }

    /// Pins: the async twin, with every fourth task cancelled as it starts. Each link is
    /// built in a task of its own, so cancelling a task that asked for it cancels neither
    /// its construction nor the links below; every task not cancelled gets every link, and
    /// all agree.
    @Test func tasksBuildingAndWaitingAlongAnAsyncChainAgree() async {
        await expectNoProblems { problems in
            for round in 0..<20 {
                let container = DependencyContainer()
                let barrier = AsyncBarrier(parties: 16)
                let tasks = (0..<16).map { index in
                    Task { () throws -> [(link: Int, piece: ObjectIdentifier)] in
                        await barrier.arrive()
                        var seen: [(link: Int, piece: ObjectIdentifier)] = []
                        for step in 0..<6 {
                            let link = (index * 5 + step * 11) % 32
                            seen.append((link, ObjectIdentifier(try await container[asyncChainLink: link]())))
                        }
                        return seen
                    }
                }
                for index in stride(from: 3, to: tasks.count, by: 4) { tasks[index].cancel() }
                for (index, task) in tasks.enumerated() {
                    switch await task.result {
                    case .success(let seen):
                        for (link, piece) in seen {
                            if let kept = try? await container[asyncChainLink: link](), ObjectIdentifier(kept) == piece {
                                continue
                            }
                            problems.append("round \(round): link \(link) has two instances")
                        }
                    case .failure(let error) where index % 4 == 3 && error is CancellationError: break
                    case .failure(let error): problems.append("round \(round): task \(index) failed with \(error)")
                    }
                }
            }
        }
    }

    // MARK: - Cycles

    /// Pins: a cycle between a thread and a task (each builds one singleton and then
    /// needs the other) stops with its chain, while four bystander threads wait for both
    /// constructions. The bystanders' walks of the wait graph meet the cycle's owners but
    /// never themselves, so they wait; one of the cycle's owners closes it and stops.
    @Test func aCycleBetweenAThreadAndATaskStopsWhileBystandersWait() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle between a thread and a task")
            let container = DependencyContainer()
            let started = Arrivals()
            container.setValue(started, forKey: "attack.started")
            container.setValue(Rendezvous(), forKey: "attack.rendezvous")
            for bystander in 0..<4 {
                Thread {
                    started.wait(for: 2)
                    _ = bystander.isMultiple(of: 2) ? container.tangleA() : container.tangleB()
                }.start()
            }
            Thread { _ = container.tangleA() }.start()
            Task { _ = container.tangleB() }
            await AsyncLatch().wait()  // one of the two builders stops the process
        }
        let cycle = CycleChain(result)
        #expect(cycle?.isCycle(["tangleA", "tangleB", "tangleA"]) == true, "\(standardError(of: result))")
    }

    // MARK: - Instances whose deinit resolves

    /// Pins: eight threads wait for a shared instance whose deinit resolves from its
    /// container, keep it until all nine owners have it, then let it go. The last
    /// reference may go with the construction's record, on any of the threads; the deinit
    /// runs once, with no lock of the package held (it would deadlock on a lock it takes
    /// again), and a new instance is built next time.
    @Test func aSharedInstanceWhoseDeinitResolvesGoesAwayAfterManyWaited() async {
        await expectNoProblemsOnAThread { problems in
            for round in 0..<50 {
                let container = DependencyContainer()
                let gate = ConstructionGate()
                container.setValue(gate, forKey: "attack.gate")
                let deinits = container.counter("deinitResolver.deinit")
                let (asking, holding) = (Arrivals(), Arrivals())
                let seen = Collected<ObjectIdentifier>()
                // Each owner keeps the instance until all have it: none is built twice.
                let resolveAndHold = { @Sendable in
                    let instance = container.deinitResolver()
                    seen.append(ObjectIdentifier(instance))
                    holding.arrive()
                    holding.wait(for: 9)
                    withExtendedLifetime(instance) {}
                }
                let builderDone = DispatchSemaphore(value: 0)
                Thread {
                    resolveAndHold()
                    builderDone.signal()
                }.start()
                gate.entered.wait()
                // Opened once every waiter is about to ask: most of them are waiting by then.
                Thread {
                    asking.wait(for: 8)
                    gate.open()
                }.start()
                concurrently(threads: 8) { _ in
                    asking.arrive()
                    resolveAndHold()
                }
                builderDone.wait()
                if Set(seen.values).count != 1 { problems.append("round \(round): more than one instance") }
                if deinits.count != 1 { problems.append("round \(round): \(deinits.count) deinits") }
                gate.open()
                _ = container.deinitResolver()
                if deinits.count != 2 { problems.append("round \(round): the next instance was kept") }
            }
        }
    }

    /// Pins: the async twin: two hundred tasks wait for a shared instance whose deinit
    /// resolves from its container and keep it until all have it; the last reference may
    /// go with the construction's task or with any waiter, and the deinit still runs once,
    /// with no lock held.
    @Test func anAsyncSharedInstanceWhoseDeinitResolvesGoesAwayAfterManyWaited() async {
        await expectNoProblems { problems in
            for round in 0..<20 {
                let (container, latch) = containerHeldAtALatch()
                let deinits = container.counter("deinitResolver.deinit")
                // Each waiter keeps the instance until all have it: none is built twice.
                let holding = AsyncBarrier(parties: 200)
                let waiters = (0..<200).map { _ in
                    Task {
                        let instance = try await container.asyncInFlightDeinitResolver()
                        await holding.arrive()
                        return ObjectIdentifier(instance)
                    }
                }
                latch.open()
                var seen = Set<ObjectIdentifier>()
                for waiter in waiters {
                    if let piece = try? await waiter.value { seen.insert(piece) }
                }
                if seen.count != 1 { problems.append("round \(round): \(seen.count) instances") }
                // The construction's task may still hold the record, and the record the
                // instance: wait for the deinit, which the hang guard bounds.
                while deinits.count == 0 { await Task.yield() }
                if deinits.count != 1 { problems.append("round \(round): \(deinits.count) deinits") }
            }
        }
    }

    // MARK: - Helpers

    /// Over many rounds, nine threads read with the reader that `makeReader` makes for a
    /// new container: the first starts the construction, which meets the eight others at
    /// the stored `Meeting`; they read as the construction ends. Expects all to get the
    /// same instance.
    private func expectThreadsToAgree(
        _ makeReader: @escaping @Sendable (DependencyContainer) -> @Sendable () -> AnyObject
    ) async {
        await expectNoProblemsOnAThread { problems in
            for round in 0..<300 {
                let container = DependencyContainer()
                let meeting = Meeting(parties: 9)
                container.setValue(meeting, forKey: "attack.meeting")
                let read = makeReader(container)
                let seen = Collected<ObjectIdentifier>()
                concurrently(threads: 9) { index in
                    // The construction meets the other threads as it ends.
                    if index > 0 { meeting.arrive() }
                    seen.append(ObjectIdentifier(read()))
                }
                if Set(seen.values).count != 1 { problems.append("round \(round): more than one instance") }
            }
        }
    }

    /// A new container whose held constructions wait for the latch returned with it.
    private func containerHeldAtALatch() -> (DependencyContainer, AsyncLatch) {
        let container = DependencyContainer()
        let latch = AsyncLatch()
        container.setValue(latch, forKey: "attack.latch")
        return (container, latch)
    }

    /// Runs `work` in a task under the hang guard, and expects it to end having named no
    /// problem.
    private func expectNoProblems(_ work: @escaping @Sendable (Collected<String>) async -> Void) async {
        let problems = Collected<String>()
        #expect(await endsWithoutHanging { await work(problems) })
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
    }

    /// Runs `work` on a thread under the hang guard, and expects it to end having named no
    /// problem. The test's task waits without blocking a thread of the cooperative pool,
    /// which other tests running meanwhile need.
    private func expectNoProblemsOnAThread(_ work: @escaping @Sendable (Collected<String>) -> Void) async {
        let problems = Collected<String>()
        #expect(await finishesWithoutHangingOffThePool { work(problems) })
        #expect(problems.values.isEmpty, "\(problems.values.prefix(5))")
    }
}
