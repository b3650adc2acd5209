import DependencyInjection
import Foundation
import Testing

// An app's catalog, opened asynchronously, and its shelves, one per name: the providers a
// `@Dependency` keeps as its value. Outside the main actor a singleton is shared across
// threads, so it is `Sendable`: immutable, or, for the reader, guarded by its wrappers'
// locks as the `Dependency` docs allow. The main-actor app's form is in AppUsageTests.

final class Catalog: Sendable {
    let label: String
    init(label: String = "live") { self.label = label }
}

final class CatalogShelf: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// Reads the catalog and the shelves where it needs them: a service the container keeps.
final class CatalogReader: @unchecked Sendable {
    @Dependency(\.catalog) var catalog
    @Dependency(\.shelves) var shelves
    init() {}
}

/// Reads the catalog through a registration of an optional provider.
final class OptionalCatalogReader: @unchecked Sendable {
    @Dependency(\.optionalCatalog) var catalog
    init() {}
}

extension DependencyContainer {
    var optionalCatalog: AsyncProvider<Catalog>? { catalog }
    var optionalCatalogReader: Provider<OptionalCatalogReader> { singleton { OptionalCatalogReader() } }
    var catalog: AsyncProvider<Catalog> { singleton { Catalog() } }
    var shelves: ProviderFamily<String, CatalogShelf> { singleton { (name: String) in CatalogShelf(name: name) } }
    var catalogReader: Provider<CatalogReader> { singleton { CatalogReader() } }
    var requestCatalogReader: Provider<CatalogReader> { scoped { CatalogReader() } }
}

/// An async provider or a provider family that a `@Dependency` of a cached instance
/// publishes resolves in the container that keeps the instance, without keeping it
/// alive: a request scope or a test world is freed when its last holder lets go.
@Suite struct LinkedProviderTests {
    // MARK: - What the published providers resolve

    @Test func aKeptInstancesAsyncProviderResolvesItsContainersInstance() async throws {
        let container = DependencyContainer()
        let reader = container.catalogReader()
        let viaProperty = try await reader.catalog()
        #expect(try await container.catalog() === viaProperty)
        #expect(try await reader.catalog() === viaProperty)
    }

    @Test func aKeptInstancesProviderFamilyResolvesItsContainersInstances() {
        let container = DependencyContainer()
        let reader = container.catalogReader()
        let alpha = reader.shelves("alpha")
        #expect(alpha === container.shelves("alpha"))
        #expect(reader.shelves["alpha"]() === alpha)
        #expect(reader.shelves("beta") !== alpha)
        #expect(reader.shelves("beta").name == "beta")
    }

    /// A key path to an optional provider leads to an optional, which no link reads: the
    /// property keeps what the registration gave, and it resolves the container's instance.
    @Test func aKeptInstancesOptionalProviderResolvesItsContainersInstance() async throws {
        let container = DependencyContainer()
        let catalog = try #require(container.optionalCatalogReader().catalog)
        #expect(try await catalog() === container.catalog())
    }

    /// The providers read the registration anew on each call: an override installed after
    /// the property was first read reaches them, and so does its reset.
    @Test func overridesInstalledAfterTheFirstReadReachThePublishedProviders() async throws {
        let container = DependencyContainer()
        let reader = container.catalogReader()
        let catalog = reader.catalog
        let shelves = reader.shelves
        #expect(try await catalog().label == "live")
        #expect(shelves("alpha").name == "alpha")

        container.override(\.catalog) { Catalog(label: "stub") }
        container.override(\.shelves) { name in CatalogShelf(name: "stub " + name) }
        #expect(try await catalog().label == "stub")
        #expect(shelves("alpha").name == "stub alpha")
        #expect(shelves["beta"]().name == "stub beta")

        container.reset(\.catalog)
        container.reset(\.shelves)
        #expect(try await catalog().label == "live")
        #expect(shelves("alpha").name == "alpha")
    }

    // MARK: - Lifetimes

    @Test func aSingletonsAsyncProviderPropertyDoesNotKeepItsContainerAlive() async throws {
        weak var released: DependencyContainer?
        weak var releasedReader: CatalogReader?
        do {
            let container = DependencyContainer()
            released = container
            let reader = container.catalogReader()
            releasedReader = reader
            _ = try await reader.catalog()
        }
        #expect(released == nil, "the container was kept alive by its own singleton's async provider")
        #expect(releasedReader == nil)
    }

