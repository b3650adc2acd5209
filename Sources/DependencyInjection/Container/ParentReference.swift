import _DependencyInjectionShims

/// A child container's reference to its parent, released so that the `deinit`s of a chain
/// of nested containers never run one inside the next.
///
/// A child keeps its parent, so the last reference to the innermost of thousands of nested
/// children (a test's world inside a world, a request's scope inside a session's, inside
/// many more) ends the whole chain. With a plain reference, each `deinit` released its
/// parent from inside itself, and the chain's `deinit`s nested as deep as the chain: deep
/// enough to overflow a thread's stack. That last reference need not be the app's: a
/// change that reaches a child holds it meanwhile (``ChildList/live``), and may end the
/// chain on the thread that overrode, reset or set a tracer.
///
/// This reference is the container's last stored property, so it goes after everything
/// else the container kept: what the container's instances' `deinit`s read of the parent
/// is still there. When it goes inside another container's `deinit` on the same thread,
/// it hands the parent to that outer release, which lets go of it once its own release
/// returns: the chain ends one container after another, never more than two `deinit`s
/// deep.
///
/// ```swift
/// var worlds = [DependencyContainer(parent: .mocks)]
/// for _ in 0..<100_000 { worlds = [DependencyContainer(parent: worlds[0])] }
/// worlds = []   // 100,000 `deinit`s, one after another
/// ```
struct ParentReference: ~Copyable {
    /// The parent, retained once by this reference; `nil` for a container without one.
    private let parent: Unmanaged<DependencyContainer>?

    init(_ parent: DependencyContainer?) {
        self.parent = parent.map { Unmanaged.passRetained($0) }
    }

    /// The parent, while this reference keeps it.
    var container: DependencyContainer? {
        parent?.takeUnretainedValue()
    }

    deinit {
        if let parent { Self.release(parent) }
    }

    /// Releases `parent`, or, inside another parent's release on this thread, leaves it to
    /// that release, which goes on with it after its own.
    ///
    /// A parent that something else keeps too, as nearly every parent is (the app's
    /// container, `mocks`, a session that a request leaves), does not go with this release:
    /// it is released at once, with no look at the thread's list (two thread-local
    /// accesses, which cost every test's world and every request about 130 instructions).
    /// Should another thread let go of it between the count and the release, it goes here
    /// after all, one `deinit` deeper, and its own parent's release starts a list: a chain
    /// nests only as deep as such coincidences, one level each.
    private static func release(_ parent: Unmanaged<DependencyContainer>) {
        guard _di_retain_count(parent.toOpaque()) == 1 else {
            parent.release()
            return
        }
        if let waiting = _di_parent_releases() {
            waiting.assumingMemoryBound(to: [Unmanaged<DependencyContainer>].self).pointee.append(parent)
            return
        }
        var waiting: [Unmanaged<DependencyContainer>] = []
        withUnsafeMutablePointer(to: &waiting) { waiting in
            _di_set_parent_releases(waiting)
            parent.release()
            while let next = waiting.pointee.popLast() { next.release() }
            _di_set_parent_releases(nil)
        }
    }
}
