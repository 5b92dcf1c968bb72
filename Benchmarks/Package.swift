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
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
