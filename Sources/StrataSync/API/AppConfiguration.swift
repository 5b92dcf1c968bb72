public import Foundation
package import Strata

/// Where an ``App``'s server is and where its synced files go.
public struct AppConfiguration: Sendable {
    /// The server's base URL (`http://host:port` or `https://…`). Nil: the `STRATA_SYNC_URL`
    /// environment variable, else `http://localhost:9090`.
    public var baseURL: String?
    /// The folder synced files go in (each under `strata-sync/APP/USER/`). Nil: the folder of
    /// `Database.Configuration.defaultFileURL`.
    public var rootDirectory: URL?

    /// Stand-ins for the network and the clock, for tests: nil means the real ones.
    package var loginService: (any LoginService)?
    package var transport: (any SyncTransport)?
    package var retryTimer: (any RetryTimer)?
    package var seed: UInt64?
    package var ledgerFactory: (@Sendable (Database.Configuration, [Object.Type]) throws -> any SessionLedger)?

    /// A configuration with `baseURL` and `rootDirectory` (nil: the defaults above).
    public init(baseURL: String? = nil, rootDirectory: URL? = nil) {
        self.baseURL = baseURL
        self.rootDirectory = rootDirectory
    }

    /// The base URL in effect.
    var resolvedBaseURL: String {
        baseURL ?? ProcessInfo.processInfo.environment["STRATA_SYNC_URL"] ?? "http://localhost:9090"
    }
}
