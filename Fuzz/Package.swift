// swift-tools-version:6.0
// libFuzzer executables for Burrow's fuzz targets (Sources/FuzzTargets in the root package).
// A separate package because each executable gets its `main` from libFuzzer: it only links
// with `--sanitize=fuzzer`, which the root package's normal build and tests must not need.
// Built and run by `make fuzz` from the repository root.
import PackageDescription

let targets = ["mls-message", "group-data", "event-json", "nip44", "marmot-event", "group-event", "pigeon-frame", "pigeon-card", "mesh-packet", "mesh-fragment", "backup-file", "feed-envelope", "feed-sync-frame"]

let package = Package(
    name: "BurrowFuzz",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "Burrow", path: "..")],
    targets: targets.map { name in
        .executableTarget(
            name: "fuzz-\(name)",
            dependencies: [.product(name: "FuzzTargets", package: "Burrow")],
            path: "Sources/fuzz-\(name)",
            swiftSettings: [.swiftLanguageMode(.v5)]
        )
    }
)
