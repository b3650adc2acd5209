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
        .target(name: "DependencyInjection"),
        .target(name: "DependencyInjectionTesting", dependencies: ["DependencyInjection"]),
        .testTarget(name: "DependencyInjectionTests", dependencies: ["DependencyInjection"]),
        .testTarget(
            name: "DependencyInjectionTestingTests",
            dependencies: ["DependencyInjection", "DependencyInjectionTesting"]
        ),
        // A module built the way new app projects are: main-actor default isolation and
        // nonisolated(nonsending) async functions. It proves registration and injection
        // read the same there. (`.defaultIsolation` needs tools 6.2; the flag does not.)
        .testTarget(
            name: "DefaultMainActorTests",
            dependencies: ["DependencyInjection"],
            swiftSettings: [
                .unsafeFlags(["-default-isolation", "MainActor"]),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("MemberImportVisibility"),
    ])
    target.swiftSettings = settings
}
