import DependencyInjection
import DependencyInjectionTesting
import Dispatch
import Foundation
import Testing

// Attacks on `unimplemented()` / `unimplemented(placeholder:)` taking `isolation: #isolation`
// in a module with main-actor default isolation.

/// Whether the caller runs where the main actor runs (main thread or main queue).
nonisolated func isolatedRunsOnMain() -> Bool {
    Thread.isMainThread || DispatchQueue.getSpecific(key: isolatedMainQueueKey) != nil
}

nonisolated private let isolatedMainQueueKey: DispatchSpecificKey<Void> = {
    let key = DispatchSpecificKey<Void>()
    DispatchQueue.main.setSpecific(key: key, value: ())
    return key
}()

/// Main-actor code that makes a placeholder, and says where it ran.
enum IsolatedWelcome {
    static func standard() -> String {
        isolatedRunsOnMain() ? "welcome on main" : "welcome OFF main"
    }
}

extension DependencyContainer {
    /// A helper that forwards its caller's site and isolation.
    nonisolated func isolatedForwardingStub<Value: Sendable>(
        _ name: StaticString = #function, placeholder: @autoclosure @escaping () -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
        column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> Provider<Value> {
        unimplemented(
            name, placeholder: placeholder(), fileID: fileID, filePath: filePath, line: line, column: column,
            isolation: isolation)
    }

    /// A helper isolated to the main actor (the module default) that does not forward isolation.
    func isolatedInheritingStub<Value: Sendable>(
        _ name: StaticString = #function, placeholder: @autoclosure @escaping () -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
        column: UInt = #column
    ) -> Provider<Value> {
        unimplemented(name, placeholder: placeholder(), fileID: fileID, filePath: filePath, line: line, column: column)
    }

    var isolatedWelcome: Provider<String> { unimplemented(placeholder: IsolatedWelcome.standard()) }
    var isolatedRequired: Provider<String> { unimplemented() }
    var isolatedForwarded: Provider<String> { isolatedForwardingStub(placeholder: IsolatedWelcome.standard()) }
    var isolatedInherited: Provider<String> { isolatedInheritingStub(placeholder: IsolatedWelcome.standard()) }
    nonisolated var isolatedNonisolated: Provider<String> { unimplemented(placeholder: "plain") }
}

@Suite(.dependencies) struct PlaceholderIsolationAttackTests {
    // MARK: - Still works on the main actor

    @Test func aPlaceholderResolvedOnTheMainActorIsMadeThereAndReported() {
        let container = DependencyContainer()
        var value: String?
        withKnownIssue("the placeholder is reported") {
            value = container.isolatedWelcome()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("isolatedWelcome is not implemented in this module") }
        }
        #expect(value == "welcome on main")
    }

    @Test(.dependencies { $0.override(\.isolatedWelcome) { "from the trait" } })
    func theTraitOverridesAMainActorPlaceholder() {
        #expect(DependencyContainer.main.isolatedWelcome() == "from the trait")
    }

    @Test func bothOverrideFormsReplaceTheMainActorPlaceholder() {
        let plain = DependencyContainer()
        plain.override(\.isolatedWelcome) { "plain" }
        #expect(plain.isolatedWelcome() == "plain")
        let onMain = DependencyContainer()
        onMain.override(\.isolatedWelcome) { @MainActor in IsolatedWelcome.standard() }
        #expect(onMain.isolatedWelcome() == "welcome on main")
        let required = DependencyContainer()
        required.override(\.isolatedRequired) { "supplied" }
        #expect(required.isolatedRequired() == "supplied")
    }

    @Test func aScopeHandsTheAppsOverrideOverOnTheMainActor() {
        let app = DependencyContainer()
        app.override(\.isolatedWelcome) { "app" }
        let scope = DependencyContainer(scopeOf: app)
        #expect(scope.isolatedWelcome() == "app")
        let request = DependencyContainer(scopeOf: app)
        request.override(\.isolatedRequired) { "ada" }
        #expect(request.isolatedRequired() == "ada")
    }

    @Test func aNonisolatedPlaceholderInThisModuleResolvesOffTheMainActor() async {
        let container = DependencyContainer(parent: DependencyContainer.main)
        container.override(\.isolatedNonisolated) { "overridden" }
        let values = await Task.detached { isolatedResolveEverywhere(container) }.value
        #expect(values == Array(repeating: "overridden", count: 16))
    }

