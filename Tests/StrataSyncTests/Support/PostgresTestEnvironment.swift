import Foundation

/// The PostgreSQL database the sync tests may use: `STRATA_TEST_POSTGRES_URL`, which
/// `scripts/with-postgres.sh` (and so `scripts/test.sh` and CI) sets to a throwaway cluster.
///
/// Outside CI a plain `swift test` has no URL and the PostgreSQL tests are skipped; in CI
/// (`STRATA_CI=1`) they run anyway and fail on the missing URL, so they are never skipped
/// silently there.
enum PostgresTestEnvironment {
    /// Why a PostgreSQL test cannot run.
    enum Problem: Error, CustomStringConvertible {
        case urlMissing

        var description: String {
            "STRATA_TEST_POSTGRES_URL is not set: run the tests through scripts/test.sh (or scripts/with-postgres.sh), which starts a throwaway PostgreSQL"
        }
    }

    /// The URL, when one is set.
    static var url: String? {
        ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the PostgreSQL tests must run: in CI, or whenever a URL is set.
    static var shouldRun: Bool {
        url != nil || ProcessInfo.processInfo.environment["STRATA_CI"] == "1"
    }

    /// The URL, or `Problem.urlMissing`.
    static func requireURL() throws -> String {
        guard let url else { throw Problem.urlMissing }
        return url
    }
}
