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
        .executable(name: "strata", targets: ["strata"]),
    ],
    dependencies: [
        // The `strata` tool's command line; no library target depends on it.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The few system facilities Swift cannot reach directly: C11 atomics on shared
        // memory, futex waits across processes, OFD lock constants, and the CPU's CRC32C.
        .target(name: "CStrataSystem"),
        .target(name: "StrataStorage", dependencies: ["CStrataSystem"], swiftSettings: strictSettings),
        .target(name: "StrataStore", dependencies: ["StrataStorage"], swiftSettings: strictSettings),
        .target(name: "Strata", dependencies: ["StrataStore"], swiftSettings: strictSettings),
        .target(name: "StrataRealmCompat", dependencies: ["Strata"], swiftSettings: strictSettings),
        .executableTarget(name: "strata",
                          dependencies: ["StrataStorage", "StrataStore", "Strata",
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
        .testTarget(
            name: "StrataStorageTests",
            dependencies: ["StrataStorage", "CStrataSystem", "StrataTestChild", "StrataTestWorkloads"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "StrataStoreTests", dependencies: ["StrataStore", "StrataStorage", "StrataTestWorkloads"], swiftSettings: strictSettings),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataStore", "StrataMisuseChild", "StrataCommitChild", "StrataTestWorkloads"], swiftSettings: strictSettings),
        // The seed documents' code, compiled against the RealmSwift names. The seeds were
        // written for Swift 5.8 (`static var shared` on a global actor is an error in Swift 6),
        // so this target alone builds in Swift 5 mode. The same patterns in Swift 6 mode are in
        // StrataTests (AsyncWriteTests) and the `strata demo` sources.
        // "Strata" as well: the tests see it through StrataRealmCompat's @_exported import,
        // and without a direct dependency an incremental build does not recompile them when
        // Strata's types change layout (they then crashed on stale layouts).
        .testTarget(name: "StrataRealmCompatTests", dependencies: ["StrataRealmCompat", "Strata"],
                    swiftSettings: strictSettings + [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)
