import Foundation

// swift run -c release --package-path Benchmarks                       the table
// swift run -c release --package-path Benchmarks ResolutionBenchmarks --quick
// swift run -c release --package-path Benchmarks ResolutionBenchmarks --hot-path singleton 100000
// swift run -c release --package-path Benchmarks ResolutionBenchmarks --memory

let usage = """
    usage: ResolutionBenchmarks [--quick] [--repetitions N] [--milliseconds N] [--scenarios ABCDEFGH]
           ResolutionBenchmarks --hot-path \(HotPath.allCases.map(\.rawValue).joined(separator: "|")) COUNT
           ResolutionBenchmarks --memory
    """

func fail(_ message: String) -> Never {
    printProgress(message)
    printProgress(usage)
    exit(2)
}

var options = RunOptions()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--hot-path":
        guard let name = arguments.popFirst(), let path = HotPath(rawValue: name),
            let count = arguments.popFirst().flatMap({ Int($0) }), count >= 0
        else { fail("--hot-path needs a path and a count") }
        runHotPath(path, count: count)
        exit(0)
    case "--memory":
        printHolderMemory()
        exit(0)
    case "--quick":
        options.repetitions = 5
        options.repetitionNanoseconds = 5_000_000
    case "--repetitions":
        guard let value = arguments.popFirst().flatMap({ Int($0) }), value > 0 else {
            fail("--repetitions needs a positive number")
        }
        options.repetitions = value
    case "--milliseconds":
        guard let value = arguments.popFirst().flatMap({ UInt64($0) }), value > 0 else {
            fail("--milliseconds needs a positive number")
        }
        options.repetitionNanoseconds = value * 1_000_000
    case "--scenarios":
        guard let letters = arguments.popFirst() else { fail("--scenarios needs letters") }
        let chosen = letters.uppercased().compactMap { Scenario(rawValue: String($0)) }
        guard !chosen.isEmpty else { fail("--scenarios needs letters among ABCDEFGH") }
        options.scenarios = Scenario.allCases.filter(chosen.contains)
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        fail("unknown argument \(argument)")
    }
}

#if DEBUG
printProgress("warning: this is a debug build; time a release build (swift run -c release ...)")
#endif

let contestants = [
    directContestant(),
    dependencyInjectionContestant(),
    swinjectContestant(),
    swiftDependenciesContestant(),
]
for contestant in contestants { contestant.check() }
printProgress("Sanity checks passed; timing \(options.scenarios.count) scenarios, \(options.repetitions) repetitions each.")

let loadAtStart = Report.loadAverage()
let started = Date()
let results = runAll(contestants, options: options)
let seconds = Date().timeIntervalSince(started)
print(Report(results: results, contestants: contestants, options: options, seconds: seconds,
    loadAtStart: loadAtStart).text)
