public import Foundation

/// The command line of `feed-demo`, parsed.
public struct FeedDemoOptions: Sendable, Hashable {
    /// `--mocks`: run on a child of `DependencyContainer.mocks`.
    public var mocks = false
    /// `--offline`: the HTTP client fails, so the feed comes from the cache.
    public var offline = false
    /// `--trace`: print every resolution.
    public var trace = false
    /// `--help`: print the usage and do nothing else.
    public var help = false
    /// `--cache-dir <dir>`: the cache's folder, or `nil` for the default.
    public var cacheDirectory: URL?
    /// `--feed <file>`: a local feed document to serve instead of the bundled one.
    public var feedFile: URL?

    /// Creates the options of a run without arguments.
    public init() {}

    /// Exit status of a run that showed the feed.
    public static let success: Int32 = 0
    /// Exit status of a run that could not load the feed.
    public static let loadFailure: Int32 = 1
    /// Exit status of a run with bad arguments (`EX_USAGE`).
    public static let usageFailure: Int32 = 64

    /// Parses the arguments that follow the program's name.
    ///
    /// - Parameter arguments: The arguments, such as `["--offline", "--trace"]`.
    /// - Returns: The options.
    /// - Throws: ``FeedDemoUsageError`` for an unknown argument or a missing value.
    public static func parse(_ arguments: [String]) throws(FeedDemoUsageError) -> FeedDemoOptions {
        var options = FeedDemoOptions()
        var remaining = arguments[...]
        func value(after flag: String) throws(FeedDemoUsageError) -> String {
            guard let value = remaining.popFirst(), !value.isEmpty, !value.hasPrefix("-") else {
                throw FeedDemoUsageError(message: "\(flag) needs a value")
            }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--mocks": options.mocks = true
            case "--offline": options.offline = true
            case "--trace": options.trace = true
            case "-h", "--help": options.help = true
            case "--cache-dir":
                options.cacheDirectory = URL(
                    fileURLWithPath: try value(after: argument), isDirectory: true)
            case "--feed":
                options.feedFile = URL(fileURLWithPath: try value(after: argument))
            default:
                throw FeedDemoUsageError(message: "unknown argument '\(argument)'")
            }
        }
        return options
    }

    /// The help text.
    public static let usage = """
        USAGE: feed-demo [--offline] [--mocks] [--trace] [--cache-dir <dir>] [--feed <file>]

        Shows a small photo feed, loaded through the composition in FeedComposition.swift:
        a remote loader (over an HTTP client that serves a JSON document bundled in the
        app, never the network) whose feed is saved to a file cache, with that cache as
        the fallback when the remote fails.

        OPTIONS:
          --offline          The HTTP client fails every request, so the feed comes from
                             the cache. A run without --offline fills the cache: run
                             `feed-demo` once first. With an empty cache, --offline says
                             so and exits with status 1.
          --mocks            Run on DependencyContainer.mocks: a stub HTTP client serving
                             a mock feed, and an in-memory cache holding a mock item.
          --trace            Print every dependency resolution, indented by depth, with
                             its scope and whether it was built, cached or overridden.
          --cache-dir <dir>  Keep the cache in <dir> (default: feed-demo in the
                             temporary folder, $TMPDIR or /tmp).
          --feed <file>      Serve this local JSON file instead of the bundled document.
          -h, --help         Show this help.

        EXIT STATUS: 0 the feed was shown, 1 it could not be loaded, 64 bad arguments.
        """
}

/// A bad `feed-demo` command line.
public struct FeedDemoUsageError: Error, Hashable, CustomStringConvertible {
    /// What is wrong, such as `unknown argument '--bogus'`.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameter message: What is wrong.
    public init(message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
