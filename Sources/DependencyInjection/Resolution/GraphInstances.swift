/// The instances of graph registrations that one outermost resolution has built, by
/// container and registration.
///
/// A graph registration (`graph { RequestLog() }`) is built once per outermost resolution:
/// everything one top-level `container.feedScreen()` builds on its thread or task shares one
/// log, and the next top-level resolution gets a new one. The outermost resolution is the
/// outermost active frame of the current owner, so its frame keeps these instances. Only that
/// owner reads or writes them, one step at a time, while the frame is active: a task that a
/// construction starts is another owner, whose own resolutions are outermost. The frame
/// empties them when it ends, so they live exactly as long as the resolution, even when a
/// task it started still holds the frame chain.
///
/// ```swift
/// if let box = resolution.graphInstance(in: container) { return box }   // built earlier here
/// resolution.keepGraphInstance(Box(value), in: container)               // first time
/// ```
struct GraphInstances {
    private struct Key: Hashable {
        let container: ObjectIdentifier
        let registration: RegistrationKey
    }

    /// Each box with its container, held so that no other container can take its address
    /// while the resolution runs; nil until the first one, so that a frame pays nothing.
    private var instances: [Key: (container: DependencyContainer, box: AnyBox, holders: StrongHolders?)]?

    func box(for key: RegistrationKey, in container: DependencyContainer) -> (box: AnyBox, holders: StrongHolders?)? {
        instances?[Key(container: ObjectIdentifier(container), registration: key)].map { ($0.box, $0.holders) }
    }

    /// Keeps `box`; returns what it replaced, for the caller to release after this access.
    mutating func keep(
        _ box: AnyBox, holders: StrongHolders?, for key: RegistrationKey, in container: DependencyContainer
    ) -> Any? {
        let entry = Key(container: ObjectIdentifier(container), registration: key)
        if instances == nil { instances = [:] }
        return instances!.updateValue((container, box, holders), forKey: entry)
    }

    /// Whether no instance is kept.
    var isEmpty: Bool { instances == nil }

    /// Takes every instance out, for the caller to release after this access.
    mutating func takeAll() -> Any? {
        guard instances != nil else { return nil }
        defer { instances = nil }
        return instances
    }
}

extension Frame {
    /// The frame of the outermost resolution that `owner` runs, seen from `innermost`; nil
    /// outside any resolution of `owner`. Frames inherited from the task that started this
    /// one belong to another owner, and ended frames to nobody: both end the walk.
    ///
    /// The walk stops at a frame that knows its outermost from an earlier walk, and the
    /// frame it started from learns it: each resolution of a deep chain that hands an
    /// override to its outermost (``Frame/hold(_:_:)``) would walk the whole chain again,
    /// and a chain of n such levels cost n²/2 steps. What a frame knows holds while it is
    /// active: the frames of its owner around it end only after it.
    static func outermost(of owner: Owner, from innermost: Frame?) -> Frame? {
        var outermost: Frame?
        var frame = innermost
        while let own = frame, own.owner == owner, own.isActive {
            if let known = own.knownOutermost {
                outermost = known.takeUnretainedValue()
                break
            }
            outermost = own
            frame = own.parent
        }
        if let innermost, let outermost, innermost !== outermost {
            innermost.knownOutermost = Unmanaged.passUnretained(outermost)
        }
        return outermost
    }
}

extension Resolution {
    /// The instance of this graph registration that the enclosing outermost resolution
    /// built in `container`, if any.
    func graphInstance(in container: DependencyContainer) -> AnyBox? {
        guard scope == .graph, let found = Frame.outermost(of: owner, from: enclosing)?.graphInstances.box(for: key, in: container)
        else { return nil }
        // Taken by a construction the container keeps: the instance's properties that hold
        // the container strongly would keep it alive for good (StrongHolders).
        if let holders = found.holders, Frame.keepsResult(of: container, from: enclosing) {
            holders.releaseHolds(on: container)
        }
        return found.box
    }

    /// Keeps what this graph resolution built for the rest of the enclosing outermost
    /// resolution; outside any resolution it is not kept, as a factory's instance is not.
    func keepGraphInstance(_ box: AnyBox, in container: DependencyContainer) {
        guard scope == .graph, let outermost = Frame.outermost(of: owner, from: enclosing) else { return }
        let replaced = outermost.graphInstances.keep(box, holders: strongHolders, for: key, in: container)
        withExtendedLifetime(replaced) {}
    }
}
