import FeedDemoKit
import Foundation
import Testing

/// The built `feed-demo` binary, run as a user runs it.
///
/// Each test runs it in its own folder, with `TMPDIR` pointing there, so that where
/// Foundation honours `TMPDIR` (Linux) the default cache of one test is not another's.
/// Tests that need an empty cache name their own with `--cache-dir`.
@Suite struct CommandLineTests {
    // MARK: - Runs

    @Test func noArgumentsShowsTheFeedAndFillsTheCache() throws {
        try withTemporaryDirectory { directory in
            let run = try FeedDemo.run([], in: directory)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("feed-demo on the live container (online)"))
            #expect(run.output.contains("• cache: saved 4 items"))
            #expect(run.output.contains("Feed (4 items)"))
            for title in bundledTitles { #expect(run.output.contains(title)) }
            #expect(run.errors.isEmpty)
            // The default cache folder, as the run reports it: `feed-demo` in TMPDIR.
            let folder = try #require(
                run.output.split(separator: "\n").first { $0.hasPrefix("  cache: ") }?.dropFirst(9))
            #expect(folder.hasSuffix("feed-demo"))
            #expect(FileManager.default.fileExists(atPath: "\(folder)/feed-cache.json"))
        }
    }

    @Test func offlineTraceShowsEveryResolutionAndTheFallback() throws {
        try withTemporaryDirectory { directory in
            #expect(try FeedDemo.run([], in: directory).status == 0)

            let run = try FeedDemo.run(["--offline", "--trace"], in: directory)
            #expect(run.status == 0, "\(run.errors)")
            let lines = run.output.split(separator: "\n").map(String.init)
            let expectedTrace = [
                "feedScreen: FeedScreen [factory] built",
                "  feedLoader: FeedLoader [factory] built",
                "    remoteFeedLoader: RemoteFeedLoader [factory] built",
                "      httpClient: HTTPClient [singleton] built from override",
                "    localFeedLoader: LocalFeedLoader [factory] built",
                "      feedStore: FeedStore [singleton] built",
                "    feedLog: FeedLog [singleton] built",
            ]
            let start = try #require(lines.firstIndex(of: "resolutions:"))
            let trace = lines[(start + 1)...].prefix(expectedTrace.count)
            #expect(zip(trace, expectedTrace).allSatisfy { $0.hasPrefix($1) }, "\(trace)")
            #expect(trace.count == expectedTrace.count)
            #expect(run.output.contains("the network is offline"))
            #expect(run.output.contains("• fallback: served 4 cached items"))
            #expect(run.output.contains("Feed (4 items)"))
            #expect(!run.output.contains("cache: saved"))
        }
    }

    @Test func offlineWithAnEmptyCacheSaysHowToFillIt() throws {
        try withTemporaryDirectory { directory in
            let empty = directory.appendingPathComponent("empty-cache").path
            let run = try FeedDemo.run(["--offline", "--cache-dir", empty], in: directory)
            #expect(run.status == FeedDemoOptions.loadFailure)
            #expect(run.errors.contains("feed-demo: could not load the feed."))
            #expect(run.errors.contains("nothing is cached yet"))
            #expect(run.errors.contains("Run `feed-demo` once without --offline"))
        }
    }

    @Test func mocksShowTheMockFeed() throws {
        try withTemporaryDirectory { directory in
            let run = try FeedDemo.run(["--mocks"], in: directory)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("feed-demo on the mocks container"))
            #expect(run.output.contains("Mock feed (2 items)"))
            #expect(run.output.contains("Mock photo one"))
            #expect(!run.output.contains(bundledTitles[0]))
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("feed-demo").path))
        }
    }

    @Test func cacheDirAndFeedChooseTheFiles() throws {
        try withTemporaryDirectory { directory in
            let feed = directory.appendingPathComponent("feed.json")
            try Data(
                #"{"items":[{"id":"1","title":"Local file item","image":"https://example.com/1.jpg"}]}"#
                    .utf8
            ).write(to: feed)
            let cache = directory.appendingPathComponent("my-cache")
            let run = try FeedDemo.run(["--feed", feed.path, "--cache-dir", cache.path], in: directory)
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("Feed (1 item)"))
            #expect(run.output.contains("Local file item"))
            #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("feed-cache.json").path))
        }
    }

    // MARK: - Usage

    @Test func helpPrintsUsageAndSucceeds() throws {
        try withTemporaryDirectory { directory in
            let run = try FeedDemo.run(["--help"], in: directory)
            #expect(run.status == 0)
            #expect(run.output.hasPrefix("USAGE: feed-demo"))
            #expect(run.errors.isEmpty)
        }
    }

    @Test(arguments: [["--bogus"], ["--offline", "extra"], ["--cache-dir"]])
    func badArgumentsPrintUsageAndFail(arguments: [String]) throws {
        try withTemporaryDirectory { directory in
            let run = try FeedDemo.run(arguments, in: directory)
            #expect(run.status == FeedDemoOptions.usageFailure)
            #expect(run.errors.hasPrefix("feed-demo: "))
            #expect(run.errors.contains("USAGE: feed-demo"))
            #expect(run.output.isEmpty)
        }
    }
}

/// Finds and runs the `feed-demo` binary that `swift test` built beside the tests.
enum FeedDemo {
    /// What one run printed and how it ended.
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// The binary: in the build products folder, where the test runner also lives
    /// (`FEED_DEMO_BINARY` overrides it).
    static let binary: URL? = {
        var folders: [URL] = []
        if let executable = Bundle.main.executableURL { folders.append(executable.deletingLastPathComponent()) }
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        // On Apple platforms the tests are a bundle inside the products folder.
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            folders.append(bundle.bundleURL.deletingLastPathComponent())
        }
        var candidates = folders.map { $0.appendingPathComponent("feed-demo") }
        if let path = ProcessInfo.processInfo.environment["FEED_DEMO_BINARY"] {
            candidates.insert(URL(fileURLWithPath: path), at: 0)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs the binary with `arguments` in `directory`, which is also its temporary folder.
    static func run(_ arguments: [String], in directory: URL) throws -> Run {
        let binary = try #require(binary, "feed-demo was not found next to the test runner")
        let outputFile = directory.appendingPathComponent("stdout.txt")
        let errorsFile = directory.appendingPathComponent("stderr.txt")
        try Data().write(to: outputFile)
        try Data().write(to: errorsFile)
        let output = try FileHandle(forWritingTo: outputFile)
        let errors = try FileHandle(forWritingTo: errorsFile)

        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = directory.path
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        try output.close()
        try errors.close()

        return Run(
            status: process.terminationStatus,
            output: String(decoding: try Data(contentsOf: outputFile), as: UTF8.self),
            errors: String(decoding: try Data(contentsOf: errorsFile), as: UTF8.self))
    }
}
