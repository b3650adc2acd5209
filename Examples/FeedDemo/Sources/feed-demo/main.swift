// feed-demo: shows a feed composed by FeedDemoKit's FeedComposition.swift.
// Run `swift run feed-demo --help` for the options.

import DependencyInjection
import FeedDemoKit
import Foundation

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

let options: FeedDemoOptions
do {
    options = try FeedDemoOptions.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    printError("feed-demo: \(error)\n\n\(FeedDemoOptions.usage)")
    exit(FeedDemoOptions.usageFailure)
}
if options.help {
    print(FeedDemoOptions.usage)
    exit(FeedDemoOptions.success)
}

// This run's own world, layered over the app's container (or the mocks): what the
// composer stores and overrides stays in it.
let container = DependencyContainer(parent: options.mocks ? .mocks : .default)
if options.trace { container.tracer = .printer }
container.compose(
    FeedAppComposer(
        offline: options.offline, feedURL: options.feedFile,
        cacheDirectory: options.cacheDirectory))

let network = options.offline ? "offline" : "online"
if container.isMocked {
    print("feed-demo on the mocks container (\(network)): stub HTTP client, in-memory cache")
} else {
    print("feed-demo on the live container (\(network))")
    print("  feed:  \(container.feedURL.absoluteString)")
    print("  cache: \(container.feedCacheDirectory.path)")
}
if options.trace { print("resolutions:") }

do {
    let screen = container.feedScreen()
    print(try screen.render())
} catch {
    printError("feed-demo: could not load the feed.")
    for line in "\(error)".split(separator: "\n") { printError("  \(line)") }
    if options.offline,
        let failure = error as? FeedLoaderWithFallbackComposite.Failure,
        case .emptyCache? = failure.fallback as? LocalFeedLoader.Error
    {
        printError("Run `feed-demo` once without --offline to fill the cache, then try again.")
    }
    exit(FeedDemoOptions.loadFailure)
}
