import Dispatch

/// The events of one outermost traced resolution, delivered together once it ends.
///
/// The outermost resolution creates the batch; the frames it builds in carry it, so every
/// nested resolution (on this owner, or in a task a construction starts) adds its event
/// to it. Events are numbered when their resolution starts and delivered in that order,
/// so a tracer sees a parent before what it needed. A tracer runs with no lock held and
/// outside every frame, so it may resolve anything; what it resolves is not traced.
///
/// ```swift
/// let trace = Trace(tracer, name: "feedLoader", type: FeedLoader.self, scope: .factory)
/// let value = make()
/// trace?.finish(outcome: .built)   // delivers if outermost; nil when it threw
/// ```
final class TraceBatch: Sendable {
    /// Set while a tracer runs: resolutions it makes are not traced.
    @TaskLocal static var isDelivering = false

    private struct State {
        var events: [(sequence: Int, event: ResolutionEvent, tracer: ResolutionTracer)] = []
        /// For each resolution begun, by its number, the number of the traced resolution
        /// that encloses it in the batch, or -1: what ``ownTrees(_:enclosing:)`` walks up.
        var enclosing: [Int] = []
        var delivered = false
    }

    private let state = _Locked(State())

    /// The depth of the frames around the resolution that began the batch, which the
    /// depths its events report leave out: that resolution is at depth 0, whatever encloses
    /// it (the first read of a `@Dependency` property, a construction another owner runs).
    let baseDepth: Int

    /// A batch for a resolution whose frames are `baseDepth` deep.
    init(baseDepth: Int) {
        self.baseDepth = baseDepth
    }

    /// Numbers a resolution that starts now, inside the traced resolution numbered
    /// `enclosing` (-1 for none).
    func begin(enclosedBy enclosing: Int) -> Int {
        state.withLock { state in
            defer { state.enclosing.append(enclosing) }
            return state.enclosing.count
        }
    }

    /// Adds a finished resolution. One that finishes after delivery (in a task the
    /// outermost resolution did not wait for) goes out on its own if that is outside every
    /// construction of its owner, and is dropped otherwise: a tracer never runs inside a
    /// construction, where resolving it could only wait for itself.
    func add(_ sequence: Int, _ event: ResolutionEvent, to tracer: ResolutionTracer, late deliverable: Bool) {
        let late = state.withLock { state in
            if !state.delivered { state.events.append((sequence, event, tracer)) }
            return state.delivered
        }
        if late, deliverable { TraceBatch.delivering { tracer.deliver([event]) } }
    }

    /// Hands the events to their tracers, in start order, one call per tracer.
    ///
    /// When the batch crossed containers with tracers of their own (a scope's and its app
    /// container's, a child's and its parent's), each tracer hears of its part as a tree
    /// of its own (``ownTrees(_:enclosing:)``). Otherwise the one tracer hears of the batch's depths
    /// as they are.
    func deliver() {
        let (events, enclosing) = state.withLock { state in
            state.delivered = true
            defer { (state.events, state.enclosing) = ([], []) }
            return (state.events.sorted { $0.sequence < $1.sequence }, state.enclosing)
        }
        let isOneTracer = events.allSatisfy { $0.tracer === events[0].tracer }
        let leveled =
            isOneTracer ? events.map { (event: $0.event, tracer: $0.tracer) } : Self.ownTrees(events, enclosing: enclosing)
        var remaining = leveled[...]
        TraceBatch.delivering {
            while let first = remaining.first {
                first.tracer.deliver(remaining.filter { $0.tracer === first.tracer }.map(\.event))
                remaining = remaining.filter { $0.tracer !== first.tracer }[...]
            }
        }
    }

    /// The events of a batch, in start order, each tracer's as a tree of their own: an
    /// event one level below the nearest event that encloses it in the batch and goes to
    /// the same tracer, and one that no such event encloses at the batch's outermost depth
    /// (0, or 1 when the resolution that began the batch threw and has no event). An app
    /// container's tracer that hears of two singletons a request's handler used, at depths
    /// 1 and 2 of the request's tree, hears of them at 0, both, when the first does not
    /// enclose the second, and at 0 and 1 when it does.
    ///
    /// What encloses an event is what its resolution began inside (`enclosing`, by number,
    /// -1 for none), not the event before it at a smaller depth: tasks that a construction
    /// starts fill one batch at once, and a singleton one task resolves may begin between
    /// the start of another task's singleton and what that one resolves.
    ///
    /// ```swift
    /// let leveled = TraceBatch.ownTrees(events, enclosing: enclosing)   // each tracer's from depth 0
    /// ```
    static func ownTrees(
        _ events: [(sequence: Int, event: ResolutionEvent, tracer: ResolutionTracer)], enclosing: [Int]
    ) -> [(event: ResolutionEvent, tracer: ResolutionTracer)] {
        let outermost = events.lazy.map(\.event.depth).min() ?? 0
        // Each event's tracer and depth in that tracer's tree, by its number, once leveled:
        // an enclosing event begins first, so it is leveled before what it encloses.
        var leveled: [Int: (tracer: ResolutionTracer, own: Int)] = [:]
        return events.map { entry in
            var depth = outermost
            // Every resolution begun has its entry: `begin(enclosedBy:)` files it.
            var next = enclosing[entry.sequence]
            while next >= 0 {
                if let outer = leveled[next], outer.tracer === entry.tracer {
                    depth = outer.own + 1
                    break
                }
                next = enclosing[next]
            }
            leveled[entry.sequence] = (entry.tracer, depth)
            return (entry.event.movedUp(by: entry.event.depth - depth), entry.tracer)
        }
    }

