import DependencyInjection
import Foundation
import Testing

// The sessions of ProviderFamilyTests.swift (`AccountID`, `AccountSession`), declared here
// as a feature module declares what the app supplies.

extension DependencyContainer {
    /// Where the stop points: the line of `ledger`, below; `ledgerOrEmpty` is on the next.
    static let ledgerRegistrationLine: UInt = #line + 1
    var ledger: ProviderFamily<AccountID, any AccountSession> { unimplemented() }
    var ledgerOrEmpty: ProviderFamily<AccountID, any AccountSession> {
        unimplemented(placeholder: { account in StubAccountSession(account: account, source: "empty") })
    }
}

/// A screen's model that reads one account's ledger, which the app supplies.
final class StatementModel {
    @Dependency(\.ledger[AccountID(1)]) var ledger
    init() {}
}

private let alice = AccountID(1)
private let bob = AccountID(2)

/// Placeholders of dependencies with an argument: a provider family that another module
/// supplies for every argument with one closure, or a test for one argument. Like
/// ``UnimplementedTests``, a placeholder is resolved here only in exit tests or after an
/// override.
@Suite struct FamilyPlaceholderTests {
    // MARK: - Stopping

    @Test func resolvingAnArgumentStopsWithTheNameAndHowToSupplyEveryArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().ledger(AccountID(3))
        }
        let output = standardError(of: result)
        #expect(
            output.contains(
                "ledger is not implemented in this module: supply it with "
                    + "container.override(\\.ledger) { argument in … }"),
            "\(output)")
        #expect(
            output.contains("FamilyPlaceholderTests.swift:\(DependencyContainer.ledgerRegistrationLine):"),
            "the stop points at the registration: \(output)")
    }

    /// An override of one argument supplies that argument only: another still stops.
    @Test func anOverrideOfOneArgumentLeavesTheOthersUnsupplied() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.ledger[AccountID(1)]) { LiveAccountSession(account: AccountID(1)) }
            precondition(container.ledger(AccountID(1)).source == "live")
            _ = container.ledger(AccountID(2))
        }
        #expect(standardError(of: result).contains("ledger is not implemented in this module"))
    }

    /// Resetting the family takes the app's closure away: the placeholder stops again.
    @Test func resettingTheFamilyBringsThePlaceholderBack() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.ledger) { account in LiveAccountSession(account: account) }
            precondition(container.ledger(AccountID(1)).source == "live")
            container.reset(\.ledger)
            _ = container.ledger(AccountID(1))
        }
        #expect(standardError(of: result).contains("ledger is not implemented in this module"))
    }

    // MARK: - Supplying

    @Test func oneOverrideSuppliesEveryArgumentEachBuiltOncePerContainer() {
        let container = DependencyContainer()
        let builds = Collected<AccountID>()
        container.override(\.ledger) { account in
            builds.append(account)
            return LiveAccountSession(account: account)
        }
        let first = container.ledger(alice)
        #expect(first.source == "live" && first.account == alice)
        #expect(container.ledger(bob).account == bob)
        let again = container.ledger(alice)
        let sameInstance = ObjectIdentifier(again as AnyObject) == ObjectIdentifier(first as AnyObject)
        #expect(sameInstance)
        #expect(builds.values == [alice, bob])
    }

    @Test func anOverrideOfOneArgumentWinsOverTheFamilysForThatArgument() {
        let container = DependencyContainer()
        container.override(\.ledger) { account in LiveAccountSession(account: account) }
        container.override(\.ledger[alice]) { StubAccountSession(account: alice, source: "empty") }
        #expect(container.ledger(alice).source == "empty")
        #expect(container.ledger(bob).source == "live")
    }

    @Test func childrenAndScopesSeeTheAppsOverride() {
        let app = DependencyContainer()
        app.override(\.ledger) { account in LiveAccountSession(account: account) }
        let child = DependencyContainer(parent: app)
        let request = DependencyContainer(scopeOf: app)
        #expect(child.ledger(alice).source == "live")
        #expect(request.ledger(alice).source == "live")
    }

    @Test func aRequestScopeSuppliesItsOwn() {
        let app = DependencyContainer()
        app.override(\.ledger) { account in LiveAccountSession(account: account) }
        let request = DependencyContainer(scopeOf: app)
        request.override(\.ledger) { account in StubAccountSession(account: account, source: "empty") }
        #expect(request.ledger(alice).source == "empty")
        #expect(app.ledger(alice).source == "live")
    }

    @Test func aPropertyOfOneArgumentReadsTheOverride() {
        let container = DependencyContainer()
        container.override(\.ledger) { account in LiveAccountSession(account: account) }
        let model = StatementModel()
        model.$ledger.container = container
        #expect(model.ledger.account == alice)
        #expect(model.ledger.source == "live")
    }

    // MARK: - Placeholder

    @Test func thePlaceholderIsBuiltFromTheArgumentAndReportedOncePerContainerAndArgument() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let container = DependencyContainer()
            let ledger = container.ledgerOrEmpty(AccountID(1))
            precondition(ledger.source == "empty" && ledger.account == AccountID(1))
            _ = container.ledgerOrEmpty(AccountID(1))
            _ = container.ledgerOrEmpty(AccountID(2))
            _ = DependencyContainer(parent: container).ledgerOrEmpty(AccountID(1))
            let issues = seen.values
            precondition(issues.count == 3, "\(issues.count) issues")
            precondition(issues.allSatisfy { $0.dependency == "ledgerOrEmpty" })
            precondition(issues[0].line == DependencyContainer.ledgerRegistrationLine + 2)
        }
        let output = standardError(of: result)
        #expect(!output.contains("DependencyInjection:"), "the default reporter was replaced: \(output)")
    }

    @Test func thePlaceholdersMessageSaysHowToSupplyEveryArgument() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let ledger = DependencyContainer().ledgerOrEmpty(AccountID(1))
            precondition(ledger.source == "empty")
        }
        let output = standardError(of: result)
        #expect(
            output.contains(
                "ledgerOrEmpty is not implemented in this module, so its placeholder was used: supply it with "
                    + "container.override(\\.ledgerOrEmpty) { argument in … }"),
            "\(output)")
    }

    @Test func anOverrideReplacesThePlaceholderForEveryArgumentWithoutAnIssue() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.ledgerOrEmpty) { account in LiveAccountSession(account: account) }
            #expect(container.ledgerOrEmpty(alice).source == "live")
            #expect(container.ledgerOrEmpty(bob).source == "live")
        }
        #expect(issues.isEmpty, "\(issues.map(\.message))")
    }

    // MARK: - A placeholder in a subscript

    #if DEBUG
    /// A subscript's placeholder is one registration for every argument: two of its key
    /// paths lead to it, and the issue says to declare a family, not to forward a site.
    @Test func twoArgumentsOfASubscriptsPlaceholderAreReportedAsOneRegistrationWithTheFix() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.[region: "eu"]) { LiveAnalytics() }
            container.override(\.[region: "us"]) { LiveAnalytics() }
        }
        let merged = issues.filter { $0.message.contains("share one registration") }
        #expect(merged.count == 1, "\(issues.map(\.message))")
        #expect(merged.allSatisfy { $0.message.contains("a registration in a subscript is one for every argument") })
        #expect(merged.allSatisfy { $0.message.contains("var name: ProviderFamily<Argument, Value> { unimplemented() }") })
        #expect(!merged.contains { $0.message.contains("must forward its caller's") })
    }
    #endif
}
