import DependencyInjection
import FeedDemoKit
import Foundation
import Testing

/// What the composition root builds, checked by type, the way an app's composition tests
/// check which controllers its root builds.
@Suite struct CompositionTests {
    // MARK: - Structure

    @Test func rootIsAFeedScreenOverTheComposedFeedLoader() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(cacheDirectory: directory)
            let screen = world.container.feedScreen()
            #expect(screen.title == "Feed")
            #expect(screen.loader is FeedLoaderWithFallbackComposite)
        }
    }

    @Test func feedLoaderIsTheFallbackCompositeOverTheCachedRemote() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(cacheDirectory: directory)
            let composite = try #require(
                world.container.feedLoader() as? FeedLoaderWithFallbackComposite)
            let decorator = try #require(composite.primary as? FeedLoaderCacheDecorator)
            let remote = try #require(decorator.decoratee as? RemoteFeedLoader)
            let cache = try #require(decorator.cache as? LocalFeedLoader)
            let fallback = try #require(composite.fallback as? LocalFeedLoader)

            #expect(cache === fallback, "the decorator saves into the loader the composite falls back to")
            #expect(remote.url == BundledFeed.url)
            #expect(remote.client is BundledHTTPClient)
            let store = try #require(fallback.store as? FileFeedStore)
            #expect(store.fileURL.standardizedFileURL == FeedWorld.cacheFile(in: directory).standardizedFileURL)
            #expect(decorator.log is RecordingFeedLog)
            #expect(composite.log is RecordingFeedLog)
        }
    }

    @Test func offlineReplacesOnlyTheHTTPClient() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(offline: true, cacheDirectory: directory)
            let composite = try #require(
                world.container.feedLoader() as? FeedLoaderWithFallbackComposite)
            let decorator = try #require(composite.primary as? FeedLoaderCacheDecorator)
            let remote = try #require(decorator.decoratee as? RemoteFeedLoader)
            #expect(remote.client is OfflineHTTPClient)
            #expect(composite.fallback is LocalFeedLoader)
            #expect(world.container.httpClient() is OfflineHTTPClient)
        }
    }

    @Test func mocksServeStubsAndTheirOwnTitle() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(mocked: true, cacheDirectory: directory)
            #expect(world.container.isMocked)
            #expect(world.container.feedTitle == "Mock feed")
            #expect(world.container.httpClient() is StubHTTPClient)
            #expect(world.container.feedStore() is InMemoryFeedStore)
            #expect(world.container.feedScreen().title == "Mock feed")
        }
    }

    @Test func composingAChildLeavesItsParentAlone() throws {
        try withTemporaryDirectory { directory in
            let parent = DependencyContainer()
            let child = DependencyContainer(parent: parent)
            let custom = directory.appendingPathComponent("feed.json")
            child.compose(FeedAppComposer(offline: true, feedURL: custom, cacheDirectory: directory))

            #expect(child.httpClient() is OfflineHTTPClient)
            #expect(child.feedURL == custom)
            #expect(parent.httpClient() is BundledHTTPClient)
            #expect(parent.feedURL == BundledFeed.url)
            #expect(parent.feedCacheDirectory.lastPathComponent == "feed-demo")
        }
    }

    // MARK: - Trace

    @Test func traceNamesEveryResolutionOfTheRoot() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(offline: true, cacheDirectory: directory)
            let events = Recorded()
            world.container.tracer = ResolutionTracer { events.append($0) }
            _ = world.container.feedScreen()

            let tree = events.all
            #expect(tree.map(\.name) == [
                "feedScreen", "feedLoader", "remoteFeedLoader", "httpClient", "localFeedLoader",
                "feedStore", "feedLog",
            ])
            #expect(tree.map(\.depth) == [0, 1, 2, 3, 2, 3, 2])
            #expect(tree.map(\.scope) == [
                .factory, .factory, .factory, .singleton, .factory, .singleton, .singleton,
            ])
            #expect(tree.map(\.outcome) == [
                .built, .built, .built, .builtFromOverride, .built, .built, .builtFromOverride,
            ])
        }
    }

    @Test func singletonsAreBuiltOncePerContainer() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(cacheDirectory: directory)
            _ = world.container.feedScreen()
            let events = Recorded()
            world.container.tracer = ResolutionTracer { events.append($0) }
            _ = world.container.feedScreen()
            let outcomes = Dictionary(uniqueKeysWithValues: events.all.map { ($0.name, $0.outcome) })
            #expect(outcomes["httpClient"] == .cached)
            #expect(outcomes["feedStore"] == .cached)
            #expect(outcomes["feedLog"] == .cached)
            #expect(outcomes["feedLoader"] == .built)
        }
    }
}

/// Collects the events of a tracer.
final class Recorded: @unchecked Sendable {
    // @unchecked Sendable: `events` is only touched while holding `lock`.
    private let lock = NSLock()
    private var events: [ResolutionEvent] = []

    func append(_ batch: [ResolutionEvent]) {
        lock.lock()
        defer { lock.unlock() }
        events += batch
    }

    var all: [ResolutionEvent] {
        lock.lock()
        defer { lock.unlock() }
        return events
    }
}
