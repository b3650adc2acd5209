/// A ``FeedLoader`` that asks a primary loader and, when it fails, a fallback.
///
/// In the app the primary is the cached remote and the fallback is the local cache, so the
/// last feed that was loaded online is shown offline.
///
/// ```swift
/// let loader = FeedLoaderWithFallbackComposite(primary: cachedRemote, fallback: local, log: log)
/// ```
public struct FeedLoaderWithFallbackComposite: FeedLoader {
    /// Both loaders failed.
    public struct Failure: Error, CustomStringConvertible {
        /// Why the primary loader failed.
        public let primary: any Error
        /// Why the fallback failed.
        public let fallback: any Error

        /// Both reasons, one per line.
        public var description: String {
            "primary: \(primary)\nfallback: \(fallback)"
        }
    }

    /// The loader asked first.
    public let primary: any FeedLoader
    /// The loader asked when ``primary`` fails.
    public let fallback: any FeedLoader
    /// Where falling back is reported.
    public let log: any FeedLog

    /// Creates a composite that asks `primary`, then `fallback`.
    ///
    /// - Parameters:
    ///   - primary: The loader asked first.
    ///   - fallback: The loader asked when `primary` fails.
    ///   - log: Where falling back is reported.
    public init(primary: any FeedLoader, fallback: any FeedLoader, log: any FeedLog) {
        self.primary = primary
        self.fallback = fallback
        self.log = log
    }

    /// Loads from ``primary``, or from ``fallback`` when that fails.
    ///
    /// - Returns: The first loader's items that succeeds.
    /// - Throws: ``Failure`` with both errors when both loaders fail.
    public func load() throws -> [FeedItem] {
        do {
            return try primary.load()
        } catch let primaryError {
            log.record(.primaryFailed(reason: "\(primaryError)"))
            do {
                let items = try fallback.load()
                log.record(.fallbackServed(count: items.count))
                return items
            } catch {
                throw Failure(primary: primaryError, fallback: error)
            }
        }
    }
}
