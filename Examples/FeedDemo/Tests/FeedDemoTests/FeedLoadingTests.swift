import DependencyInjection
import FeedDemoKit
import Foundation
import Testing

/// How the composed feed loader behaves: online, offline, with broken pieces, on mocks.
@Suite struct FeedLoadingTests {
    // MARK: - Online

    @Test func aSuccessfulRemoteLoadWritesTheCache() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(cacheDirectory: directory)
            let items = try world.container.feedLoader().load()

            #expect(items.map(\.title) == bundledTitles)
            #expect(world.log.events == [.cacheSaved(count: 4)])
            let cached = try #require(try FileFeedStore(directory: directory).retrieve())
            #expect(cached.items == items)
            #expect(abs(cached.timestamp.timeIntervalSinceNow) < 60)
        }
    }

    @Test func theScreenRendersTitleCountAndItems() throws {
        try withTemporaryDirectory { directory in
            let text = try FeedWorld(cacheDirectory: directory).container.feedScreen().render()
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.first == "Feed (4 items)")
            #expect(lines.contains("  1. Fishing boats leaving the harbour at dawn"))
            #expect(lines.contains("     Porto, Portugal"))
            #expect(lines.last == "  4. First snow on the allotments")
        }
    }

    @Test func aLocalFileIsServedInsteadOfTheBundledDocument() throws {
        try withTemporaryDirectory { directory in
            let file = directory.appendingPathComponent("my-feed.json")
            try Data(
                #"{"items":[{"id":"1","title":"From a file","image":"https://example.com/1.jpg"}]}"#
                    .utf8
            ).write(to: file)
            let world = FeedWorld(cacheDirectory: directory, feedURL: file)
            #expect(try world.container.feedLoader().load().map(\.title) == ["From a file"])
        }
    }

    // MARK: - Falling back

    @Test func offlineFallsBackToWhatTheLastOnlineRunCached() throws {
        try withTemporaryDirectory { directory in
            let online = try FeedWorld(cacheDirectory: directory).container.feedLoader().load()

            let offline = FeedWorld(offline: true, cacheDirectory: directory)
            let items = try offline.container.feedLoader().load()

            #expect(items == online)
            #expect(offline.log.events == [
                .primaryFailed(
                    reason: "could not reach \(BundledFeed.url.absoluteString): the network is offline"),
                .fallbackServed(count: 4),
            ])
        }
    }

    @Test func offlineWithAnEmptyCacheFailsWithBothReasons() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(offline: true, cacheDirectory: directory)
            let failure = try #require(throws: FeedLoaderWithFallbackComposite.Failure.self) {
                try world.container.feedLoader().load()
            }
            #expect(
                failure.primary as? RemoteFeedLoader.Error
                    == .connectivity(url: BundledFeed.url, reason: "the network is offline"))
            let location = FeedWorld.cacheFile(in: directory).path
            #expect(failure.fallback as? LocalFeedLoader.Error == .emptyCache(location: location))
            #expect("\(failure)".contains("nothing is cached yet"))
            #expect(!FileManager.default.fileExists(atPath: location))
        }
    }

    @Test func aServerErrorFallsBackAndLeavesTheCacheAlone() throws {
        try withTemporaryDirectory { directory in
            _ = try FeedWorld(cacheDirectory: directory).container.feedLoader().load()
            let file = FeedWorld.cacheFile(in: directory)
            let before = try Data(contentsOf: file)

            let world = FeedWorld(cacheDirectory: directory)
            world.container.override(\.httpClient) {
                StubHTTPClient(response: HTTPResponse(statusCode: 500, body: Data()))
            }
            #expect(try world.container.feedLoader().load().map(\.title) == bundledTitles)
            #expect(try Data(contentsOf: file) == before)
            #expect(world.log.events.first == .primaryFailed(
                reason: "\(BundledFeed.url.absoluteString) answered 500 without a feed document"))
        }
    }

    @Test func anInvalidDocumentIsInvalidData() throws {
        let loader = RemoteFeedLoader(
            url: BundledFeed.url,
            client: StubHTTPClient(response: HTTPResponse(statusCode: 200, body: Data("{}".utf8))))
        #expect(throws: RemoteFeedLoader.Error.invalidData(url: BundledFeed.url, statusCode: 200)) {
            try loader.load()
        }
    }

    @Test func aMissingLocalFileIsANotFound() throws {
        try withTemporaryDirectory { directory in
            let missing = directory.appendingPathComponent("missing.json")
            let response = try BundledHTTPClient().get(missing)
            #expect(response.statusCode == 404)
            #expect(try BundledHTTPClient().get(URL(string: "https://elsewhere.example")!).statusCode == 404)
        }
    }

    // MARK: - The cache

    @Test func aCacheThatCannotBeWrittenStillShowsTheFeed() throws {
        try withTemporaryDirectory { directory in
            let blocker = directory.appendingPathComponent("not-a-folder")
            try Data("x".utf8).write(to: blocker)
            let world = FeedWorld(cacheDirectory: blocker.appendingPathComponent("cache"))

            #expect(try world.container.feedLoader().load().count == 4)
            guard case .cacheSaveFailed? = world.log.events.first else {
                Issue.record("expected a failed save, got \(world.log.events)")
                return
            }
        }
    }

    @Test func anUnreadableCacheIsReportedAsSuch() throws {
        try withTemporaryDirectory { directory in
            let file = FeedWorld.cacheFile(in: directory)
            try Data("not json".utf8).write(to: file)
            let local = LocalFeedLoader(store: FileFeedStore(directory: directory))
            #expect {
                try local.load()
            } throws: { error in
                guard case .unreadableCache(let location, _)? = error as? LocalFeedLoader.Error else {
                    return false
                }
                return location == file.path
            }
        }
    }

    @Test func theLocalLoaderStampsWhatItSaves() throws {
        let store = InMemoryFeedStore()
        let now = Date(timeIntervalSince1970: 1_000)
        let local = LocalFeedLoader(store: store, currentDate: { now })
        let item = FeedItem(id: "1", title: "One", imageURL: URL(string: "https://example.com/1")!)
        try local.save([item])
        #expect(try local.loadCachedFeed() == CachedFeed(items: [item], timestamp: now))
        #expect(try store.retrieve()?.items == [item])
    }

    // MARK: - Mocks

    @Test func mocksServeTheMockFeedAndCacheItInMemory() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(mocked: true, cacheDirectory: directory)
            let items = try world.container.feedLoader().load()
            #expect(items.map(\.title) == ["Mock photo one", "Mock photo two"])
            #expect(try world.container.feedStore().retrieve()?.items == items)
            #expect(!FileManager.default.fileExists(atPath: FeedWorld.cacheFile(in: directory).path))
        }
    }

    @Test func offlineMocksFallBackToTheMockCache() throws {
        try withTemporaryDirectory { directory in
            let world = FeedWorld(mocked: true, offline: true, cacheDirectory: directory)
            let text = try world.container.feedScreen().render()
            #expect(text.hasPrefix("Mock feed (1 item)"))
            #expect(text.contains("Mock photo from the cache"))
            #expect(world.log.events.last == .fallbackServed(count: 1))
        }
    }

    @Test func eachMockedWorldHasItsOwnCache() throws {
        try withTemporaryDirectory { directory in
            let first = FeedWorld(mocked: true, cacheDirectory: directory)
            _ = try first.container.feedLoader().load()
            let second = FeedWorld(mocked: true, cacheDirectory: directory)
            #expect(try second.container.feedStore().retrieve() == MockFeed.cachedFeed)
        }
    }
}
