import DependencyInjection
import Foundation
import Testing

// A task started with `Task.immediate` inside a construction runs at once, on the
// construction's thread, as another owner. When it asks for what that construction (or
// one around it) is building, it must stop with a message, never wait: the wait would
// block the very thread the construction needs. A singleton it asks for is a cycle on the
// frames it inherited; a `@Dependency` property whose first read is running there was a
// silent hang, and now stops with a message that names the read and the fix.

final class ImmediateLoop: Sendable {
    init() {}
}

/// A store whose construction builds a part that starts work at once, resolving the store.
final class ImmediateStore: Sendable {
    let part: ImmediatePart
    init(part: ImmediatePart) { self.part = part }
}

final class ImmediatePart: Sendable {
    init() {}
}

/// An object whose property's first read builds a value that starts a task at once,
/// which reads that same property.
final class ImmediateReader: @unchecked Sendable {
    // @unchecked: the property's storage is thread-safe; its wrapper is a `var`.
    @Dependency(\.immediateReadValue) var value
    init() {}
}

extension DependencyContainer {
    var immediateReadValue: Provider<ImmediatePart> {
        factory {
            self.readTheReaderAtOnce()
            return ImmediatePart()
        }
    }

    /// Starts a task with `Task.immediate` that reads the property of the reader stored
    /// under "immediate.reader".
    func readTheReaderAtOnce() {
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            let reader = getValue(forKey: "immediate.reader") as ImmediateReader?
            Task.immediate { _ = reader?.value }
        }
    }

    /// A singleton whose construction starts a task at once that resolves it.
    var immediateLoop: Provider<ImmediateLoop> {
        singleton {
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.immediateLoop() }
            }
            return ImmediateLoop()
        }
    }
    var immediateStore: Provider<ImmediateStore> { singleton { ImmediateStore(part: self.immediatePart()) } }
    /// A part of the store whose construction starts a task at once that resolves the store.
    var immediatePart: Provider<ImmediatePart> {
        singleton {
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.immediateStore() }
            }
            return ImmediatePart()
        }
    }
    /// A singleton whose construction starts a task at once that resolves another, not in
    /// flight, and one that starts a plain task that resolves the singleton itself.
    var immediateNeighbour: Provider<ImmediateLoop> {
        singleton {
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate { _ = self.immediateOther() }
            }
            return ImmediateLoop()
        }
    }
    var immediateOther: Provider<ImmediatePart> { singleton { ImmediatePart() } }
    /// A singleton whose construction starts a task at once that reads the reader's
    /// property: that first read runs in the task, under the construction, on its thread.
    var immediateReadHost: Provider<ImmediateLoop> {
        singleton {
            self.readTheReaderAtOnce()
            return ImmediateLoop()
        }
    }
    /// A singleton whose construction resolves a factory whose construction starts a task
    /// at once that resolves that factory again.
    var immediateFactoryOwner: Provider<ImmediateStore> { singleton { ImmediateStore(part: self.immediateReentered()) } }
    var immediateReentered: Provider<ImmediatePart> {
        factory {
            let made = self.getValue(forKey: "immediate.made") as Collected<ImmediatePart>?
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *), let made {
                self.removeValue(forKey: "immediate.made")
                Task.immediate { made.append(self.immediateReentered()) }
            }
            return ImmediatePart()
        }
    }
    var laterLoop: Provider<ImmediateLoop> {
        singleton {
            let found = self.getValue(forKey: "immediate.found") as Collected<ObjectIdentifier>?
            let done = self.getValue(forKey: "immediate.done") as DispatchSemaphore?
            Task {
                found?.append(ObjectIdentifier(self.laterLoop()))
                done?.signal()
            }
            return ImmediateLoop()
        }
    }
}

