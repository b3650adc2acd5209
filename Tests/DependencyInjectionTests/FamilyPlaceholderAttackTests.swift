import DependencyInjection
import Foundation
import Testing

// An attack on placeholders with an argument (`unimplemented()` returning a
// `ProviderFamily`), through the public API only, as a feature module and its app would
// use them. Placeholders are resolved with no override only in exit tests.

struct FPAAccount: Hashable, Sendable {
    let raw: Int
    init(_ raw: Int) { self.raw = raw }
}

/// An argument whose values all share one hash: equality alone tells them apart.
struct FPACollidingAccount: Hashable, Sendable {
    let raw: Int
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.raw == rhs.raw }
    func hash(into hasher: inout Hasher) { hasher.combine(42) }
}

/// An unlabeled subscript's argument, of a type no other test uses.
struct FPAShard: Hashable, Sendable { let raw: Int }

protocol FPALedger: AnyObject, Sendable {
    var account: FPAAccount { get }
    var source: String { get }
}

final class FPABuiltLedger: FPALedger {
    let account: FPAAccount
    let source: String
    let inner: (any FPALedger)?
    init(account: FPAAccount, source: String, inner: (any FPALedger)? = nil) {
        (self.account, self.source, self.inner) = (account, source, inner)
    }
}

final class FPAStatement: Sendable {
    let ledger: any FPALedger
    init(ledger: any FPALedger) { self.ledger = ledger }
}

/// Counts per key from any thread.
final class FPACounts: @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    func bump(_ key: String) {
        lock.lock()
        counts[key, default: 0] += 1
        lock.unlock()
    }
    subscript(key: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return counts[key] ?? 0
    }
    var all: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return counts
    }
}

/// A generic helper that forwards its caller's place, as the documentation asks.
extension DependencyContainer {
    func fpaRequired<Argument: Hashable & Sendable, Value: Sendable>(
        _ name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line,
        column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> ProviderFamily<Argument, Value> {
        unimplemented(name, fileID: fileID, line: line, column: column, isolation: isolation)
    }

    /// The same for a provider: the result type alone must pick the `Provider` form.
    func fpaRequiredOne<Value: Sendable>(
        _ name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line,
        column: UInt = #column, isolation: (any Actor)? = #isolation
    ) -> Provider<Value> {
        unimplemented(name, fileID: fileID, line: line, column: column, isolation: isolation)
    }

    /// A helper that does not forward: every property made with it shares one registration.
    func fpaSloppy<Argument: Hashable & Sendable, Value: Sendable>() -> ProviderFamily<Argument, Value> {
        unimplemented()
    }
}

extension DependencyContainer {
    static let fpaLedgerLine: UInt = #line + 1
    var fpaLedger: ProviderFamily<FPAAccount, any FPALedger> { unimplemented() }
    var fpaLedgerOrEmpty: ProviderFamily<FPAAccount, any FPALedger> {
        unimplemented(placeholder: { account in FPABuiltLedger(account: account, source: "empty") })
    }
    static let fpaRenamedLine: UInt = #line + 1
    var fpaRenamed: ProviderFamily<FPAAccount, any FPALedger> { unimplemented("customLedger") }
    var fpaRenamedOrEmpty: ProviderFamily<FPAAccount, any FPALedger> {
        unimplemented("customLedgerOrEmpty", placeholder: { account in FPABuiltLedger(account: account, source: "empty") })
    }
    /// A `String` argument next to the unlabeled `StaticString` name.
    static let fpaByNameLine: UInt = #line + 1
    var fpaByName: ProviderFamily<String, String> { unimplemented() }
    var fpaByNameOrEcho: ProviderFamily<String, String> { unimplemented(placeholder: { "echo \($0)" }) }
    var fpaByNameRenamed: ProviderFamily<String, String> { unimplemented("named") }
    /// A family in a labeled subscript, and in an unlabeled one.
    subscript(fpaBank bank: String) -> ProviderFamily<FPAAccount, any FPALedger> { unimplemented() }
    subscript(_ shard: FPAShard) -> ProviderFamily<FPAAccount, any FPALedger> { unimplemented() }
    subscript(fpaPair first: Int, _ second: Int) -> ProviderFamily<FPAAccount, any FPALedger> { unimplemented() }

    /// The provider forms next to the family forms.
    var fpaPlain: Provider<any FPALedger> { unimplemented() }
    var fpaPlainOrEmpty: Provider<String> { unimplemented(placeholder: "empty") }
    /// A provider of a function next to a family's placeholder closure.
    var fpaPlainFunction: Provider<@Sendable (FPAAccount) -> String> {
        unimplemented(placeholder: { (account: FPAAccount) in "fn \(account.raw)" })
    }
    var fpaHelped: ProviderFamily<FPAAccount, any FPALedger> { fpaRequired() }
    var fpaHelpedToo: ProviderFamily<FPAAccount, any FPALedger> { fpaRequired() }
    var fpaHelpedOne: Provider<any FPALedger> { fpaRequiredOne() }
    var fpaSloppyA: ProviderFamily<FPAAccount, any FPALedger> { fpaSloppy() }
    var fpaSloppyB: ProviderFamily<FPAAccount, any FPALedger> { fpaSloppy() }

