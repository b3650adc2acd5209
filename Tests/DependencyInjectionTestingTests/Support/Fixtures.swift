import DependencyInjection
import Foundation

// Registrations of a small feed feature, as an app team would write them.

protocol HTTPClient: AnyObject, Sendable { var name: String { get } }
final class LiveHTTPClient: HTTPClient { let name = "live" }
final class StubHTTPClient: HTTPClient {
    let name: String
    init(_ name: String = "stub") { self.name = name }
}

final class FeedLoader: Sendable {
    let client: any HTTPClient
    init(client: any HTTPClient) { self.client = client }
}

/// A singleton that reads a stored value each time it is asked, through a closure that
/// holds the container it was built in.
final class TokenReader: Sendable {
    let read: @Sendable () -> String?
    init(read: @escaping @Sendable () -> String?) { self.read = read }
}

/// A singleton that remembers the stored value it was built with.
final class SessionStore: Sendable {
    let owner: String?
    init(owner: String?) { self.owner = owner }
}

protocol Analytics: Sendable { var name: String { get } }
struct NoAnalytics: Analytics { let name = "placeholder" }
struct RecordingAnalytics: Analytics { let name = "recording" }

protocol Payments: Sendable {}
struct StubPayments: Payments {}

extension DependencyContainer {
    var baseURL: String { isMocked ? "http://localhost:8080" : "https://api.example.com" }
    var token: String? { getValue(forKey: "token") }
    var httpClient: Provider<any HTTPClient> { singleton { LiveHTTPClient() } }
    var feedLoader: Provider<FeedLoader> { factory { FeedLoader(client: self.httpClient()) } }
    var sessionStore: Provider<SessionStore> { singleton { SessionStore(owner: self.token) } }
    var tokenReader: Provider<TokenReader> { singleton { TokenReader { self.token } } }

    /// Supplied by another module; reported, not fatal, when it is missing.
    var analytics: Provider<any Analytics> { unimplemented(placeholder: NoAnalytics()) }
    /// Supplied by another module; fatal when it is missing.
    var payments: Provider<any Payments> { unimplemented() }
}

/// An object that injects what the tests override.
final class FeedViewModel: @unchecked Sendable {
    @Dependency(\.feedLoader) var loader
    @Dependency(\.token) var token
    @Dependency(\.sessionStore) var session
}

/// A value the tests share across threads, behind a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }
    var value: Value { withValue { $0 } }
}

/// A weak reference the tests can read after the object's owner is gone.
final class WeakReference<Object: AnyObject>: @unchecked Sendable {
    private let lock = NSLock()
    private weak var stored: Object?
    var object: Object? {
        get { lock.lock(); defer { lock.unlock() }; return stored }
        set { lock.lock(); stored = newValue; lock.unlock() }
    }
}
