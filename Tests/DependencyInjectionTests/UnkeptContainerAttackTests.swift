// Attacks on the references that do not keep their container (`UnkeptContainer`): the
// `@Dependency` properties of kept instances, their linked providers and their switches,
// racing the container's last release.
import DependencyInjection
import Foundation
import Testing

/// A singleton whose `deinit` reports that its container let go of it.
private final class UnkeptAttackProbe: Sendable {
    let gone: @Sendable () -> Void
    init(gone: @escaping @Sendable () -> Void) { self.gone = gone }
    deinit { gone() }
}

private final class UnkeptAttackClock: Sendable {}

/// A kept instance with an injected property, read for the first time by the test.
private final class UnkeptAttackService: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.unkeptAttackClock) var clock
    init() {}
}

/// A singleton whose `deinit` reads its injected property for the first time.
private final class UnkeptAttackFlusher: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.unkeptAttackClock) var clock
    let flushed: @Sendable (Bool) -> Void
    init(flushed: @escaping @Sendable (Bool) -> Void) { self.flushed = flushed }
    deinit { flushed(clock === clock) }
}

extension DependencyContainer {
    fileprivate var unkeptAttackGone: Provider<@Sendable () -> Void> { unimplemented() }
    fileprivate var unkeptAttackFlushed: Provider<@Sendable (Bool) -> Void> { unimplemented() }
    fileprivate var unkeptAttackProbe: Provider<UnkeptAttackProbe> {
        singleton { UnkeptAttackProbe(gone: self.unkeptAttackGone()) }
    }
    fileprivate var unkeptAttackClock: Provider<UnkeptAttackClock> { singleton { UnkeptAttackClock() } }
    fileprivate var unkeptAttackService: Provider<UnkeptAttackService> { singleton { UnkeptAttackService() } }
    fileprivate var unkeptAttackScopedService: Provider<UnkeptAttackService> { scoped { UnkeptAttackService() } }
    fileprivate var unkeptAttackScopedProbe: Provider<UnkeptAttackProbe> {
        scoped { UnkeptAttackProbe(gone: self.unkeptAttackGone()) }
    }
    fileprivate var unkeptAttackFlusher: Provider<UnkeptAttackFlusher> {
        singleton { UnkeptAttackFlusher(flushed: self.unkeptAttackFlushed()) }
    }
}

/// A container with a probe that reports its going to `gone`, and a service whose property
/// has not been read; the caller's reference is the container's only one.
private func unkeptAttackContainer(gone: @escaping @Sendable () -> Void) -> DependencyContainer {
    let container = DependencyContainer()
    container.override(\.unkeptAttackGone) { gone }
    _ = container.unkeptAttackProbe()
    return container
}

@Suite struct UnkeptContainerAttackTests {
    /// A kept service's property is switched to another container on one thread while
    /// another drops the last reference to the service's container: the switch reads the
    /// container it held without keeping it, and may be the one to let go of it last.
    /// Each container goes exactly once, and the property reads the one it switched to.
    @Test func aSwitchAwayRacingTheLastReleaseFreesTheContainerOnceAndReadsTheNewOne() async {
        let rounds = 400
        let gone = Collected<Int>()
        let wrong = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<rounds {
                let container = unkeptAttackContainer { gone.append(round) }
                let service = container.unkeptAttackService()
                let other = DependencyContainer()
                let last = LastContainerReference(container)
                _ = consume container
                onThreadsReleasedTogetherAndJoined(2) { index in
                    if index == 0 { return last.drop() }
                    service.$clock.container = other
                }
                if service.clock !== other.unkeptAttackClock() { wrong.append(round) }
            }
        }
        #expect(finished)
        #expect(gone.values.sorted() == Array(0..<rounds), "each container went once")
        #expect(wrong.values.isEmpty, "rounds \(wrong.values) read another clock")
    }

    /// The switch back to the container that keeps the service races that container's last
    /// release: the property holds it without keeping it again (by address), so the
    /// container goes, exactly once, whichever thread lets go of it last.
    @Test func aSwitchBackRacingTheLastReleaseDoesNotKeepTheContainer() async {
        let rounds = 400
        let gone = Collected<Int>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<rounds {
                let container = unkeptAttackContainer { gone.append(round) }
                let service = container.unkeptAttackService()
                let other = DependencyContainer()
                service.$clock.container = other
                _ = service.clock
                let back = LastContainerReference(container)
                let last = LastContainerReference(container)
                _ = consume container
                onThreadsReleasedTogetherAndJoined(2) { index in
                    if index == 0 { return last.drop() }
                    // Holds the container while it switches back, then lets go of it.
                    back.switchBack(service)
                    back.drop()
                }
                _ = service
            }
        }
        #expect(finished)
        #expect(gone.values.sorted() == Array(0..<rounds), "a container stayed, or went twice")
    }

    /// A kept service outlives its container, whose property points elsewhere: the
    /// container's address is not taken by any container made after, and a switch to each
    /// of those holds it, so the property still reads it once the test let go of it.
    @Test func aNewContainerIsNeverTakenForTheReleasedKeeper() {
        let gone = Collected<Bool>()
        var container: DependencyContainer? = unkeptAttackContainer { gone.append(true) }
        let service = container!.unkeptAttackService()
        service.$clock.container = DependencyContainer()
        let keeperAddress = UInt(bitPattern: Unmanaged.passUnretained(container!).toOpaque())
        container = nil
        #expect(gone.values == [true])
        var reused = 0
        for _ in 0..<2000 {
            var next: DependencyContainer? = DependencyContainer()
            if UInt(bitPattern: Unmanaged.passUnretained(next!).toOpaque()) == keeperAddress { reused += 1 }
            let clock = next!.unkeptAttackClock()
            service.$clock.container = next!
            next = nil
            if service.clock !== clock { reused += 1 }
        }
        #expect(reused == 0)
    }

    /// A singleton whose deinit first reads its property is released by `shutdown()` on one
    /// thread while another drops its reference to the container: the container lives
    /// through the shutdown, so every read finds it, and it goes once.
    @Test func aShutdownRacingTheLastReleaseServesTheDeinitsFirstRead() async {
        let rounds = 300
        let gone = Collected<Int>()
        let flushes = Collected<Bool>()
        let finished = await finishesWithoutHangingOffThePool {
            for round in 0..<rounds {
                let container = unkeptAttackContainer { gone.append(round) }
                container.override(\.unkeptAttackFlushed) { { flushes.append($0) } }
                _ = container.unkeptAttackFlusher()
                let shutter = LastContainerReference(container)
                let last = LastContainerReference(container)
                _ = consume container
                onThreadsReleasedTogetherAndJoined(2) { index in
                    if index == 0 { return last.drop() }
                    shutter.shutDown()
                    shutter.drop()
                }
            }
        }
        #expect(finished)
        #expect(flushes.values == Array(repeating: true, count: rounds))
        #expect(gone.values.sorted() == Array(0..<rounds))
    }
}

