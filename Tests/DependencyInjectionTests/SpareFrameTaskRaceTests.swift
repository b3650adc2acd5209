import DependencyInjection
import Foundation
import Testing

// Attack: a task started during a first read walks the read's frame (through the frames it
// inherited) after its last synchronization with the reading thread, then ends; the
// reading thread then finds the frame unique, keeps it, and fills it again for its next
// first read. The only ordering between the task's reads of the frame and the thread's
// writes to it is the reference count.

final class SPFWalker: @unchecked Sendable {
    @Dependency var name: String
    init(container: DependencyContainer) { _name = Dependency(\.spfName, container: container) }
}

final class SPFSpawnHolder: @unchecked Sendable {
    @Dependency var value: Int
    init(container: DependencyContainer) { _value = Dependency(\.spfSpawning, container: container) }
}

final class SPFSignals: Sendable {
    let walked = DispatchSemaphore(value: 0)
    init() {}
}

final class SPFPark: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let leave = DispatchSemaphore(value: 0)
    init() {}
}

extension DependencyContainer {
    var spfName: Provider<String> { factory { "n" } }

    /// Starts a task that inherits this construction's frame, whose parent is the read's.
    var spfSpawner: Provider<Int> {
        singleton {
            let signals: SPFSignals = self.getValue(forKey: "spf.signals")!
            let container = self
            Task {
                for _ in 0..<3 { _ = SPFWalker(container: container) }
                signals.walked.signal()
                // After the last synchronization with the reading thread.
                for _ in 0..<60 { _ = SPFWalker(container: container) }
            }
            return 1
        }
    }

    /// What the holder's property resolves: the spawner, then waits for the task's first
    /// walks, then works a while so that the task usually ends before the read does.
    var spfSpawning: Int {
        let value = spfSpawner()
        let signals: SPFSignals = getValue(forKey: "spf.signals")!
        signals.walked.wait()
        var sum = 0
        for index in 0..<300_000 { sum &+= index &* 31 }
        return value + (sum == 42 ? 1 : 0)
    }

    /// Keeps a frame bound as a task-local value somewhere in the process while the test
    /// runs, so that tasks look at the frames they inherited.
    var spfParked: Provider<Int> {
        singleton {
            let park: SPFPark = self.getValue(forKey: "spf.park")!
            park.entered.signal()
            park.leave.wait()
            return 0
        }
    }
}

@Suite struct SpareFrameTaskRaceTests {
    @Test func aTaskThatWalkedTheReadsFrameAndEndedDoesNotRaceWithItsReuse() async {
        let finished = await finishesWithoutHangingOffThePool {
            let parkContainer = DependencyContainer()
            let park = SPFPark()
            parkContainer.setValue(park, forKey: "spf.park")
            let parker = Thread { _ = parkContainer.spfParked() }
            parker.start()
            park.entered.wait()
            // Each round waits for a task of the cooperative pool, which a whole suite under
            // ThreadSanitizer keeps busy: 200 rounds outran the hang limit there, 60 do not.
            for _ in 0..<60 {
                let container = DependencyContainer()
                container.setValue(SPFSignals(), forKey: "spf.signals")
                let holder = SPFSpawnHolder(container: container)
                precondition(holder.value == 1)
                // Another first read right away: it runs in the frame just kept, if the
                // task had let go of it.
                precondition(SPFWalker(container: container).name == "n")
            }
            park.leave.signal()
        }
        #expect(finished)
    }

    /// Threads released together: each reads properties of shared holders for the first
    /// time while others switch their container or reset them, and reads private ones in
    /// between so that every thread cycles its spare frame.
    @Test func firstReadsRaceWithSwitchesAndResetsOnSharedHolders() async {
        let first = DependencyContainer()
        first.setValue("first", forKey: "spf.name")
        let second = DependencyContainer()
        second.setValue("second", forKey: "spf.name")
        let holders = (0..<2_000).map { _ in SPFNameHolder(container: first) }
        let finished = await concurrentlyOffThePool(threads: 4) { index in
            for (offset, holder) in holders.enumerated() {
                switch index {
                case 0, 3:
                    let name = holder.name
                    precondition(name == "first" || name == "second", name)
                case 1:
                    if offset % 2 == 0 { holder.$name.container = second } else { _ = holder.name }
                default:
                    if offset % 3 == 0 { holder.$name.reset() } else { _ = holder.name }
                }
                let own = SPFNameHolder(container: index % 2 == 0 ? first : second)
                precondition(own.name == (index % 2 == 0 ? "first" : "second"))
            }
        }
        #expect(finished)
    }
}

final class SPFNameHolder: @unchecked Sendable {
    @Dependency var name: String
    init(container: DependencyContainer) { _name = Dependency(\.spfStoredName, container: container) }
}

extension DependencyContainer {
    var spfStoredName: Provider<String> { factory { self.getValue(forKey: "spf.name") ?? "none" } }
}
