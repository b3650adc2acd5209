// swift-tools-version: 6.0
import PackageDescription

// A package of its own, so that the library stays free of dependencies: it times
// DependencyInjection beside direct construction, Swinject and swift-dependencies.
let package = Package(
    name: "Benchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "DependencyInjection", path: ".."),
        .package(url: "https://github.com/Swinject/Swinject.git", exact: "2.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
    ],
    targets: [
        // The heap in use, for `--memory` (bytes per holder). DWARF 4: the valgrind of
        // Debian 12 (3.19) gives up on the DWARF 5 that clang emits by default.
        .target(name: "HeapStatistics", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .executableTarget(
            name: "ResolutionBenchmarks",
            dependencies: [
                "HeapStatistics",
                .product(name: "DependencyInjection", package: "DependencyInjection"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                // The callgrind loops (HotPaths.swift) must stay one function each: the
                // merge-functions pass (its results are named `…Tm`) would fold loops that
                // differ only in a type or a callee into one body, and callgrind could not
                // tell them apart. This target only; the library is built as usual.
                .unsafeFlags(["-Xfrontend", "-disable-llvm-merge-functions-pass"]),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
