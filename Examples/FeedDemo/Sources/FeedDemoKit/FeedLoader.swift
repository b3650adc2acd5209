public import Foundation

/// One entry of the feed: a photo with a title and, optionally, where it was taken.
public struct FeedItem: Sendable, Hashable, Codable {
    /// Identifies the item across loads.
    public let id: String
    /// A short caption.
    public let title: String
    /// Where the photo was taken, if known.
    public let location: String?
    /// Where the photo itself can be downloaded.
    public let imageURL: URL

    /// Creates an item.
    ///
    /// - Parameters:
    ///   - id: Identifies the item across loads.
    ///   - title: A short caption.
    ///   - location: Where the photo was taken, if known.
    ///   - imageURL: Where the photo itself can be downloaded.
    public init(id: String, title: String, location: String? = nil, imageURL: URL) {
        self.id = id
        self.title = title
        self.location = location
        self.imageURL = imageURL
    }
}

/// Loads the feed from somewhere: a server, a cache, or a combination of loaders.
///
/// Every piece of the example's feed is a `FeedLoader`, so decorators and composites can
/// wrap any of them, and the app sees one loader no matter how it was put together:
///
/// ```swift
/// let loader: any FeedLoader = container.feedLoader()
/// let items = try loader.load()
/// ```
public protocol FeedLoader: Sendable {
    /// Loads the feed.
    ///
    /// - Returns: The items, in the order they should be shown.
    /// - Throws: An error that says why the feed could not be loaded.
    func load() throws -> [FeedItem]
}

/// Keeps a copy of a feed so that it can be shown again later, for example offline.
public protocol FeedCache: Sendable {
    /// Replaces the cached feed with `items`.
    ///
    /// - Parameter items: The feed to keep.
    /// - Throws: An error that says why the feed could not be saved.
    func save(_ items: [FeedItem]) throws
}
