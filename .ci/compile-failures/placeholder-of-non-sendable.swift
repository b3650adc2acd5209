// expected-error: does not conform to the 'Sendable' protocol
// Must NOT compile: a placeholder of a value that is not `Sendable`, declared without
// `on: MainActor.self`. Any thread may resolve the plain form, so it asks for `Sendable`,
// and the fix (the Apps article's table) is `unimplemented(on: MainActor.self)`.
import DependencyInjection

protocol Tracker { func track(_ event: String) }

extension DependencyContainer {
    @MainActor var tracker: Provider<any Tracker> { unimplemented() }
}
