#if canImport(Darwin)
import Darwin
#else
import Dispatch
#endif

/// Whether the caller runs where the main actor runs, asked without stopping the process.
///
/// Off the main actor, `MainActor.preconditionIsolated` ends in libdispatch's
/// `dispatch_assert_queue`, which stops the process before the message is printed (seen on
/// Linux); a check that must name what went wrong asks this first: on Apple platforms
/// whether this is the main thread, elsewhere whether the main queue is running (what
/// `dispatch_assert_queue` checks).
enum MainQueue {
    #if canImport(Darwin)
    static var isCurrent: Bool { pthread_main_np() != 0 }
    #else
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// `true` on the main queue (and so on the main actor), `false` elsewhere.
    static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) ?? false
    }
    #endif
}
