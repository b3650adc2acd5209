import FeedDemoKit
import Foundation
import Testing

/// Parsing `feed-demo`'s command line.
@Suite struct FeedDemoOptionsTests {
    @Test func noArgumentsIsAPlainRun() throws {
        #expect(try FeedDemoOptions.parse([]) == FeedDemoOptions())
    }

    @Test func flagsCombineInAnyOrder() throws {
        let options = try FeedDemoOptions.parse(["--trace", "--offline", "--mocks"])
        #expect(options.trace && options.offline && options.mocks)
        #expect(!options.help)
        #expect(try FeedDemoOptions.parse(["-h"]).help)
        #expect(try FeedDemoOptions.parse(["--help"]).help)
    }

    @Test func valuesFollowTheirOption() throws {
        let options = try FeedDemoOptions.parse(["--cache-dir", "/tmp/x", "--feed", "feed.json"])
        #expect(options.cacheDirectory?.path == "/tmp/x")
        #expect(options.feedFile?.lastPathComponent == "feed.json")
        #expect(options.feedFile?.isFileURL == true)
    }

    @Test(arguments: [
        (["--bogus"], "unknown argument '--bogus'"),
        (["offline"], "unknown argument 'offline'"),
        (["--cache-dir"], "--cache-dir needs a value"),
        (["--feed", "--offline"], "--feed needs a value"),
    ])
    func badArgumentsSayWhatIsWrong(arguments: [String], message: String) {
        #expect(throws: FeedDemoUsageError(message: message)) {
            try FeedDemoOptions.parse(arguments)
        }
    }

    @Test func usageNamesEveryOption() {
        for option in ["--offline", "--mocks", "--trace", "--cache-dir", "--feed", "--help"] {
            #expect(FeedDemoOptions.usage.contains(option))
        }
    }
}
