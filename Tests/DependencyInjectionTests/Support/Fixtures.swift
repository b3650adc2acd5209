import DependencyInjection

// Registrations used across the suites. They count their constructions in a `Counter`
// stored in the resolving container, so tests that run in parallel on their own
// containers never see each other's counts.

protocol HTTPClient: AnyObject, Sendable { var name: String { get } }
final class LiveHTTPClient: HTTPClient { let name = "live" }
final class StubHTTPClient: HTTPClient {
    let name: String
    init(_ name: String = "stub") { self.name = name }
}

protocol FeedLoader: AnyObject, Sendable { var client: any HTTPClient { get } }
final class RemoteFeedLoader: FeedLoader {
    let client: any HTTPClient
    init(client: any HTTPClient) { self.client = client }
}

final class ImageCache: Sendable {}
final class UserSession: Sendable {
    let id: String
    init(id: String) { self.id = id }
}

/// Two distinct values with the same hash value.
struct CollidingID: Hashable, Sendable {
    let raw: Int
    func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLockLike()
    private var value = 0
    func increment() { lock.run { value += 1 } }
    var count: Int { lock.run { value } }
}

extension DependencyContainer {
    var baseURL: String { isMocked ? "http://localhost:8080" : "https://api.example.com" }
    var token: String? { getValue(forKey: "token") }

    var httpClient: Provider<any HTTPClient> {
        singleton {
            self.count("httpClient")
            return LiveHTTPClient()
        }
    }
    var feedLoader: Provider<any FeedLoader> {
        factory { RemoteFeedLoader(client: self.httpClient()) }
    }
    /// A singleton built from a factory built from a singleton.
    var cachedFeedLoader: Provider<any FeedLoader> {
        singleton {
            self.count("cachedFeedLoader")
            return self.feedLoader()
        }
    }
    var imageCache: Provider<ImageCache> {
        shared {
            self.count("imageCache")
            return ImageCache()
        }
    }
    var counterValue: Provider<Int> { shared { 7 } }
    subscript(session id: String) -> Provider<UserSession> {
        singleton(id) { UserSession(id: id) }
    }
    subscript(colliding id: CollidingID) -> Provider<UserSession> {
        singleton(id) { UserSession(id: "\(id.raw)") }
    }
    subscript(thumbnails size: Int) -> Provider<ImageCache> {
        shared(size) { ImageCache() }
    }

    /// Counts a construction in the counter stored under `"builds.<name>"`, if any.
    func count(_ name: String) {
        (getValue(forKey: "builds." + name) as Counter?)?.increment()
    }

    /// Installs a fresh counter for `name` and returns it.
    func counter(_ name: String) -> Counter {
        let counter = Counter()
        setValue(counter, forKey: "builds." + name)
        return counter
    }
}
