// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DependencyInjection",
    platforms: [
        .iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1),
    ],
    products: [
        .library(name: "DependencyInjection", targets: ["DependencyInjection"]),
        .library(name: "DependencyInjectionTesting", targets: ["DependencyInjectionTesting"]),
    ],
    targets: [
        // The few machine-level reads the engine makes on every construction (a thread-local
        // variable, an atomic load, the running task's identity), in C because Swift has no
        // cheap form of them on this package's oldest systems. Not a product: only
        // DependencyInjection imports it, internally (and its tests, to watch the runtime).
        .target(name: "_DependencyInjectionShims"),
        .target(name: "DependencyInjection", dependencies: ["_DependencyInjectionShims"]),
        .target(name: "DependencyInjectionTesting", dependencies: ["DependencyInjection"]),
        .testTarget(name: "DependencyInjectionTests", dependencies: ["DependencyInjection"]),
        .testTarget(
            name: "DependencyInjectionTestingTests",
            dependencies: ["DependencyInjection", "DependencyInjectionTesting"]
        ),
        // A module built the way new app projects are: main-actor default isolation and
        // nonisolated(nonsending) async functions, written as an app is: plain protocols and
        // classes, main-actor registrations and overrides, an @Observable view model, and
        // tests with the testing product. (`.defaultIsolation` needs tools 6.2; the flag
        // does not.)
        .testTarget(
            name: "DefaultMainActorTests",
            dependencies: ["DependencyInjection", "DependencyInjectionTesting"],
            swiftSettings: [
                .unsafeFlags(["-default-isolation", "MainActor"]),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]
        ),

        // The example app (`swift run feed-demo`): not a product of the package.
        .target(
            name: "FeedDemoKit", dependencies: ["DependencyInjection"],
            path: "Examples/FeedDemo/Sources/FeedDemoKit"),
        .executableTarget(
            name: "feed-demo", dependencies: ["DependencyInjection", "FeedDemoKit"],
            path: "Examples/FeedDemo/Sources/feed-demo"),
        // Depends on `feed-demo` so that `swift test` builds the binary its CLI tests run.
        .testTarget(
            name: "FeedDemoTests", dependencies: ["DependencyInjection", "FeedDemoKit", "feed-demo"],
            path: "Examples/FeedDemo/Tests/FeedDemoTests"),
    ],
    swiftLanguageModes: [.v6]
)

// Swift settings, for every target but the C one.
for target in package.targets where target.name != "_DependencyInjectionShims" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ])
    target.swiftSettings = settings
}
