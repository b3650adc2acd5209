import DependencyInjection
import Foundation
import Testing

/// A banner whose greeting is a plain computed registration that reads the banner back.
final class GreetingBanner: @unchecked Sendable {
    static let greetingLine = #line + 1
    @Dependency(\.bannerGreeting) var greeting
    init() {}
}

extension DependencyContainer {
    /// Not a provider: a computed property that reads itself through the banner's property.
    var bannerGreeting: String {
        let banner: GreetingBanner? = getValue(forKey: "banner")
        return banner.map { "Hello, " + $0.greeting } ?? "Hello"
    }
}

/// A `@Dependency` property over a plain computed property that reads itself back stops
/// with the chain; naming the property runs no user code (re-evaluating it crashed).
@Suite struct PropertyCycleTests {
    // MARK: - Self-cycle through one wrapper

    @Test func aPlainPropertyThatReadsItselfThroughItsWrapperStopsWithTheChain() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property cycle")
            let container = DependencyContainer()
            let banner = DependencyContainer.withMain(container) { GreetingBanner() }
            container.setValue(banner, forKey: "banner")
            _ = banner.greeting
        }
        let chain = try #require(
            CycleChain(standardError: result?.standardErrorContent ?? []), "\(standardError(of: result))")
        let property = "@Dependency in GreetingBanner"
        #expect(chain.names.first == property, "\(chain)")
        #expect(chain.names.last == property, "\(chain)")
        #expect(chain.namesEachRegistrationOnce, "\(chain)")
        #expect(chain.locatesEveryLink(in: "DependencyInjectionTests/PropertyCycleTests.swift"), "\(chain)")
        #expect(chain.location(of: property)
                == "DependencyInjectionTests/PropertyCycleTests.swift:\(GreetingBanner.greetingLine)",
                "\(chain)")
    }
}
