import DependencyInjection
import DependencyInjectionTesting
import Testing
#if canImport(XCTest)
import XCTest
#endif

// Promises of the testing product's doc comments and of its IsolatingTests article that
// no other test pinned. Fixture names start with `ext`.

/// The parent an outer suite names; a container of its own, so that no other default
/// (`mocks`, `default`) can pass for it.
private let extOuterParent = DependencyContainer()

/// The parent a suite nested in that one names.
private let extInnerParent = DependencyContainer()

/// A parent no test's container may get: named by a trait applied inside another one.
private let extIgnoredParent = DependencyContainer()

/// Appends `entry` to the list stored under `"extOrder"`, to count the configurations
/// that ran on a container.
private func extLog(_ entry: String, in container: DependencyContainer) {
    let order: [String] = container.getValue(forKey: "extOrder") ?? []
    container.setValue(order + [entry], forKey: "extOrder")
}

/// One trait value, put on a suite and again on a parameterized test in it.
private let extSharedTrait: DependenciesTrait = .dependencies { extLog("shared", in: $0) }

/// Every container a case of the parameterized test below ran in, kept alive so that no
/// two of them can share an identity.
private let extCaseContainers = Locked<[DependencyContainer]>([])

/// Promises of `DependenciesTrait` and of the IsolatingTests article:
///
/// 1. Sources/DependencyInjectionTesting/DependenciesTrait.swift:31-32: "The parent is
///    the one named by the innermost trait that names one, or `mocks`." A suite that
///    names a parent keeps it for a test whose own trait names none
///    (`SuiteParentTests`), and a nested suite's parent beats its outer suite's
///    (`SuiteParentTests.InnerSuiteParent`). Only a test's own parent over a suite without
///    one was pinned before.
/// 2. Sources/DependencyInjectionTesting/DependenciesTrait.swift:105-107 (`provideScope`):
///    "Called inside another test case's scope, it adds its configuration to that
///    scope's container instead of making one, and its parent is not used."
///    (`TraitInsideAnotherTests`)
/// 3. Sources/DependencyInjectionTesting/DependencyInjectionTesting.docc/Articles/IsolatingTests.md:124-126:
///    "Each case of a parameterized test gets a container of its own. One trait value may
///    be shared by a suite and tests in it; its configuration still runs once per test
///    case" — both at once, on a parameterized test (`SharedTraitParameterizedTests`).
/// 4. Sources/DependencyInjectionTesting/DependencyTestCase.swift:60-61
///    (`configureDependencies(_:)`): "Override it to install the overrides and values
///    every test of the class needs. Call `super` to keep a base class's configuration."
///    (`DerivedConfigurationTests`, XCTest)
/// 5. Sources/DependencyInjectionTesting/DependenciesTrait.swift:85 and 91-98: "`true`: on
///    a suite, the trait applies to every test in it, nested suites included." and
///    `scopeProvider(for:testCase:)`: "nothing for a suite or a test function as a
///    whole, so that every test case (every argument of a parameterized test) gets its own
///    container. … Returns: This trait for a test case, `nil` otherwise." Read here
///    through the public API itself (`scopeProviderIsTheTraitForACaseOnly`).
@Suite struct TestingProductPromiseTests {
    @Test func theFixturesParentsAreDistinct() {
        #expect(extOuterParent !== extInnerParent)
        #expect(extOuterParent !== DependencyContainer.mocks)
        #expect(extInnerParent !== DependencyContainer.mocks)
    }

    @Test(arguments: [1, 2]) func scopeProviderIsTheTraitForACaseOnly(argument: Int) throws {
        let test = try #require(Test.current)
        let testCase = try #require(Test.Case.current)
        for trait: DependenciesTrait in [.dependencies, .dependencies { _ in }, .dependencies(parent: .default)] {
            #expect(trait.isRecursive)
            #expect(trait.scopeProvider(for: test, testCase: nil) == nil)
            #expect(trait.scopeProvider(for: test, testCase: testCase) != nil)
        }
    }
}

// MARK: - 1. The innermost trait that names a parent

