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

extension DependencyContainer {
    /// Passes `name` on but not the site: every property is one registration, under the
    /// name of the property that reached it.
    func uhcNamed<T: Sendable>(name: StaticString = #function, _ make: @escaping @Sendable () -> T) -> Provider<T> {
        singleton(name: name, make)
    }

    var uhcNamedAPIClient: Provider<UHCClient> { uhcNamed { UHCClient(host: "api", cdn: self.uhcNamedCDNClient()) } }
    var uhcNamedCDNClient: Provider<UHCClient> { uhcNamed { UHCClient(host: "cdn", cdn: nil) } }

    /// Passes the site on but not `name`: each property is a registration of its own, both
    /// named after the helper, and these two make a real cycle.
    func uhcSited<T: Sendable>(
        fileID: StaticString = #fileID, line: UInt = #line, column: UInt = #column, _ make: @escaping @Sendable () -> T
    ) -> Provider<T> {
        singleton(fileID: fileID, line: line, column: column, make)
    }

    var uhcSitedA: Provider<UHCClient> { uhcSited { UHCClient(host: "a", cdn: self.uhcSitedB()) } }
    var uhcSitedB: Provider<UHCClient> { uhcSited { UHCClient(host: "b", cdn: self.uhcSitedA()) } }

    /// A name given by hand that reads like a call, resolving itself.
    var uhcNamedByHand: Provider<UHCClient> {
        singleton(name: "session (region: eu)") { UHCClient(host: "eu", cdn: self.uhcNamedByHand()) }
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
        #expect(output.contains("-> uhcCached(_:)\nIf uhcCached(_:) is a helper that calls `singleton`, `factory` or `shared` for several properties"))
        #expect(output.contains("Give the helper the `name`, `fileID`, `line`, `column` and `isolation` parameters of the registration it calls, with the same defaults"))
        #expect(output.contains("and pass them all on"))
    }

    @Test func aHelperThatPassesOnlyTheNameOnStopsWithAMessageThatSaysBothNamesAreOneRegistration() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("namedHelper")
            _ = DependencyContainer().uhcNamedAPIClient()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: uhcNamedAPIClient (DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        // The chain keeps a line of its own: what reads it stops at the line's end.
        #expect(output.contains("-> uhcNamedCDNClient\nuhcNamedAPIClient and uhcNamedCDNClient are one registration: both are declared at DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        #expect(output.contains("a helper that passes `name` on but not `fileID`, `line` and `column`"))
        #expect(output.contains("`isolation`"))
    }

    @Test func aRealCycleBetweenTwoPropertiesOfAHelperThatPassesItsSiteOnGetsNoHint() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("sitedHelper")
            _ = DependencyContainer().uhcSitedA()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: uhcSited(fileID:line:column:_:) (DependencyInjectionTests/UnforwardedHelperCycleTests.swift:"))
        #expect(!output.contains("is a helper"))
        #expect(!output.contains("one registration"))
    }

    @Test func aNameGivenByHandThatReadsLikeACallGetsNoHint() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("namedByHand")
            _ = DependencyContainer().uhcNamedByHand()
        }
        let output = standardError(of: result)
        #expect(output.contains("Circular dependency: session (region: eu) ("))
        #expect(!output.contains("is a helper"))
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