    @Test func aSingletonsProviderFamilyPropertyDoesNotKeepItsContainerAlive() {
        weak var released: DependencyContainer?
        weak var releasedShelf: CatalogShelf?
        do {
            let container = DependencyContainer()
            released = container
            let shelf = container.catalogReader().shelves("alpha")
            releasedShelf = shelf
            #expect(container.catalogReader().shelves["alpha"]() === shelf)
        }
        #expect(released == nil, "the container was kept alive by its own singleton's provider family")
        #expect(releasedShelf == nil)
    }

    /// A request scope's scoped instance uses both providers; the scope goes with the
    /// request, and the app's singletons it used stay the app's.
    @Test func aRequestScopeWhoseInstanceUsesThePublishedProvidersIsFreed() async throws {
        let app = DependencyContainer()
        weak var releasedScope: DependencyContainer?
        weak var releasedReader: CatalogReader?
        do {
            let request = DependencyContainer(scopeOf: app)
            releasedScope = request
            let reader = request.requestCatalogReader()
            releasedReader = reader
            #expect(try await reader.catalog() === app.catalog())
            #expect(reader.shelves("alpha") === app.shelves("alpha"))
        }
        #expect(releasedScope == nil, "the request scope was kept alive by its own scoped instance")
        #expect(releasedReader == nil)
        #expect(app.instanceIfBuilt(\.catalog) != nil)
    }

    /// Only a property whose owner the container keeps publishes a linked provider: an
    /// object that app code creates holds its container, and so does the provider it
    /// publishes, which goes on working after the object and every other holder are gone.
    @Test func anObjectCreatedByAppCodePublishesAProviderThatKeepsItsContainer() async throws {
        weak var released: DependencyContainer?
        let catalog: AsyncProvider<Catalog>
        let shelves: ProviderFamily<String, CatalogShelf>
        do {
            let container = DependencyContainer()
            released = container
            (catalog, shelves) = DependencyContainer.withMain(container) {
                let reader = CatalogReader()
                return (reader.catalog, reader.shelves)
            }
        }
        #expect(released != nil)
        #expect(try await catalog() === released?.instanceIfBuilt(\.catalog))
        #expect(shelves("alpha") === released?.shelves("alpha"))
    }

    @Test func callingAPublishedAsyncProviderAfterItsContainerIsGoneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a published async provider called after its container")
            let catalog = { () -> AsyncProvider<Catalog> in
                let container = DependencyContainer()
                return withExtendedLifetime(container) { container.catalogReader().catalog }
            }()
            _ = try? await catalog()
        }
        let output = standardError(of: result)
        #expect(output.contains("catalog: the container this provider resolves in was released"), "\(output)")
        #expect(output.contains("shutdown()"), "\(output)")
    }

    @Test func callingAPublishedProviderFamilyAfterItsContainerIsGoneStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            endProcessIfHung("a published provider family called after its container")
            let shelves = { () -> ProviderFamily<String, CatalogShelf> in
                let container = DependencyContainer()
                return withExtendedLifetime(container) { container.catalogReader().shelves }
            }()
            _ = shelves("alpha")
        }
        let output = standardError(of: result)
        #expect(output.contains("shelves: the container this provider resolves in was released"), "\(output)")
    }

    // MARK: - Under load

    /// Threads released together read the family through the singleton's property: one
    /// construction per argument, the container's, on every thread.
    @Test func threadsReadingThePublishedFamilyShareTheContainersInstances() async {
        let container = DependencyContainer()
        let made = Collected<ObjectIdentifier>()
        let finished = await concurrentlyOffThePool(threads: 8) { index in
            let reader = container.catalogReader()
            for round in 0..<50 {
                made.append(ObjectIdentifier(reader.shelves("shelf \((index + round) % 4)")))
            }
        }
        #expect(finished)
        let expected = Set((0..<4).map { ObjectIdentifier(container.shelves("shelf \($0)")) })
        #expect(Set(made.values) == expected)
    }

    /// Tasks released together await the async provider through the singleton's property:
    /// one construction, the container's.
    @Test func tasksAwaitingThePublishedAsyncProviderShareOneConstruction() async {
        let container = DependencyContainer()
        let start = AsyncLatch()
        let finished = await endsWithoutHanging {
            let ids = await withTaskGroup(of: ObjectIdentifier?.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        let reader = container.catalogReader()
                        await start.wait()
                        return try? ObjectIdentifier(await reader.catalog())
                    }
                }
                start.open()
                return await group.reduce(into: Set<ObjectIdentifier?>()) { $0.insert($1) }
            }
            #expect(ids.count == 1)
            #expect(ids.first == (try? ObjectIdentifier(await container.catalog())))
        }
        #expect(finished)
    }
}
