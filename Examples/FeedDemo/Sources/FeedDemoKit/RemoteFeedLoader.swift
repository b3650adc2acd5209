public import Foundation

/// Loads the feed document at a URL through an ``HTTPClient`` and decodes it.
public struct RemoteFeedLoader: FeedLoader {
    /// Why the remote feed could not be loaded.
    public enum Error: Swift.Error, Hashable, CustomStringConvertible {
        /// The client got no response.
        case connectivity(url: URL, reason: String)
        /// The response was not a 200 with a feed document.
        case invalidData(url: URL, statusCode: Int)

        /// A sentence that names the URL.
        public var description: String {
            switch self {
            case .connectivity(let url, let reason):
                "could not reach \(url.absoluteString): \(reason)"
            case .invalidData(let url, let statusCode):
                "\(url.absoluteString) answered \(statusCode) without a feed document"
            }
        }
    }

    /// The feed document's address.
    public let url: URL
    /// The client that fetches it.
    public let client: any HTTPClient

    /// Creates a loader of the document at `url`.
    ///
    /// - Parameters:
    ///   - url: The feed document's address.
    ///   - client: The client that fetches it.
    public init(url: URL, client: any HTTPClient) {
        self.url = url
        self.client = client
    }

    /// Fetches and decodes the feed document.
    ///
    /// - Returns: The document's items, in its order.
    /// - Throws: ``Error/connectivity(url:reason:)`` or ``Error/invalidData(url:statusCode:)``.
    public func load() throws -> [FeedItem] {
        let response: HTTPResponse
        do {
            response = try client.get(url)
        } catch {
            throw Error.connectivity(url: url, reason: "\(error)")
        }
        guard response.statusCode == 200,
            let document = try? JSONDecoder().decode(Document.self, from: response.body)
        else {
            throw Error.invalidData(url: url, statusCode: response.statusCode)
        }
        return document.items.map {
            FeedItem(id: $0.id, title: $0.title, location: $0.location, imageURL: $0.image)
        }
    }

    /// The server's shape of the feed, kept apart from ``FeedItem``.
    private struct Document: Decodable {
        struct Item: Decodable {
            let id: String
            let title: String
            let location: String?
            let image: URL
        }
        let items: [Item]
    }
}
