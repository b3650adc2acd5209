import Dispatch

/// Whether the caller runs on the main queue, which is where the main actor runs, asked
/// without stopping the process.
///
/// `MainActor.preconditionIsolated` off the main actor stops on Linux inside libdispatch
/// (`dispatch_assert_queue`) before it prints its message; a check that must name what
/// went wrong asks this first.
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// `true` on the main queue (and so on the main actor), `false` elsewhere.
    static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: key) ?? false
    }
}
