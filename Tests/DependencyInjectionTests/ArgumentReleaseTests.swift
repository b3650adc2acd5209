import Foundation
import Testing
@testable import DependencyInjection

/// Whether `container`'s lock is held right now, read without synchronization: only for a
/// `deinit` on the thread that may hold it, in a test with no other thread.
func isLockedHere(_ container: DependencyContainer) -> Bool {
    UnsafeRawPointer(ContainerLock(container).primitive).load(as: UInt32.self) != 0
}

/// An argument that notes, when it goes, whether its container's lock was held then.
final class NotingArgument: Hashable, @unchecked Sendable {
    // @unchecked: set once, in `init`; `container` is weak and read in `deinit` only.
    let id: Int
    weak var container: DependencyContainer?
    let goneUnderLock: Collected<Bool>
    init(_ id: Int, _ container: DependencyContainer, _ goneUnderLock: Collected<Bool>) {
        (self.id, self.container, self.goneUnderLock) = (id, container, goneUnderLock)
    }
    deinit {
        guard let container else { return }
        goneUnderLock.append(isLockedHere(container))
    }
    static func == (lhs: NotingArgument, rhs: NotingArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// An argument whose `deinit` reads a value of its container, taking the container's lock.
final class ContainerReadingArgument: Hashable, @unchecked Sendable {
    // @unchecked: set once, in `init`.
    let id: Int
    let container: DependencyContainer
    init(_ id: Int, _ container: DependencyContainer) { (self.id, self.container) = (id, container) }
    deinit { _ = container.getValue(forKey: "anything") as Int? }
    static func == (lhs: ContainerReadingArgument, rhs: ContainerReadingArgument) -> Bool { lhs.id == rhs.id }
    func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

final class ArgumentSession: Sendable {
    let id: Int
    init(_ id: Int) { self.id = id }
}

extension DependencyContainer {
    subscript(notedSession argument: NotingArgument) -> Provider<ArgumentSession> {
        singleton(argument) { ArgumentSession(argument.id) }
    }
    subscript(readingSession argument: ContainerReadingArgument) -> Provider<ArgumentSession> {
        singleton(argument) { ArgumentSession(argument.id) }
    }
    var notedSessions: ProviderFamily<NotingArgument, ArgumentSession> {
        singleton { (argument: NotingArgument) in ArgumentSession(argument.id) }
    }
}

/// An override or decoration installed for one argument is filed under the key it was
/// installed with, whose argument is the table's own: `reset(\.[session: token])` names
/// the registration with an equal argument, another object, so the table's copy may be
/// the last reference to the first. Removing the entry hands that argument to the bag
/// released after unlocking (``OverrideTable/removeValue(forKey:into:)``).
@Suite struct ArgumentReleaseTests {
    @Test func resettingAnArgumentsOverrideReleasesItsArgumentAfterUnlocking() {
        let container = DependencyContainer()
        let goneUnderLock = Collected<Bool>()
        container.override(\.[notedSession: NotingArgument(1, container, goneUnderLock)]) { ArgumentSession(-1) }
        #expect(goneUnderLock.values.isEmpty, "the table keeps the argument it was installed with")
        container.reset(\.[notedSession: NotingArgument(1, container, goneUnderLock)])
        #expect(goneUnderLock.values.count == 2, "both arguments go")
        #expect(!goneUnderLock.values.contains(true), "an argument went under its container's lock")
    }

    @Test func resettingOneOfSeveralOverridesReleasesItsArgumentAfterUnlocking() {
        let container = DependencyContainer()
        let goneUnderLock = Collected<Bool>()
        container.override(\.[notedSession: NotingArgument(1, container, goneUnderLock)]) { ArgumentSession(-1) }
        container.override(\.[notedSession: NotingArgument(2, container, goneUnderLock)]) { ArgumentSession(-2) }
        container.reset(\.[notedSession: NotingArgument(1, container, goneUnderLock)])
        #expect(goneUnderLock.values.count == 2)
        #expect(!goneUnderLock.values.contains(true), "an argument went under its container's lock")
        #expect(container[notedSession: NotingArgument(2, container, goneUnderLock)]().id == -2)
    }

    @Test func resettingAnArgumentsDecorationReleasesItsArgumentAfterUnlocking() {
        let container = DependencyContainer()
        let goneUnderLock = Collected<Bool>()
        container.decorate(\.[notedSession: NotingArgument(1, container, goneUnderLock)]) { $0 }
        container.reset(\.[notedSession: NotingArgument(1, container, goneUnderLock)])
        #expect(goneUnderLock.values.count == 2)
        #expect(!goneUnderLock.values.contains(true), "an argument went under its container's lock")
    }

    /// Resetting a provider family removes the overrides and decorations of each of its
    /// arguments; the argument of every one goes after unlocking.
    @Test func resettingAFamilyReleasesTheArgumentsOfItsOverridesAfterUnlocking() {
        let container = DependencyContainer()
        let goneUnderLock = Collected<Bool>()
        for id in 1...3 {
            container.override(\.notedSessions[NotingArgument(id, container, goneUnderLock)]) { ArgumentSession(-id) }
        }
        container.decorate(\.notedSessions[NotingArgument(4, container, goneUnderLock)]) { $0 }
        #expect(goneUnderLock.values.isEmpty, "the tables keep the arguments they were installed with")
        container.reset(\.notedSessions)
        #expect(goneUnderLock.values.count == 4, "every argument goes with its entry")
        #expect(!goneUnderLock.values.contains(true), "an argument went under its container's lock")
        #expect(container.notedSessions(NotingArgument(1, container, goneUnderLock)).id == 1)
    }

    /// The promise itself: an argument's `deinit` that uses its container runs after the
    /// reset unlocks; under the lock, it waits forever for the lock its thread holds.
    @Test func anArgumentWhoseDeinitUsesItsContainerGoesWithoutHanging() async {
        let container = DependencyContainer()
        #expect(await finishesWithoutHangingOffThePool {
            container.override(\.[readingSession: ContainerReadingArgument(1, container)]) { ArgumentSession(-1) }
            container.reset(\.[readingSession: ContainerReadingArgument(1, container)])
            container.decorate(\.[readingSession: ContainerReadingArgument(2, container)]) { $0 }
            container.reset(\.[readingSession: ContainerReadingArgument(2, container)])
        }, "an argument's deinit ran under its container's lock")
    }
}
