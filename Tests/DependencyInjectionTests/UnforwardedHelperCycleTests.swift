import DependencyInjection
import Testing

// A helper that wraps `singleton` and does not pass its caller's site on makes every
// registration written with it one registration: one that resolves another through it
// resolves itself. The process stops as for any cycle, and the message says how to fix
// the helper.

final class UHCClient: Sendable {
    let host: String
    let cdn: UHCClient?
    init(host: String, cdn: UHCClient?) { (self.host, self.cdn) = (host, cdn) }
}

extension DependencyContainer {
    /// A helper as teams write them first: it forgets its caller's site.
    func uhcCached<T: Sendable>(_ make: @escaping @Sendable () -> T) -> Provider<T> {
        singleton(make)
    }

    var uhcAPIClient: Provider<UHCClient> { uhcCached { UHCClient(host: "api", cdn: self.uhcCDNClient()) } }
    var uhcCDNClient: Provider<UHCClient> { uhcCached { UHCClient(host: "cdn", cdn: nil) } }

    /// A registration declared as a function, resolving itself: a true cycle.
    func uhcSelfResolving() -> Provider<UHCClient> {
        singleton { UHCClient(host: "self", cdn: self.uhcSelfResolving()()) }
    }
}

extension DependencyContainer {
    /// The same helper, fixed as Registering dependencies shows.
    func uhcForwarded<T: Sendable>(
        name: StaticString = #function, fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column,
        _ make: @escaping @Sendable () -> T
    ) -> Provider<T> {
        singleton(name: name, fileID: fileID, line: line, column: column, make)
    }

    var uhcForwardedAPIClient: Provider<UHCClient> {
        uhcForwarded { UHCClient(host: "api", cdn: self.uhcForwardedCDNClient()) }
    }
    var uhcForwardedCDNClient: Provider<UHCClient> { uhcForwarded { UHCClient(host: "cdn", cdn: nil) } }

    /// A family declared as a function whose parameter is the registration's argument.
    func uhcChain(_ depth: Int) -> Provider<UHCClient> {
        singleton(depth) { UHCClient(host: "\(depth)", cdn: self.uhcChain(depth == 0 ? 1 : 0)()) }
    }
}

@Suite struct UnforwardedHelperCycleTests {
    @Test func aHelperThatDoesNotPassItsCallersSiteOnStopsWithAMessageThatSaysHowToFixIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("unforwardedHelper")
            _ = DependencyContainer().uhcAPIClient()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: uhcCached(_:) (DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        #expect(output.contains("If uhcCached(_:) is a helper that calls `singleton`, `factory` or `shared` for several properties"))
        #expect(output.contains("`name`, `fileID`, `line` and `column` parameters defaulting to `#function`, `#fileID`, `#line` and `#column`, and pass them on"))
    }

    @Test func theFixedHelperRegistersEachPropertyOnItsOwn() {
        let container = DependencyContainer()
        let api = container.uhcForwardedAPIClient()
        #expect(api.host == "api")
        #expect(api.cdn?.host == "cdn")
        #expect(api.cdn === container.uhcForwardedCDNClient())
    }

    @Test func aFunctionWithoutParametersThatResolvesItselfGetsNoHelperHint() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("selfResolving")
            _ = DependencyContainer().uhcSelfResolving()()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: uhcSelfResolving() (DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        #expect(output.contains("-> uhcSelfResolving()\n"))
        #expect(!output.contains("is a helper"))
    }

    @Test func aCycleThroughAFamilysArgumentsGetsNoHelperHint() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("familyCycle")
            _ = DependencyContainer().uhcChain(0)()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: uhcChain(_:) with 0 (DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        #expect(!output.contains("is a helper"))
    }
}
