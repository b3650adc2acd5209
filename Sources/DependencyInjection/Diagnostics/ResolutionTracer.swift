import Dispatch

/// One resolution of a provider, as reported to a ``ResolutionTracer``.
///
/// Events show how an app is wired and where time goes at launch: which registration
/// was asked for, at what depth, whether it was built or came from the cache, and how
/// long building it took. Its ``description`` is the line ``ResolutionTracer/printer``
/// prints:
///
/// ```text
/// feedLoader: FeedLoader [factory] built in 0.041 ms
///   httpClient: HTTPClient [singleton] cached
/// ```
public struct ResolutionEvent: Sendable, Hashable, CustomStringConvertible {
    /// Where the resolved instance came from.
    ///
    /// A trace of a slow launch usually looks for `built` events with a long
    /// ``ResolutionEvent/duration``; a trace of a test shows `builtFromOverride` where a
    /// stub was used. The raw value is the text the printer shows.
    public enum Outcome: String, Sendable, Hashable {
        /// Built by the registration's closure.
        case built
        /// Built by an override's closure.
        case builtFromOverride = "built from override"
        /// Served from the container's cache (a singleton or a live shared instance), or the
        /// instance of a graph registration that the outermost resolution already built.
        case cached
        /// Built on another thread while this one waited for it.
        case awaited
    }

    /// The registration's name: the property or subscript that declares it.
    public let name: String
    /// The provided type, as written in the registration.
    public let type: String
    /// The registration's scope.
    public let scope: DependencyScope
    /// Whether the instance was built, taken from the cache, or awaited.
    public let outcome: Outcome
    /// How deep in the resolution this one happened: 0 for what the caller asked for,
    /// 1 for what that needed, and so on.
    public let depth: Int
    /// Nanoseconds spent building the instance, including what it resolved; 0 when cached.
    public let duration: UInt64

    /// Creates an event.
    ///
    /// The container creates events while tracing; create your own to test code that
    /// consumes them, such as a tracer that collects statistics.
    ///
    /// - Parameters:
    ///   - name: The registration's name.
    ///   - type: The provided type's name.
    ///   - scope: The registration's scope.
    ///   - outcome: Where the instance came from.
    ///   - depth: The nesting level, 0 for the outermost resolution.
    ///   - duration: Nanoseconds spent building; 0 when nothing was built.
    public init(
        name: String, type: String, scope: DependencyScope, outcome: Outcome, depth: Int,
        duration: UInt64
    ) {
        self.name = name
        self.type = type
        self.scope = scope
        self.outcome = outcome
        self.depth = depth
        self.duration = duration
    }

    /// This event, `levels` levels nearer the outermost resolution: for a tracer that
    /// hears of part of a tree only, whose outermost event it hears of is at depth 0.
    func movedUp(by levels: Int) -> ResolutionEvent {
        ResolutionEvent(
            name: name, type: type, scope: scope, outcome: outcome, depth: depth - levels, duration: duration)
    }

    /// One line, indented by two spaces per level of depth, such as
    /// `  httpClient: HTTPClient [singleton] built in 0.012 ms`.
    public var description: String {
        var line = String(repeating: "  ", count: depth)
        line += "\(name): \(type) [\(scope.rawValue)] \(outcome.rawValue)"
        if outcome == .built || outcome == .builtFromOverride {
            let milliseconds = Double(duration) / 1_000_000
            let rounded = (milliseconds * 1_000).rounded() / 1_000
            line += " in \(rounded) ms"
        }
        return line
    }
}

