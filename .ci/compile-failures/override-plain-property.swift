// expected-error: only a Provider can be overridden
// Must NOT compile: a plain computed property has no closure to replace. `.ci/run`
// type-checks this file and expects the message that says how to fix it.
import DependencyInjection

extension DependencyContainer {
    var baseURL: String { "https://api.example.com" }
}

func pointAtStaging(_ container: DependencyContainer) {
    container.override(\.baseURL) { "https://staging.example.com" }
}
