/// A frame that is no construction of its own: a `@Dependency` property's first read
/// (``PropertyReadFrame``), or the call of a provider that a kept instance's property
/// published (``LinkCallFrame``). App code starts both, so what resolves in one outside
/// every construction is an outermost resolution, and a tracer hears of it as of one.
///
/// It hears of it only once the frame has ended: the frame keeps the batch
/// (``deferredTrace(makingWith:)``) for whoever ends it to deliver. Delivered inside the
/// frame, the tracer would run inside the read or the call, where reading that property or
/// calling that provider again reads as a cycle, and an object it creates would take the
/// container of the read or the call as its own.
///
/// ```swift
/// container.tracer = .printer
/// _ = FeedScreen().loader          // printed once `loader` is published
/// _ = coordinator.makeScreen()     // printed once the call's frame has ended
/// ```
class DeferredTraceFrame: Frame, @unchecked Sendable {
    // @unchecked: `deferredTrace` is touched only by the frame's owner, while the frame
    // is active and then by the code that ended it; no task reads it.

    /// The batch of the outermost resolutions made in this frame outside every
    /// construction, for the code that ends the frame to deliver (``takeDeferredTrace()``).
    @exclusivity(unchecked) private var deferredTrace: TraceBatch?

    /// The batch that a resolution starting in this frame, outside every construction,
    /// joins: the one an earlier resolution made, or `made()`, kept for delivery.
    final func deferredTrace(makingWith made: () -> TraceBatch) -> TraceBatch {
        if let deferredTrace { return deferredTrace }
        let batch = made()
        deferredTrace = batch
        return batch
    }

    /// The batch to deliver now that the frame has ended, if it made one; the frame keeps
    /// none afterwards, since a read's frame may be reused.
    final func takeDeferredTrace() -> TraceBatch? {
        guard let batch = deferredTrace else { return nil }
        deferredTrace = nil
        return batch
    }

    /// The frame that delivers the batch of an outermost resolution whose innermost
    /// enclosing frame is `enclosing`, when that is such a frame of the current owner: the
    /// first read that `enclosing` is, or, when a linked provider's call is among the
    /// frames of this owner around it, the outermost of those frames, which ends last, so
    /// that the tracer runs outside every call and every read around one. `nil` when
    /// `enclosing` is no such frame of the current owner, or has ended.
    ///
    /// ```swift
    /// let batch = DeferredTraceFrame.deliverer(around: enclosing)?.deferredTrace { TraceBatch(baseDepth: 0) }
    /// ```
    static func deliverer(around enclosing: Frame?) -> DeferredTraceFrame? {
        guard let first = enclosing as? DeferredTraceFrame, first.owner == .current, first.isActive else { return nil }
        let (outermost, insideCall) = outermostAround(first)
        return insideCall ? outermost : first
    }

    /// Whether `enclosing` runs in a linked provider's call of the current owner, through
    /// this owner's first reads and calls only: a tracer must not run there, even for an
    /// event that comes after its batch went out (``Trace``).
    static func isInsideLinkCall(_ enclosing: Frame?) -> Bool {
        outermostAround(enclosing).insideCall
    }

    /// The outermost of the current owner's active first reads and linked calls that
    /// `enclosing` is or runs in, one after the other, and whether one of them is a call.
    private static func outermostAround(_ enclosing: Frame?) -> (frame: DeferredTraceFrame?, insideCall: Bool) {
        let owner = Owner.current
        var (outermost, insideCall, frame): (DeferredTraceFrame?, Bool, Frame?) = (nil, false, enclosing)
        while let current = frame as? DeferredTraceFrame, current.owner == owner, current.isActive {
            outermost = current
            if current is LinkCallFrame { insideCall = true }
            frame = current.parent
        }
        return (outermost, insideCall)
    }
}