    // MARK: - False stops: main-actor code that is on the main actor

    @Test func noFalseStopOnTheMainQueueOrUnderAssumeIsolated() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            let carried = await MainActor.run {
                container.override(\.isolatedWelcome) { "over" }
                return Carried(value: \DependencyContainer.isolatedWelcome)
            }
            // A plain thread that blocks in the main queue's sync block.
            let fromThread: String = await withCheckedContinuation { continuation in
                Thread {
                    let value = DispatchQueue.main.sync { container[keyPath: carried.value]() }
                    continuation.resume(returning: value)
                }.start()
            }
            precondition(fromThread == "over")
            // Nonisolated code that asserts it is on the main actor.
            let assumed = await MainActor.run { isolatedAssumeAndResolve(Carried(value: container)) }
            precondition(assumed == "over")
            // A main-actor task.
            let inTask = await Task { @MainActor in container.isolatedWelcome() }.value
            precondition(inTask == "over")
            // The placeholder itself, in the main queue's sync block, reported to stderr.
            let fresh = DependencyContainer()
            let placeholder: String = await withCheckedContinuation { continuation in
                Thread {
                    let value = DispatchQueue.main.sync { fresh[keyPath: carried.value]() }
                    continuation.resume(returning: value)
                }.start()
            }
            precondition(placeholder == "welcome on main", placeholder)
        }
    }

    @Test func noFalseStopInAnotherQueuesSyncBlockOnTheMainActor() async {
        await #expect(processExitsWith: .success) {
            await MainActor.run {
                let container = DependencyContainer()
                container.override(\.isolatedWelcome) { "over" }
                let value = DispatchQueue(label: "isolated.sync").sync {
                    MainActor.assumeIsolated { container.isolatedWelcome() }
                }
                precondition(value == "over")
            }
        }
    }

    // MARK: - Stops off the main actor

    @Test func anOverriddenMainActorPlaceholderStillStopsOffTheMainActor() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let carried = await MainActor.run {
                container.override(\.isolatedWelcome) { "over" }
                return Carried(value: \DependencyContainer.isolatedWelcome)
            }
            _ = await Task.detached { container[keyPath: carried.value]() }.value
        }
        #expect(standardError(of: result).contains("isolatedWelcome is a registration of MainActor"), "\(standardError(of: result))")
    }

    @Test func aRequiredPlaceholderStopsOffTheMainActorNamingTheRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let carried = await MainActor.run { Carried(value: \DependencyContainer.isolatedRequired) }
            _ = await Task.detached { DependencyContainer()[keyPath: carried.value]() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains("isolatedRequired is a registration of MainActor"), "\(output)")
        #expect(!output.contains("not implemented in this module"), "\(output)")
    }

    @Test func aForwardingHelperKeepsTheCheck() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let carried = await MainActor.run { Carried(value: \DependencyContainer.isolatedForwarded) }
            _ = await Task.detached { DependencyContainer()[keyPath: carried.value]() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains("isolatedForwarded is a registration of MainActor"), "\(output)")
        #expect(!output.contains("placeholder was used"), "\(output)")
    }

    @Test func aMainActorHelperThatDoesNotForwardKeepsTheCheck() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let carried = await MainActor.run { Carried(value: \DependencyContainer.isolatedInherited) }
            _ = await Task.detached { DependencyContainer()[keyPath: carried.value]() }.value
        }
        #expect(standardError(of: result).contains("isolatedInherited is a registration of MainActor"))
    }
}

nonisolated private func isolatedAssumeAndResolve(_ carried: Carried<DependencyContainer>) -> String {
    MainActor.assumeIsolated { carried.value.isolatedWelcome() }
}

nonisolated private func isolatedResolveEverywhere(_ container: DependencyContainer) -> [String] {
    let values = Carried(value: NSMutableArray())
    let lock = NSLock()
    DispatchQueue.concurrentPerform(iterations: 16) { _ in
        let value = container[keyPath: \DependencyContainer.isolatedNonisolated]()
        lock.withLock { values.value.add(value) }
    }
    return values.value.compactMap { $0 as? String }
}
