public import Foundation

/// Loads the feed from a ``FeedStore`` and saves feeds into it.
///
/// It is both a ``FeedLoader`` (the fallback when the remote fails) and a ``FeedCache``
/// (what the cache decorator saves the remote's feed into); the composition uses one
/// instance for both, over one store.
public final class LocalFeedLoader: FeedLoader, FeedCache {
    /// Why the cached feed could not be loaded.
    public enum Error: Swift.Error, Hashable, CustomStringConvertible {
        /// Nothing has been saved yet.
        case emptyCache(location: String)
        /// Something is saved but cannot be read.
        case unreadableCache(location: String, reason: String)

        /// A sentence that names the cache.
        public var description: String {
            switch self {
            case .emptyCache(let location):
                "nothing is cached yet (\(location))"
            case .unreadableCache(let location, let reason):
                "the cache at \(location) cannot be read: \(reason)"
            }
        }
    }

    /// Where the feed is kept.
    public let store: any FeedStore
    private let currentDate: @Sendable () -> Date

    /// Creates a loader over `store`.
    ///
    /// - Parameters:
    ///   - store: Where the feed is kept.
    ///   - currentDate: The clock that stamps saved feeds; the system clock by default.
    public init(store: any FeedStore, currentDate: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.currentDate = currentDate
    }

    /// Saves `items`, stamped with the current date, in place of the cached feed.
    ///
    /// - Parameter items: The feed to keep.
    /// - Throws: The store's error when it cannot write.
    public func save(_ items: [FeedItem]) throws {
        try store.insert(CachedFeed(items: items, timestamp: currentDate()))
    }

    /// Loads the cached feed with its timestamp.
    ///
    /// - Returns: The cached feed.
    /// - Throws: ``Error/emptyCache(location:)`` or ``Error/unreadableCache(location:reason:)``.
    public func loadCachedFeed() throws -> CachedFeed {
        let feed: CachedFeed?
        do {
            feed = try store.retrieve()
        } catch {
            throw Error.unreadableCache(location: store.location, reason: "\(error)")
        }
        guard let feed else { throw Error.emptyCache(location: store.location) }
        return feed
    }

    /// Loads the cached items.
    ///
    /// - Returns: The items of the cached feed.
    /// - Throws: ``Error/emptyCache(location:)`` or ``Error/unreadableCache(location:reason:)``.
    public func load() throws -> [FeedItem] {
        try loadCachedFeed().items
    }
}
