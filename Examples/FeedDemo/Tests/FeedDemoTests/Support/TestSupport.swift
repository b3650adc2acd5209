import DependencyInjection
import FeedDemoKit
import Foundation

/// Runs `body` with a new, empty folder that is removed afterwards.
func withTemporaryDirectory<Result>(_ body: (URL) throws -> Result) throws -> Result {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("FeedDemoTests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory)
}

/// A ``FeedLog`` that keeps the events, for checking what the loaders reported.
final class RecordingFeedLog: FeedLog, @unchecked Sendable {
    // @unchecked Sendable: `recorded` is only touched while holding `lock`.
    private let lock = NSLock()
    private var recorded: [FeedEvent] = []

    func record(_ event: FeedEvent) {
        lock.lock()
        defer { lock.unlock() }
        recorded.append(event)
    }

    var events: [FeedEvent] {
        lock.lock()
        defer { lock.unlock() }
        return recorded
    }
}

/// One test's world: a child container composed the way the app composes its own, with
/// the cache in the test's folder and the events recorded instead of printed.
struct FeedWorld {
    let container: DependencyContainer
    let log = RecordingFeedLog()

    init(
        mocked: Bool = false, offline: Bool = false, cacheDirectory: URL, feedURL: URL? = nil
    ) {
        container = DependencyContainer(parent: mocked ? .mocks : .default)
        container.compose(
            FeedAppComposer(offline: offline, feedURL: feedURL, cacheDirectory: cacheDirectory))
        let log = self.log
        container.override(\.feedLog) { log }
    }

    /// The cache file of the live store in `directory`.
    static func cacheFile(in directory: URL) -> URL {
        FileFeedStore(directory: directory).fileURL
    }
}

/// The items of the bundled feed document, in order.
let bundledTitles = [
    "Fishing boats leaving the harbour at dawn",
    "Fog rolling over the ridge",
    "Night market lanterns",
    "First snow on the allotments",
]
