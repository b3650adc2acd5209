// The whole wiring of the feed app, in one place. What `feedScreen()` builds:
//
//   feedScreen: FeedScreen                                          factory
//   └─ feedLoader: FeedLoaderWithFallbackComposite                  factory
//      ├─ primary: FeedLoaderCacheDecorator
//      │  ├─ decoratee: remoteFeedLoader: RemoteFeedLoader          factory
//      │  │  └─ httpClient: Bundled | Offline | Stub HTTPClient     singleton
//      │  └─ cache: localFeedLoader: LocalFeedLoader  <──┐          factory
//      │     └─ feedStore: FileFeedStore | InMemoryFeedStore        singleton
//      ├─ fallback: the same LocalFeedLoader instance ───┘
//      └─ log: feedLog: PrintingFeedLog (the decorator's too)       singleton
//
// Registrations are computed properties on DependencyContainer, so every piece can be
// replaced in a test with `container.override(\.httpClient) { … }`, and a mocked
// container (`DependencyContainer.mocks` or a child of it) serves stubs through
// `isMocked`. The run's choices (offline, cache folder, feed file) are applied by
// `FeedAppComposer`, the composition root, before anything is resolved.

public import DependencyInjection
public import Foundation

// MARK: - Registrations

extension DependencyContainer {
    // MARK: Settings: plain values, evaluated on every read, set by the composer

    /// The feed document's address: ``BundledFeed/url`` unless the composer set another,
    /// such as a local file.
    public var feedURL: URL {
        getValue(forKey: FeedSettingKey.feedURL) ?? BundledFeed.url
    }

    /// The folder of the file cache: `feed-demo` in the temporary folder unless the
    /// composer set another.
    public var feedCacheDirectory: URL {
        getValue(forKey: FeedSettingKey.cacheDirectory)
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("feed-demo", isDirectory: true)
    }

    /// The feed screen's title, which tells a mocked container's feed from the real one.
    public var feedTitle: String {
        isMocked ? "Mock feed" : "Feed"
    }

    // MARK: Infrastructure: one per container

    /// Where the loaders report saving and falling back; prints each event.
    public var feedLog: Provider<any FeedLog> {
        singleton { PrintingFeedLog() }
    }

    /// The HTTP client: serves the bundled document or a local file, never the network.
    ///
    /// A mocked container gets ``StubHTTPClient/mockFeed``; `--offline` overrides it with
    /// ``OfflineHTTPClient``.
    public var httpClient: Provider<any HTTPClient> {
        singleton {
            if self.isMocked { StubHTTPClient.mockFeed } else { BundledHTTPClient() }
        }
    }

    /// Where the cache is kept: a JSON file in ``feedCacheDirectory``, or, on a mocked
    /// container, memory that already holds ``MockFeed/cachedFeed``.
    public var feedStore: Provider<any FeedStore> {
        singleton {
            if self.isMocked {
                InMemoryFeedStore(feed: MockFeed.cachedFeed)
            } else {
                FileFeedStore(directory: self.feedCacheDirectory)
            }
        }
    }

    // MARK: Feed: built anew for each screen

    /// Loads ``feedURL`` through ``httpClient``.
    public var remoteFeedLoader: Provider<RemoteFeedLoader> {
        factory { RemoteFeedLoader(url: self.feedURL, client: self.httpClient()) }
    }

    /// Loads and saves the cached feed in ``feedStore``.
    public var localFeedLoader: Provider<LocalFeedLoader> {
        factory { LocalFeedLoader(store: self.feedStore()) }
    }

    /// The app's feed loader: the remote, whose feed is saved into the local cache, and
    /// the local cache when the remote fails.
    public var feedLoader: Provider<any FeedLoader> {
        factory {
            let remote = self.remoteFeedLoader()
            let local = self.localFeedLoader()
            let log = self.feedLog()
            return FeedLoaderWithFallbackComposite(
                primary: FeedLoaderCacheDecorator(decoratee: remote, cache: local, log: log),
                fallback: local,
                log: log)
        }
    }

    /// The root of the app: the screen that shows ``feedLoader``'s feed.
    public var feedScreen: Provider<FeedScreen> {
        factory { FeedScreen(title: self.feedTitle, loader: self.feedLoader()) }
    }
}

/// The storage keys of the settings that ``FeedAppComposer`` stores.
private enum FeedSettingKey {
    static let feedURL = "feedDemo.feedURL"
    static let cacheDirectory = "feedDemo.cacheDirectory"
}

// MARK: - Composition root

/// The feed app's composition root: applies one run's choices to a container before
/// anything is resolved from it.
///
/// ```swift
/// let container = DependencyContainer(parent: .default)
/// container.compose(FeedAppComposer(offline: true))
/// print(try container.feedScreen().render())   // the cached feed
/// ```
public struct FeedAppComposer: Composer {
    /// Whether the HTTP client fails every request, so the feed comes from the cache.
    public var offline: Bool
    /// The feed document's address, or `nil` for ``BundledFeed/url``.
    public var feedURL: URL?
    /// The cache's folder, or `nil` for `feed-demo` in the temporary folder.
    public var cacheDirectory: URL?

    /// Creates the root composer of one run.
    ///
    /// - Parameters:
    ///   - offline: Whether the HTTP client fails every request.
    ///   - feedURL: The feed document's address, such as a `file:` URL; `nil` for the
    ///     bundled document.
    ///   - cacheDirectory: The cache's folder; `nil` for the default.
    public init(offline: Bool = false, feedURL: URL? = nil, cacheDirectory: URL? = nil) {
        self.offline = offline
        self.feedURL = feedURL
        self.cacheDirectory = cacheDirectory
    }

    /// Stores the settings in `container` and, when offline, replaces its HTTP client.
    ///
    /// - Parameter container: The container the app will resolve from.
    public func compose(_ container: DependencyContainer) {
        if let feedURL { container.setValue(feedURL, forKey: FeedSettingKey.feedURL) }
        if let cacheDirectory {
            container.setValue(cacheDirectory, forKey: FeedSettingKey.cacheDirectory)
        }
        if offline { container.override(\.httpClient) { OfflineHTTPClient() } }
    }
}
