import Foundation
import Testing
@testable import DependencyInjection
import _DependencyInjectionShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the engine reads of its thread on every construction, through its C target: the
/// thread's slot of frames (a thread-local variable, cleared when the thread frees the
/// slot) and the identity of the running task or thread.
@Suite struct ThreadStateTests {
    @Test func aResolutionInAThreadExitDestructorFindsAnEmptySlotAndLeavesItEmpty() async {
        let seen = await onAThreadThatEnds { () -> ExitResolution in
            // The package's own key exists before the test's, so that on exit its destructor
            // frees the slot first (destructors run in key order on Linux).
            _ = DependencyContainer()[countdown: 2]()
            let seen = ExitResolution()
            pthread_setspecific(ExitResolution.key, Unmanaged.passRetained(seen).toOpaque())
            return seen
        }
        // The destructor ran on the thread before it was joined. A slot freed without
        // clearing the thread-local address would have been read here: malloc writes its
        // own words over the freed slot's first ones, the innermost frame among them.
        #expect(seen.emptyBefore == true, "the thread's freed slot was still in use")
        #expect(seen.value == 129, "a chain of 130 frames, across three blocks, resolved at thread exit")
        #expect(seen.emptyAfter == true)
    }

    @Test func aThreadWhoseVariableReadsNilWhileItHasASlotFindsThatSlotAgain() async {
        // What a thread sees as it exits on Apple platforms, when the system has freed the
        // block of its C thread-local variables before the package's destructor ran: the
        // variable reads nil, but the slot is still registered to be freed. A resolution
        // there must take that slot, not register a second one and leak the first.
        let (found, value, emptyAfter) = await onAThreadThatEnds { () -> (Bool, Int, Bool) in
            _ = DependencyContainer()[countdown: 2]()
            let registered = _di_thread_frames()
            _di_set_thread_frames(nil)
            let value = DependencyContainer()[countdown: 70]()
            let found = registered != nil && _di_thread_frames() == registered
            let slot = ThreadFrames.existingSlot
            return (found, value, slot.map { $0.innermostWord == nil && $0.plainDepth == 0 } ?? false)
        }
        #expect(found, "the thread registered a second slot")
        #expect(value == 70)
        #expect(emptyAfter)
    }

    @Test func aThreadOutsideAnyTaskIsOneOwnerUntilItEnds() async {
        let (first, again) = await onAThreadThatEnds { (Owner.current, Owner.current) }
        #expect(first == again)
    }

    @Test func threadsAliveAtOnceAreDifferentOwners() async {
        let owners = Collected<Owner>()
        let bothRead = Rendezvous()
        let finished = await concurrentlyOffThePool(threads: 2) { _ in
            owners.append(Owner.current)
            // Neither thread ends before both have read: a thread that ended may hand its
            // identity to a new one.
            bothRead.arrive()
        }
        #expect(finished)
        #expect(owners.values.count == 2)
        #expect(Set(owners.values).count == 2, "two live threads read as one owner")
    }

    @Test func aTaskIsAnotherOwnerThanTheThreadThatStartedIt() async {
        let (thread, task) = await onAThreadThatEnds { () -> (Owner, Owner) in
            let thread = Owner.current
            let task = Collected<Owner>()
            let done = DispatchSemaphore(value: 0)
            Task.detached {
                task.append(Owner.current)
                done.signal()
            }
            done.wait()
            return (thread, task.values[0])
        }
        #expect(thread != task)
    }

    @Test func tasksRunningAtOnceAreDifferentOwnersAndEachKeepsItsOwn() async {
        let (first, second) = await withTaskGroup(of: (Owner, Owner).self) { group in
            let bothRead = AsyncRendezvous()
            for _ in 0..<2 {
                group.addTask {
                    let before = Owner.current
                    await bothRead.arrive()
                    return (before, Owner.current)
                }
            }
            var seen: [(Owner, Owner)] = []
            for await pair in group { seen.append(pair) }
            return (seen[0], seen[1])
        }
        #expect(first.0 == first.1 && second.0 == second.1, "a task's owner changed across a suspension")
        #expect(first.0 != second.0, "two running tasks read as one owner")
    }
}

/// Filled in by a thread-specific destructor that the test's thread runs when it exits,
/// after the package's own.
private final class ExitResolution: @unchecked Sendable {
    // @unchecked: written by the exiting thread before it is joined, read after.
    var emptyBefore: Bool?
    var value: Int?
    var emptyAfter: Bool?

    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { context in
            #if canImport(Darwin)
            let seen = Unmanaged<ExitResolution>.fromOpaque(context).takeRetainedValue()
            #else
            let seen = Unmanaged<ExitResolution>.fromOpaque(context!).takeRetainedValue()
            #endif
            seen.emptyBefore = ThreadFrames.existingSlot.map { $0.innermostWord == nil && $0.plainDepth == 0 } ?? true
            seen.value = DependencyContainer()[countdown: 129]()
            seen.emptyAfter = ThreadFrames.existingSlot.map { $0.innermostWord == nil && $0.plainDepth == 0 }
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()
}
