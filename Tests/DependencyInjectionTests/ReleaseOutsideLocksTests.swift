import DependencyInjection
import Foundation
import Testing

/// A singleton whose `deinit` uses the container that built it.
final class ContainerUser: @unchecked Sendable {
    let container: DependencyContainer
    init(_ container: DependencyContainer) { self.container = container }
    deinit { _ = container.getValue(forKey: "anything") as Int? }
}

/// An argument whose `deinit` uses a container.
final class ContainerUsingArgument: Hashable, @unchecked Sendable {
    let user: ContainerUser
    let raw: Int
    init(_ container: DependencyContainer, _ raw: Int) { (user, self.raw) = (ContainerUser(container), raw) }
    static func == (lhs: ContainerUsingArgument, rhs: ContainerUsingArgument) -> Bool { lhs.raw == rhs.raw }
    func hash(into hasher: inout Hasher) { hasher.combine(raw) }
}

extension DependencyContainer {
    var containerUser: Provider<ContainerUser> { singleton { ContainerUser(self) } }
    var containerUsers: ProviderFamily<ContainerUsingArgument, ContainerUser> {
        singleton { (_: ContainerUsingArgument) in ContainerUser(self) }
    }
}

/// Nothing is released while a container lock is held, so a `deinit` may use any
/// container. Each call runs under a hang guard: releasing under the lock deadlocked the
/// thread on its own lock.
@Suite struct ReleaseOutsideLocksTests {
    // MARK: - Cached instances

    @Test func resetReleasesInstancesOutsideTheLock() async {
        let container = DependencyContainer()
        _ = container.containerUser()
        #expect(await finishesWithoutHangingOffThePool { container.reset() }, "reset() deadlocked in a singleton's deinit")
    }

    @Test func overrideReleasesWhatItDropsOutsideTheLock() async {
        let container = DependencyContainer()
        _ = container.containerUser()
        #expect(await finishesWithoutHangingOffThePool {
            container.override(\.containerUser) { ContainerUser(DependencyContainer()) }
        }, "override deadlocked in a singleton's deinit")
        #expect(await finishesWithoutHangingOffThePool { container.reset(\.containerUser) }, "reset(_:) deadlocked")
    }

    @Test func aFamilyOverrideReleasesInstancesAndArgumentsOutsideTheLock() async {
        let container = DependencyContainer()
        for raw in 0..<3 { _ = container.containerUsers(ContainerUsingArgument(container, raw)) }
        #expect(await finishesWithoutHangingOffThePool {
            container.override(\.containerUsers) { _ in ContainerUser(DependencyContainer()) }
        }, "overriding a family deadlocked in a deinit")
        for raw in 0..<3 { _ = container.containerUsers(ContainerUsingArgument(container, raw)) }
        container.override(\.containerUsers[ContainerUsingArgument(container, 0)]) { ContainerUser(DependencyContainer()) }
        #expect(await finishesWithoutHangingOffThePool { container.reset(\.containerUsers) }, "resetting a family deadlocked")
    }

    // MARK: - Stored values

    @Test func replacedStoredValuesAreReleasedOutsideTheLock() async {
        let container = DependencyContainer()
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(await finishesWithoutHangingOffThePool { container.setValue(0, forKey: "user") }, "setValue deadlocked")
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(await finishesWithoutHangingOffThePool { container.removeValue(forKey: "user") }, "removeValue deadlocked")
        container.setValue(ContainerUser(container), forKey: "user")
        #expect(await finishesWithoutHangingOffThePool { container.removeAll() }, "removeAll deadlocked")
    }

    // MARK: - Tracer

    @Test func replacingTheTracerReleasesTheOldOneOutsideTheLock() async {
        let container = DependencyContainer()
        do {
            let user = ContainerUser(container)
            container.tracer = ResolutionTracer { _ in _ = user }
        }
        #expect(await finishesWithoutHangingOffThePool { container.tracer = nil }, "setting the tracer deadlocked")
    }
}
