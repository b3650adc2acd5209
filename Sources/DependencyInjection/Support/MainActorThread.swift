#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

/// Whether the caller runs where the main actor runs, asked without stopping the process.
///
/// The runtime's own check (`MainActor.preconditionIsolated`) stops inside libdispatch on
/// Linux before it prints its message; a check that must say what went wrong asks this
/// first:
///
/// ```swift
/// MainActorThread.check("feedStore is a main-actor registration resolved off the main actor")
/// ```
///
/// On Apple platforms that is the main thread. On Linux the main actor runs on the main
/// queue, which a worker thread drains once the main thread calls `dispatchMain()` (as test
/// runners do), and on the main thread itself, also inside a `sync` block of another queue;
/// so either is enough. The main thread is the one whose id is the process id, with
/// `gettid` looked up at run time because its declaration needs `_GNU_SOURCE`.
@usableFromInline
enum MainActorThread {
    #if canImport(Darwin)
    static var isCurrent: Bool { pthread_main_np() != 0 }
    #else
    private typealias ThreadID = @convention(c) () -> pid_t
    private static let threadID: ThreadID? = dlsym(nil, "gettid").map { unsafeBitCast($0, to: ThreadID.self) }
    private static let mainQueue: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool {
        DispatchQueue.getSpecific(key: mainQueue) ?? false || threadID.map { $0() == getpid() } ?? false
    }
    #endif

    /// Whether a registration whose property has `isolation` is isolated to the main actor,
    /// checked to be made on it (see ``check(registration:)``).
    ///
    /// Called where a provider is made: in the registration's property, which every
    /// resolution calls, through a key path or a `@Dependency` too. In a nonisolated
    /// property `isolation` is a literal `nil`, and this folds away.
    @inlinable
    static func isMainActor(_ isolation: (any Actor)?, registration name: StaticString) -> Bool {
        let isMainActor = isolation.map { $0 === MainActor.shared } ?? false
        if isMainActor { check(registration: name) }
        return isMainActor
    }

    /// Stops unless the caller runs on the main actor, saying that `name`, a main-actor
    /// registration, was resolved off it.
    @usableFromInline
    static func check(registration name: StaticString) {
        if isCurrent { return }
        stop(
            "\(name) is a registration of MainActor and was resolved off it (through a key path or a "
                + "@Dependency sent to another thread). Resolve it on the main actor.")
    }

    /// Stops with `misuse` unless the caller runs on the main actor.
    static func check(_ misuse: @autoclosure () -> String) {
        if isCurrent { return }
        stop(misuse())
    }

    @inline(never)
    private static func stop(_ misuse: String) {
        #if canImport(Darwin)
        fatalError(misuse)
        #else
        // One case escapes `isCurrent` on Linux: main-actor code in a `sync` block of another
        // queue, run by a worker that drains the main queue. The runtime tracks that case and
        // lets it go on, but stops without a message when the caller is really off the main
        // actor: say what a stop here means, then let the runtime decide.
        let note = "DependencyInjection: if the process stops here, \(misuse)\n"
        _ = write(STDERR_FILENO, note, note.utf8.count)
        MainActor.preconditionIsolated(misuse)
        #endif
    }
}