@Suite struct ImmediateTaskWaitTests {
    /// The task reads the property whose first read, running below it on this thread,
    /// built what started it: a stop that names the read and the fix, where the task
    /// waited for the read forever, with no message.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func anImmediateTaskReadingAPropertyWhoseFirstReadStartedItStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an immediate task waiting for the first read that started it")
            let container = DependencyContainer()
            let reader = DependencyContainer.withMain(container) { ImmediateReader() }
            container.setValue(reader, forKey: "immediate.reader")
            _ = reader.value
        }
        let output = standardError(of: result)
        #expect(
            output.contains("Fatal error: @Dependency in ImmediateReader (DependencyInjectionTests/ImmediateTaskWaitTests.swift:"),
            "\(output)")
        #expect(output.contains("is being built on this thread, and a task started with Task.immediate"), "\(output)")
        #expect(output.contains("Start the task with Task { … }"), "\(output)")
    }

    /// The same wait one task further in: a construction starts a task at once, whose
    /// first read of the property starts another that reads it. The outer task's read runs
    /// on the construction's thread but belongs to another owner than the construction, so
    /// the thread does not file it among its frames; the inner task waited for it forever.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func anImmediateTaskInsideAnotherTasksFirstReadUnderAConstructionStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an immediate task waiting for the first read of the task that started it")
            let container = DependencyContainer()
            let reader = DependencyContainer.withMain(container) { ImmediateReader() }
            container.setValue(reader, forKey: "immediate.reader")
            _ = container.immediateReadHost()
        }
        let output = standardError(of: result)
        #expect(
            output.contains("Fatal error: @Dependency in ImmediateReader (DependencyInjectionTests/ImmediateTaskWaitTests.swift:"),
            "\(output)")
        #expect(output.contains("is being built on this thread, and a task started with Task.immediate"), "\(output)")
    }

    /// The task resolves the singleton whose construction started it: the cycle check,
    /// which walks the frames the task inherited, names it before any wait, and the
    /// message says that an immediate task closed it, and how to start it instead.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func anImmediateTaskAskingForTheConstructionThatStartedItStopsAsACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an immediate task waiting for its own construction")
            _ = DependencyContainer().immediateLoop()
        }
        let output = standardError(of: result)
        #expect(output.contains("Fatal error: Circular dependency: immediateLoop ("), "\(output)")
        #expect(
            output.contains(
                "A task started with Task.immediate inside immediateLoop asks for immediateLoop: the task runs at once"),
            "\(output)")
        #expect(output.contains("Start the task with Task { … }"), "\(output)")
    }

    /// A cycle that no task closes says nothing of `Task.immediate`.
    @Test func aCycleOnOneOwnerSaysNothingOfImmediateTasks() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().selfish()
        }
        let output = standardError(of: result)
        #expect(output.contains("Fatal error: Circular dependency: selfish ("), "\(output)")
        #expect(!output.contains("Task.immediate"), "\(output)")
    }

    /// The task resolves the store whose construction is building the part that started
    /// it: the cycle check names the chain before any wait.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func anImmediateTaskAskingForAnEnclosingConstructionStopsAsACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("an immediate task waiting for an enclosing construction")
            _ = DependencyContainer().immediateStore()
        }
        let output = standardError(of: result)
        #expect(output.contains("Fatal error: Circular dependency: immediateStore ("), "\(output)")
        #expect(output.contains("-> immediatePart ("), "\(output)")
        #expect(
            output.contains("A task started with Task.immediate inside immediatePart asks for immediateStore"), "\(output)")
    }

    /// What the check must not stop: an immediate task that resolves a singleton nothing
    /// builds, one that resolves again, under a singleton's construction, the factory that
    /// started it (a factory waits for no one), and a plain task that waits, on another
    /// thread, for the construction that started it.
    @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)
    @Test func tasksThatNeedNoWaitOnTheirThreadGoOn() async {
        let container = DependencyContainer()
        _ = container.immediateNeighbour()
        #expect(container.instanceIfBuilt(\.immediateOther) != nil)
        let made = Collected<ImmediatePart>()
        container.setValue(made, forKey: "immediate.made")
        let store = container.immediateFactoryOwner()
        #expect(made.values.count == 1)
        #expect(made.values.first !== store.part)
        let found = Collected<ObjectIdentifier>()
        let done = DispatchSemaphore(value: 0)
        container.setValue(found, forKey: "immediate.found")
        container.setValue(done, forKey: "immediate.done")
        let loop = container.laterLoop()
        let finished = await finishesWithoutHangingOffThePool { done.wait() }
        #expect(finished)
        #expect(found.values == [ObjectIdentifier(loop)])
    }
}
