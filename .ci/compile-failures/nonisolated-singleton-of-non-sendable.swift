// expected-error: does not conform to the 'Sendable' protocol
// Must NOT compile: a nonisolated registration keeps a singleton that any thread may
// resolve, so its value must be Sendable. `.ci/run` type-checks this file and expects
// the Sendable error. (Main-actor code writes `singleton { @MainActor in … }`.)
import DependencyInjection

final class NonSendable {}

extension DependencyContainer {
    var nonSendable: Provider<NonSendable> { singleton { NonSendable() } }
}
