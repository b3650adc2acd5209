// The app this module stands for. The module is compiled as a new app project is
// (main-actor default isolation, nonisolated(nonsending) async functions), so everything
// here is implicitly @MainActor, and it is written as app code is: plain protocols,
// classes with initializers, an @Observable view model. Nothing here is marked
// `nonisolated` or `Sendable` to please the container.
import DependencyInjection
import Observation

// MARK: - Feed

protocol FeedStore {
    func load() -> [String]
}

final class LiveFeedStore: FeedStore {
    func load() -> [String] { ["live"] }
}

final class FeedService {
    let store: any FeedStore
    init(store: any FeedStore) { self.store = store }
    func headlines() -> [String] { store.load().map { $0.uppercased() } }
}

// MARK: - Kept while in use

protocol ImageCache: AnyObject {
    func image(named name: String) -> [UInt8]?
    func insert(_ image: [UInt8], named name: String)
}

final class MemoryImageCache: ImageCache {
    private var images: [String: [UInt8]] = [:]
    func image(named name: String) -> [UInt8]? { images[name] }
    func insert(_ image: [UInt8], named name: String) { images[name] = image }
}

protocol Thumbnails: AnyObject {
    var size: Int { get }
}

final class ThumbnailCache: Thumbnails {
    let size: Int
    init(size: Int) { self.size = size }
}

// MARK: - One per document

protocol Draft: AnyObject {
    var documentID: Int { get }
    var text: String { get set }
}

final class LocalDraft: Draft {
    let documentID: Int
    var text = ""
    init(documentID: Int) { self.documentID = documentID }
}

// MARK: - Saved items, opened asynchronously

/// The one app type that lives off the main actor: an actor is its own isolation.
actor Database {
    private var rows: [String] = []

    static func open() async -> Database {
        Database()
    }

    func insert(_ row: String) { rows.append(row) }
    func all() -> [String] { rows }
}

// MARK: - Registrations

extension DependencyContainer {
    var feedStore: Provider<any FeedStore> { singleton { @MainActor in LiveFeedStore() } }
    var feedService: Provider<FeedService> {
        singleton { @MainActor in FeedService(store: self.feedStore()) }
    }
    var imageCache: Provider<any ImageCache> { shared { @MainActor in MemoryImageCache() } }
    subscript(thumbnails size: Int) -> Provider<any Thumbnails> {
        shared(size) { @MainActor in ThumbnailCache(size: size) }
    }
    subscript(draft documentID: Int) -> Provider<any Draft> {
        singleton(documentID) { @MainActor in LocalDraft(documentID: documentID) }
    }
    var database: AsyncProvider<Database> { singleton { await Database.open() } }
}

// MARK: - View model

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class FeedViewModel {
    @ObservationIgnored @Dependency(\.feedStore) var store
    @ObservationIgnored @Dependency(\.feedService) var service
    var items: [String] = []

    func load() { items = store.load() }
}

// MARK: - Supplied by the app target, declared by this feature

protocol Tracker {
    func track(_ event: String)
}

protocol Haptics {
    var style: String { get }
}

final class NoHaptics: Haptics {
    let style = "none"
}

extension DependencyContainer {
    /// Where the placeholders are declared, for the tests that read the line a stop or an
    /// issue points at: `tracker` is on the next line, `haptics` on the one after.
    static let placeholdersLine: UInt = #line + 1
    var tracker: Provider<any Tracker> { unimplemented(on: MainActor.self) }
    var haptics: Provider<any Haptics> { unimplemented(on: MainActor.self, placeholder: NoHaptics()) }
    /// A `Sendable` value, so the plain form serves; its placeholder is made by main-actor
    /// code, which must run on the main actor only.
    var greeting: Provider<String> { unimplemented(placeholder: Greeting.standard()) }
}

/// Main-actor code that makes a value (a struct here is isolated to the main actor).
struct Greeting {
    static func standard() -> String { "hello" }
}

/// A screen's model that reports what the user does, through the tracker the app supplies.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class CheckoutViewModel {
    @ObservationIgnored @Dependency(\.tracker) var tracker
    var paid = false

    func pay() {
        paid = true
        tracker.track("paid")
    }
}
