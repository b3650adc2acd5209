import Foundation
import Testing
@testable import DependencyInjection

// How a `@Dependency` property's first read ends, under attack: what the read lets go of
// when it ends (its reference to the container it resolved from, its frame) goes only
// after the owners waiting for the read wake, since a `deinit` it runs may wait for one
// of them. Registrations and fixtures use the prefix `fre`.

/// Runs its hook when it goes: a stored value whose `deinit` uses another container.
final class FREMourner: Sendable {
    let hook: DeinitHook
    init(_ hook: DeinitHook) { self.hook = hook }
    deinit { hook.fire() }
}

final class FREValue: Sendable {
    let name: String
    init(_ name: String) { self.name = name }
}

/// An object whose property resolves `freGated` from the container it is given.
final class FREHolder: @unchecked Sendable {
    // @unchecked: the property wrapper's storage is thread-safe; the holder has no other state.
    @Dependency(\.freGated) var gated: FREValue
    init(container: DependencyContainer) { _gated = Dependency(\.freGated, container: container) }
}

extension DependencyContainer {
    /// Passes the gate stored under "fre.gate", if any, then makes a value named by
    /// "fre.name", or "gated".
    var freGated: Provider<FREValue> {
        factory {
            let name = (self.getValue(forKey: "fre.name") as String?) ?? "gated"
            (self.getValue(forKey: "fre.gate") as CRAGate?)?.pass()
            return FREValue(name)
        }
    }
    /// A singleton built from the property of the holder stored under "fre.holder".
    var freReader: Provider<FREValue> {
        singleton {
            let holder: FREHolder? = self.getValue(forKey: "fre.holder")
            return FREValue("read \(holder?.gated.name ?? "nothing")")
        }
    }
}

@Suite struct FirstReadEndAttackTests {
    /// Thread A reads the property first, from `first`, and waits at the gate; thread W
    /// builds the singleton `freReader` in `app`, whose construction reads the property and
    /// waits for A. The property switches to `app` meanwhile, so A's read holds the last
    /// reference to `first`. When A's read ends, `first` goes, and its stored value's
    /// `deinit` resolves `freReader`, which W is building and which waits for A's read.
    /// Released before A's read wakes W, it waits for W, who waits for A: a deadlock, or
    /// a circular dependency reported that no code has. Released after, it finds W's
    /// singleton built.
    @Test func theContainerAFirstReadLetsGoOfGoesAfterItsWaitersWake() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("a first read's container released before the read woke its waiters")
            let app = DependencyContainer()
            let hook = DeinitHook()
            let gate = CRAGate()
            let holder: FREHolder = {
                let first = DependencyContainer()
                first.setValue(gate, forKey: "fre.gate")
                first.setValue(FREMourner(hook), forKey: "fre.mourner")
                return FREHolder(container: first)
            }()
            app.setValue(holder, forKey: "fre.holder")
            hook.set { precondition(app.freReader().name == "read gated") }
            let done = DispatchGroup()
            done.enter()
            Thread {
                precondition(holder.gated.name == "gated")
                done.leave()
            }.start()
            gate.entered.wait()
            done.enter()
            Thread {
                precondition(app.freReader().name == "read gated")
                done.leave()
            }.start()
            while !holder.$gated.storage.isAwaited { sched_yield() }
            // The storage lets go of `first`: the read in progress holds it alone.
            holder.$gated.container = app
            gate.open()
            done.wait()
            precondition(hook.fired == 1, "the read did not let go of the container")
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self).prefix(600))")
        }
    }

    /// How a change reaches a first read in progress, whose value goes to the reader that
    /// started it (and to those that waited for it before the change) but is not kept.
    enum Change: String, CaseIterable { case switchContainer, reset }

    /// Thread A reads the property first, and waits at the gate; thread B reads it and
    /// waits for A. Then the property changes: switched to another container, or reset. A
    /// read that starts after the change resolves anew, as the change promises ("the next
    /// access resolves from the new container"), without waiting for A's, which resolves
    /// from before the change: A and B get the value from before, the later read and every
    /// read after it the value from after.
    @Test(arguments: Change.allCases)
    func aReadThatStartsAfterAChangeResolvesAnewWithoutWaitingForTheOutdatedOne(change: Change) async {
        let seen = Collected<String>()
        let ended = await finishesWithoutHangingOffThePool {
            let first = DependencyContainer()
            let gate = CRAGate()
            first.setValue(gate, forKey: "fre.gate")
            first.setValue("before", forKey: "fre.name")
            let holder = FREHolder(container: first)
            let done = DispatchGroup()
            for reader in ["A", "B"] {
                done.enter()
                Thread {
                    seen.append("\(reader): \(holder.gated.name)")
                    done.leave()
                }.start()
                if reader == "A" { gate.entered.wait() }
            }
            while !holder.$gated.storage.isAwaited { sched_yield() }
            switch change {
            case .switchContainer:
                let second = DependencyContainer()
                second.setValue("after", forKey: "fre.name")
                holder.$gated.container = second
            case .reset:
                holder.$gated.reset()
                first.removeValue(forKey: "fre.gate")
                first.setValue("after", forKey: "fre.name")
            }
            // Before A's read ends: A waits at the gate until the later read is done, or
            // hung waiting for A.
            if !finishesWithoutHanging({ seen.append("later: \(holder.gated.name)") }) {
                seen.append("the later read waited for the outdated one")
            }
            gate.open()
            done.wait()
            seen.append("then: \(holder.gated.name)")
        }
        #expect(ended, "a read hung")
        #expect(seen.values.first == "later: after")
        #expect(seen.values.sorted() == ["A: before", "B: before", "later: after", "then: after"])
    }
}
