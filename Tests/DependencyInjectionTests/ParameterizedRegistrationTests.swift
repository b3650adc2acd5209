import DependencyInjection
import Foundation
import Testing

final class ExchangeRate: Sendable {
    let value: Double
    init(value: Double) { self.value = value }
}

extension DependencyContainer {
    /// Counts down through itself: each argument is its own registration.
    subscript(countdown n: Int) -> Provider<Int> {
        factory(n) { n == 0 ? 0 : 1 + self[countdown: n - 1]() }
    }

    subscript(asyncCountdown n: Int) -> AsyncProvider<Int> {
        factory(n) { n == 0 ? 0 : 1 + (try await self[asyncCountdown: n - 1]()) }
    }

    /// Asks for itself with the same argument: a real cycle.
    subscript(echo n: Int) -> Provider<Int> {
        factory(n) { self[echo: n]() }
    }

    subscript(exchangeRate value: Double) -> Provider<ExchangeRate> {
        singleton(value) { ExchangeRate(value: value) }
    }
}

/// The argument of `factory(_:)` and `singleton(_:)` is part of the registration's key.
@Suite struct ParameterizedRegistrationTests {
    // MARK: - Factories keyed by their argument

    @Test func aRecursiveFactorySubscriptResolvesEveryArgumentDownToZero() {
        let container = DependencyContainer()
        #expect(container[countdown: 0]() == 0)
        #expect(container[countdown: 20]() == 20)
    }

    @Test func anAsyncRecursiveFactorySubscriptResolvesEveryArgumentDownToZero() async throws {
        let container = DependencyContainer()
        #expect(try await container[asyncCountdown: 20]() == 20)
    }

    @Test func overridingOneArgumentOfAFactoryDoesNotReachTheOthers() {
        let container = DependencyContainer()
        container.override(\.[countdown: 3]) { 100 }
        #expect(container[countdown: 3]() == 100)
        #expect(container[countdown: 2]() == 2)
        #expect(container[countdown: 5]() == 102)
    }

    @Test func aFactoryThatAsksForItsOwnArgumentIsStillACycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a factory cycle")
            _ = DependencyContainer()[echo: 1]()
        }
        let chain = CycleChain(result)
        #expect(chain?.namesEachRegistrationOnce == true, "\(standardError(of: result))")
        #expect(chain?.locatesEveryLink(in: "DependencyInjectionTests/ParameterizedRegistrationTests.swift") == true,
                "\(standardError(of: result))")
    }

    // MARK: - Arguments that are not equal to themselves

    @Test func aNaNArgumentStopsWithAMessageNamingTheRegistrationAndTheArgument() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a NaN argument")
            let container = DependencyContainer()
            _ = container[exchangeRate: .nan]()
            _ = container[exchangeRate: .nan]()
        }
        let output = standardError(of: result)
        #expect(output.contains("is not equal to itself"), "\(output)")
        #expect(output.contains("exchangeRate"), "\(output)")
        #expect(output.contains("nan"), "\(output)")
    }
}
