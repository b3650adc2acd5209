/// The `@Dependency` properties that the construction of a `graph` or `shared` instance
/// created holding its container strongly, kept with the instance so that a construction
/// the container keeps can make them hold it weakly when it takes that instance.
///
/// A property decides how it holds its container once, when its object is created: weakly
/// inside a construction whose result the container keeps (a singleton's, a scoped
/// instance's), strongly anywhere else, so that an object a factory made keeps working
/// after its container is gone. A `graph` instance and a live `shared` instance are handed
/// out again, though: one built for a factory, or for the app's own code, may then be
/// taken by a singleton's construction, which the container keeps, and a property of the
/// instance holding that container strongly would keep the container alive forever
/// (container → singleton → instance → property → container). So these constructions
/// collect the properties created under them with a strong hold on the container that
/// builds, and the container keeps the list beside the instance (``SharedInstance``,
/// ``GraphInstances``); a resolution that finds the instance built, inside a construction
/// the container keeps, lets go of those holds (``releaseHolds(on:)``) before it hands the
/// instance over:
///
/// ```swift
/// // A factory resolves the graph part first: its property holds the container strongly.
/// // Then a singleton in the same resolution takes the same part, and keeps it:
/// holders?.releaseHolds(on: container)   // the part's property holds it weakly from now on
/// ```
///
/// The list refers to the properties weakly: it must not keep them, nor, through them,
/// the container. It is filled only by the owner running the construction, and read only
/// after the construction ended, through the container's lock (a shared instance) or by
/// the same owner (a graph instance).
final class StrongHolders: @unchecked Sendable {
    // @unchecked: `storages` is appended to by the owner of the construction only, before
    // the list is published under the container's lock, and only read afterwards.
    private var storages: [Weak<DependencyStorage>] = []

    /// Notes that `storage` was created holding the building container strongly.
    func append(_ storage: DependencyStorage) {
        storages.append(Weak(storage))
    }

    /// Makes every property of the list that is still alive, and holds `container`
    /// strongly, hold it weakly.
    func releaseHolds(on container: DependencyContainer) {
        for storage in storages { storage.object?.holdWeakly(container) }
    }
}

extension Frame {
    /// Files `storage`, a `@Dependency` property created holding `container` strongly,
    /// with each construction of a `graph` or `shared` instance of `container` that runs
    /// around it (``StrongHolders``): usually none, or the one that creates the object.
    static func noteStrongHold(of storage: DependencyStorage, on container: DependencyContainer, from innermost: Frame?) {
        let id = ObjectIdentifier(container)
        var frame = innermost
        while let enclosing = frame {
            if enclosing.collectsStrongHolders && enclosing.buildingID == id && enclosing.isActive {
                enclosing.strongHoldersToFill.append(storage)
            }
            frame = enclosing.parent
        }
    }
}

extension DependencyContainer {
    /// Makes the properties of `instance`, the live shared instance of `key` that a claim
    /// just found, that hold this container strongly hold it weakly, when a construction
    /// this container keeps takes the instance: they would keep the container alive for
    /// good. Out of line, after the claim's lock: a shared instance's resolution takes the
    /// lock once more to read them, only inside such a construction. The entry still
    /// names `instance`, which the caller holds, unless an override or a reset removed it
    /// in between; that also drops a construction in flight that takes the instance, which
    /// is then not kept, and leaves a first read of a kept instance's property in that
    /// window with the strong holds.
    @inline(never)
    func releaseHolds(ofShared instance: AnyObject, _ key: RegistrationKey) {
        guard Frame.mayBeBuilding, Frame.keepsResult(of: self, from: Frame.ownerAndInnermost.1) else { return }
        let holders = state.withLock { state -> StrongHolders? in
            guard state.hasSharedInstances, let entry = state.sharedInstances[key], entry.object === instance else {
                return nil
            }
            return entry.holders
        }
        holders?.releaseHolds(on: self)
    }
}
