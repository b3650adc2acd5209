import Dispatch
import Foundation

// MARK: - Sinks and clocks

/// Consumes a result so that the optimizer cannot delete the work that produced it.
///
/// It is never inlined and never optimized, so the compiler must assume it keeps the
/// object: every allocation that reaches it really happens.
@inline(never)
@_optimize(none)
func blackHole(_ object: AnyObject) {}

/// Consumes a flag, for the sanity checks that read a property of the result.
@inline(never)
@_optimize(none)
func blackHole(_ flag: Bool) {}

/// A monotonic clock in nanoseconds that works on every platform the package supports.
@inline(__always)
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Times `count` runs of `operation` on this thread, each result consumed.
///
/// Always inlined, so that each benchmark gets its own specialised loop with the
/// operation inlined into it and no closure call per iteration.
@inline(__always)
func timeLoop(_ count: Int, _ operation: () -> AnyObject) -> UInt64 {
    timeLoop(count, sink: blackHole, operation)
}

/// Times `count` requests on this thread, each response consumed (scenarios G and H).
@inline(__always)
func timeLoop(_ count: Int, _ operation: () -> Bool) -> UInt64 {
    timeLoop(count, sink: blackHole, operation)
}

@inline(__always)
private func timeLoop<Result>(_ count: Int, sink: (Result) -> Void, _ operation: () -> Result) -> UInt64 {
    let start = now()
    for _ in 0..<count {
        sink(operation())
    }
    return now() &- start
}

// MARK: - Two threads at once

/// Hands a value that is not `Sendable` to the benchmark threads, which only read it.
struct Shared<Value>: @unchecked Sendable {
    // @unchecked: used only for values that are safe to read concurrently (containers
    // documented as thread-safe, or a Swinject resolver from `synchronize()`).
    let value: Value
}

/// Runs `body(count / threads)` on `threads` threads started together behind a gate,
/// and returns the wall time from opening the gate until every thread has finished.
///
/// Each thread is created and parked before the clock starts, so thread creation is not
/// timed; the time to wake the parked threads is, and it is tens of microseconds against
/// repetitions of many milliseconds.
func timeConcurrently(
    _ count: Int,
    threads: Int = 2,
    _ body: @escaping @Sendable (Int) -> Void
) -> UInt64 {
    let perThread = max(1, count / threads)
    let ready = DispatchSemaphore(value: 0)
    let gate = DispatchSemaphore(value: 0)
    let finished = DispatchGroup()
    for _ in 0..<threads {
        finished.enter()
        let thread = Thread {
            ready.signal()
            gate.wait()
            body(perThread)
            finished.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<threads { ready.wait() }
    let start = now()
    for _ in 0..<threads { gate.signal() }
    finished.wait()
    return now() &- start
}

// MARK: - Scenarios, contestants, measurements

/// One row of the table.
enum Scenario: String, CaseIterable, Sendable {
    case leaf = "A"
    case singleton = "B"
    case chain = "C"
    case property = "D"
    case concurrentSingleton = "E"
    case override = "F"
    case requestScope = "G"
    case requestChild = "H"

    var title: String {
        switch self {
        case .leaf: "A. new leaf object"
        case .singleton: "B. cached singleton"
        case .chain: "C. five-level chain"
        case .property: "D. object with injected property"
        case .concurrentSingleton: "E. singleton, 2 threads"
        case .override: "F. override, then resolve"
        case .requestScope: "G. per-request scope"
        case .requestChild: "H. G in a plain child container"
        }
    }

    /// Whether the two scenarios are timed in the same rounds, because the table compares
    /// them: a scope (G) and a plain child container (H) doing the same request.
    func sharesRounds(with other: Scenario) -> Bool {
        let requests: Set<Scenario> = [.requestScope, .requestChild]
        return requests.contains(self) && requests.contains(other)
    }
}

/// Times `count` operations and returns the elapsed nanoseconds.
typealias Measure = (_ count: Int) -> UInt64

/// One column of the table: a way of wiring the object graph.
struct Contestant {
    let name: String
    /// Whether this column is a DI package whose speed we compare against ours.
    let isPeer: Bool
    /// Asserts that the implementation does what the scenarios claim (a factory builds
    /// anew, a singleton is shared, an override serves the stub), before anything is timed.
    let check: () -> Void
    let measures: [Scenario: Measure]
}

/// The spread of ns/op over the repetitions of one benchmark.
struct Summary {
    let median: Double
    let min: Double
    let max: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

struct RunOptions {
    var repetitions = 21
    /// Target duration of one repetition of one benchmark.
    var repetitionNanoseconds: UInt64 = 20_000_000
    var scenarios = Scenario.allCases
}

/// Finds how many operations make one repetition last about `target` nanoseconds.
/// The doubling runs double as warm-up: caches, lazy globals and first builds.
func calibrate(_ measure: Measure, target: UInt64) -> Int {
    var count = 1
    while true {
        let elapsed = measure(count)
        if elapsed >= 2_000_000 || count >= 1 << 30 {
            let scaled = Double(count) * Double(target) / Double(max(elapsed, 1))
            // Even, so that two threads share the operations exactly (scenario E).
            return max(2, Int(scaled.rounded()) & ~1)
        }
        count *= 2
    }
}

/// Runs every benchmark of every scenario, interleaving the contestants repetition by
/// repetition so that a burst of load on the machine hits all columns alike. Scenarios
/// that are compared with each other (G and H) share their rounds too.
func runAll(_ contestants: [Contestant], options: RunOptions) -> [Scenario: [String: Summary]] {
    var results: [Scenario: [String: Summary]] = [:]
    var groups: [[Scenario]] = []
    for scenario in options.scenarios {
        if let last = groups.last?.last, last.sharesRounds(with: scenario) {
            groups[groups.count - 1].append(scenario)
        } else {
            groups.append([scenario])
        }
    }
    for group in groups {
        let entries = group.flatMap { scenario in
            contestants.compactMap { contestant in
                contestant.measures[scenario].map { (scenario: scenario, name: contestant.name, measure: $0) }
            }
        }
        let counts = entries.map { calibrate($0.measure, target: options.repetitionNanoseconds) }
        var samples = Array(repeating: [Double](), count: entries.count)
        for _ in 0..<options.repetitions {
            for (index, entry) in entries.enumerated() {
                let elapsed = entry.measure(counts[index])
                samples[index].append(Double(elapsed) / Double(counts[index]))
            }
        }
        for (index, entry) in entries.enumerated() {
            results[entry.scenario, default: [:]][entry.name] = Summary(samples[index])
        }
        for scenario in group { printProgress("  \(scenario.title): done") }
    }
    return results
}

func printProgress(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
