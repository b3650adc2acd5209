public import Foundation

/// A feed as a ``FeedStore`` keeps it: the items and when they were saved.
public struct CachedFeed: Sendable, Hashable, Codable {
    /// The saved items.
    public let items: [FeedItem]
    /// When they were saved.
    public let timestamp: Date

    /// Creates a cached feed.
    ///
    /// - Parameters:
    ///   - items: The saved items.
    ///   - timestamp: When they were saved.
    public init(items: [FeedItem], timestamp: Date) {
        self.items = items
        self.timestamp = timestamp
    }
}

/// Keeps one ``CachedFeed``.
public protocol FeedStore: Sendable {
    /// Where the feed is kept, for messages: a file path, or a description.
    var location: String { get }

    /// Returns the kept feed.
    ///
    /// - Returns: The feed, or `nil` when nothing was saved yet.
    /// - Throws: An error when something is kept but cannot be read.
    func retrieve() throws -> CachedFeed?

    /// Replaces the kept feed.
    ///
    /// - Parameter feed: The feed to keep.
    /// - Throws: An error when the feed cannot be written.
    func insert(_ feed: CachedFeed) throws
}

/// A ``FeedStore`` that keeps the feed as a JSON file in a folder.
///
/// The folder is created on the first save; writes replace the file atomically, so a
/// reader never sees half a feed.
public struct FileFeedStore: FeedStore {
    /// The JSON file that holds the feed.
    public let fileURL: URL

    /// Creates a store that keeps the feed in `directory/feed-cache.json`.
    ///
    /// - Parameter directory: The folder of the cache file; created when first needed.
    public init(directory: URL) {
        fileURL = directory.appendingPathComponent("feed-cache.json", isDirectory: false)
    }

    /// The cache file's path.
    public var location: String { fileURL.path }

    /// Reads the cache file.
    ///
    /// - Returns: The feed, or `nil` when there is no cache file yet.
    /// - Throws: An error when the file exists but is not a cached feed.
    public func retrieve() throws -> CachedFeed? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(CachedFeed.self, from: Data(contentsOf: fileURL))
    }

    /// Writes the cache file, creating its folder if needed.
    ///
    /// - Parameter feed: The feed to keep.
    /// - Throws: An error when the folder or the file cannot be written.
    public func insert(_ feed: CachedFeed) throws {
        try FileManager.default.createDirectory(
            at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(feed).write(to: fileURL, options: .atomic)
    }
}

/// A ``FeedStore`` that keeps the feed in memory: the mocks container's store.
public final class InMemoryFeedStore: FeedStore, @unchecked Sendable {
    // @unchecked Sendable: `feed` is only read or written while holding `lock`.
    private let lock = NSLock()
    private var feed: CachedFeed?

    /// Creates a store holding `feed`.
    ///
    /// - Parameter feed: What the store holds at first; nothing by default.
    public init(feed: CachedFeed? = nil) {
        self.feed = feed
    }

    /// Says that the feed is in memory.
    public var location: String { "memory" }

    /// Returns the feed held.
    ///
    /// - Returns: The feed, or `nil` when nothing was saved yet.
    public func retrieve() throws -> CachedFeed? {
        lock.lock()
        defer { lock.unlock() }
        return feed
    }

    /// Replaces the feed held.
    ///
    /// - Parameter feed: The feed to keep.
    public func insert(_ feed: CachedFeed) throws {
        lock.lock()
        defer { lock.unlock() }
        self.feed = feed
    }
}
