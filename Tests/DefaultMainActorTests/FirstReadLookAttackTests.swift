import DependencyInjection
import Testing

// Attacks, in app code (main-actor default isolation), on the look of a `@Dependency`
// property's first read: a screen's registration whose getter starts a task with
// `Task.immediate` (on the main actor, as app code does to kick off work), which makes
// another screen.

final class FRLMAService {}

/// A screen made by the task the registration's getter starts.
final class FRLMADetail {
    @Dependency(\.frlmaService) var service
    init() {}
}

/// The screen whose property's getter starts the task.
final class FRLMAScreen {
    @Dependency(\.frlmaKickoff) var service
    init() {}
}

/// What the task saw: the container the detail screen resolves from.
final class FRLMASeen {
    var names: [String] = []
}

extension DependencyContainer {
    var frlmaService: Provider<FRLMAService> { singleton { FRLMAService() } }

    var frlmaKickoff: Provider<FRLMAService> {
        if let seen: FRLMASeen = getValue(forKey: "frlma.seen") {
            let me = self
            if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
                Task.immediate {
                    let container = FRLMADetail().$service.container
                    seen.names.append(
                        container === me ? "the screen's" : container === DependencyContainer.main ? "main" : "another")
                }
            }
        }
        return singleton { FRLMAService() }
    }
}

@Suite struct FirstReadLookAttackTests {
    /// A fresh screen's first read (the look) and a reset screen's (the framed road) run
    /// the same getter, whose task makes a detail screen: the task is another owner, and on
    /// the framed road its screen resolves from `main`. Both reads must tell it the same
    /// container.
    @Test func aScreenATaskMakesInAGetterGetsOneContainerWhetherTheReadIsFreshOrReset() {
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else { return }
        let (container, other) = (DependencyContainer(), DependencyContainer())
        let kept = container.frlmaKickoff()
        let seen = FRLMASeen()
        container.setValue(seen, forKey: "frlma.seen")
        let fresh = DependencyContainer.withMain(container) { FRLMAScreen() }
        let reset = DependencyContainer.withMain(container) { FRLMAScreen() }
        reset.$service.reset()
        DependencyContainer.withMain(other) {
            #expect(fresh.service === kept)
            #expect(reset.service === kept)
        }
        #expect(seen.names.count == 2, "\(seen.names)")
        #expect(
            seen.names.first == seen.names.last,
            "fresh read (the look): \(seen.names.first ?? ""), reset read (the frame): \(seen.names.last ?? "")")
    }
}
