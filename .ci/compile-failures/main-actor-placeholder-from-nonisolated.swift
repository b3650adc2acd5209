// expected-error: main actor-isolated instance method 'unimplemented
// Must NOT compile: the main-actor placeholder declared in a nonisolated property, which
// any thread may read; only main-actor code can declare it.
import DependencyInjection

protocol Tracker { func track(_ event: String) }

extension DependencyContainer {
    var tracker: Provider<any Tracker> { unimplemented(on: MainActor.self) }
}