    var fpaCollidingLedger: ProviderFamily<FPACollidingAccount, Int> { unimplemented() }

    /// An app-wide singleton built from one account's ledger.
    var fpaAliceStatement: Provider<FPAStatement> {
        singleton { FPAStatement(ledger: self.fpaLedger(FPAAccount(1))) }
    }
    /// A request's statement, built in the scope from the scope's ledger.
    var fpaScopedStatement: Provider<FPAStatement> {
        scoped { FPAStatement(ledger: self.fpaLedger(FPAAccount(1))) }
    }
    /// A placeholder that resolves other registrations, and its own family for another
    /// argument, while it is built.
    var fpaSourceLabel: Provider<String> { singleton { "label" } }
    var fpaChainOrEmpty: ProviderFamily<FPAAccount, any FPALedger> {
        unimplemented(placeholder: { account in
            let inner: (any FPALedger)? = account.raw > 0 ? self.fpaChainOrEmpty(FPAAccount(account.raw - 1)) : nil
            return FPABuiltLedger(account: account, source: "empty " + self.fpaSourceLabel(), inner: inner)
        })
    }
}

/// An object of a screen that reads two accounts' ledgers.
final class FPAStatementModel {
    @Dependency(\.fpaLedger[FPAAccount(1)]) var alice
    @Dependency(\.fpaLedger[FPAAccount(2)]) var bob
    init() {}
}

/// An app-wide object that reads a ledger lazily, through a property.
final class FPALazyReader: @unchecked Sendable {
    @Dependency(\.fpaLedger[FPAAccount(1)]) var ledger
}

extension DependencyContainer {
    var fpaLazyReader: Provider<FPALazyReader> { singleton { FPALazyReader() } }
}

private let alice = FPAAccount(1)
private let bob = FPAAccount(2)

private func occurrences(of needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
}

@Suite struct FamilyPlaceholderAttackTests {
    // MARK: - Overload resolution

    @Test func theProviderFormsAreStillPickedByTheirResultType() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaPlain()
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaPlain is not implemented in this module: supply it with container.override(\\.fpaPlain) { … }"), "\(output)")
        #expect(!output.contains("argument in"), "\(output)")
    }

