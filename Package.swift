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