@Suite struct UnkeptContainerAttackScopeTests {
    /// Thousands of requests, four at a time, each keep their scoped handler after the
    /// request (a log, a cache): every scope still goes, with its scoped probe, and each
    /// kept handler keeps serving what it read during its request.
    @Test func handlersKeptAfterTheirRequestsLetEveryScopeGo() async {
        let requests = 4000
        let gone = Collected<Int>()
        let kept = Collected<(UnkeptAttackService, UnkeptAttackClock)>()
        let app = DependencyContainer()
        let clock = app.unkeptAttackClock()
        let finished = await concurrentlyOffThePool(threads: 4) { thread in
            for request in stride(from: thread, to: requests, by: 4) {
                let scope = DependencyContainer(scopeOf: app)
                scope.override(\.unkeptAttackGone) { { gone.append(request) } }
                _ = scope.unkeptAttackScopedProbe()
                let handler = scope.unkeptAttackScopedService()
                kept.append((handler, handler.clock))
            }
        }
        #expect(finished)
        #expect(gone.values.sorted() == Array(0..<requests), "\(requests - gone.values.count) scopes stayed")
        #expect(kept.values.allSatisfy { $0.0.clock === clock && $0.1 === clock })
    }
}

/// Racing the last release, in a child process: a read that takes the container first
/// resolves from it; one that comes after stops with the documented message. The child
/// writes ``everyRoundRead`` and exits with a failure when every round read, so that the parent
/// tells those two endings from a crash of any other kind.
private let everyRoundRead = "EVERY ROUND READ"

/// Runs `body` on a thread of its own, off the cooperative pool, and resumes when it ends.
private func onAThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            body()
            done.resume()
        }.start()
    }
}

@Suite struct UnkeptContainerAttackExitTests {
    /// Two threads read a kept service's property for the first time while a third drops
    /// the last reference to its container.
    @Test(arguments: 0..<4) func firstReadsRacingTheLastReleaseResolveFromTheLiveContainerOrStop(run: Int) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("the racing rounds")
            await onAThreadOfItsOwn {
                for _ in 0..<400 {
                let container = DependencyContainer()
                let service = container.unkeptAttackService()
                let clock = container.unkeptAttackClock()
                let last = LastContainerReference(container)
                _ = consume container
                onThreadsReleasedTogetherAndJoined(3) { index in
                    if index == 0 { return last.drop() }
                    precondition(service.clock === clock, "a read resolved another clock")
                }
                }
            }
            FileHandle.standardError.write(Data((everyRoundRead + "\n").utf8))
            exit(EXIT_FAILURE)
        }
        let output = standardError(of: result)
        #expect(
            output.contains(everyRoundRead) || output.contains("was released before the property was first read"),
            "\(output)")
    }

    /// Two threads call the provider family a kept instance's property published while a
    /// third drops the last reference to its container.
    @Test(arguments: 0..<4) func linkedFamilyCallsRacingTheLastReleaseResolveFromTheLiveContainerOrStop(run: Int) async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("the racing rounds")
            await onAThreadOfItsOwn {
                for _ in 0..<400 {
                let container = DependencyContainer()
                let reader = container.catalogReader()
                _ = reader.shelves
                let shelf = container.shelves("alpha")
                let last = LastContainerReference(container)
                _ = consume container
                onThreadsReleasedTogetherAndJoined(3) { index in
                    if index == 0 { return last.drop() }
                    precondition(reader.shelves("alpha") === shelf, "a call resolved another shelf")
                }
                }
            }
            FileHandle.standardError.write(Data((everyRoundRead + "\n").utf8))
            exit(EXIT_FAILURE)
        }
        let output = standardError(of: result)
        #expect(
            output.contains(everyRoundRead) || output.contains("the container this provider resolves in was released"),
            "\(output)")
    }
}

extension LastContainerReference {
    fileprivate func switchBack(_ service: UnkeptAttackService) {
        if let held { service.$clock.container = held }
    }

    fileprivate func shutDown() {
        held?.shutdown()
    }
}
