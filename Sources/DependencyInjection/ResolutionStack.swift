#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The constructions running on one thread, innermost last.
///
/// Factories run synchronously on the thread that resolves them, so a thread-local stack
/// sees every nested construction. It serves three purposes: it detects construction
/// cycles and names them; it tells a container which construction used a dependency, so
/// that overriding the dependency drops what was built from it; and its identity is the
/// owner of an in-flight singleton, so that waiting on one's own construction is caught.
final class ResolutionStack {
    struct Frame {
        let container: ObjectIdentifier
        let key: ProviderKey
        let name: StaticString
    }

    struct Traced {
        let sequence: Int
        let event: ResolutionEvent
        let tracer: ResolutionTracer
    }

    struct Storage {
        var frames: [Frame] = []
        /// Events of the current outermost resolution, delivered when it finishes.
        var traced: [Traced] = []
        var nextSequence = 0
        /// Traced resolutions that started and have not finished.
        var openTraced = 0
    }

    /// Behind a pointer so that the check made on every cached resolution skips the
    /// exclusivity checks of a class's stored `var`; only the owning thread touches it.
    private let storage: UnsafeMutablePointer<Storage>

    private(set) var frames: [Frame] {
        get { storage.pointee.frames }
        _modify { yield &storage.pointee.frames }
    }

    private init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: Storage())
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    // MARK: - Tracing

    /// Numbers a traced resolution in start order within its outermost resolution.
    func beginTracedResolution() -> Int {
        if storage.pointee.openTraced == 0 && storage.pointee.traced.isEmpty {
            storage.pointee.nextSequence = 0
        }
        storage.pointee.openTraced += 1
        defer { storage.pointee.nextSequence += 1 }
        return storage.pointee.nextSequence
    }

    /// Buffers a finished resolution; delivers the buffer once the outermost one is done.
    func finishTracedResolution(_ sequence: Int, event: ResolutionEvent, tracer: ResolutionTracer) {
        storage.pointee.traced.append(Traced(sequence: sequence, event: event, tracer: tracer))
        storage.pointee.openTraced -= 1
        deliverTraceIfFinished()
    }

    private func deliverTraceIfFinished() {
        let state = storage.pointee
        if state.frames.isEmpty && state.openTraced == 0 && !state.traced.isEmpty { deliverTrace() }
    }

    private func deliverTrace() {
        let traced = storage.pointee.traced.sorted { $0.sequence < $1.sequence }
        storage.pointee.traced = []
        var remaining = traced[...]
        while let first = remaining.first {
            let batch = remaining.filter { $0.tracer === first.tracer }
            remaining = remaining.filter { $0.tracer !== first.tracer }[...]
            first.tracer.deliver(batch.map(\.event))
        }
    }

    /// The innermost construction running on this thread, if any.
    var top: Frame? { frames.last }

    /// How deep a resolution starting now is, counting the async constructions this
    /// thread's synchronous ones run inside.
    var traceDepth: Int {
        frames.count + (AsyncFrame.current.map { $0.depth + 1 } ?? 0)
    }


    /// Pushes a construction, stopping the process if it is already running on this thread.
    func enter(_ container: DependencyContainer, _ key: ProviderKey, _ name: StaticString) {
        let id = ObjectIdentifier(container)
        if let start = frames.firstIndex(where: { $0.container == id && $0.key == key }) {
            CycleReport.stop(chain: frames[start...].map(\.name) + [name])
        }
        frames.append(Frame(container: id, key: key, name: name))
    }

    func leave() {
        storage.pointee.frames.removeLast()
        if storage.pointee.frames.isEmpty && !storage.pointee.traced.isEmpty { deliverTraceIfFinished() }
    }

    /// The names from the frame building `key` in `container` to the innermost one.
    func names(from container: ObjectIdentifier, _ key: ProviderKey) -> [StaticString] {
        guard let start = frames.firstIndex(where: { $0.container == container && $0.key == key })
        else { return [] }
        return frames[start...].map(\.name)
    }

    // MARK: - Thread-local storage

    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            #if canImport(Darwin)
            Unmanaged<ResolutionStack>.fromOpaque(pointer).release()
            #else
            if let pointer { Unmanaged<ResolutionStack>.fromOpaque(pointer).release() }
            #endif
        }
        precondition(status == 0, "pthread_key_create failed with \(status)")
        return key
    }()

    /// This thread's stack, created on first use.
    static var current: ResolutionStack {
        if let existing = currentIfExists { return existing }
        let stack = ResolutionStack()
        pthread_setspecific(threadKey, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }

    /// This thread's stack if it ever resolved anything, without creating one.
    static var currentIfExists: ResolutionStack? {
        guard let pointer = pthread_getspecific(threadKey) else { return nil }
        return Unmanaged<ResolutionStack>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// Stops the process with a message naming a construction cycle.
enum CycleReport {
    static func message(chain: [StaticString]) -> String {
        "Circular dependency: " + chain.map(\.description).joined(separator: " -> ")
    }

    static func stop(chain: [StaticString]) -> Never {
        fatalError(message(chain: chain))
    }
}
