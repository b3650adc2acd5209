/// The frame of a `@Dependency` property's first read: a ``Frame`` keyed by the property's
/// storage, in which the read resolves its key path, and which the read holds its trace in
/// until it has published.
///
/// A first read outside every construction is no construction itself: what it resolves is
/// an outermost resolution, which a tracer hears of (``Trace/isOutsideConstructions(_:)``).
/// Its batch is delivered once the read has published and its frame has ended, not when
/// the resolution ends inside the frame: a tracer may read that very property, which would
/// otherwise be a read inside its own first read, a cycle.
///
/// ```swift
/// container.tracer = .printer
/// _ = FeedScreen().loader   // printed once `loader` is published
/// ```
final class PropertyReadFrame: DeferredTraceFrame, @unchecked Sendable {
    // @unchecked: what it adds to a frame is touched only by its owner (DeferredTraceFrame).

    /// The frame of a first read of the storage `storage`, resolving `key` from `building`:
    /// the fields ``Frame/reuse(forReadOf:from:keepsResult:site:trace:owner:parent:)``
    /// fills anew for the next read. A read is no level of its own.
    ///
    /// It lets go of what it held until its end (``Frame/completed()``) once it has
    /// published, not when the frame ends: a `deinit` of a `graph` instance it built, or of
    /// what a replaced override captured, may read that very property, and would find the
    /// read still running, a cycle.
    init(
        forReadOf storage: ObjectIdentifier, key: RegistrationKey, from building: DependencyContainer,
        keepsResult: Bool, site: Site, trace: TraceBatch?, owner: Owner, parent: Frame?
    ) {
        super.init(
            container: storage, building: building, keepsResult: keepsResult, key: key, site: site,
            servesScope: nil, trace: trace, owner: owner, parent: parent, countsALevel: false,
            releasesHeldOnCompletion: true)
    }
}
