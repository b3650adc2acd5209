/// The code that resolves now, as the record of uses sees it: which of the constructions in
/// flight in a container it runs inside.
///
/// A construction resolves things itself, on its own thread or task, and through the tasks
/// it starts. While it runs, another thread or task may resolve in the same container: a
/// helper it waits for, or a bystander it knows nothing of, which the container cannot
/// tell apart. The record of uses files both, so that an override of what either resolved
/// rebuilds the instance; but only what runs inside the construction makes a scope build
/// a copy of its own, or keep one (``ContainerState/windowOnlyUses``): a bystander's
/// resolution of something a scope overrides would otherwise give the scope a copy of an
/// app-wide singleton built from nothing it overrides, which then outlived the reason.
///
/// Two facts answer the question without walking every frame:
/// - A synchronous construction runs on the stack of its owner (the task, or the thread
///   outside any task, that resolved it), and an owner does one thing at a time. So while
///   it is in flight, whatever its owner resolves runs inside it.
/// - Every construction whose result the container keeps is bound as a task-local value
///   while it runs (``Frame/bind(_:)-(()->Result)``), and the construction of an
///   asynchronous one runs in a task of its own under a frame bound there. A task started
///   inside inherits that chain, so the bound chain names those constructions. A detached
///   task inherits nothing, and is another owner, as a helper thread is. A `shared`
///   construction is not bound: all its uses count.
///
/// A tracer's callback runs inside no construction: it is never delivered on the owner of
/// a construction in flight, and in a task a construction started it runs with the
/// inherited chain set aside (``TraceBatch``), so what it resolves is filed by time window
/// only.
///
/// ```swift
/// var code = ResolvingCode()
/// for construction in building where code.runsInside(construction) { … }
/// ```
struct ResolvingCode {
    private let owner = Owner.current
    /// The innermost frame bound as a task-local value, read the first time it is needed.
    private var bound: Frame??
    /// The bound chain filed for lookups, once walks of it grew long.
    private var filed: FiledChain?
    /// How many frames the walks of the bound chain went through so far.
    private var stepsWalked = 0
    /// After how many steps of walking the chain is filed. A use that a deep chain of
    /// asynchronous constructions records asks about each of them, and a walk for each
    /// went through the chain again: a recursive family of 400 levels took seconds, as the
    /// cube of its depth. Filing costs a table, which a shallow chain does not repay.
    private static let stepsBeforeFiling = 64

    /// Whether this code runs inside `construction`, in flight in the container whose lock
    /// the caller holds.
    mutating func runsInside(_ construction: Resolution) -> Bool {
        if !construction.buildsInATask {
            if construction.owner == owner { return true }
            // A `shared` construction is not bound (the container does not keep what it
            // builds), so a task it starts cannot be told from a bystander: its uses all
            // count, as every use did before the two were told apart.
            if !construction.keepsResult { return true }
        }
        if bound == nil { bound = .some(Frame.innermostBound) }
        if let filed { return filed.names(construction) }
        if stepsWalked > Self.stepsBeforeFiling {
            let made = FiledChain(innermost: bound.unsafelyUnwrapped)
            filed = made
            return made.names(construction)
        }
        var frame = bound.unsafelyUnwrapped
        while let current = frame {
            if current === construction { return true }
            // An asynchronous construction's task runs in a frame of its own, made from
            // the construction, with a copy of its key. Only while it is bound: a task that
            // an earlier, ended construction of the key started inherits that
            // construction's frame.
            if construction.buildsInATask, current.runsTask(of: construction) { return true }
            frame = current.parent
            stepsWalked &+= 1
        }
        return false
    }
}

/// A bound chain of frames filed for lookups: the frames themselves, and the
/// constructions whose tasks the active ones run. What ``ResolvingCode`` asks of a deep
/// chain, each question a lookup rather than a walk.
///
/// Filed by identities only (the frames', the keys' argument objects), so that filing
/// hashes no argument: an argument's `hash(into:)` is user code, and the question is asked
/// under a container's lock.
private struct FiledChain {
    /// The frames of the chain.
    private var frames: Set<ObjectIdentifier> = []
    /// The constructions the chain's active frames run, by ``TaskMark``.
    private var tasks: Set<TaskMark> = []

    init(innermost: Frame?) {
        var frame = innermost
        while let current = frame {
            frames.insert(ObjectIdentifier(current))
            if current.isActive { tasks.insert(TaskMark(current)) }
            frame = current.parent
        }
    }

    /// Whether the chain runs inside `construction`: it is one of the frames, or an
    /// active frame runs its task.
    func names(_ construction: Resolution) -> Bool {
        frames.contains(ObjectIdentifier(construction))
            || (construction.buildsInATask && tasks.contains(TaskMark(construction)))
    }

    /// What tells the frame of an asynchronous construction's task from other frames: the
    /// container, and the key, its argument by identity (the task's frame carries a copy
    /// of the construction's key, ``Frame/runsTask(of:)``).
    private struct TaskMark: Hashable {
        let building: ObjectIdentifier
        let file: UInt64
        let position: UInt64
        let type: ObjectIdentifier
        let argument: ObjectIdentifier?

        init(_ frame: Frame) {
            let key = frame.key
            (building, file, position, type) = (frame.buildingID, key.fileName.word, key.position, key.type)
            argument = key.argument.map { ObjectIdentifier($0) }
        }
    }
}
