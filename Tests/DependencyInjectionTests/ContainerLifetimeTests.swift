import DependencyInjection
import Foundation
import Testing

/// A singleton with an injected property, as app services are written.
final class ReportingService: @unchecked Sendable {
    @Dependency(\.httpClient) var client
    init() {}
}

/// A view model created by app code, outside any construction.
final class ReportsViewModel {
    @Dependency(\.httpClient) var client
    init() {}
}

extension DependencyContainer {
    var reportingService: Provider<ReportingService> { singleton { ReportingService() } }
}

/// A singleton that injects an async provider, to await where it needs the database.
final class AsyncDatabaseUser: @unchecked Sendable {
    @Dependency(\.asyncDatabase) var database
    init() {}
}

extension DependencyContainer {
    var asyncDatabaseUser: Provider<AsyncDatabaseUser> { singleton { AsyncDatabaseUser() } }
}

/// A container and what it cached go away with the last reference to the container,
/// even when a cached object's `@Dependency` property resolves from it.
@Suite struct ContainerLifetimeTests {
    // MARK: - Properties of cached objects

    /// The property is created while `container` builds the singleton and takes
    /// `container` (the task-local main): `container` caches the object, so the property
    /// must not keep `container` alive.
    @Test func aSingletonsDependencyPropertyDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            DependencyContainer.withMain(container) {
                let service = container.reportingService()
                #expect(service.client === container.httpClient())
            }
        }
        #expect(released == nil, "the container was kept alive by its own singleton")
    }

    @Test func aSingletonsPropertyReadFirstAfterConstructionDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        let service: ReportingService
        do {
            let container = DependencyContainer()
            released = container
            service = DependencyContainer.withMain(container) { container.reportingService() }
            #expect(service.client === container.httpClient())
        }
        #expect(released == nil, "the container was kept alive by its own singleton")
        withExtendedLifetime(service) {}
    }

    @Test func readingTheSingletonsPropertyAfterItsContainerIsGoneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let service: ReportingService = {
                let container = DependencyContainer()
                return DependencyContainer.withMain(container) { container.reportingService() }
            }()
            _ = service.client
        }
        let output = standardError(of: result)
        #expect(output.contains("released"), "\(output)")
    }

    /// Unread, the same property holds nothing but its container, weakly.
    @Test func aSingletonsUnreadPropertyOverAnAsyncProviderDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        do {
            let container = DependencyContainer()
            released = container
            _ = container.asyncDatabaseUser()
        }
        #expect(released == nil, "the container was kept alive by its own singleton")
    }

    // MARK: - Objects created by app code

    /// Outside a construction nothing caches the object, so its property keeps the
    /// container: a model created in `withMain` works after the call returns.
    @Test func anObjectCreatedOutsideAConstructionKeepsItsContainer() {
        weak var released: DependencyContainer?
        let model: ReportsViewModel
        do {
            let container = DependencyContainer()
            container.override(\.httpClient) { StubHTTPClient("scoped") }
            released = container
            model = DependencyContainer.withMain(container) { ReportsViewModel() }
        }
        #expect(released != nil)
        #expect(model.client.name == "scoped")
    }
}
