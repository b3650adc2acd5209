import DependencyInjection
import Foundation
import Testing

// Attacks on how a parent reaches its children (it keeps their states, and a child removes
// its entry when it goes away) and on how a scope decides, once per app-wide resolution,
// whether it builds its own instance.

/// A clock the app registers and a scope may replace.
final class ChildStateClock: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// An app-wide singleton built from the clock.
final class ChildStateSchedule: Sendable {
    let clock: ChildStateClock
    init(clock: ChildStateClock) { self.clock = clock }
}

/// Holds the first construction that enters until the test opens it; later ones pass.
final class FirstEntryGate: @unchecked Sendable {
    // @unchecked: `state` is only touched while holding `condition`.
    private let condition = NSCondition()
    private var state = 0  // 0: nobody entered, 1: held, 2: open
    init() {}

    func enter() {
        condition.lock()
        defer { condition.unlock() }
        guard state == 0 else { return }
        state = 1
        condition.broadcast()
        while state == 1 { condition.wait() }
    }

    func waitUntilEntered() {
        condition.lock()
        while state == 0 { condition.wait() }
        condition.unlock()
    }

    func open() {
        condition.lock()
        state = 2
        condition.broadcast()
        condition.unlock()
    }
}

/// A weak reference to any object, to see it freed.
final class Held<Object: AnyObject>: @unchecked Sendable {
    // @unchecked: written once in `init`; a weak reference is read atomically.
    weak var object: Object?
    init(_ object: Object) { self.object = object }
}

/// Whether something happened, readable from any thread.
final class Flag: @unchecked Sendable {
    // @unchecked: `value` is only touched while holding `lock`.
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// A child's singleton whose `deinit` changes the child's parent: overrides it, sets its
/// tracer, and makes and uses another child of it.
final class ParentChanger: Sendable {
    let parent: DependencyContainer?
    init(parent: DependencyContainer?) { self.parent = parent }
    deinit {
        guard let parent else { return }
        parent.override(\.childStateClock) { ChildStateClock(name: "from a deinit") }
        parent.tracer = nil
        _ = DependencyContainer(parent: parent).childStateClock()
    }
}

extension DependencyContainer {
    var childStateClock: Provider<ChildStateClock> { singleton { ChildStateClock(name: "app") } }
    var childStateSchedule: Provider<ChildStateSchedule> {
        singleton { ChildStateSchedule(clock: self.childStateClock()) }
    }
    /// Like `childStateSchedule`, but its first construction waits at the gate stored
    /// under "childState.gate", after it resolved the clock.
    var childStateGatedSchedule: Provider<ChildStateSchedule> {
        singleton {
            let clock = self.childStateClock()
            (self.getValue(forKey: "childState.gate") as FirstEntryGate?)?.enter()
            return ChildStateSchedule(clock: clock)
        }
    }
    var parentChanger: Provider<ParentChanger> { singleton { ParentChanger(parent: self.parent) } }
}

@Suite struct ChildStateAttackTests {
    // MARK: - A scope's snapshot of what it overrides

    /// Pins: a scope that stops overriding the clock while the app container builds an
    /// app-wide schedule for it (the construction already took the clock) serves the app's
    /// schedule afterwards, and the resolution in flight returns either the app's schedule
    /// or one of the scope's own built from the scope's clock, never the scope's own built
    /// from the app's clock.
    @Test func aScopeThatDropsItsOverrideWhileTheAppBuildsForItServesTheAppsInstance() {
        let app = DependencyContainer()
        let scope = DependencyContainer(scopeOf: app)
        let gate = FirstEntryGate()
        app.setValue(gate, forKey: "childState.gate")
        scope.override(\.childStateClock) { ChildStateClock(name: "scope") }

        let resolved = Collected<ChildStateSchedule>()
        let finished = DispatchSemaphore(value: 0)
        Thread {
            resolved.append(scope.childStateGatedSchedule())
            finished.signal()
        }.start()
        gate.waitUntilEntered()
        scope.reset(\.childStateClock)
        gate.open()
        finished.wait()

        let appSchedule = app.childStateGatedSchedule()
        #expect(appSchedule.clock.name == "app")
        let first = resolved.values[0]
        #expect(first === appSchedule || first.clock.name == "scope", "the scope's own schedule, from the app's clock")
        #expect(scope.childStateGatedSchedule() === appSchedule, "the scope kept a schedule of its own")
    }

