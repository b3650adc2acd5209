// Test doubles, written as the app's own types are.

final class StubFeedStore: FeedStore {
    let items: [String]
    init(items: [String]) { self.items = items }
    func load() -> [String] { items }
}

/// Whether two resolved existentials are the same object.
///
/// The app's protocols (`FeedStore`, `Greeter`) are plain protocols, so their values
/// compare by the object behind them.
func isSameInstance<Existential>(_ first: Existential, _ second: Existential) -> Bool {
    (first as AnyObject) === (second as AnyObject)
}

final class RecordingTracker: Tracker {
    private(set) var events: [String] = []
    func track(_ event: String) { events.append(event) }
}

final class GentleHaptics: Haptics {
    let style = "gentle"
}
