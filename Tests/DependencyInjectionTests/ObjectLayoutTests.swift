import Foundation
import Testing
@testable import DependencyInjection

/// Records the order in which objects are released.
private final class ReleaseLog: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func append(_ name: String) { lock.lock(); names.append(name); lock.unlock() }
    var released: [String] { lock.lock(); defer { lock.unlock() }; return names }
}

private final class LoggedRelease {
    let name: String
    let log: ReleaseLog
    init(_ name: String, _ log: ReleaseLog) { (self.name, self.log) = (name, log) }
    deinit { log.append(name) }
}

/// The shape of `Box` and `MainActorBox`: a generic class's value, and a subclass's
/// property set by the subclass's `deinit`.
private class ValueHolder<Value> {
    final let value: Value
    init(_ value: Value) { self.value = value }
}

private final class HandsOffLast<Value>: ValueHolder<Value> {
    private var trailing: LoggedRelease?
    private let log: ReleaseLog
    init(_ value: Value, log: ReleaseLog) {
        self.log = log
        super.init(value)
    }
    deinit { trailing = LoggedRelease("subclass property set in deinit", log) }
}

/// What `MainActorBox` relies on of the compiler, and what it promises.
@Suite struct ObjectLayoutTests {
    /// A `@Dependency` read finds its storage from the published word's address by the
    /// size of an object's header, written as a constant: it must be what the runtime lays
    /// out, or the read would take another address for the storage.
    @Test func theObjectHeaderSizeAReadAssumesIsTheRuntimes() {
        #expect(_PublishedBox.storedPropertiesOffset == _PublishedBox.measuredStoredPropertiesOffset)
        let storage = DependencyStorage(PropertyGetter { _, _ in \DependencyContainer.self }, container: DependencyContainer())
        let owner = _PublishedBox.withOwner(of: storage.published, as: DependencyStorage.self) { $0 }
        #expect(owner === storage)
    }

    @Test func aSubclassPropertyIsDestroyedAfterItsSuperclassValue() {
        let log = ReleaseLog()
        var holder: HandsOffLast<LoggedRelease>? = HandsOffLast(LoggedRelease("superclass value", log), log: log)
        #expect(holder != nil)
        holder = nil
        // `MainActorBox` sends the value to the main queue from such a property: were it
        // destroyed first, the box's own copy of the value could be released last, off
        // the main thread.
        #expect(log.released == ["superclass value", "subclass property set in deinit"])
    }

    @Test func aMainActorBoxDroppedOffTheMainThreadAlwaysReleasesItsValueOnIt() async {
        _ = MainThreadProbe.key
        let onMain = Collected<Bool>()
        let container = DependencyContainer()
        await Task.detached {
            for _ in 0..<200 {
                let box: AnyBox = MainActorBox(ReleaseProbe { onMain.append(MainThreadProbe.isMain) }, keptBy: container)
                withExtendedLifetime(box) {}
            }
        }.value
        // The main queue runs what was sent to it in order: after this block, every release.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async { done.resume() }
        }
        #expect(onMain.values.count == 200)
        #expect(onMain.values.allSatisfy { $0 }, "a main-actor value was released off the main thread")
    }
}

private final class ReleaseProbe {
    let onRelease: @Sendable () -> Void
    init(_ onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
    deinit { onRelease() }
}

/// Whether code runs on the main thread or the main queue (which a worker may drain on
/// Linux).
private enum MainThreadProbe {
    static let key: DispatchSpecificKey<Void> = {
        let key = DispatchSpecificKey<Void>()
        DispatchQueue.main.setSpecific(key: key, value: ())
        return key
    }()
    static var isMain: Bool { Thread.isMainThread || DispatchQueue.getSpecific(key: key) != nil }
}
