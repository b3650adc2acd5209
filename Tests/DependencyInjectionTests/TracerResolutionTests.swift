import DependencyInjection
import Foundation
import Testing

final class LaunchClock: Sendable {
    init() {}
}

/// Where a tracer writes, resolved from the container like any logger.
final class TraceLog: Sendable {
    let lines = Collected<String>()
    init() {}
}

extension DependencyContainer {
    var launchClock: Provider<LaunchClock> { singleton { LaunchClock() } }
    var traceLog: Provider<TraceLog> { singleton { TraceLog() } }
    var warmImageCache: AsyncProvider<ImageCache> { singleton { ImageCache() } }
}

/// A tracer may resolve dependencies, including the one just built; what it resolves is
/// not traced. Each test runs in a child process: before the fix a tracer that resolved
/// crashed (a false cycle, or endless recursion).
@Suite struct TracerResolutionTests {
    // MARK: - Resolving what was just built

    @Test func aTracerMayResolveTheSingletonJustBuilt() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            let batches = Collected<[String]>()
            let seen = Collected<LaunchClock>()
            container.tracer = ResolutionTracer { events in
                batches.append(events.map(\.name))
                seen.append(container.launchClock())
            }
            let clock = container.launchClock()
            _ = container.launchClock()
            container.tracer = nil

            precondition(batches.values == [["launchClock"], ["launchClock"]], "\(batches.values)")
            precondition(seen.values.count == 2, "\(seen.values.count) resolutions in the tracer")
            precondition(seen.values.allSatisfy { $0 === clock }, "the tracer got another instance")
        }
    }

    // MARK: - Resolving something else

    /// The logger is built before tracing starts, so every resolution the tracer makes is
    /// a cached one (before the fix each was traced again, recursing until the stack ran out).
    @Test func aTracerMayResolveALoggerAndItsOwnResolutionsAreNotTraced() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            _ = container.traceLog()
            container.tracer = ResolutionTracer { events in
                let log = container.traceLog()
                for event in events { log.lines.append(event.name) }
            }
            _ = container.launchClock()
            _ = container.feedLoader()
            container.tracer = nil

            let lines = container.traceLog().lines.values
            precondition(lines == ["launchClock", "feedLoader", "httpClient"], "\(lines)")
        }
    }

    /// Here the tracer builds the logger on its first call.
    @Test func aTracerOfAnAsyncResolutionMayResolveALogger() async {
        await #expect(processExitsWith: .success) {
            let container = DependencyContainer()
            container.tracer = ResolutionTracer { events in
                let log = container.traceLog()
                for event in events { log.lines.append(event.name) }
            }
            _ = try await container.warmImageCache()
            _ = try await container.warmImageCache()
            container.tracer = nil

            let lines = container.traceLog().lines.values
            precondition(lines == ["warmImageCache", "warmImageCache"], "\(lines)")
        }
    }
}

/// Why an async registration failed, for the trace of a resolution that throws.
struct LaunchFailure: Error {}

extension DependencyContainer {
    /// Builds the launch clock, then fails.
    var failingLaunch: AsyncProvider<Int> {
        factory {
            _ = self.launchClock()
            throw LaunchFailure()
        }
    }
}

extension TracerResolutionTests {
    // MARK: - Resolutions that throw

    /// What a throwing resolution built before it threw still reaches the tracer; the
    /// resolution that threw has no event of its own.
    @Test func aThrowingResolutionDeliversWhatItBuilt() async {
        let container = DependencyContainer()
        let batches = Collected<[String]>()
        container.tracer = ResolutionTracer { events in
            batches.append(events.map { "\($0.name) \($0.depth) \($0.outcome.rawValue)" })
        }
        await #expect(throws: LaunchFailure.self) { try await container.failingLaunch() }
        #expect(batches.values == [["launchClock 1 built"]])
    }
}
