// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StrataStorage", targets: ["StrataStorage"]),
        .library(name: "StrataStore", targets: ["StrataStore"]),
        .library(name: "Strata", targets: ["Strata"]),
        .library(name: "StrataRealmCompat", targets: ["StrataRealmCompat"]),
        .library(name: "StrataSyncProtocol", targets: ["StrataSyncProtocol"]),
        .library(name: "StrataRealmFile", targets: ["StrataRealmFile"]),
        .library(name: "StrataSync", targets: ["StrataSync"]),
        .library(name: "StrataSyncServer", targets: ["StrataSyncServer"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-sync-server", targets: ["strata-sync-server"]),
    ],
    dependencies: [
        // The `strata` tool's command line; no library target depends on it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Sync only: the client's WebSocket, the server, its PostgreSQL store. The storage
        // engine, the object store and `Strata` depend on the toolchain alone.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // StrataRealmFile only: AES-256-CBC for encrypted Realm files (in CryptoExtras, which
        // swift-crypto has as a product since 4.0).
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"5.0.0"),
    ],
    targets: [
        // The few system facilities Swift cannot reach directly: C11 atomics on shared
        // memory, futex waits across processes, OFD lock constants, and the CPU's CRC32C.
        .target(name: "CStrataSystem"),
        .target(name: "StrataStorage", dependencies: ["CStrataSystem"], swiftSettings: strictSettings),
        .target(name: "StrataStore", dependencies: ["StrataStorage"], swiftSettings: strictSettings),
        .target(name: "Strata", dependencies: ["StrataStore"], swiftSettings: strictSettings),
        // A read-only reader of Realm's file format (format 24), for bringing existing Realm
        // files over, and an importer into Strata files. It links no Realm code; Strata for the
        // schema it maps to, the object store to write imported objects with that schema.
        .target(name: "StrataRealmFile",
                dependencies: ["Strata", "StrataStore", "StrataStorage",
                               .product(name: "Crypto", package: "swift-crypto"),
                               .product(name: "CryptoExtras", package: "swift-crypto")],
                swiftSettings: strictSettings),
        // Sync: the protocol (messages, encoding, conflict rules; no I/O), the client, the server.
        .target(name: "StrataSyncProtocol", swiftSettings: strictSettings),
        .target(name: "StrataSync",
                dependencies: ["Strata", "StrataStore", "StrataSyncProtocol",
                               .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio"),
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictSettings),
        .target(name: "StrataSyncServer",
                dependencies: ["StrataStorage", "StrataSyncProtocol",
                               .product(name: "Hummingbird", package: "hummingbird"),
                               .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                               .product(name: "PostgresNIO", package: "postgres-nio"),
                               .product(name: "NIOCore", package: "swift-nio"),
                               .product(name: "NIOPosix", package: "swift-nio"),
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictSettings),
        .executableTarget(name: "strata-sync-server",
                          dependencies: ["StrataSyncServer", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                                         .product(name: "Logging", package: "swift-log")],
                          path: "Sources/StrataSyncServerCLI", swiftSettings: strictSettings),
        .target(name: "StrataRealmCompat", dependencies: ["Strata", "StrataSync", "StrataRealmFile"], swiftSettings: strictSettings),
        .executableTarget(name: "strata",
                          dependencies: ["StrataStorage", "StrataStore", "Strata", "StrataSync", "StrataSyncServer", "StrataRealmFile",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          path: "Sources/StrataCLI",
                          swiftSettings: strictSettings),
        // A child process for the kill and cross-process tests, and the workloads it shares
        // with them.
        .target(name: "StrataTestWorkloads", path: "Tests/Support/StrataTestWorkloads", swiftSettings: strictSettings),
        .executableTarget(name: "StrataTestChild", dependencies: ["StrataStorage", "StrataTestWorkloads"], path: "Tests/Support/StrataTestChild",
                          swiftSettings: strictSettings),
        // A child process that makes one programming error per run, for the tests that check
        // the process stops with the documented message.
        .executableTarget(name: "StrataMisuseChild", dependencies: ["Strata"], path: "Tests/Support/StrataMisuseChild", swiftSettings: strictSettings),
        // A child process that commits through Strata, for the cross-process refresh tests.
        .executableTarget(name: "StrataCommitChild", dependencies: ["Strata"], path: "Tests/Support/StrataCommitChild", swiftSettings: strictSettings),
        // A sync client in its own process, for the convergence tests' clients and kills.
        .executableTarget(name: "StrataSyncChild", dependencies: ["Strata", "StrataSync", "StrataSyncProtocol"],
                          path: "Tests/Support/StrataSyncChild", swiftSettings: strictSettings),
        .testTarget(name: "StrataSyncProtocolTests", dependencies: ["StrataSyncProtocol"], swiftSettings: strictSettings),
        .testTarget(name: "StrataSyncTests",
                    dependencies: ["StrataSync", "StrataSyncServer", "StrataSyncProtocol", "Strata", "StrataStore", "StrataSyncChild", "StrataTestWorkloads",
                                   .product(name: "NIOCore", package: "swift-nio"),
                                   .product(name: "NIOPosix", package: "swift-nio")],
                    swiftSettings: strictSettings),
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage", "CStrataSystem", "StrataTestChild", "StrataTestWorkloads"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "StrataRealmFileTests", dependencies: ["StrataRealmFile", "Strata", "StrataStore"],
                    exclude: ["Fixtures"], swiftSettings: strictSettings),
        .testTarget(name: "StrataStoreTests", dependencies: ["StrataStore", "StrataStorage", "StrataTestWorkloads"], swiftSettings: strictSettings),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataStore", "StrataMisuseChild", "StrataCommitChild", "StrataTestWorkloads"], swiftSettings: strictSettings),
        // The seed documents' code, compiled against the RealmSwift names. The seeds were
        // written for Swift 5.8 (`static var shared` on a global actor is an error in Swift 6),
        // so this target alone builds in Swift 5 mode. The same patterns in Swift 6 mode are in
        // StrataTests (AsyncWriteTests) and the `strata demo` sources.
        // "Strata" as well: the tests see it through StrataRealmCompat's @_exported import,
        // and without a direct dependency an incremental build does not recompile them when
        // Strata's types change layout (they then crashed on stale layouts).
        .testTarget(name: "StrataRealmCompatTests", dependencies: ["StrataRealmCompat", "Strata", "StrataRealmFile"],
                    swiftSettings: strictSettings + [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)
