public import Foundation

/// The feed document that ships inside the app, served by ``BundledHTTPClient``.
///
/// It has the shape a feed server sends: `{"items": [{"id", "title", "location", "image"}]}`.
public enum BundledFeed {
    /// The address the app loads the feed from; ``BundledHTTPClient`` answers it from the
    /// bundle, without a network.
    public static let url = URL(string: "https://feed.example.com/v1/feed")!

    /// The document's JSON.
    public static let document = Data(
        #"""
        {
          "items": [
            {
              "id": "0B9C7F1E",
              "title": "Fishing boats leaving the harbour at dawn",
              "location": "Porto, Portugal",
              "image": "https://feed.example.com/images/harbour.jpg"
            },
            {
              "id": "5D21A3C4",
              "title": "Fog rolling over the ridge",
              "location": "Dolomites, Italy",
              "image": "https://feed.example.com/images/ridge.jpg"
            },
            {
              "id": "9E44B07A",
              "title": "Night market lanterns",
              "location": "Taipei, Taiwan",
              "image": "https://feed.example.com/images/lanterns.jpg"
            },
            {
              "id": "C3F8D652",
              "title": "First snow on the allotments",
              "image": "https://feed.example.com/images/snow.jpg"
            }
          ]
        }
        """#.utf8)
}

/// The feeds the mocks container serves: a stub server's document and a pre-filled cache.
public enum MockFeed {
    /// The document ``StubHTTPClient/mockFeed`` answers every request with.
    public static let document = Data(
        #"""
        {
          "items": [
            {"id": "MOCK-1", "title": "Mock photo one", "location": "Stub City", "image": "https://mock.invalid/1.jpg"},
            {"id": "MOCK-2", "title": "Mock photo two", "image": "https://mock.invalid/2.jpg"}
          ]
        }
        """#.utf8)

    /// What the mocks container's in-memory cache holds before anything is saved, so that
    /// `--mocks --offline` has something to fall back to.
    public static let cachedFeed = CachedFeed(
        items: [
            FeedItem(
                id: "MOCK-CACHED-1", title: "Mock photo from the cache", location: "Stub City",
                imageURL: URL(string: "https://mock.invalid/cached.jpg")!)
        ],
        timestamp: Date(timeIntervalSince1970: 1_767_225_600))
}
