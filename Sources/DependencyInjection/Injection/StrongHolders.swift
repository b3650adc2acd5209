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
/// the container. It has a lock of its own: the tasks that an asynchronous construction
/// runs its parts in (`async let`, a task group) fill it at once, and a task it started
/// may still fill it after the construction ended.
final class StrongHolders: Sendable {
    private let storages = _Locked([Weak<DependencyStorage>]())

    /// Notes that `storage` was created holding the building container strongly.
    func append(_ storage: DependencyStorage) {
        storages.withLock { $0.append(Weak(storage)) }
    }

    /// Makes every property of the list that is still alive, and holds `container`
    /// strongly, hold it weakly. Outside the list's lock: letting go of a strong hold may
    /// release the container's last other reference.
    func releaseHolds(on container: DependencyContainer) {
        let noted = storages.withLock { $0 }
        for storage in noted { storage.object?.holdWeakly(container) }
    }
}

extension Frame {
    /// Files `storage`, a `@Dependency` property created holding `container` strongly,
    /// with each construction of a `graph` or `shared` instance of `container` that runs
    /// around it (``StrongHolders``): usually none, or the one that creates the object.
    ///
    /// A frame of another owner (a task that an asynchronous construction runs a part in)
    /// is filled only when it came with its list, as an asynchronous construction's frame
    /// does: only a frame's own owner makes its list.
    static func noteStrongHold(
        of storage: DependencyStorage, on container: DependencyContainer, owner: Owner, from innermost: Frame?
    ) {
        let id = ObjectIdentifier(container)
        var frame = innermost
        while let enclosing = frame {
            if enclosing.buildingID == id && enclosing.isActive {
                if enclosing.owner == owner {
                    if enclosing.collectsStrongHolders { enclosing.strongHoldersToFill.append(storage) }
                } else if !(enclosing is Resolution), let holders = enclosing.strongHolders {
                    holders.append(storage)
                }
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
        let holders = withStateLock { state -> StrongHolders? in
            guard state.hasSharedInstances, let entry = state.sharedInstances[key], entry.object === instance else {
                return nil
            }
            return entry.holders
        }
        holders?.releaseHolds(on: self)
    }
}
