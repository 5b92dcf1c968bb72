// swift-tools-version:6.0
import PackageDescription

// Benchmarks for Strata against its peers. A separate package so the library never depends
// on a peer. Build and run in release mode only (see README.md).
let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    dependencies: [
        .package(name: "Strata", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        // The `postgres` peer of `sync-server` (the same postgres-nio the sync server uses).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "CLMDB",
                "CSQLite",
                .product(name: "StrataStorage", package: "Strata"),
                .product(name: "Strata", package: "Strata"),
                .product(name: "StrataRealmFile", package: "Strata"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "StrataSync", package: "Strata"),
                .product(name: "StrataSyncServer", package: "Strata"),
                .product(name: "StrataSyncProtocol", package: "Strata"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
