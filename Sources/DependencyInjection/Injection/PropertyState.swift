/// What a `@Dependency` property's storage keeps beyond its one word of state, for the
/// properties that need it: one that holds its container weakly, one whose value was
/// replaced, reset or switched, one that another owner came to read while its first
/// resolution ran.
///
/// Most properties never need it: a ``DependencyStorage`` holds its container, or the
/// frame of its first resolution, in one word, and makes this object only when one of the
/// cases above first happens. It then keeps it for good.
///
/// Every `var` is read and written under the lock of the storage that owns it.
///
/// ```swift
/// let state = PropertyState(weaklyHolding: container)
/// state.begin(frame)                      // first resolution
/// let (outdated, waiting) = state.end(frame)   // publish unless outdated; wake `waiting`
/// ```
final class PropertyState {
    /// The container, held strongly, or nil when it is held without being kept (below).
    private(set) var strongContainer: DependencyContainer?
    /// The container, when it caches the object that owns the property: held without
    /// keeping it, or the container would keep itself alive through its own instance.
    private var unkeptContainer: UnkeptContainer?
    /// The container that keeps the object owning the property, for a property that held
    /// it unkept from the start: a switch back to it holds it unkept again (``hold(_:)``).
    private var keeper: UnkeptContainer?
    /// The frame of the resolution in progress, if one is.
    private(set) var resolvingFrame: Frame?
    /// Whether a reset, a set or a container switch happened while ``resolvingFrame`` ran:
    /// what it resolves is then handed to its reader and waiters, and not published.
    private(set) var isOutdated = false
    /// What other owners wait on while the resolution runs; made by the first of them.
    private var waited: InFlight?
    /// Resolutions outdated by a change, which a read that started after the change
    /// replaced as ``resolvingFrame``: that read resolves from the container the property
    /// holds now, as the change promised, rather than wait for one that resolves from the
    /// old. Each still ends, and hands what it resolved to the owners that waited for it
    /// before the change.
    private var outdatedResolutions: [(frame: Frame, waited: InFlight?)] = []
    /// Replaced boxes, kept while a lock-free reader may still read them.
    var retired: [AnyBox] = []
    /// The container a first read was looking at without the lock when this state replaced
    /// the storage's word (``_PropertyStateWord``): the read's reference, which it takes
    /// (``takeLookersContainer()``) and lets go when its look ends, so that a switch to
    /// another container meanwhile does not release the container under the read.
    var lookersContainer: DependencyContainer?

    init(weaklyHolding container: DependencyContainer) {
        let unkept = UnkeptContainer(container)
        (unkeptContainer, keeper) = (unkept, unkept)
    }

    /// The state of a storage whose word held `strongContainer` alone, or the frame of a
    /// first read from it.
    init(strongContainer: DependencyContainer, resolving frame: Frame?) {
        (self.strongContainer, resolvingFrame) = (strongContainer, frame)
    }

    /// The container the property resolves from, or nil if it was held weakly and is gone.
    var container: DependencyContainer? { strongContainer ?? unkeptContainer?.container }

    /// Records that `frame` resolves the property now; a resolution in progress, which a
    /// change outdated, goes on beside it.
    func begin(_ frame: Frame) {
        if let running = resolvingFrame {
            precondition(isOutdated, "a read began beside a resolution it should wait for")
            outdatedResolutions.append((running, waited))
            waited = nil
        }
        (resolvingFrame, isOutdated) = (frame, false)
    }

    /// Ends the resolution `frame` runs: whether it was outdated, and what its waiters wait
    /// on. The record goes to the caller, which holds the frame, to be released outside
    /// the lock.
    func end(_ frame: Frame) -> (outdated: Bool, waiting: InFlight?) {
        guard frame !== resolvingFrame else {
            defer { (resolvingFrame, waited) = (nil, nil) }
            return (isOutdated, waited)
        }
        let index = outdatedResolutions.firstIndex { $0.frame === frame }
        precondition(index != nil, "a first read ended that the property did not know")
        return (true, outdatedResolutions.remove(at: index!).waited)
    }

    /// Whether another owner waits for the resolution in progress.
    var isAwaited: Bool { waited != nil }

    /// Takes ``lookersContainer``, for the read that looked to release outside the lock.
    func takeLookersContainer() -> DependencyContainer? {
        defer { lookersContainer = nil }
        return lookersContainer
    }

    /// Marks the resolution in progress, if any, as outdated.
    func outdateResolution() {
        if resolvingFrame != nil { isOutdated = true }
    }

    /// What another owner waits on for the resolution `frame` runs.
    func construction(awaitedFrom frame: Frame) -> InFlight {
        if let waited { return waited }
        let construction = InFlight(key: frame.key)
        WaitGraph.start(construction, builtBy: frame)
        waited = construction
        return construction
    }

    /// Holds `container` weakly instead of strongly, if it holds it strongly, and returns
    /// the strong reference, to let go of after unlocking: the container came to keep the
    /// property's owner (``StrongHolders``). It becomes the keeper, so that switching the
    /// property away and back holds it weakly again.
    func releaseStrongHold(on container: DependencyContainer) -> DependencyContainer? {
        guard let strong = strongContainer, strong === container else { return nil }
        let unkept = UnkeptContainer(container)
        (strongContainer, unkeptContainer, keeper) = (nil, unkept, unkept)
        return strong
    }

    /// Holds `container` from now on, and returns the container held before, for the
    /// caller to release outside the lock: strongly, unless it is the container that keeps
    /// the property's owner, which a strong reference would keep alive through its own
    /// instance (a test points a singleton's property elsewhere, then back).
    func hold(_ container: DependencyContainer) -> DependencyContainer? {
        let previous = self.container
        if let keeper, keeper.refers(to: container) {
            (strongContainer, unkeptContainer) = (nil, keeper)
        } else {
            (strongContainer, unkeptContainer) = (container, nil)
        }
        return previous
    }
}
