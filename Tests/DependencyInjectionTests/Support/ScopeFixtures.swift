import DependencyInjection
import Foundation

// An app with app-wide singletons, request values and per-request objects, for the tests
// of scope containers.

/// The app-wide store every request shares.
final class AppDatabase: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.auditTrail) var audit
    private let rows = Collected<String>()
    func insert(_ row: String) { rows.append(row) }
    var all: [String] { rows.values }
}

/// What an app-wide singleton resolves lazily, after it was built.
final class AuditTrail: Sendable {}

/// A clock the app registers and a scope may replace.
final class ScopeClock: Sendable {
    let name: String
    init(name: String) { self.name = name }
}

/// An app-wide singleton built from the clock.
final class Scheduler: Sendable {
    let clock: ScopeClock
    init(clock: ScopeClock) { self.clock = clock }
}

/// One request's handler: the request's user, and the app's database.
final class RequestHandler: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` property, which guards itself.
    @Dependency(\.appDatabase) var database
    @Dependency(\.requestUser) var injectedUser
    let user: String
    init(user: String) { self.user = user }

    func handle() -> String {
        database.insert(user)
        return injectedUser
    }
}

/// An app-wide singleton that wrongly reads a request value.
final class GreetingCache: Sendable {
    let user: String
    init(user: String) { self.user = user }
}

extension DependencyContainer {
    var appDatabase: Provider<AppDatabase> {
        singleton {
            self.count("appDatabase")
            return AppDatabase()
        }
    }
    var auditTrail: Provider<AuditTrail> { factory { AuditTrail() } }
    var scopeClock: Provider<ScopeClock> { singleton { ScopeClock(name: "app") } }
    var scheduler: Provider<Scheduler> { singleton { Scheduler(clock: self.scopeClock()) } }

    /// A request value: every request installs its own.
    var requestUser: Provider<String> { unimplemented() }
    var requestHandler: Provider<RequestHandler> {
        scoped {
            self.count("requestHandler")
            return RequestHandler(user: self.requestUser())
        }
    }
    var greetingCache: Provider<GreetingCache> { singleton { GreetingCache(user: self.requestUser()) } }
    var requestStamp: Provider<String> { factory { "stamp for " + self.requestUser() } }
    var asyncProfile: AsyncProvider<GreetingCache> { scoped { GreetingCache(user: self.requestUser()) } }
    var asyncDatabase: AsyncProvider<AppDatabase> { singleton { AppDatabase() } }
}

/// A file a request writes, closed when the request's scope shuts down.
final class RequestLogFile: @unchecked Sendable {
    private let lock = NSLock()
    private var closed = false
    func close() { lock.withLock { closed = true } }
    var isClosed: Bool { lock.withLock { closed } }
}

extension DependencyContainer {
    var requestLogFile: Provider<RequestLogFile> { scoped { RequestLogFile() }.onShutdown { $0.close() } }
}

/// What the registrations of the scope change tests build: where it came from, and what
/// it was built from.
final class ChainPart: Sendable {
    let source: String
    let inner: ChainPart?
    init(_ source: String, inner: ChainPart? = nil) { (self.source, self.inner) = (source, inner) }

    /// The source at the bottom of the chain of inner parts.
    var root: String { inner?.root ?? source }
}

/// An instance built from a ``ChainPart`` whose `deinit` runs a ``DeinitHook``: it runs
/// when a change drops it, after the container's lock, while the change is under way.
final class ChainProbe: Sendable {
    let inner: ChainPart
    let hook: DeinitHook?
    init(inner: ChainPart, hook: DeinitHook?) { (self.inner, self.hook) = (inner, hook) }
    deinit { hook?.fire() }
}