    @Test func aGenericHelpersProviderIsAProviderAndItsFamiliesAreTwo() async {
        let helpedOne = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaHelpedOne()
        }
        #expect(standardError(of: helpedOne).contains("container.override(\\.fpaHelpedOne) { … }"), "\(standardError(of: helpedOne))")
        // Two properties of a forwarding helper are two registrations: supplying one
        // leaves the other a placeholder.
        let container = DependencyContainer()
        container.override(\.fpaHelped) { account in FPABuiltLedger(account: account, source: "helped") }
        #expect(container.fpaHelped(alice).source == "helped")
        let other = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.fpaHelped) { account in FPABuiltLedger(account: account, source: "helped") }
            _ = container.fpaHelpedToo(FPAAccount(1))
        }
        #expect(standardError(of: other).contains("fpaHelpedToo is not implemented in this module: supply it with container.override(\\.fpaHelpedToo) { argument in … }"), "\(standardError(of: other))")
    }

    @Test func aProviderOfAFunctionWithAClosurePlaceholderIsStillTheProviderForm() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let function = DependencyContainer().fpaPlainFunction()
            precondition(function(FPAAccount(3)) == "fn 3")
            precondition(DependencyContainer().fpaPlainOrEmpty() == "empty")
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaPlainFunction is not implemented in this module, so its placeholder was used: supply it with container.override(\\.fpaPlainFunction) { … }"), "\(output)")
        #expect(!output.contains("argument in"), "\(output)")
    }

    @Test func aStringArgumentIsNotTakenForTheName() async {
        let container = DependencyContainer()
        container.override(\.fpaByName) { name in "hello \(name)" }
        container.override(\.fpaByName["ada"]) { "just ada" }
        #expect(container.fpaByName("bob") == "hello bob")
        // A String built at run time is the same argument as the literal.
        #expect(container.fpaByName(String(["a", "d", "a"])) == "just ada")
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaByName("customName")
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaByName is not implemented in this module: supply it with container.override(\\.fpaByName) { argument in … }"), "\(output)")
        #expect(output.contains("FamilyPlaceholderAttackTests.swift:\(DependencyContainer.fpaByNameLine):"), "\(output)")
        #expect(!output.contains("customName is not"), "\(output)")
    }

    @Test func aCustomNameNamesTheFamilyInTheStopAndTheReport() async {
        let stop = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaRenamed(FPAAccount(1))
        }
        let output = standardError(of: stop)
        #expect(output.contains("customLedger is not implemented in this module: supply it with container.override(\\.fpaRenamed) { argument in … }"), "\(output)")
        #expect(output.contains("FamilyPlaceholderAttackTests.swift:\(DependencyContainer.fpaRenamedLine):"), "\(output)")
        let named = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaByNameRenamed("x")
        }
        #expect(standardError(of: named).contains("named is not implemented in this module: supply it with container.override(\\.fpaByNameRenamed) { argument in … }"), "\(standardError(of: named))")
        let report = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            _ = DependencyContainer().fpaRenamedOrEmpty(FPAAccount(1))
            precondition(seen.values.map(\.dependency) == ["customLedgerOrEmpty"], "\(seen.values.map(\.dependency))")
            precondition(seen.values[0].message.contains("container.override(\\.fpaRenamedOrEmpty) { argument in … }"), seen.values[0].message)
        }
        _ = report
    }

    // MARK: - Messages of subscripts

    @Test func aFamilyInASubscriptIsNamedAsItsKeyPath() async {
        let labeled = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[fpaBank: "north"](FPAAccount(1))
        }
        #expect(standardError(of: labeled).contains("subscript(fpaBank:) is not implemented in this module: supply it with container.override(\\.[fpaBank: …]) { argument in … }"), "\(standardError(of: labeled))")
        let unlabeled = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[FPAShard(raw: 1)](FPAAccount(1))
        }
        #expect(standardError(of: unlabeled).contains("container.override(\\.[…]) { argument in … }"), "\(standardError(of: unlabeled))")
        let mixed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer()[fpaPair: 1, 2](FPAAccount(1))
        }
        #expect(standardError(of: mixed).contains("container.override(\\.[fpaPair: …, …]) { argument in … }"), "\(standardError(of: mixed))")
    }

    // MARK: - Every road to a stop names the family

    @Test func aPropertyOfOneArgumentStopsNamingTheFamily() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let model = FPAStatementModel()
            model.$alice.container = DependencyContainer()
            _ = model.alice
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module: supply it with container.override(\\.fpaLedger) { argument in … }"), "\(output)")
        #expect(output.contains("FamilyPlaceholderAttackTests.swift:\(DependencyContainer.fpaLedgerLine):"), "\(output)")
    }

    @Test func aDependentsConstructionStopsNamingTheFamily() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = DependencyContainer().fpaAliceStatement()
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module: supply it with container.override(\\.fpaLedger) { argument in … }"), "\(output)")
        #expect(output.contains("FamilyPlaceholderAttackTests.swift:\(DependencyContainer.fpaLedgerLine):"), "\(output)")
    }

    @Test func aTaskAndADecoratedArgumentStopNamingTheFamily() async {
        let inTask = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await Task.detached { _ = DependencyContainer().fpaLedger(FPAAccount(4)) }.value
        }
        #expect(standardError(of: inTask).contains("container.override(\\.fpaLedger) { argument in … }"), "\(standardError(of: inTask))")
        let decorated = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.decorate(\.fpaLedger[FPAAccount(1)]) { $0 }
            _ = container.fpaLedger(FPAAccount(1))
        }
        #expect(standardError(of: decorated).contains("container.override(\\.fpaLedger) { argument in … }"), "\(standardError(of: decorated))")
    }

    // MARK: - Scopes and the hints of the stop

    /// A request scope overrides one argument, and the app container resolves it: the stop
    /// says a scope overrides it (the behaviour of placeholder providers).
    @Test func theAppStopsAndSaysAScopeOverridesTheArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.fpaLedger[FPAAccount(1)]) { FPABuiltLedger(account: FPAAccount(1), source: "request") }
            _ = app.fpaLedger(FPAAccount(1))
            withExtendedLifetime(request) {}
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module"), "\(output)")
        #expect(output.contains("A scope of this container overrides it"), "\(output)")
    }

    /// The same with the whole family overridden in the scope, the way an app supplies it.
    @Test func theAppStopsAndSaysAScopeOverridesTheFamily() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "request") }
            _ = app.fpaLedger(FPAAccount(1))
            withExtendedLifetime(request) {}
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module"), "\(output)")
        #expect(output.contains("A scope of this container overrides it"), "\(output)")
    }

    /// An app-wide object's property read lazily resolves from the app container: the scope's
    /// family override is out of its reach, and the stop says why.
    @Test func aLazyPropertyOfAnAppWideObjectSaysWhyTheScopesFamilyOverrideMissedIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "request") }
            _ = request.fpaLazyReader().ledger
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module"), "\(output)")
        #expect(output.contains("A scope of this container overrides it"), "\(output)")
    }

    @Test func anAppWideDependentAskedForByAScopeStopsWithTheHint() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "request") }
            _ = request.fpaAliceStatement()
        }
        let output = standardError(of: result)
        #expect(output.contains("container.override(\\.fpaLedger) { argument in … }"), "\(output)")
        #expect(output.contains("It was asked for while building fpaAliceStatement, which is app-wide"), "\(output)")
    }

    @Test func aRequestOverridesTheFamilyWhileTheAppSuppliesAnother() {
        let app = DependencyContainer()
        let builds = FPACounts()
        app.override(\.fpaLedger) { account in
            builds.bump("app \(account.raw)")
            return FPABuiltLedger(account: account, source: "app")
        }
        let request = DependencyContainer(scopeOf: app)
        let other = DependencyContainer(scopeOf: app)
        request.override(\.fpaLedger) { account in
            builds.bump("request \(account.raw)")
            return FPABuiltLedger(account: account, source: "request")
        }
        #expect(request.fpaLedger(alice).source == "request")
        #expect(request.fpaLedger(alice) === request.fpaLedger(alice))
        #expect(other.fpaLedger(alice).source == "app")
        #expect(app.fpaLedger(alice).source == "app")
        #expect(other.fpaLedger(alice) === app.fpaLedger(alice), "a scope shares the app's instance")
        // A scoped registration reads the request's; a singleton built from what the
        // request overrides is the request's own (Scopes.md), the other request shares the app's.
        #expect(request.fpaScopedStatement().ledger.source == "request")
        #expect(other.fpaScopedStatement().ledger.source == "app")
        #expect(request.fpaAliceStatement().ledger.source == "request")
        #expect(other.fpaAliceStatement().ledger.source == "app")
        #expect(other.fpaAliceStatement() === app.fpaAliceStatement())
        #expect(builds.all == ["app 1": 1, "request 1": 1], "\(builds.all)")
        // A request that overrides one argument takes the app's family for the others.
        let third = DependencyContainer(scopeOf: app)
        third.override(\.fpaLedger[bob]) { FPABuiltLedger(account: bob, source: "third") }
        #expect(third.fpaLedger(bob).source == "third")
        #expect(third.fpaLedger(alice) === app.fpaLedger(alice))
        // Ending the request's override brings the app's back, for the request.
        request.reset(\.fpaLedger)
        #expect(request.fpaLedger(alice) === app.fpaLedger(alice))
        #expect(request.fpaScopedStatement().ledger.source == "app")
        #expect(request.fpaAliceStatement() === app.fpaAliceStatement())
    }

    /// The control of the lazy property below: with one argument overridden in the scope,
    /// the hint is there.
    @Test func aLazyPropertyOfAnAppWideObjectSaysWhyTheScopesArgumentOverrideMissedIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            let request = DependencyContainer(scopeOf: app)
            request.override(\.fpaLedger[FPAAccount(1)]) { FPABuiltLedger(account: FPAAccount(1), source: "request") }
            _ = request.fpaLazyReader().ledger
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger is not implemented in this module"), "\(output)")
        #expect(output.contains("A scope of this container overrides it"), "\(output)")
    }

    // MARK: - Overrides of the family and of arguments in parent and child

    @Test func argumentAndFamilyOverridesAcrossParentAndChild() {
        let parent = DependencyContainer()
        let child = DependencyContainer(parent: parent)
        parent.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "parent family") }
        parent.override(\.fpaLedger[alice]) { FPABuiltLedger(account: alice, source: "parent alice") }
        #expect(child.fpaLedger(alice).source == "parent alice")
        #expect(child.fpaLedger(bob).source == "parent family")
        child.override(\.fpaLedger[bob]) { FPABuiltLedger(account: bob, source: "child bob") }
        #expect(child.fpaLedger(bob).source == "child bob")
        #expect(parent.fpaLedger(bob).source == "parent family")
        child.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "child family") }
        // The child's own family wins over the parent's argument; its own argument over its family.
        #expect(child.fpaLedger(alice).source == "child family")
        #expect(child.fpaLedger(bob).source == "child bob")
        #expect(child.fpaLedger(FPAAccount(3)).source == "child family")
        #expect(parent.fpaLedger(alice).source == "parent alice")
        // Resetting one argument in the child falls back to the child's family.
        child.reset(\.fpaLedger[bob])
        #expect(child.fpaLedger(bob).source == "child family")
        // Resetting the child's family falls back to the parent's overrides.
        child.reset(\.fpaLedger)
        #expect(child.fpaLedger(alice).source == "parent alice")
        #expect(child.fpaLedger(bob).source == "parent family")
        // Resetting the parent's argument: the parent's family again, in both.
        parent.reset(\.fpaLedger[alice])
        #expect(parent.fpaLedger(alice).source == "parent family")
        #expect(child.fpaLedger(alice).source == "parent family")
    }

    @Test func resettingAnArgumentWithOnlyTheFamilyOverriddenRebuildsItFromTheFamily() {
        let container = DependencyContainer()
        let builds = FPACounts()
        container.override(\.fpaLedger) { account in
            builds.bump("\(account.raw)")
            return FPABuiltLedger(account: account, source: "family")
        }
        let first = container.fpaLedger(alice)
        let bobs = container.fpaLedger(bob)
        container.reset(\.fpaLedger[alice])
        let second = container.fpaLedger(alice)
        #expect(second.source == "family")
        #expect(container.fpaLedger(bob) === bobs, "resetting alice keeps bob")
        #expect(builds["1"] <= 2 && builds["2"] == 1, "\(builds.all)")
        _ = first
    }

    @Test func resettingTheFamilyOrTheOnlyArgumentOverrideBringsTheStopBack() async {
        let family = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
            container.override(\.fpaLedger[FPAAccount(1)]) { FPABuiltLedger(account: FPAAccount(1), source: "alice") }
            precondition(container.fpaLedger(FPAAccount(1)).source == "alice")
            container.reset(\.fpaLedger)
            _ = container.fpaLedger(FPAAccount(2))
        }
        #expect(standardError(of: family).contains("container.override(\\.fpaLedger) { argument in … }"), "\(standardError(of: family))")
        let argument = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            container.override(\.fpaLedger[FPAAccount(1)]) { FPABuiltLedger(account: FPAAccount(1), source: "alice") }
            precondition(container.fpaLedger(FPAAccount(1)).source == "alice")
            container.reset(\.fpaLedger[FPAAccount(1)])
            _ = container.fpaLedger(FPAAccount(1))
        }
        #expect(standardError(of: argument).contains("container.override(\\.fpaLedger) { argument in … }"), "\(standardError(of: argument))")
        let childReset = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let parent = DependencyContainer()
            parent.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "parent") }
            let child = DependencyContainer(parent: parent)
            child.reset(\.fpaLedger)
            child.reset(\.fpaLedger[FPAAccount(1)])
            precondition(child.fpaLedger(FPAAccount(1)).source == "parent")
        }
        _ = childReset
    }

    @Test func instanceIfBuiltNeverBuildsThePlaceholder() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            precondition(container.instanceIfBuilt(\.fpaLedger[FPAAccount(1)]) == nil)
            precondition(container.instanceIfBuilt(\.fpaLedgerOrEmpty[FPAAccount(1)]) == nil)
            container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
            precondition(container.instanceIfBuilt(\.fpaLedger[FPAAccount(1)]) == nil)
            let built = container.fpaLedger(FPAAccount(1))
            precondition(container.instanceIfBuilt(\.fpaLedger[FPAAccount(1)]) === built)
            precondition(container.instanceIfBuilt(\.fpaLedger[FPAAccount(2)]) == nil)
        }
        #expect(!standardError(of: result).contains("placeholder was used"), "\(standardError(of: result))")
    }

    @Test func propertiesOfArgumentsReadTheirOwnArgument() {
        let container = DependencyContainer()
        container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
        container.override(\.fpaLedger[bob]) { FPABuiltLedger(account: bob, source: "bob") }
        let model = FPAStatementModel()
        model.$alice.container = container
        model.$bob.container = container
        #expect(model.alice.account == alice && model.alice.source == "family")
        #expect(model.bob.account == bob && model.bob.source == "bob")
        #expect(model.alice === container.fpaLedger(alice))
    }

    // MARK: - Overrides that resolve the family

    @Test func anOverrideThatResolvesTheFamilyForAnotherArgumentBuildsEachOnce() {
        let container = DependencyContainer()
        let builds = FPACounts()
        container.override(\.fpaLedger) { [unowned container] account in
            builds.bump("\(account.raw)")
            let inner: (any FPALedger)? = account.raw > 0 ? container.fpaLedger(FPAAccount(account.raw - 1)) : nil
            return FPABuiltLedger(account: account, source: "chain", inner: inner)
        }
        let top = container.fpaLedger(FPAAccount(150))
        var link: (any FPALedger)? = top
        var depth = 0
        while let current = link as? FPABuiltLedger {
            #expect(current === container.fpaLedger(current.account))
            link = current.inner
            depth += 1
        }
        #expect(depth == 151)
        #expect(builds.all.count == 151 && builds.all.values.allSatisfy { $0 == 1 }, "\(builds.all.filter { $0.value != 1 })")
    }

    @Test func aCycleAcrossTwoArgumentsStops() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cycle across two arguments of a family placeholder")
            let container = DependencyContainer()
            container.override(\.fpaLedger) { [unowned container] account in
                let other = FPAAccount(account.raw == 1 ? 2 : 1)
                return FPABuiltLedger(account: account, source: "cycle", inner: container.fpaLedger(other))
            }
            _ = container.fpaLedger(FPAAccount(1))
        }
        let output = standardError(of: result)
        #expect(output.contains("fpaLedger"), "\(output)")
        #expect(output.localizedCaseInsensitiveContains("circular") || output.localizedCaseInsensitiveContains("cycle"), "\(output)")
    }

    // MARK: - Placeholders

    @Test func thePlaceholderOfADefaultReporterIsWrittenOncePerContainerAndArgument() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            for _ in 0..<3 {
                _ = container.fpaLedgerOrEmpty(FPAAccount(1))
                _ = container.fpaLedgerOrEmpty(FPAAccount(2))
            }
            let child = DependencyContainer(parent: container)
            _ = child.fpaLedgerOrEmpty(FPAAccount(1))
            _ = child.fpaLedgerOrEmpty(FPAAccount(1))
        }
        let output = standardError(of: result)
        #expect(occurrences(of: "fpaLedgerOrEmpty is not implemented in this module, so its placeholder was used: supply it with container.override(\\.fpaLedgerOrEmpty) { argument in … }", in: output) == 3, "\(output)")
    }

    /// Two requests and the app: the placeholder is a singleton family's instance, which
    /// the scopes share with the app, so it is built and reported once per argument.
    @Test func scopesShareTheAppsPlaceholderAndItsReport() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let app = DependencyContainer()
            let first = DependencyContainer(scopeOf: app)
            let second = DependencyContainer(scopeOf: app)
            let one = first.fpaLedgerOrEmpty(FPAAccount(1))
            let two = second.fpaLedgerOrEmpty(FPAAccount(1))
            precondition(one === two && one === app.fpaLedgerOrEmpty(FPAAccount(1)))
            precondition(seen.values.count == 1, "\(seen.values.count) reports: \(seen.values.map(\.message))")
        }
        _ = result
    }

    @Test func aPlaceholderThatResolvesItsOwnFamilyAndOthersIsReportedForEachArgument() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("a placeholder that resolves its family")
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let container = DependencyContainer()
            let top = container.fpaChainOrEmpty(FPAAccount(3)) as! FPABuiltLedger
            precondition(top.source == "empty label")
            precondition((top.inner as! FPABuiltLedger).inner != nil)
            precondition(container.fpaChainOrEmpty(FPAAccount(1)) === (top.inner as! FPABuiltLedger).inner)
            precondition(seen.values.count == 4, "\(seen.values.count)")
            precondition(seen.values.allSatisfy { $0.dependency == "fpaChainOrEmpty" })
            // An override replaces every argument, with no report.
            container.override(\.fpaChainOrEmpty) { account in FPABuiltLedger(account: account, source: "live") }
            precondition(container.fpaChainOrEmpty(FPAAccount(3)).source == "live")
            precondition(seen.values.count == 4)
        }
        _ = result
    }

    /// A parent's override that comes after a child used the placeholder reaches the
    /// child; an argument override replaces that argument only, and nothing is reported again.
    @Test func aParentsLaterOverrideReplacesTheChildsPlaceholders() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let parent = DependencyContainer()
            let child = DependencyContainer(parent: parent)
            precondition(child.fpaLedgerOrEmpty(FPAAccount(1)).source == "empty")
            let bob = child.fpaLedgerOrEmpty(FPAAccount(2))
            precondition(bob.source == "empty" && seen.values.count == 2)
            parent.override(\.fpaLedgerOrEmpty[FPAAccount(1)]) { FPABuiltLedger(account: FPAAccount(1), source: "alice") }
            precondition(child.fpaLedgerOrEmpty(FPAAccount(1)).source == "alice")
            precondition(child.fpaLedgerOrEmpty(FPAAccount(2)) === bob, "bob's placeholder was dropped by alice's override")
            parent.override(\.fpaLedgerOrEmpty) { account in FPABuiltLedger(account: account, source: "family") }
            precondition(child.fpaLedgerOrEmpty(FPAAccount(2)).source == "family")
            precondition(child.fpaLedgerOrEmpty(FPAAccount(1)).source == "alice")
            precondition(seen.values.count == 2, "\(seen.values.count)")
            parent.reset(\.fpaLedgerOrEmpty)
            precondition(child.fpaLedgerOrEmpty(FPAAccount(2)).source == "empty")
            precondition(seen.values.count == 3, "\(seen.values.count)")
        }
        _ = result
    }

    @Test func threadsReportEachArgumentsPlaceholderOnce() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            endProcessIfHung("threads resolving placeholders")
            let seen = Collected<DependencyIssue>()
            DependencyIssue.reporter = { seen.append($0) }
            let container = DependencyContainer()
            let instances = FPAInstances()
            onThreadsReleasedTogether(8) { index in
                for round in 0..<200 {
                    let account = FPAAccount((index * 7 + round) % 16)
                    instances.note(container.fpaLedgerOrEmpty(account))
                }
            }
            precondition(seen.values.count == 16, "\(seen.values.count) reports")
            precondition(instances.distinctPerAccount == 1, "\(instances.distinctPerAccount)")
        }
        _ = result
    }

    // MARK: - Many threads, many arguments

    @Test func threadsResolvingArgumentsAfterAnOverrideBuildEachOncePerContainer() async {
        let app = DependencyContainer()
        let child = DependencyContainer(parent: app)
        let scope = DependencyContainer(scopeOf: app)
        let builds = FPACounts()
        app.override(\.fpaLedger) { account in
            builds.bump("\(account.raw)")
            return FPABuiltLedger(account: account, source: "live")
        }
        let instances = FPAInstances()
        let wrong = Collected<String>()
        let ended = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<400 {
                // Equal arguments on every thread, and arguments only this thread asks for.
                let shared = FPAAccount(round % 32)
                let own = FPAAccount(1_000 + index * 1_000 + round % 50)
                for account in [shared, own] {
                    let resolver = [app, child, scope][(index + round) % 3]
                    let ledger = resolver.fpaLedger(account)
                    if ledger.account != account { wrong.append("\(ledger.account) for \(account)") }
                    instances.note(ledger, in: resolver === child ? "child" : "app")
                }
            }
        }
        #expect(ended)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        #expect(instances.distinctPerAccount == 1, "one instance per argument and container")
        // The app (and the scope that shares its instances) builds each argument once, the child once.
        let counts = builds.all
        #expect(counts.count == 32 + 8 * 50)
        let tooMany = counts.filter { $0.value > 2 }
        #expect(tooMany.isEmpty, "\(tooMany)")
        for raw in 0..<32 {
            #expect(builds["\(raw)"] == 2, "argument \(raw) built \(builds["\(raw)"]) times for app and child")
        }
    }

    /// Each argument's override resolves the one below it: threads that ask for
    /// overlapping chains at once wait for each other's constructions, and each argument
    /// is still built once, with the one instance below it.
    @Test func threadsBuildingOverlappingChainsOfArgumentsBuildEachOnce() async {
        let container = DependencyContainer()
        let builds = FPACounts()
        container.override(\.fpaLedger) { [unowned container] account in
            builds.bump("\(account.raw)")
            let inner: (any FPALedger)? = account.raw % 25 == 0 ? nil : container.fpaLedger(FPAAccount(account.raw - 1))
            return FPABuiltLedger(account: account, source: "chain", inner: inner)
        }
        container.override(\.fpaLedger[FPAAccount(60)]) { FPABuiltLedger(account: FPAAccount(60), source: "own") }
        let wrong = Collected<String>()
        let ended = await concurrentlyOffThePool(threads: 8) { index in
            for round in 0..<60 {
                let raw = (index * 37 + round * 11) % 200
                let ledger = container.fpaLedger(FPAAccount(raw)) as! FPABuiltLedger
                if ledger.account.raw != raw { wrong.append("\(ledger.account.raw) for \(raw)") }
                if let inner = ledger.inner, inner !== container.fpaLedger(FPAAccount(raw - 1)) {
                    wrong.append("inner of \(raw)")
                }
            }
        }
        #expect(ended)
        #expect(wrong.values.isEmpty, "\(wrong.values.prefix(5))")
        let counts = builds.all
        #expect(counts.values.allSatisfy { $0 == 1 }, "\(counts.filter { $0.value != 1 })")
        #expect(counts["60"] == nil, "argument 60 has its own override")
        #expect(container.fpaLedger(FPAAccount(61)).source == "chain")
        #expect((container.fpaLedger(FPAAccount(61)) as! FPABuiltLedger).inner?.source == "own")
    }

    @Test func aDecorationOfOneArgumentWrapsTheFamilysOverrideForThatArgumentOnly() {
        let container = DependencyContainer()
        container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
        container.decorate(\.fpaLedger[alice]) { ledger in FPABuiltLedger(account: ledger.account, source: "decorated", inner: ledger) }
        #expect(container.fpaLedger(alice).source == "decorated")
        #expect((container.fpaLedger(alice) as! FPABuiltLedger).inner?.source == "family")
        #expect(container.fpaLedger(bob).source == "family")
        container.override(\.fpaLedger[alice]) { FPABuiltLedger(account: alice, source: "own") }
        #expect((container.fpaLedger(alice) as! FPABuiltLedger).inner?.source == "own")
    }

    @Test func thousandsOfArgumentsAndArgumentOverrides() {
        let container = DependencyContainer()
        let builds = FPACounts()
        container.override(\.fpaLedger) { account in
            builds.bump("\(account.raw)")
            return FPABuiltLedger(account: account, source: "family")
        }
        let count = 5_000
        var first: [ObjectIdentifier] = []
        first.reserveCapacity(count)
        for raw in 0..<count { first.append(ObjectIdentifier(container.fpaLedger(FPAAccount(raw)))) }
        for raw in 0..<count {
            if ObjectIdentifier(container.fpaLedger(FPAAccount(raw))) != first[raw] {
                Issue.record("argument \(raw) built again")
                break
            }
        }
        #expect(Set(first).count == count)
        #expect(builds.all.count == count && builds.all.values.allSatisfy { $0 == 1 })
        // A thousand arguments overridden one by one, then the family reset at once.
        for raw in 0..<1_000 {
            container.override(\.fpaLedger[FPAAccount(raw)]) { FPABuiltLedger(account: FPAAccount(raw), source: "own") }
        }
        #expect(container.fpaLedger(FPAAccount(999)).source == "own")
        #expect(container.fpaLedger(FPAAccount(1_000)).source == "family")
        container.reset(\.fpaLedger)
        container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "again") }
        #expect((0..<1_100).allSatisfy { container.fpaLedger(FPAAccount($0)).source == "again" })
    }

    @Test func argumentsWithOneHashAreToldApartByEquality() {
        let container = DependencyContainer()
        let builds = FPACounts()
        container.override(\.fpaCollidingLedger) { account in
            builds.bump("\(account.raw)")
            return account.raw * 10
        }
        container.override(\.fpaCollidingLedger[FPACollidingAccount(raw: 7)]) { -7 }
        for raw in 0..<300 {
            let expected = raw == 7 ? -7 : raw * 10
            #expect(container.fpaCollidingLedger(FPACollidingAccount(raw: raw)) == expected)
        }
        for raw in 0..<300 where raw != 7 { _ = container.fpaCollidingLedger(FPACollidingAccount(raw: raw)) }
        #expect(builds.all.count == 299 && builds.all.values.allSatisfy { $0 == 1 })
    }

    // MARK: - Tracers

    @Test func aTracerSeesEachArgumentBuiltFromTheOverrideThenCached() {
        let container = DependencyContainer()
        let events = Collected<ResolutionEvent>()
        container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
        container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
        container.override(\.fpaLedger[bob]) { FPABuiltLedger(account: bob, source: "bob") }
        _ = container.fpaLedger(alice)
        _ = container.fpaLedger(alice)
        _ = container.fpaLedger(bob)
        _ = container.fpaAliceStatement()
        container.tracer = nil
        let seen = events.values.map { "\($0.name) \($0.outcome.rawValue) \($0.depth) \($0.scope)" }
        #expect(seen == [
            "fpaLedger built from override 0 singleton",
            "fpaLedger cached 0 singleton",
            "fpaLedger built from override 0 singleton",
            "fpaAliceStatement built 0 singleton",
            "fpaLedger cached 1 singleton",
        ], "\(seen)")
    }

    @Test func aTracerSeesThePlaceholderBuiltAndTheStopIsNotReachedThroughIt() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let events = Collected<ResolutionEvent>()
            container.tracer = ResolutionTracer { batch in for event in batch { events.append(event) } }
            _ = container.fpaLedgerOrEmpty(FPAAccount(1))
            _ = container.fpaLedgerOrEmpty(FPAAccount(1))
            container.tracer = nil
            let seen = events.values.map { "\($0.name) \($0.outcome.rawValue)" }
            precondition(seen == ["fpaLedgerOrEmpty built", "fpaLedgerOrEmpty cached"], "\(seen)")
        }
        _ = result
    }

    // MARK: - The identity check of debug builds

    #if DEBUG
    @Test func argumentsOfAFamilyNeverShareOneRegistration() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.fpaLedger) { account in FPABuiltLedger(account: account, source: "family") }
            container.override(\.fpaLedger[alice]) { FPABuiltLedger(account: alice, source: "alice") }
            container.override(\.fpaLedger[bob]) { FPABuiltLedger(account: bob, source: "bob") }
            container.reset(\.fpaLedger[bob])
            container.decorate(\.fpaLedger[FPAAccount(3)]) { $0 }
            let model = FPAStatementModel()
            model.$alice.container = container
            model.$bob.container = container
            _ = model.alice
            _ = model.bob
            container.override(\.fpaByName["a"]) { "a" }
            container.override(\.fpaByName["b"]) { "b" }
            container.override(\.fpaByName) { $0 }
            container.reset(\.fpaLedger)
        }
        #expect(issues.isEmpty, "\(issues.map(\.message))")
    }

    /// Two banks of a family declared in a subscript share one family: the check says so.
    /// What it advises should fit a family.
    @Test func twoBanksOfAFamilyInASubscriptShareOneRegistration() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.[fpaBank: "north"]) { account in FPABuiltLedger(account: account, source: "north") }
            container.override(\.[fpaBank: "south"]) { account in FPABuiltLedger(account: account, source: "south") }
        }
        let merged = issues.filter { $0.message.contains("share one registration") }
        #expect(merged.count == 1, "\(issues.map(\.message))")
        // The second override replaced the first for every bank.
        #expect(container[fpaBank: "north"](alice).source == "south")
        #expect(
            !merged.contains { $0.message.contains("or declare a provider family") },
            "the registration already is a provider family, yet the advice says to declare one: \(merged.map(\.message))")
        #expect(
            merged.allSatisfy { $0.message.contains("a provider family in a subscript is one family for every argument") },
            "\(merged.map(\.message))")
    }

    @Test func aHelperThatDoesNotForwardIsStillToldToForward() {
        let container = DependencyContainer()
        let issues = reportedIssues(in: container) {
            container.override(\.fpaSloppyA) { account in FPABuiltLedger(account: account, source: "a") }
            container.override(\.fpaSloppyB) { account in FPABuiltLedger(account: account, source: "b") }
        }
        let merged = issues.filter { $0.message.contains("share one registration") }
        #expect(merged.count == 1, "\(issues.map(\.message))")
        #expect(merged.allSatisfy { $0.message.contains("must forward its caller's name") }, "\(merged.map(\.message))")
    }
    #endif
}

/// The instances handed out per account (and per container kind), by identity.
final class FPAInstances: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String: Set<ObjectIdentifier>] = [:]
    func note(_ ledger: any FPALedger, in place: String = "") {
        lock.lock()
        seen["\(place) \(ledger.account.raw)", default: []].insert(ObjectIdentifier(ledger))
        lock.unlock()
    }
    /// The largest number of distinct instances handed out for one account.
    var distinctPerAccount: Int {
        lock.lock()
        defer { lock.unlock() }
        return seen.values.map(\.count).max() ?? 0
    }
}
