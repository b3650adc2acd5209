import DependencyInjection
import Foundation
import Testing

// Attacks on `unimplemented()` / `unimplemented(placeholder:)` taking `isolation: #isolation`
// in a plain (nonisolated) module, as a server's is.

extension DependencyContainer {
    /// A helper that forwards its caller's site and isolation.
    func isolatedServerStub<Value: Sendable>(
        _ name: StaticString = #function, placeholder: @autoclosure @escaping @Sendable () -> Value,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
        column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> Provider<Value> {
        unimplemented(
            name, placeholder: placeholder(), fileID: fileID, filePath: filePath, line: line, column: column,
            isolation: isolation)
    }

    var isolatedRequestUser: Provider<String> { unimplemented() }
    var isolatedRequestLocale: Provider<String> { unimplemented(placeholder: "en") }
    var isolatedServerForwarded: Provider<String> { isolatedServerStub(placeholder: "stub") }
    var isolatedGreetingForUser: Provider<String> { factory { "hi " + self.isolatedRequestUser() } }
    @MainActor var isolatedMainPlaceholder: Provider<String> { unimplemented(placeholder: "main") }
    @MainActor var isolatedMainForwarded: Provider<String> { isolatedServerStub(placeholder: "main stub") }
}

@Suite struct PlaceholderIsolationAttackTests {
    @Test func requestScopesOverrideAPlaceholderFromManyThreads() {
        let app = DependencyContainer()
        app.override(\.isolatedRequestLocale) { "fr" }
        let users = (0..<200).map { "user\($0)" }
        let lock = NSLock()
        nonisolated(unsafe) var seen: [String] = []  // guarded by lock
        DispatchQueue.concurrentPerform(iterations: users.count) { index in
            let request = DependencyContainer(scopeOf: app)
            request.override(\.isolatedRequestUser) { users[index] }
            let greeting = request.isolatedGreetingForUser()
            let locale = request.isolatedRequestLocale()
            let forwarded = DependencyContainer(scopeOf: app)
            forwarded.override(\.isolatedServerForwarded) { "f" }
            lock.withLock { seen.append("\(greeting)|\(locale)|\(forwarded.isolatedServerForwarded())") }
        }
        #expect(Set(seen) == Set(users.map { "hi \($0)|fr|f" }))
    }

    @Test func requestScopesInTasksResolvePlaceholdersThroughKeyPaths() async {
        let app = DependencyContainer()
        let keyPath = \DependencyContainer.isolatedRequestUser
        let values = await withTaskGroup(of: String.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let request = DependencyContainer(scopeOf: app)
                    request.override(keyPath) { "u\(index)" }
                    return await Task.detached { request[keyPath: keyPath]() }.value
                }
            }
            return await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(values == Set((0..<64).map { "u\($0)" }))
    }

    @Test func aForwardedPlainPlaceholderIsReportedOffTheMainActor() async {
        // Nonisolated: resolving it anywhere reports and stands in; no stop.
        await #expect(processExitsWith: .success) {
            let value = await Task.detached { DependencyContainer().isolatedServerForwarded() }.value
            precondition(value == "stub")
        }
    }

    @Test @MainActor func aMainActorPlaceholderOfAPlainModuleResolvesOnTheMainActor() {
        let container = DependencyContainer()
        container.override(\.isolatedMainPlaceholder) { "over" }
        #expect(container.isolatedMainPlaceholder() == "over")
        container.override(\.isolatedMainForwarded) { @MainActor in "over main" }
        #expect(container.isolatedMainForwarded() == "over main")
    }

    @Test func aMainActorPlaceholderOfAPlainModuleStopsOffIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await isolatedCarryOff(forwarded: false)
        }
        #expect(standardError(of: result).contains("isolatedMainPlaceholder is a registration of MainActor"))
    }

    @Test func aForwardingHelperInAPlainModuleKeepsTheMainActorCheck() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await isolatedCarryOff(forwarded: true)
        }
        #expect(standardError(of: result).contains("isolatedMainForwarded is a registration of MainActor"))
    }
}

/// Forms nothing off the main actor: the key path was formed on it by the caller.
@MainActor private func isolatedCarryOff(forwarded: Bool) async {
    let keyPath = forwarded ? \DependencyContainer.isolatedMainForwarded : \DependencyContainer.isolatedMainPlaceholder
    let container = DependencyContainer()
    _ = await Task.detached { container[keyPath: keyPath]() }.value
}
