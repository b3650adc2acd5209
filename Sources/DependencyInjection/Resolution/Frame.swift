#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who runs a piece of code: a task, or a thread outside any task.
///
/// A construction belongs to the owner that runs it. Frames are inherited by every task
/// created inside a construction (task-local values are), so the owner is what tells the
/// construction's own code from a task it spawned: that task is someone else, and asking
/// for the construction in progress makes it wait instead of reporting a cycle.
struct Owner: Hashable, Sendable {
    private let id: Int
    private let isTask: Bool

    /// Stands for no owner, where none is needed (a cache hit builds and waits for nothing).
    static let nobody = Owner(id: 0, isTask: false)

    /// The task running this code, or the thread when no task does.
    static var current: Owner {
        if let task = withUnsafeCurrentTask(body: { $0?.hashValue }) {
            return Owner(id: task, isTask: true)
        }
        #if canImport(Darwin)
        return Owner(id: Int(bitPattern: pthread_self()), isTask: false)
        #else
        return Owner(id: Int(bitPattern: UInt(pthread_self())), isTask: false)
        #endif
    }
}

/// Where a registration (or a `@Dependency` property) is declared, for messages.
///
/// Naming runs no user code: a registration's name is the static string of its helper's
/// `name` parameter, and a property is named by the type that declares it and the line of
/// its declaration, never by evaluating anything.
struct Site: Sendable, CustomStringConvertible {
    enum Name {
        case registration(StaticString)
        /// A `@Dependency` property, by the type that declares it.
        case property(in: StaticString)
    }

    let name: Name
    let fileID: StaticString
    let line: UInt

    var nameText: String {
        switch name {
        case .registration(let name): return name.description
        case .property(let type): return "@Dependency in \(type)"
        }
    }

    /// `feedLoader (App/Services.swift:12)`.
    var description: String { "\(nameText) (\(fileID):\(line))" }
}

/// One construction in progress: what is built, in which container, by which owner, and
/// inside which other construction.
///
/// Frames form an immutable chain, innermost first, bound as a task-local value while a
/// construction runs, for synchronous and asynchronous code alike. The chain is the
/// package's one answer to "who is building here": it finds cycles on one owner, it gives
/// trace depths and batches, and it tells a `@Dependency` created during a singleton's
/// construction which container caches its owner.
///
/// ```swift
/// let frame = Frame(container: id, key: key, site: site, singleton: inFlight, trace: nil, owner: .current, parent: Frame.current)
/// Frame.$current.withValue(frame) { make() }
/// ```
final class Frame: Sendable {
    @TaskLocal static var current: Frame?

    let container: ObjectIdentifier
    let key: RegistrationKey
    let site: Site
    /// The singleton this frame builds, which its container will keep; nil otherwise.
    let singleton: InFlight?
    let owner: Owner
    let parent: Frame?
    /// The trace batch of the outermost traced resolution, if tracing.
    let trace: TraceBatch?
    let depth: Int

    init(
        container: ObjectIdentifier, key: RegistrationKey, site: Site,
        singleton: InFlight?, trace: TraceBatch?, owner: Owner, parent: Frame?
    ) {
        self.container = container
        self.key = key
        self.site = site
        self.singleton = singleton
        self.owner = owner
        self.parent = parent
        self.trace = trace
        self.depth = (parent?.depth ?? -1) + 1
    }

    /// Stops with the chain when the current owner is already building `key` in
    /// `container`: building it again could only recurse forever. Frames inherited from
    /// the task that created this one belong to someone else and end the walk.
    static func checkNoCycle(
        building key: RegistrationKey, in container: ObjectIdentifier, site: Site, owner: Owner, from innermost: Frame?
    ) {
        var frame = innermost
        while let own = frame, own.owner == owner {
            if own.container == container && own.key == key {
                CycleReport.stop(own.sites(to: innermost), closing: site)
            }
            frame = own.parent
        }
    }

    /// The sites from this frame down to `innermost`, outermost first.
    func sites(to innermost: Frame?) -> [Site] {
        var sites: [Site] = []
        var frame = innermost
        while let current = frame {
            sites.append(current.site)
            if current === self { break }
            frame = current.parent
        }
        return sites.reversed()
    }
}
