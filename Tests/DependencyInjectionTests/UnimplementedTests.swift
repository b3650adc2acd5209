import DependencyInjection
import Foundation
import Testing

protocol Analytics: Sendable { var name: String { get } }
struct NoAnalytics: Analytics { let name = "placeholder" }
struct LiveAnalytics: Analytics { let name = "live" }

extension DependencyContainer {
    /// Where the stop points: the line of `analytics`, below; `analyticsOrPlaceholder` is on
    /// the next.
    static let analyticsRegistrationLine: UInt = #line + 1
    var analytics: Provider<any Analytics> { unimplemented() }
    var analyticsOrPlaceholder: Provider<any Analytics> { unimplemented(placeholder: NoAnalytics()) }
    subscript(region region: String) -> Provider<any Analytics> { unimplemented() }
    /// A name of its own, shown in messages; the key path is the property's.
    var renamedAnalytics: Provider<any Analytics> { unimplemented("Analytics service") }
    var renamedAnalyticsOrPlaceholder: Provider<any Analytics> {
        unimplemented("Analytics service", placeholder: NoAnalytics())
    }
}

/// An app-wide singleton that reads a request value lazily, through a property.
final class LazyGreeter: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.requestUser) var user
}

extension DependencyContainer {
    var lazyGreeter: Provider<LazyGreeter> { singleton { LazyGreeter() } }
}

/// Placeholders are resolved only in exit tests (a child process) or after an override:
/// resolving one here would report an issue in this process, where the testing product
/// may have installed a reporter that fails the running test.
@Suite struct UnimplementedTests {
    // MARK: - Stopping

    @Test func resolvingStopsWithTheNameAndHowToSupplyIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().analytics()
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "analytics is not implemented in this module: supply it with container.override(\\.analytics) { … }"))
        #expect(
            output.contains("UnimplementedTests.swift:\(DependencyContainer.analyticsRegistrationLine):"),
            "the stop points at the registration: \(output)")
    }

    /// A request installed the value, but an app-wide singleton's property, resolved from
    /// the app container, never sees a scope's values: the message says why the override
    /// did not reach it and how to register the singleton instead.
    @Test func aRequestValueReadByAnAppWideSingletonsPropertySaysWhyTheScopesOverrideMissedIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.requestUser) { "ada" }
            let greeter = request.lazyGreeter()
            _ = greeter.user
        }
        let output = standardError(of: result)
        #expect(output.contains("requestUser is not implemented in this module"), "\(output)")
        #expect(output.contains("A scope of this container overrides it"), "\(output)")
        #expect(output.contains("register it with scoped { … }"), "\(output)")
    }

    /// With no scope overriding it, the message only says how to supply it.
    @Test func withNoScopeOverridingItTheMessageSaysOnlyHowToSupplyIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            _ = request.lazyGreeter().user
        }
        let output = standardError(of: result)
        #expect(output.contains("requestUser is not implemented in this module"), "\(output)")
        #expect(!output.contains("A scope of"), "\(output)")
    }

    @Test func aSubscriptIsNamedAsItsKeyPath() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[region: "eu"]()
        }
        let output = standardError(of: result)
        #expect(output.contains("container.override(\\.[region: …]) { … }"), "\(output)")
    }

    /// A name of its own is what the message calls the dependency; the key path it
    /// suggests is the property's, the one an override must name.
    @Test func aNameOfItsOwnIsShownAndThePropertyIsTheKeyPath() async {
        let stop = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().renamedAnalytics()
        }
        #expect(
            standardError(of: stop).contains(
                "Analytics service is not implemented in this module: supply it with "
                    + "container.override(\\.renamedAnalytics) { … }"),
            "\(standardError(of: stop))")
        let report = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            precondition(DependencyContainer().renamedAnalyticsOrPlaceholder().name == "placeholder")
        }
        #expect(
            standardError(of: report).contains(
                "Analytics service is not implemented in this module, so its placeholder was used: supply it with "
                    + "container.override(\\.renamedAnalyticsOrPlaceholder) { … }"),
            "\(standardError(of: report))")
    }

    @Test func aPlaceholderWithANameOfItsOwnIsSuppliedThroughItsProperty() {
        let container = DependencyContainer()
        container.override(\.renamedAnalytics) { LiveAnalytics() }
        #expect(container.renamedAnalytics().name == "live")
    }

    // MARK: - Supplying

    @Test func anOverrideSuppliesItAndIsBuiltOncePerContainer() {
        let container = DependencyContainer()
        let builds = Collected<Int>()
        container.override(\.analytics) {
            builds.append(1)
            return LiveAnalytics()
        }
        #expect(container.analytics().name == "live")
        #expect(container.analytics().name == "live")
        #expect(builds.values.count == 1)
    }

    @Test func aChildSeesItsParentsOverride() {
        let parent = DependencyContainer()
        parent.override(\.analytics) { LiveAnalytics() }
        parent.override(\.analyticsOrPlaceholder) { LiveAnalytics() }
        let child = DependencyContainer(parent: parent)
        #expect(child.analytics().name == "live")
        #expect(child.analyticsOrPlaceholder().name == "live")
    }

    // MARK: - Placeholder

    @Test func placeholderIsReportedToStandardErrorAndReturned() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let value = DependencyContainer().analyticsOrPlaceholder()
            precondition(value.name == "placeholder")
        }
        let output = standardError(of: result)
        #expect(output.contains(
            "DependencyInjection: analyticsOrPlaceholder is not implemented in this module, "
                + "so its placeholder was used: supply it with "
                + "container.override(\\.analyticsOrPlaceholder) { … }"), "\(output)")
        #expect(output.contains("DependencyInjectionTests/UnimplementedTests.swift:"))
    }

    @Test func anInstalledReporterReceivesEachIssueOncePerContainer() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let first = DependencyContainer()
            _ = first.analyticsOrPlaceholder()
            _ = first.analyticsOrPlaceholder()
            _ = DependencyContainer(parent: first).analyticsOrPlaceholder()
            let issues = seen.values
            precondition(issues.count == 2, "\(issues.count) issues")
            precondition(issues.allSatisfy { $0.dependency == "analyticsOrPlaceholder" })
            precondition(issues[0].fileID.description == "DependencyInjectionTests/UnimplementedTests.swift")
            precondition(issues[0].filePath.description.hasSuffix("UnimplementedTests.swift"))
            precondition(issues[0].line == DependencyContainer.analyticsRegistrationLine + 1 && issues[0].column > 1)
            precondition(issues[0].description == issues[0].message)
        }
        let output = standardError(of: result)
        #expect(!output.contains("DependencyInjection:"), "the default reporter was replaced")
    }
}
