// expected-error: only a Provider can be reset
// Must NOT compile: a plain computed property keeps nothing to reset. `.ci/run`
// type-checks this file and expects the message that says how to fix it.
import DependencyInjection

extension DependencyContainer {
    var baseURL: String { "https://api.example.com" }
}

func startOver(_ container: DependencyContainer) {
    container.reset(\.baseURL)
}