/// Receives the resolutions a container performs, for debugging and for learning how an
/// app is wired.
///
/// Tracing is off by default and costs nothing then. Turn it on for a container (its
/// children created later inherit it, and existing ones adopt it):
///
/// ```swift
/// DependencyContainer.main.tracer = .printer
/// _ = DependencyContainer.main.feedLoader()
/// // feedLoader: FeedLoader [factory] built in 0.041 ms
/// //   httpClient: HTTPClient [singleton] built in 0.012 ms
/// ```
///
/// A tracer receives the events of one outermost synchronous resolution together, once
/// it has finished, in the order the resolutions started, so nested ones follow their
/// parent, for synchronous and asynchronous resolutions alike. A tracer is called with no
/// lock held and outside every construction, so it may resolve dependencies itself; its
/// own resolutions are not traced.
///
/// The first read of a `@Dependency` property of an object that app code created (a view
/// model, a handler) is no construction: what it resolves is an outermost resolution, at
/// depth 0, delivered once the property holds its value, so a tracer may read that
/// property too. A first read inside a construction is part of it, and its events join
/// the construction's, one level below it, as what the construction resolves itself.
///
/// Each container reports to its own tracer. When one resolution crosses containers
/// with different tracers (a scope and its app container, a child and its parent), each
/// tracer receives its own container's events as a tree of their own: each one level
/// below the nearest of them that encloses it in the resolution, and those that none of
/// them encloses at depth 0 (at 1 when the resolution that began it threw: what an async
/// resolution that throws built is delivered below it). So does a tracer that replaces
/// another while a construction runs: it hears of what that construction still resolves,
/// from depth 0, and the tracer the construction began with hears of the rest.
///
/// Two kinds of resolution are not reported, because their events could only be delivered
/// inside a construction, where a tracer that resolves would wait for itself: those made
/// inside the construction of a container that had no tracer when that construction began,
/// and those that finish after their outermost resolution was delivered, inside a
/// construction. An async resolution that throws delivers what it built before throwing,
/// without an event of its own.
public final class ResolutionTracer: Sendable {
    private let report: @Sendable ([ResolutionEvent]) -> Void

    /// Creates a tracer that hands each finished resolution tree to `report`.
    ///
    /// - Parameter report: Receives the events of one outermost resolution, in start order.
    public init(_ report: @escaping @Sendable ([ResolutionEvent]) -> Void) {
        self.report = report
    }

    /// A tracer that prints each resolution on its own line, indented by depth.
    ///
    /// ```swift
    /// DependencyContainer.main.tracer = .printer
    /// ```
    public static let printer = ResolutionTracer.printer { print($0) }

    /// A tracer that writes each resolution as a line, indented by depth.
    ///
    /// Use it to send the trace somewhere other than standard output:
    ///
    /// ```swift
    /// container.tracer = .printer { line in logger.debug("\(line)") }
    /// ```
    ///
    /// - Parameter write: Receives one line per resolution, without a newline.
    /// - Returns: The tracer.
    public static func printer(_ write: @escaping @Sendable (String) -> Void) -> ResolutionTracer {
        ResolutionTracer { events in
            for event in events { write(event.description) }
        }
    }

    func deliver(_ events: [ResolutionEvent]) {
        report(events)
    }
}

extension DependencyContainer {
    /// The tracer that receives this container's resolutions, or `nil` (the default) for
    /// none.
    ///
    /// Turn it on while debugging wiring or a slow launch, and off again with `nil`:
    ///
    /// ```swift
    /// DependencyContainer.main.tracer = .printer
    /// _ = DependencyContainer.main.feedLoader()
    /// DependencyContainer.main.tracer = nil
    /// ```
    ///
    /// Setting it also sets it on the children that exist now; children created later
    /// start with their parent's tracer. When it is `nil`, resolution does no tracing work.
    public var tracer: ResolutionTracer? {
        get { withStateLock { $0.tracer } }
        set {
            // One setter at a time walks the whole tree, so that concurrent setters leave
            // every descendant with the tracer its parent has. What it replaces (and the
            // references it takes to children) is released after every lock.
            var released = Released()
            Self.tracerUpdates.withLock { _ in
                var pending = [self]
                while let next = pending.popLast() {
                    next.withStateLock { state in
                        released.keep(state.tracer)
                        state.tracer = newValue
                        // Each child is held by its entry in `pending` before the list that
                        // held it first goes, so that going releases none of them here.
                        pending += state.liveChildren.map(\.container)
                    }
                    released.append(next)
                }
            }
            withExtendedLifetime(released) {}
        }
    }

    /// Serializes ``tracer`` setters.
    private static let tracerUpdates = _Locked(_Elsewhere())
}
