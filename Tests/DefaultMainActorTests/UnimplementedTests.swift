import DependencyInjection
import DependencyInjectionTesting
import Testing

/// Placeholders declared in main-actor code, for plain protocols the app target supplies:
/// `unimplemented(on: MainActor.self)` compiles where `unimplemented()` asks for a
/// `Sendable` value, stops until the app overrides it, and the placeholder form reports
/// and stands in. (The registrations are in Support/App.swift, as a feature declares them.)
@Suite(.dependencies) struct UnimplementedTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test func theAppsOverrideSuppliesItToEveryDependent() {
        let tracker = RecordingTracker()
        DependencyContainer.main.override(\.tracker) { @MainActor in tracker }
        let model = CheckoutViewModel()
        model.pay()
        #expect(tracker.events == ["paid"])
        #expect(isSameInstance(DependencyContainer.main.tracker(), DependencyContainer.main.tracker()))
    }

    /// The override keeps the placeholder's scope: built once per container.
    @Test func theOverrideIsBuiltOncePerContainer() {
        let container = DependencyContainer()
        var built = 0
        container.override(\.tracker) { @MainActor in
            built += 1
            return RecordingTracker()
        }
        #expect(isSameInstance(container.tracker(), container.tracker()))
        let child = DependencyContainer(parent: container)
        #expect(!isSameInstance(child.tracker(), container.tracker()))
        #expect(built == 2)
    }

    @Test func withNoOverrideItStopsWithTheNameAndWhereItIsDeclared() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run { _ = DependencyContainer().tracker() }
        }
        let output = standardError(of: result)
        #expect(
            output.contains(
                "tracker is not implemented in this module: supply it with container.override(\\.tracker) { … }"),
            "\(output)")
        #expect(output.contains("App.swift:\(DependencyContainer.placeholdersLine):"), "\(output)")
    }

    @Test func thePlaceholderIsReportedOncePerContainerAndStandsIn() {
        let container = DependencyContainer()
        let line = Int(DependencyContainer.placeholdersLine) + 1
        var style: String?
        withKnownIssue("the placeholder is reported") {
            style = container.haptics().style
        } matching: { issue in
            issue.comments.contains { comment in
                comment.rawValue.contains("haptics is not implemented in this module, so its placeholder was used")
                    && comment.rawValue.contains("container.override(\\.haptics) { … }")
            } && issue.sourceLocation?.line == line
        }
        #expect(style == "none")
        // Outside `withKnownIssue`: a second report would fail this test.
        #expect(container.haptics().style == "none")
    }

    /// A placeholder declared in main-actor code with the plain form is a main-actor
    /// registration too, as `singleton` is: its placeholder, made by main-actor code, is
    /// never made off the main actor, where a key path carried there resolves it.
    @Test func aPlainPlaceholderDeclaredHereIsResolvedOnTheMainActorOnly() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let carried = await MainActor.run { Carried(value: \DependencyContainer.greeting) }
            await Task.detached { _ = DependencyContainer()[keyPath: carried.value]() }.value
        }
        let output = standardError(of: result)
        #expect(output.contains("greeting is a registration of MainActor and was resolved off it"), "\(output)")
        #expect(!output.contains("placeholder was used"), "the placeholder was made off the main actor: \(output)")
    }

    @Test func anOverrideReplacesThePlaceholderWithoutAnIssue() {
        // Any recorded issue would fail this test.
        let container = DependencyContainer()
        container.override(\.haptics) { @MainActor in GentleHaptics() }
        #expect(container.haptics().style == "gentle")
    }
}