    /// Pins: while a scope's override of the clock is installed, concurrent app-wide
    /// resolutions in the scope return the app's schedule (from the app's clock) or the
    /// scope's own (from the scope's clock), never a mix; one that starts after the
    /// override returned gets the scope's clock; the app's schedule never takes the scope's
    /// clock.
    @Test func aScopeOverrideInstalledDuringAppWideResolutionsNeverMixes() async {
        for _ in 0..<20 {
            let app = DependencyContainer()
            let scope = DependencyContainer(scopeOf: app)
            let installed = Flag()
            let seen = Collected<(afterOverride: Bool, schedule: ChildStateSchedule)>()
            let threadsEnded = await concurrentlyOffThePool(threads: 4) { index in
                if index == 0 {
                    scope.override(\.childStateClock) { ChildStateClock(name: "scope") }
                    installed.set()
                    return
                }
                for _ in 0..<200 {
                    let after = installed.isSet
                    seen.append((after, scope.childStateSchedule()))
                }
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            let appSchedule = app.childStateSchedule()
            #expect(appSchedule.clock.name == "app")
            for (after, schedule) in seen.values {
                let consistent = schedule === appSchedule ? schedule.clock.name == "app" : schedule.clock.name == "scope"
                #expect(consistent)
                if after { #expect(schedule.clock.name == "scope") }
            }
            #expect(scope.childStateSchedule().clock.name == "scope")
            #expect(scope.childStateSchedule() === scope.childStateSchedule())
        }
    }

    /// Pins: an override in an enclosing scope (a session) installed while a request of it
    /// resolves the app-wide schedule reaches the request: afterwards the request's
    /// schedule has the session's clock, and the app's schedule still has the app's.
    @Test func anEnclosingScopesOverrideDuringAResolutionInItsRequestReachesTheRequest() async {
        for _ in 0..<20 {
            let app = DependencyContainer()
            let session = DependencyContainer(scopeOf: app)
            let request = DependencyContainer(scopeOf: session)
            let seen = Collected<ChildStateSchedule>()
            let threadsEnded = await concurrentlyOffThePool(threads: 3) { index in
                if index == 0 {
                    session.override(\.childStateClock) { ChildStateClock(name: "session") }
                    return
                }
                for _ in 0..<200 { seen.append(request.childStateSchedule()) }
            }
            #expect(threadsEnded, "the threads did not end before the hang limit")
            let appSchedule = app.childStateSchedule()
            #expect(appSchedule.clock.name == "app")
            for schedule in seen.values {
                #expect(schedule === appSchedule ? schedule.clock.name == "app" : schedule.clock.name == "session")
            }
            #expect(request.childStateSchedule().clock.name == "session")
            #expect(session.childStateSchedule().clock.name == "session")
        }
    }

    // MARK: - Children dropped while the parent changes

    /// Pins: children made and dropped on many threads while the parent is overridden,
    /// reset and traced are all freed, with what they built: the parent keeps no state of
    /// a child that went away (it would keep the child's clock alive), and the last
    /// override reaches a child made afterwards.
    @Test func childrenDroppedWhileTheParentChangesAreFreedWithWhatTheyBuilt() async {
        let parent = DependencyContainer()
        let children = Collected<Held<DependencyContainer>>()
        let clocks = Collected<Held<ChildStateClock>>()
        let tracers = Collected<Held<ResolutionTracer>>()
        let threadsEnded = await concurrentlyOffThePool(threads: 4) { index in
            for round in 0..<1_500 {
                if index == 0 {
                    switch round % 3 {
                    case 0: parent.override(\.childStateClock) { ChildStateClock(name: "round \(round)") }
                    case 1: parent.reset()
                    default:
                        let tracer = ResolutionTracer { _ in }
                        tracers.append(Held(tracer))
                        parent.tracer = tracer
                    }
                    continue
                }
                let child = index == 1 ? DependencyContainer(scopeOf: parent) : DependencyContainer(parent: parent)
                let clock = child.childStateClock()
                _ = child.childStateSchedule()
                children.append(Held(child))
                clocks.append(Held(clock))
            }
        }
        #expect(threadsEnded, "the threads did not end before the hang limit")
        parent.tracer = nil
        #expect(children.values.allSatisfy { $0.object == nil }, "a dropped child is alive")
        // A scope shares the parent's clock, which the parent still keeps; an isolated
        // child's own clock must be gone.
        let kept = parent.childStateClock()
        #expect(clocks.values.allSatisfy { $0.object == nil || $0.object === kept }, "a dropped child's clock is alive")
        #expect(tracers.values.allSatisfy { $0.object == nil }, "a replaced tracer is alive")
        parent.override(\.childStateClock) { ChildStateClock(name: "last") }
        #expect(DependencyContainer(parent: parent).childStateSchedule().clock.name == "last")
    }

    /// Pins: a dropped child's singleton whose `deinit` overrides the parent, clears its
    /// tracer and makes and uses another child of it runs with no lock held, even when
    /// the parent's change (on another thread) is what releases the child's state last.
    @Test func aChildsValueWhoseDeinitChangesTheParentRunsOutsideItsLocks() async {
        let parent = DependencyContainer()
        let freed = Collected<Held<DependencyContainer>>()
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: 4) { index in
                for round in 0..<1_000 {
                    if index == 0 {
                        parent.override(\.childStateClock) { ChildStateClock(name: "round \(round)") }
                        parent.tracer = round.isMultiple(of: 2) ? ResolutionTracer { _ in } : nil
                        parent.reset()
                        continue
                    }
                    let child = DependencyContainer(parent: parent)
                    _ = child.parentChanger()
                    freed.append(Held(child))
                }
            }
        }
        #expect(finished, "a deinit that changes the parent deadlocked")
        #expect(freed.values.allSatisfy { $0.object == nil })
        _ = DependencyContainer(parent: parent).parentChanger()
        #expect(parent.childStateClock().name == "from a deinit")
    }

