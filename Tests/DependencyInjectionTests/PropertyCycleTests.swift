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

/// Reads its own property while that property resolves: a cycle through one wrapper.
final class SelfReadingHolder: @unchecked Sendable {
    @Dependency(\.selfReader) var node
}

extension DependencyContainer {
    var selfReader: Provider<Node> {
        factory {
            _ = (self.getValue(forKey: "holder") as SelfReadingHolder?)?.node
            return Node()
        }
    }
}

/// Reads its own property in the getter of the provider the property names, before the
/// getter makes the provider: a cycle that runs no registration's closure.
final class GetterReadingHolder: @unchecked Sendable {
    @Dependency(\.getterReader) var node
}

extension DependencyContainer {
    var getterReader: Provider<Node> {
        _ = (getValue(forKey: "holder") as GetterReadingHolder?)?.node
        return singleton { Node() }
    }
}

/// Holds a property whose registration needs `crossSingleton`, whose factory reads the
/// property back: a cycle that two threads can enter from both ends.
final class CrossHolder: @unchecked Sendable {
    @Dependency(\.crossFactory) var node
}

/// Orders the two threads of the cross-thread property cycle.
final class CrossCycleSignals: Sendable {
    /// The first thread is building `crossSingleton`.
    let singletonStarted = DispatchSemaphore(value: 0)
    /// The second thread has claimed the property and is resolving `crossFactory`.
    let propertyClaimed = DispatchSemaphore(value: 0)
    init() {}
}

extension DependencyContainer {
    var crossFactory: Provider<Node> {
        factory {
            (self.getValue(forKey: "signals") as CrossCycleSignals?)?.propertyClaimed.signal()
            _ = self.crossSingleton()
            return Node()
        }
    }
    var crossSingleton: Provider<Node> {
        singleton {
            let signals: CrossCycleSignals? = self.getValue(forKey: "signals")
            signals?.singletonStarted.signal()
            signals?.propertyClaimed.wait()
            _ = (self.getValue(forKey: "holder") as CrossHolder?)?.node
            return Node()
        }
    }
}

/// A `@Dependency` property that is read back while it resolves stops with the chain, on
/// one thread or across two; naming the property runs no user code (over a plain computed
/// property, re-evaluating it crashed).
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
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        let property = "@Dependency in GreetingBanner"
        #expect(chain.names.first == property, "\(chain)")
        #expect(chain.names.last == property, "\(chain)")
        #expect(chain.namesEachRegistrationOnce, "\(chain)")
        #expect(chain.locatesEveryLink(in: "DependencyInjectionTests/PropertyCycleTests.swift"), "\(chain)")
        #expect(chain.location(of: property)
                == "DependencyInjectionTests/PropertyCycleTests.swift:\(GreetingBanner.greetingLine)",
                "\(chain)")
    }

    @Test func readingAPropertyWhileItResolvesNamesTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { SelfReadingHolder() }
            container.setValue(holder, forKey: "holder")
            _ = holder.node
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["@Dependency in SelfReadingHolder", "selfReader", "@Dependency in SelfReadingHolder"],
            "\(cycle?.description ?? "")")
        #expect(cycle?.isCycle(cycle?.names ?? []) == true)
    }

    /// A provider's getter runs before the property's first read knows whether it must
    /// build; reading the property back there is a cycle all the same, named as one, not a
    /// recursion that overflows the stack.
    @Test func readingAPropertyInTheGetterOfItsProviderNamesTheChain() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a property cycle through a provider's getter")
            let container = DependencyContainer()
            let holder = DependencyContainer.withMain(container) { GetterReadingHolder() }
            container.setValue(holder, forKey: "holder")
            _ = holder.node
        }
        let cycle = CycleChain(result)
        #expect(cycle?.names == ["@Dependency in GetterReadingHolder", "@Dependency in GetterReadingHolder"],
            "\(standardError(of: result))")
    }

    // MARK: - Across threads

    /// Thread 1 builds `crossSingleton`, which reads the property; thread 2 is resolving
    /// the property, which needs `crossSingleton`. Each waits for the other. Semaphores
    /// make both threads be inside their half of the cycle before either closes it.
    @Test func aCycleAcrossThreadsThroughAPropertyStopsInsteadOfDeadlocking() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a cross-thread cycle through a property")
            let container = DependencyContainer()
            let signals = CrossCycleSignals()
            container.setValue(signals, forKey: "signals")
            let holder = DependencyContainer.withMain(container) { CrossHolder() }
            container.setValue(holder, forKey: "holder")
            Thread { _ = container.crossSingleton() }.start()
            signals.singletonStarted.wait()
            _ = holder.node  // one of the two threads stops the process
        }
        let chain = try #require(CycleChain(result), "\(standardError(of: result))")
        #expect(chain.namesEachRegistrationOnce, "\(chain)")
        #expect(Set(chain.names) == ["crossSingleton", "crossFactory", "@Dependency in CrossHolder"],
                "\(chain)")
        #expect(chain.locatesEveryLink(in: "DependencyInjectionTests/PropertyCycleTests.swift"), "\(chain)")
    }
}
