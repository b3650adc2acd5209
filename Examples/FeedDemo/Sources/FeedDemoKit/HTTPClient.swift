public import Foundation

/// What an ``HTTPClient`` got back: a status code and a body.
public struct HTTPResponse: Sendable, Hashable {
    /// The HTTP status code, such as 200 or 404.
    public let statusCode: Int
    /// The response body.
    public let body: Data

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - statusCode: The HTTP status code.
    ///   - body: The response body.
    public init(statusCode: Int, body: Data) {
        self.statusCode = statusCode
        self.body = body
    }
}

/// Fetches documents by URL.
///
/// The remote loader only knows this protocol, so the composition decides where documents
/// come from: ``BundledHTTPClient`` in the app, ``OfflineHTTPClient`` with `--offline`,
/// ``StubHTTPClient`` on the mocks container.
public protocol HTTPClient: Sendable {
    /// Fetches the document at `url`.
    ///
    /// - Parameter url: The document's address.
    /// - Returns: The response, whatever its status code.
    /// - Throws: An error when no response could be had at all, such as ``HTTPClientError/offline(_:)``.
    func get(_ url: URL) throws -> HTTPResponse
}

/// Why an ``HTTPClient`` got no response.
public enum HTTPClientError: Error, Hashable, CustomStringConvertible {
    /// The client is offline: the request for the URL was never sent.
    case offline(URL)

    /// What went wrong; the loader that sent the request names the URL.
    public var description: String {
        switch self {
        case .offline: "the network is offline"
        }
    }
}

/// The app's HTTP client: it serves documents bundled in the app and local files, and
/// never opens a network connection.
///
/// A `file:` URL is read from disk; any other URL is looked up among the bundled documents.
/// Either way a missing document is a 404 response, as a server would send.
public struct BundledHTTPClient: HTTPClient {
    /// The documents served, by URL.
    public let documents: [URL: Data]

    /// Creates a client that serves `documents`.
    ///
    /// - Parameter documents: The documents to serve, by URL; by default the bundled feed at
    ///   ``BundledFeed/url``.
    public init(documents: [URL: Data] = [BundledFeed.url: BundledFeed.document]) {
        self.documents = documents
    }

    /// Serves the bundled document at `url`, or reads the file at a `file:` URL.
    ///
    /// - Parameter url: The document's address.
    /// - Returns: A 200 response with the document, or a 404 response when there is none.
    public func get(_ url: URL) throws -> HTTPResponse {
        let document = url.isFileURL ? try? Data(contentsOf: url) : documents[url]
        guard let document else { return HTTPResponse(statusCode: 404, body: Data()) }
        return HTTPResponse(statusCode: 200, body: document)
    }
}

/// An ``HTTPClient`` without a network: every request fails with ``HTTPClientError/offline(_:)``.
///
/// `feed-demo --offline` puts it in place of the app's client, so the feed has to come from
/// the cache.
public struct OfflineHTTPClient: HTTPClient {
    /// Creates an offline client.
    public init() {}

    /// Fails.
    ///
    /// - Parameter url: The document's address, named in the error.
    /// - Returns: Never returns.
    /// - Throws: ``HTTPClientError/offline(_:)``, always.
    public func get(_ url: URL) throws -> HTTPResponse {
        throw HTTPClientError.offline(url)
    }
}

/// An ``HTTPClient`` that answers every request with the same response: the mocks
/// container's client.
public struct StubHTTPClient: HTTPClient {
    /// The response to every request.
    public let response: HTTPResponse

    /// Creates a client that answers every request with `response`.
    ///
    /// - Parameter response: The response to return.
    public init(response: HTTPResponse) {
        self.response = response
    }

    /// A client that serves ``MockFeed/document`` for every URL.
    public static let mockFeed = StubHTTPClient(
        response: HTTPResponse(statusCode: 200, body: MockFeed.document))

    /// Returns ``response``.
    ///
    /// - Parameter url: Ignored.
    /// - Returns: ``response``.
    public func get(_ url: URL) throws -> HTTPResponse {
        response
    }
}
