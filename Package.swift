// swift-tools-version:6.0
// Burrow: a Nostr/Marmot group messaging node. Layering is described in Docs/ARCHITECTURE.md:
// protocol cores (Nostr, MLS) are sans-I/O; RelayClient and Store are the I/O edges; Node wires them.
import PackageDescription

/// Swift 6 language mode: data-race safety checked by the compiler.
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Burrow",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "burrow", targets: ["burrow"]),
        .executable(name: "burrow-failpoint-probe", targets: ["burrow-failpoint-probe"]),
        .executable(name: "burrow-bench", targets: ["burrow-bench"]),
        .executable(name: "burrow-relay", targets: ["burrow-relay"]),
        .library(name: "Nostr", targets: ["Nostr"]),
        .library(name: "MLS", targets: ["MLS"]),
        // For the libFuzzer executables in Fuzz/ (a separate package: `make fuzz`).
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // C shims over Debian's libraries.
        .systemLibrary(name: "CSecp256k1", pkgConfig: "libsecp256k1", providers: [.apt(["libsecp256k1-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSQLCipher", pkgConfig: "sqlcipher", providers: [.apt(["libsqlcipher-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        // sd-bus, for the BlueZ link layer (Docs/protocols/mesh.md 11.1): bluetoothd is driven over D-Bus.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        // SplitMix64, the one seeded generator: simulations, the UDP radio's impairment, fuzz targets, tests.
        .target(name: "SeededRandom", swiftSettings: swift6),

        // Protocol cores (sans-I/O).
        .target(
            name: "Nostr",
            dependencies: ["CSecp256k1", "CSodium", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        .target(
            name: "MLS",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        // Pigeon direct messages (Docs/protocols/pigeon-dm.md): identity cards, Noise XX, Double Ratchet, the DM engine.
        .target(
            name: "Pigeon",
            dependencies: ["Nostr", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        // The Burrow mesh (Docs/protocols/mesh.md): packets, fragments, the flooding router, store-and-forward,
        // nearby invites, and the simulated radio that drives routers in tests. Sans-I/O; a nearby invite carries
        // the join request as bytes (Node reads it), so the mesh does not import Marmot.
        .target(
            name: "Mesh",
            dependencies: ["Nostr", "SeededRandom", "CSodium", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        // The mesh's link layers: the loopback radio (Docs/protocols/mesh.md 11.2, UDP on 127.0.0.1) and BlueZ over
        // D-Bus (11.1, sd-bus).
        // D-Bus over sd-bus: a connection, its messages and values, and the thread that drives it.
        // BlueZ (MeshLinks) and GeoClue (NodeRuntime) are reached through it.
        .target(
            name: "DBus",
            dependencies: ["CSystemd", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            swiftSettings: swift6
        ),
        .target(
            name: "MeshLinks",
            dependencies: [
                "Mesh", "DBus", "CSystemd", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        // Location sharing (issue 23), sans-I/O: fixes and their checks, gpsd's JSON protocol, the sharing
        // schedule, fuzzing.
        .target(name: "Location", dependencies: ["Nostr"], swiftSettings: swift6),
        .target(
            name: "Marmot",
            dependencies: ["MLS", "Nostr", "CSodium", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),

        // Edges (I/O).
        .target(
            name: "RelayClient",
            dependencies: [
                "Nostr",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: swift6
        ),
        // A QR Code encoder (ISO/IEC 18004) for contact cards in the terminal.
        .target(name: "QRCode", swiftSettings: swift6),
        // The SQLite wrapper over Debian's SQLCipher, shared by the node's store and the relay.
        .target(name: "SQLite", dependencies: ["CSQLCipher"], swiftSettings: swift6),
        .target(
            name: "Store",
            dependencies: ["SQLite", "CSQLCipher", "CSodium"],
            swiftSettings: swift6
        ),

        // Wiring and programs.
        .target(
            name: "Node",
            dependencies: [
                "Nostr", "MLS", "Marmot", "Pigeon", "Mesh", "MeshLinks", "RelayClient", "Store", "Location", "Backup", "Feed", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        // The control socket (`<home>/burrow.sock`): the frames and the server and client through which
        // commands reach `burrow run`.
        .target(
            name: "Control",
            dependencies: [
                "Node", .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        // `burrow run` as one swift-service-lifecycle ServiceGroup: the node, control socket, embedded relay,
        // mesh and live loop as services with one shutdown path.
        .target(
            name: "NodeRuntime",
            dependencies: [
                "Node", "Control", "Mesh", "Location", "Store", "RelayServer", "DBus", "Web", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swift6
        ),
        // Backups (issue 25), sans-I/O: the sealed container (Argon2id, AES-256-GCM over the content, the header as AAD).
        .target(
            name: "Backup",
            dependencies: ["CSodium", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        // The family's page (issue 24): `burrow run --web` on Hummingbird, Leaflet from Debian, a WebSocket of nudges.
        .target(
            name: "Web",
            dependencies: [
                "Node", "Marmot", "Nostr", "Store", "QRCode", "RelayServer", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swift6
        ),
        // Feeds (issue 26, Docs/protocols/feed.md), sans-I/O: canonical JSON, envelopes, chains, contents, audiences.
        .target(
            name: "Feed",
            dependencies: ["Nostr", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        .target(
            name: "Conformance",
            dependencies: ["Nostr", "MLS", "Marmot", "Pigeon", "Mesh", "Feed", "SeededRandom", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swift6
        ),
        // The command-line program: a library (so the crash tests' probe runs the same code)
        // and its one-line main.
        .target(
            name: "BurrowCLI",
            dependencies: [
                "Node", "Control", "NodeRuntime", "Web", "Conformance", "QRCode", "Marmot", "MLS", "Nostr", "Pigeon", "Mesh",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swift6
        ),
        .executableTarget(name: "burrow", dependencies: ["BurrowCLI"], swiftSettings: swift6),
        // `burrow` with its failpoints armed from BURROW_TEST_FAILPOINT: CrashSafetyTests only.
        .executableTarget(
            name: "burrow-failpoint-probe", dependencies: ["BurrowCLI", "Node"], path: "Tests/FailpointProbe",
            swiftSettings: swift6
        ),
        .executableTarget(
            name: "burrow-bench",
            dependencies: [
                "Nostr", "MLS", "Marmot", "Store", "Node", "CSecp256k1", "RelayClient", "Mesh", "Pigeon", "Backup", "Feed", "CSodium",
                .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swift6
        ),

        // The relay (Relays/): a NIP-01 server library and its program.
        .target(
            name: "RelayServer",
            dependencies: [
                "Nostr", "SQLite",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Relays/RelayServer",
            swiftSettings: swift6
        ),
        .executableTarget(
            name: "burrow-relay",
            dependencies: [
                "RelayServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Relays/burrow-relay",
            swiftSettings: swift6
        ),

        // Fuzz target entry points: run by libFuzzer (Fuzz/, `make fuzz`) and over the seed
        // corpora by FuzzSmokeTests.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "MLS", "Nostr", "Marmot", "Pigeon", "Mesh", "Backup", "Feed", "SeededRandom", "CSodium",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swift6
        ),

        // Tests. TestSupport locates fixtures, starts third-party peers for the suites and holds the helpers
        // every suite shares (hex, the seeded generator it re-exports, the Marmot family).
        .target(
            name: "TestSupport", dependencies: ["Nostr", "MLS", "Marmot", "SeededRandom"], path: "Tests/TestSupport", swiftSettings: swift6
        ),
        .testTarget(name: "NostrTests", dependencies: ["TestSupport", "Nostr"], swiftSettings: swift6),
        .testTarget(name: "PigeonTests", dependencies: ["TestSupport", "Pigeon", "Nostr", "Conformance", "FuzzTargets"], swiftSettings: swift6),
        .testTarget(name: "MLSTests", dependencies: ["TestSupport", "MLS"], swiftSettings: swift6),
        .testTarget(name: "MarmotTests", dependencies: ["TestSupport", "Marmot", "MLS", "Nostr"], swiftSettings: swift6),
        .testTarget(name: "RelayClientTests", dependencies: ["TestSupport", "RelayClient", "Nostr"], swiftSettings: swift6),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "TestSupport"], swiftSettings: swift6),
        .testTarget(name: "StoreTests", dependencies: ["TestSupport", "Store", "SQLite"], swiftSettings: swift6),
        .testTarget(
            name: "NodeTests",
            dependencies: ["TestSupport", "Node", "Store", "Marmot", "MLS", "Nostr", "Pigeon", "Backup", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swift6
        ),
        .testTarget(
            name: "ControlTests",
            dependencies: ["TestSupport", "Control", "Node", "Store", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swift6
        ),
        .executableTarget(name: "StoreProbe", dependencies: ["Store"], path: "Tests/StoreProbe", swiftSettings: swift6),
        .testTarget(name: "ConformanceTests", dependencies: ["TestSupport", "Conformance", "Nostr", "MLS"], swiftSettings: swift6),
        .testTarget(
            name: "InteropTests",
            dependencies: ["TestSupport", "Nostr", "RelayClient", "Node", "RelayServer", "Pigeon"],
            swiftSettings: swift6
        ),
        .testTarget(
            name: "RelayServerTests",
            dependencies: [
                "RelayServer", "Nostr", "RelayClient", "SQLite", "TestSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            path: "Tests/RelayServerTests",
            swiftSettings: swift6
        ),
        .testTarget(name: "BurrowCLITests", dependencies: ["TestSupport", "Nostr", "Marmot", "Node", "Pigeon", "RelayClient"], swiftSettings: swift6),
        .testTarget(name: "BackupTests", dependencies: ["TestSupport", "Backup"], swiftSettings: swift6),
        .testTarget(name: "FeedTests", dependencies: ["TestSupport", "Feed", "Conformance"], swiftSettings: swift6),
        .testTarget(name: "WebTests", dependencies: ["TestSupport", "Web"], swiftSettings: swift6),
        .testTarget(name: "LocationTests", dependencies: ["TestSupport", "Location", "NodeRuntime", "DBus"], swiftSettings: swift6),
        .testTarget(name: "MeshTests", dependencies: ["TestSupport", "Mesh", "Nostr", "Marmot"], swiftSettings: swift6),
        // The BlueZ link layer against a mock org.bluez (python-dbusmock) on a private dbus-daemon.
        .testTarget(name: "MeshLinksTests", dependencies: ["TestSupport", "MeshLinks", "Mesh", "DBus", "CSystemd"], swiftSettings: swift6),
        .testTarget(name: "FuzzSmokeTests", dependencies: ["TestSupport", "FuzzTargets", "Backup", "MLS", "Marmot", "Nostr"], swiftSettings: swift6),
    ]
)