    /// Pins: a tracer that makes children of the container it traces, and resolves in
    /// them, neither deadlocks nor keeps them: each is freed, and the children it made
    /// while tracing adopt the tracer.
    @Test func aTracerThatMakesChildrenOfItsContainerFreesThem() async {
        let parent = DependencyContainer()
        let made = Collected<Held<DependencyContainer>>()
        let tracedInChild = Flag()
        let tracer = ResolutionTracer { _ in
            let child = DependencyContainer(parent: parent)
            if child.tracer != nil { tracedInChild.set() }
            _ = child.childStateSchedule()
            made.append(Held(child))
        }
        parent.tracer = tracer
        let finished = await finishesWithoutHangingOffThePool {
            concurrently(threads: 4) { index in
                for round in 0..<300 {
                    if index == 0 {
                        parent.override(\.childStateClock) { ChildStateClock(name: "round \(round)") }
                        continue
                    }
                    _ = DependencyContainer(parent: parent).childStateSchedule()
                }
            }
        }
        #expect(finished, "a tracer that makes children deadlocked")
        parent.tracer = nil
        #expect(!made.values.isEmpty)
        #expect(tracedInChild.isSet)
        #expect(made.values.allSatisfy { $0.object == nil })
    }

    // MARK: - Deep chains

    /// Pins: an override, a reset and a tracer at the root of a chain of 2,000 nested
    /// children reach the innermost one (the walk to it does not stop half way, nor
    /// overflow the stack of a thread with 512 KiB, an Apple platform's secondary thread),
    /// and dropping the chain frees it.
    @Test func changesAtTheRootOfTwoThousandNestedChildrenReachTheInnermost() {
        let root = DependencyContainer()
        let freed = Collected<Held<DependencyContainer>>()
        let names = Collected<String>()
        let traced = Flag()
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            var chain = [root]
            for _ in 0..<2_000 { chain.append(DependencyContainer(parent: chain.last!)) }
            names.append(chain[chain.count - 1].childStateSchedule().clock.name)
            root.override(\.childStateClock) { ChildStateClock(name: "root") }
            names.append(chain[chain.count - 1].childStateSchedule().clock.name)
            root.reset()
            names.append(chain[chain.count - 1].childStateSchedule().clock.name)
            root.tracer = ResolutionTracer { _ in traced.set() }
            _ = chain[chain.count - 1].childStateClock()
            root.tracer = nil
            freed.append(Held(chain[chain.count - 1]))
            // Drops from the innermost out, so that no release recurses through the chain.
            while chain.count > 1 { chain.removeLast() }
            finished.signal()
        }
        thread.stackSize = 512 << 10
        thread.start()
        finished.wait()
        #expect(names.values == ["app", "root", "app"])
        #expect(traced.isSet)
        #expect(freed.values.allSatisfy { $0.object == nil })
    }
}
