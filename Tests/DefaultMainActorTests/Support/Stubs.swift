// Test doubles, written as the app's own types are.

final class StubFeedStore: FeedStore {
    let items: [String]
    init(items: [String]) { self.items = items }
    func load() -> [String] { items }
}

/// Whether two resolved existentials are the same object.
///
/// `FeedStore` is a plain protocol, so its values compare by the object behind them.
func isSameInstance(_ first: any FeedStore, _ second: any FeedStore) -> Bool {
    (first as AnyObject) === (second as AnyObject)
}
