// swift-tools-version:6.1
import PackageDescription

// Release builds of our own modules (issue 42, docs/BENCHMARKS.md "Overhead"): no dynamic exclusivity
// checks (debug builds and the tests keep them, so a violation still traps there), and cross-module
// optimization, so generic code and small functions of one module are specialized and inlined in the
// modules that call them (XMPPCore's framer and parser in LoadEngine, SessionCore's machine, LoadResults'
// histograms). Dependencies keep their own settings.
let releaseSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))
]

let package = Package(
    name: "xmppload",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "xmppload", targets: ["xmppload"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
    ],
    targets: [
        // libxml2 (Debian: libxml2-dev) for parsing complete stanzas; see Sources/CLibXML2/shim.h.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // OpenSSL's libcrypto (Debian: libssl-dev) for PBKDF2, HMAC and SHA in SCRAM.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),

        // Pure protocol: XML model, stream framer, stanza parser, SASL, login state machine. No I/O.
        .target(name: "XMPPCore", dependencies: ["CLibXML2", "CCrypto"], swiftSettings: releaseSettings),
        // Profiles and load models: YAML decoding with positions, validation, schedules. No NIO.
        // XMPPCore for the shared TLS mode and SASL mechanism names; ThresholdModel for the one
        // threshold model (`Threshold`) that the grammar produces and the verdict judges.
        .target(
            name: "LoadProfile", dependencies: ["XMPPCore", "ThresholdModel", .product(name: "Yams", package: "Yams")], swiftSettings: releaseSettings
        ),
        // The one threshold model (rule, quantity, comparison, unit): plain values, no dependencies, so
        // the profile grammar and the verdict share it without LoadProfile depending on the results.
        .target(name: "ThresholdModel", swiftSettings: releaseSettings),
        // Metrics values and results files: histograms, snapshots, summary, report. No NIO.
        // Re-exports ThresholdModel (the verdict judges its rules).
        .target(
            name: "LoadResults", dependencies: ["ThresholdModel", .product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: releaseSettings),
        // A virtual user's logic without I/O: the compiled profile and the session state machine
        // (drives LoginMachine, runs steps), fed events with an injected clock. No NIO.
        .target(name: "SessionCore", dependencies: ["XMPPCore", "LoadProfile", "LoadResults"], swiftSettings: releaseSettings),
        // The NIO engine: stream codec, connections, virtual users, schedulers, recorders, the run.
        .target(
            name: "LoadEngine",
            dependencies: [
                "XMPPCore", "LoadProfile", "LoadResults", "SessionCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: releaseSettings),
        // The one-connection server probe (`xmppload probe`, docs/PROBE.md): what a server offers, on
        // the engine's codec, TLS set-up and login machine (their `package` API).
        .target(
            name: "ServerProbe",
            dependencies: [
                "LoadEngine", "XMPPCore", "LoadResults", "SessionCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: releaseSettings),
        // The control port: an input that steers a running run (`--control-port`), and its client.
        .target(
            name: "RunControl",
            dependencies: [
                "LoadEngine", "LoadProfile", "LoadResults",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: releaseSettings),
        // Ways to run loads, as library types the command line only parses for and prints: run
        // options resolved into a configuration, the capacity search's steps, `ab`'s rounds.
        .target(
            name: "LoadRunners", dependencies: ["LoadEngine", "LoadProfile", "LoadResults", "XMPPCore", "RunControl"], swiftSettings: releaseSettings),
        // The command line: run | capacity | check | plan | report | compare | ab | provision | probe | control.
        .executableTarget(
            name: "xmppload",
            dependencies: [
                "LoadEngine", "LoadProfile", "LoadResults", "XMPPCore", "LoadRunners", "RunControl", "ServerProbe",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: releaseSettings),

        // glibc's live heap and process CPU for Benchmarks/tls-floor.
        .systemLibrary(name: "CMallocInfo", path: "Benchmarks/malloc-info"),
        // Benchmarks/tls-floor: what NIOSSL holds per idle connection, and CPU per handshake
        // (scripts/bench-sessions).
        .executableTarget(
            name: "tls-floor",
            dependencies: [
                "CMallocInfo",
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Benchmarks/tls-floor"),
        // Benchmarks/nio-floor: the C login and message floors on bare SwiftNIO, for what NIO itself costs per login and message.
        .executableTarget(
            name: "nio-floor",
            dependencies: ["CCrypto", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")],
            path: "Benchmarks/nio-floor"),

        .testTarget(name: "XMPPCoreTests", dependencies: ["XMPPCore"]),
        .testTarget(name: "LoadProfileTests", dependencies: ["LoadProfile", "LoadResults", "XMPPCore"], resources: [.copy("Fixtures")]),
        .testTarget(name: "SessionCoreTests", dependencies: ["SessionCore", "XMPPCore", "LoadProfile", "LoadResults"]),
        .testTarget(name: "LoadResultsTests", dependencies: ["LoadResults"], resources: [.copy("Fixtures")]),
        .testTarget(
            name: "LoadEngineTests",
            dependencies: [
                "LoadEngine", "XMPPCore", "SessionCore", "LoadProfile", "LoadResults", "ServerProbe",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Atomics", package: "swift-atomics"),
            ], resources: [.copy("Transcripts")]),
        .testTarget(
            name: "RunControlTests",
            dependencies: [
                "RunControl", "LoadEngine", "LoadProfile", "LoadResults", .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .testTarget(
            name: "LoadRunnersTests",
            dependencies: ["LoadRunners", "LoadEngine", "LoadProfile", "LoadResults", "XMPPCore", "RunControl"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "LoadEngine", "LoadResults", "LoadProfile", "XMPPCore", "SessionCore", "LoadRunners", "RunControl", "ServerProbe",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
