import DependencyInjection
import Foundation
import Testing

// A request's object that reads its `@Dependency` properties for the first time in its
// `deinit`: as the request's scope is released, the scope is already gone, and the read
// stops with a message that says to end the scope with `shutdown()`; a request that ends
// with `shutdown()` releases the object while the scope still resolves.

/// The app-wide pool a request's objects flush to.
final class DRPool: Sendable {}

/// A per-request object that reads its properties for the first time in its `deinit`.
final class DRFlushOnRelease: @unchecked Sendable {
    // @unchecked: the only mutable state is the `@Dependency` properties, which guard themselves.
    @Dependency(\.drPool) var pool
    @Dependency(\.drUser) var user
    private let flushed: Collected<String>
    init(flushed: Collected<String>) { self.flushed = flushed }
    deinit { flushed.append("\(user) flushed to the pool \(ObjectIdentifier(pool).hashValue)") }
}

extension DependencyContainer {
    var drPool: Provider<DRPool> { singleton { DRPool() } }
    var drUser: Provider<String> { unimplemented() }
    var drFlushed: Collected<String> { getValue(forKey: "dr.flushed") ?? Collected() }
    var drFlush: Provider<DRFlushOnRelease> { scoped { DRFlushOnRelease(flushed: self.drFlushed) } }
}

@Suite struct DeinitReadTests {
    /// `shutdown()` releases what the scope kept while the scope lives: the object's
    /// `deinit` reads the request's user and the app's pool.
    @Test func aRequestEndedWithShutdownLetsItsObjectsDeinitReadTheirProperties() async {
        await #expect(processExitsWith: .success) {
            let app = DependencyContainer()
            let flushed = Collected<String>()
            app.setValue(flushed, forKey: "dr.flushed")
            do {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.drUser) { "ada" }
                _ = request.drFlush()
                request.shutdown()
            }
            let pool = ObjectIdentifier(app.drPool()).hashValue
            precondition(flushed.values == ["ada flushed to the pool \(pool)"], "\(flushed.values)")
        }
    }

    /// Released without `shutdown()`, the scope is gone when the object's `deinit` reads:
    /// the read stops, and the message says to end the scope with `shutdown()`.
    @Test func aRequestReleasedWithoutShutdownStopsSayingToShutItDown() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let app = DependencyContainer()
            do {
                let request = DependencyContainer(scopeOf: app)
                request.override(\.drUser) { "ada" }
                _ = request.drFlush()
            }
        }
        let output = standardError(of: result)
        #expect(output.contains("was released before the property was first read"), "\(output)")
        #expect(output.contains("end it with shutdown()"), "\(output)")
    }
}
