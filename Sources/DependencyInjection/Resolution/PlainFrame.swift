/// A plain factory's frame, kept as words in its thread's slot instead of as an object.
///
/// Most resolutions an app makes are factories that nothing replaces
/// (``DependencyContainer/beginPlainFactory(_:_:)``). Their frame is needed only while
/// they run, only on their own thread, and nearly always only for what the thread's next
/// construction asks: who builds here, and does this close a cycle. An object for that
/// costs an allocation, or a reused object's reference counts, on every factory; a few
/// words written into the thread's slot and taken back cost a fraction of it.
///
/// Everything else the package asks of a construction, it asks of a ``Frame`` object: a
/// resolution past the inline cache takes its enclosing frame as its parent, a
/// `@Dependency` asks which container builds it, a cycle report names the chain. When
/// something asks for the object of a plain frame, the slot makes it then
/// (``ThreadFrames/Slot/object(for:)``): one ``Frame`` with the same fields, for this
/// plain frame and every plain frame below it that has none yet, kept until the factory
/// ends, when it ends too.
///
/// A plain frame holds nothing: the container, the key's argument and the enclosing frame
/// are all held by the resolution that runs in it, for as long as it runs.
///
/// ```swift
/// let entry = thread.file(parent: enclosing, owner: owner, building: container, key: key, name: name, bucket: bucket)
/// defer { ThreadFrames.leave(entry) }
/// return provider.make()
/// ```
struct PlainFrame {
    /// The enclosing frame, as a slot word (see ``ThreadFrames/Word``), unretained: it
    /// runs the code that runs this one, so it outlives it.
    let parent: ThreadFrames.Word?
    /// The next frame filed in the same bucket further out, while this one is filed.
    var sameBucketBelow: ThreadFrames.Word?
    let owner: Owner
    unowned(unsafe) let building: DependencyContainer
    let fileName: FileName
    let position: UInt64
    let type: ObjectIdentifier
    /// The argument of a family's member, unretained: its provider holds it.
    unowned(unsafe) let argument: RegistrationKey.Argument?
    let name: StaticString
    /// Which of its thread's buckets files this frame (see ``ThreadFrames``).
    let bucket: Int
    /// The object made for this frame when something asked for one, retained until the
    /// factory ends.
    var object: Unmanaged<Frame>?

    init(
        parent: ThreadFrames.Word?, owner: Owner, building: DependencyContainer, key: RegistrationKey,
        name: StaticString, bucket: Int
    ) {
        (self.parent, self.sameBucketBelow, self.owner, self.building) = (parent, nil, owner, building)
        (self.fileName, self.position, self.type, self.argument) = (key.fileName, key.position, key.type, key.argument)
        (self.name, self.bucket, self.object) = (name, bucket, nil)
    }

    /// What cycles are keyed by, as in ``Frame/container``.
    var container: ObjectIdentifier { ObjectIdentifier(building) }

    var key: RegistrationKey { RegistrationKey(fileName: fileName, position: position, type: type, argument: argument) }

    var site: Site { Site(name: .registration(name), file: fileName, line: UInt(truncatingIfNeeded: position >> 32)) }

    /// Whether this frame builds `key` in `container`: the words first, the key's full
    /// comparison only when they match.
    func builds(_ key: RegistrationKey, in container: ObjectIdentifier) -> Bool {
        position == key.position && type == key.type && self.container == container && self.key == key
    }
}

extension Frame {
    /// The object of the plain frame `plain`, whose enclosing frame is `below`
    /// (``ThreadFrames/Slot/object(for:)``).
    ///
    /// The frame of a linked provider's call (a factory of a link's own container, which
    /// has no tracer) is no level of its own, and passes the trace of what encloses it
    /// through: what the call resolves inside a traced construction joins that
    /// construction's batch, one level below it, as it does when the registration is
    /// resolved directly.
    ///
    /// ```swift
    /// let object = plain.pointee.building.isLinkHost ? LinkCallFrame(plain.pointee, below: below) : Frame(plain.pointee, below: below)
    /// ```
    convenience init(_ plain: PlainFrame, below: Frame?) {
        let readsLink = plain.building.isLinkHost
        self.init(
            container: plain.container, building: plain.building, keepsResult: false, key: plain.key, site: plain.site,
            servesScope: nil, trace: readsLink ? below?.trace : nil, owner: plain.owner, parent: below,
            countsALevel: !readsLink)
    }
}
