/// A ``FeedLoader`` that saves what another loader returns into a ``FeedCache``.
///
/// The wrapped loader does not know it is cached, and the cache does not know where the
/// feed came from: the composition puts the two together.
///
/// ```swift
/// let cached = FeedLoaderCacheDecorator(decoratee: remote, cache: local, log: log)
/// let items = try cached.load()   // the remote's items, now also in `local`
/// ```
public struct FeedLoaderCacheDecorator: FeedLoader {
    /// The loader whose feed is saved.
    public let decoratee: any FeedLoader
    /// Where the feed is saved.
    public let cache: any FeedCache
    /// Where saving is reported.
    public let log: any FeedLog

    /// Creates a decorator that saves `decoratee`'s feed into `cache`.
    ///
    /// - Parameters:
    ///   - decoratee: The loader whose feed is saved.
    ///   - cache: Where the feed is saved.
    ///   - log: Where saving is reported.
    public init(decoratee: any FeedLoader, cache: any FeedCache, log: any FeedLog) {
        self.decoratee = decoratee
        self.cache = cache
        self.log = log
    }

    /// Loads from ``decoratee`` and saves the result.
    ///
    /// A failure to save is reported to ``log`` and does not fail the load: the user still
    /// sees the fresh feed.
    ///
    /// - Returns: ``decoratee``'s items.
    /// - Throws: ``decoratee``'s error; nothing is saved then.
    public func load() throws -> [FeedItem] {
        let items = try decoratee.load()
        do {
            try cache.save(items)
            log.record(.cacheSaved(count: items.count))
        } catch {
            log.record(.cacheSaveFailed(reason: "\(error)"))
        }
        return items
    }
}
