import DependencyInjection
import Testing

// Which container a `@Dependency` takes: the container building the object, when it is
// created inside a construction (on that thread, or in that task); otherwise `main`.

/// An object that reads which container it was built in.
final class Badge: @unchecked Sendable {
    @Dependency(\.buildingOwner) var owner
}

/// A singleton that creates a `Badge` itself while it is being built.
final class Card: @unchecked Sendable {
    let badge = Badge()
}

/// An object whose property names its container.
final class PinnedBadge: @unchecked Sendable {
    @Dependency(\.buildingOwner, container: .mocks) var owner
}

/// Hands back a `Badge` that a task the construction started creates.
final class BadgeFromATask: @unchecked Sendable {
    let badge = Handoff<Badge>()
}

extension DependencyContainer {
    var buildingOwner: String? { getValue(forKey: "building-owner") }
    var badge: Provider<Badge> { factory { Badge() } }
    var card: Provider<Card> { singleton { Card() } }
    var pinnedBadge: Provider<PinnedBadge> { factory { PinnedBadge() } }
    var asyncBadge: AsyncProvider<Badge> { factory { Badge() } }
    var badgeFromATask: Provider<BadgeFromATask> {
        factory {
            let spawned = BadgeFromATask()
            Task { spawned.badge.put(Badge()) }
            return spawned
        }
    }
}

@Suite struct BuildingContainerTests {
    private func container(named name: String) -> DependencyContainer {
        let container = DependencyContainer()
        container.setValue(name, forKey: "building-owner")
        return container
    }

    @Test func anObjectBuiltByAContainerReadsThatContainerNotMain() {
        let built = container(named: "built here")
        let badge = built.badge()
        #expect(badge.$owner.container === built)
        #expect(badge.owner == "built here")
    }

    @Test func theBuildingContainerComesBeforeTheTaskLocalMain() {
        let built = container(named: "built here")
        let badge = DependencyContainer.withMain(container(named: "task-local main")) { built.badge() }
        #expect(badge.owner == "built here")
    }

    @Test func objectsCreatedDirectlyDuringAConstructionTakeItsContainer() {
        let built = container(named: "built here")
        #expect(built.card().badge.owner == "built here")
    }

    @Test func anAsyncConstructionGivesItsContainer() async throws {
        let built = container(named: "built here")
        #expect(try await built.asyncBadge().owner == "built here")
    }

    @Test func outsideAnyConstructionTheTaskLocalMainIsTaken() {
        let main = container(named: "task-local main")
        let badge = DependencyContainer.withMain(main) { Badge() }
        #expect(badge.owner == "task-local main")
    }

    @Test func aTaskTheConstructionStartedIsNotTheConstruction() async {
        let built = container(named: "built here")
        let main = container(named: "task-local main")
        let badge = await DependencyContainer.withMain(main) {
            await built.badgeFromATask().badge.value()
        }
        // The task inherits the task-local `main`, not the construction.
        #expect(badge.$owner.container === main)
    }

    @Test func aContainerNamedByThePropertyWins() {
        let built = container(named: "built here")
        #expect(built.pinnedBadge().$owner.container === DependencyContainer.mocks)
    }
}