    /// Runs a tracer's callback: untraced, and outside every construction, even in a task
    /// a construction started, which inherits it.
    private static func delivering(_ deliver: () -> Void) {
        $isDelivering.withValue(true) { Frame.outsideInheritedConstructions(deliver) }
    }
}

/// One traced resolution, created only when its container has a tracer.
final class Trace: Sendable {
    private let tracer: ResolutionTracer
    /// The batch its frames carry.
    let batch: TraceBatch
    private let ownsBatch: Bool
    /// Whether an event of this resolution that comes after its batch went out goes out
    /// on its own (``TraceBatch/add(_:_:to:late:)``): when no construction of the current
    /// owner encloses it, nor a linked provider's call.
    private let deliversLate: Bool
    /// Its number in the batch, which the frames it runs in carry (``Frame/traceEvent``).
    let sequence: Int
    private let depth: Int
    private let start: UInt64
    private let name: StaticString
    private let type: String
    private let scope: DependencyScope

    /// Starts tracing a resolution, or returns nil when it is not traced: inside a tracer,
    /// or inside a construction that began untraced (its container had no tracer then),
    /// whose batch could only be delivered inside that construction.
    init?(_ tracer: ResolutionTracer, name: StaticString, type: Any.Type, scope: DependencyScope, enclosing: Frame?) {
        let outermost = Trace.isOutsideConstructions(enclosing)
        guard !TraceBatch.isDelivering, enclosing?.trace != nil || outermost else { return nil }
        let frameDepth = (enclosing?.depth ?? -1) + 1
        var enclosingEvent = -1
        if let joined = enclosing?.trace {
            (batch, ownsBatch) = (joined, false)
            enclosingEvent = enclosing?.traceEvent ?? -1
        } else if let deliverer = DeferredTraceFrame.deliverer(around: enclosing) {
            // The first read of a property delivers it once it has published, a linked
            // provider's call once its frame has ended.
            (batch, ownsBatch) = (deliverer.deferredTrace { TraceBatch(baseDepth: frameDepth) }, false)
        } else {
            (batch, ownsBatch) = (TraceBatch(baseDepth: frameDepth), true)
        }
        self.tracer = tracer
        // Inside a linked provider's call, a late event would reach the tracer inside the
        // call: it is dropped, as inside a construction.
        self.deliversLate = outermost && !DeferredTraceFrame.isInsideLinkCall(enclosing)
        sequence = batch.begin(enclosedBy: enclosingEvent)
        depth = frameDepth - batch.baseDepth
        start = DispatchTime.now().uptimeNanoseconds
        self.name = name
        self.type = String(describing: type)
        self.scope = scope
    }

    /// Whether a resolution whose innermost enclosing frame is `frame` runs outside every
    /// construction of the current owner: nothing encloses it, or that frame is another
    /// owner's (a task started inside a construction inherited it) or ended, or it is the
    /// first read of a `@Dependency` property or the call of a provider a kept instance's
    /// property published, which no construction of this owner encloses.
    ///
    /// Neither is a construction: app code made the object reading the property, and calls
    /// the provider. What they resolve is an outermost resolution, traced as one and
    /// delivered once the read has published or the call's frame has ended
    /// (``DeferredTraceFrame``).
    ///
    /// ```swift
    /// container.tracer = .printer
    /// _ = FeedScreen().loader   // feedLoader: FeedLoader [factory] built in 0.041 ms
    /// ```
    static func isOutsideConstructions(_ frame: Frame?) -> Bool {
        var frame = frame
        while let current = frame {
            guard current.owner == .current, current.isActive else { return true }
            guard !current.isConstruction else { return false }
            frame = current.parent
        }
        return true
    }

    /// Records the resolution's event and, for the outermost one, delivers the batch. A
    /// resolution that threw has no outcome: what it built before throwing is delivered.
    func finish(outcome: ResolutionEvent.Outcome?) {
        if let outcome {
            let built = outcome == .built || outcome == .builtFromOverride
            let event = ResolutionEvent(
                name: name.description, type: type, scope: scope, outcome: outcome,
                depth: depth, duration: built ? DispatchTime.now().uptimeNanoseconds &- start : 0)
            batch.add(sequence, event, to: tracer, late: deliversLate)
        }
        if ownsBatch { batch.deliver() }
    }
}
