/// Something worth telling the user while the feed loads.
public enum FeedEvent: Sendable, Hashable, CustomStringConvertible {
    /// The cache decorator saved what its loader returned.
    case cacheSaved(count: Int)
    /// The cache decorator could not save what its loader returned; the items are still
    /// shown.
    case cacheSaveFailed(reason: String)
    /// The fallback composite's primary loader failed, so it asks the fallback.
    case primaryFailed(reason: String)
    /// The fallback composite served the fallback's items.
    case fallbackServed(count: Int)

    /// One line for the console.
    public var description: String {
        switch self {
        case .cacheSaved(let count):
            "cache: saved \(count) \(count == 1 ? "item" : "items")"
        case .cacheSaveFailed(let reason):
            "cache: could not save the feed: \(reason)"
        case .primaryFailed(let reason):
            "fallback: the primary loader failed (\(reason)), asking the fallback"
        case .fallbackServed(let count):
            "fallback: served \(count) cached \(count == 1 ? "item" : "items")"
        }
    }
}

/// Receives the ``FeedEvent``s of the loaders that report them.
///
/// The app prints them; a test records them to check what happened.
public protocol FeedLog: Sendable {
    /// Reports one event.
    ///
    /// - Parameter event: What happened.
    func record(_ event: FeedEvent)
}

/// A ``FeedLog`` that writes each event as one line starting with `• `.
public struct PrintingFeedLog: FeedLog {
    private let write: @Sendable (String) -> Void

    /// Creates a log that hands its lines to `write`.
    ///
    /// - Parameter write: Receives one line per event, without a newline; prints it by
    ///   default.
    public init(write: @escaping @Sendable (String) -> Void = { print($0) }) {
        self.write = write
    }

    /// Writes the event as a line.
    ///
    /// - Parameter event: What happened.
    public func record(_ event: FeedEvent) {
        write("• \(event)")
    }
}
