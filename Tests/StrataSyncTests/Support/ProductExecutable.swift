import Foundation
import StrataTestWorkloads

/// Executables built beside the test bundle (`StrataSyncChild`, `strata-sync-server`).
enum ProductExecutable {
    /// The path of the built product `name`, looked up from the test bundle's folder upwards; the
    /// environment variable `override` wins when set. Nil when it was not built.
    static func path(named name: String, override: String) -> String? {
        locateProductExecutable(named: name, override: override)
    }

    /// The sync client child (STRATA_SYNC_CHILD overrides).
    static var syncChild: String? { path(named: "StrataSyncChild", override: "STRATA_SYNC_CHILD") }
    /// The sync server (STRATA_SYNC_SERVER overrides).
    static var syncServer: String? { path(named: "strata-sync-server", override: "STRATA_SYNC_SERVER") }
}
