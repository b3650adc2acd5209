/// The app's one screen: it loads the feed and renders it as text.
///
/// It is the root of the composition, the object the app asks the container for, like the
/// feed view controller of an iOS app.
public final class FeedScreen: Sendable {
    /// The title above the items.
    public let title: String
    /// Where the items come from.
    public let loader: any FeedLoader

    /// Creates a screen that shows `loader`'s feed under `title`.
    ///
    /// - Parameters:
    ///   - title: The title above the items.
    ///   - loader: Where the items come from.
    public init(title: String, loader: any FeedLoader) {
        self.title = title
        self.loader = loader
    }

    /// Loads the feed and renders it.
    ///
    /// - Returns: The title with the item count, then one numbered line per item and an
    ///   indented line with its location, if any.
    /// - Throws: The loader's error.
    public func render() throws -> String {
        let items = try loader.load()
        var lines = ["\(title) (\(items.count) \(items.count == 1 ? "item" : "items"))"]
        for (index, item) in items.enumerated() {
            lines.append("  \(index + 1). \(item.title)")
            if let location = item.location { lines.append("     \(location)") }
        }
        return lines.joined(separator: "\n")
    }
}