@Suite(.dependencies(parent: extOuterParent) { extLog("outer", in: $0) })
struct SuiteParentTests {
    @Test func aTestWithoutATraitOfItsOwnGetsTheSuitesParent() {
        let container = DependencyContainer.main
        #expect(container.parent === extOuterParent)
        #expect(container.getValue(forKey: "extOrder") == ["outer"])
    }

    @Test(.dependencies { extLog("test", in: $0) })
    func aTestTraitThatNamesNoParentKeepsTheSuitesParent() {
        let container = DependencyContainer.main
        #expect(container.parent === extOuterParent)
        #expect(container.parent !== DependencyContainer.mocks)
        #expect(container.getValue(forKey: "extOrder") == ["outer", "test"])
    }

    @Suite(.dependencies(parent: extInnerParent) { extLog("inner", in: $0) })
    struct InnerSuiteParent {
        @Test func theNestedSuitesParentBeatsTheOuterSuites() {
            let container = DependencyContainer.main
            #expect(container.parent === extInnerParent)
            #expect(container.getValue(forKey: "extOrder") == ["outer", "inner"])
        }

        @Test(.dependencies { extLog("test", in: $0) })
        func aTestTraitThatNamesNoParentKeepsTheNestedSuitesParent() {
            let container = DependencyContainer.main
            #expect(container.parent === extInnerParent)
            #expect(container.getValue(forKey: "extOrder") == ["outer", "inner", "test"])
        }
    }
}

// MARK: - 2. A trait applied inside another test case's scope

@Suite struct TraitInsideAnotherTests {
    @Test(.dependencies) func itsParentIsNotUsed() async throws {
        let outer = DependencyContainer.main
        #expect(outer.parent === DependencyContainer.mocks)
        let trait: DependenciesTrait = .dependencies(parent: extIgnoredParent) {
            $0.setValue("ext-inner", forKey: "token")
        }
        let ran = Locked(false)
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current) {
            ran.withValue { $0 = true }
            #expect(DependencyContainer.main === outer)
            #expect(DependencyContainer.main.parent === DependencyContainer.mocks)
            #expect(DependencyContainer.main.parent !== extIgnoredParent)
            #expect(DependencyContainer.main.token == "ext-inner")
        }
        #expect(ran.value)
        #expect(outer.parent === DependencyContainer.mocks)
        #expect(outer.token == "ext-inner")   // configured the outer container itself
    }
}

// MARK: - 3. One trait on a suite and on a parameterized test

@Suite(extSharedTrait) struct SharedTraitParameterizedTests {
    @Test(extSharedTrait, arguments: 0..<4)
    func eachCaseGetsItsOwnContainerConfiguredOnce(argument: Int) {
        let container = DependencyContainer.main
        #expect(container.parent === DependencyContainer.mocks)
        #expect(container.getValue(forKey: "extOrder") == ["shared"])
        #expect((container.getValue(forKey: "extCase") as Int?) == nil)
        container.setValue(argument, forKey: "extCase")
        let sharedWithAnotherCase = extCaseContainers.withValue { seen in
            defer { seen.append(container) }
            return seen.contains { $0 === container }
        }
        #expect(!sharedWithAnotherCase, "two cases of one parameterized test shared a container")
    }
}

// MARK: - 4. `super.configureDependencies` keeps a base class's configuration

#if canImport(XCTest)
/// A base class of an app's tests: it has no tests of its own, only configuration.
class BaseConfiguredTestCase: DependencyTestCase {
    override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        container.override(\.httpClient) { StubHTTPClient("ext-base") }
        container.setValue("ext-base-token", forKey: "token")
        extLog("base", in: container)
    }
}

final class DerivedConfigurationTests: BaseConfiguredTestCase {
    override func configureDependencies(_ container: DependencyContainer) {
        super.configureDependencies(container)
        extLog("derived", in: container)
    }

    func testTheBaseClassConfigurationIsKept() {
        XCTAssertTrue(DependencyContainer.main === dependencies)
        XCTAssertEqual(dependencies.httpClient().name, "ext-base")
        XCTAssertEqual(dependencies.token, "ext-base-token")
        XCTAssertEqual(dependencies.getValue(forKey: "extOrder"), ["base", "derived"])
    }
}
#endif
