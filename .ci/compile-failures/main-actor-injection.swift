// expected-error: main actor-isolated
// Must NOT compile: a main-actor registration injected into a type that is not on the
// main actor. `.ci/run` type-checks this file and expects the isolation error.
import DependencyInjection

@MainActor final class ViewModel {}

extension DependencyContainer {
    @MainActor var viewModel: Provider<ViewModel> { factory { ViewModel() } }
}

final class BackgroundWorker {
    @Dependency(\.viewModel) var model
}
