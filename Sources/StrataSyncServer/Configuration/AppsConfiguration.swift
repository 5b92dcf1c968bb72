import Foundation

/// Which apps the server serves and how their users log in: the `--config FILE` JSON,
///
/// ```json
/// {"apps": {"todo": {"jwtKeys": ["secret"], "anonymous": true}}, "restrictApps": true, "historyLimit": 10000,
///  "accessTokenLifetime": 1800}
/// ```
///
/// Without a file (``open``) the server serves any app id, allows anonymous logins, and keeps
/// every app's history (no compaction).
public struct AppsConfiguration: Sendable, Hashable, Codable {
    /// One app's login settings.
    public struct App: Sendable, Hashable, Codable {
        /// HS256 keys for `.jwt(token:)` logins; empty: JWT logins are refused.
        public var jwtKeys: [String]
        /// Whether `{"provider":"anonymous"}` logins are accepted.
        public var anonymous: Bool
        /// When set, a JWT must name this audience in its `aud` claim (a string or an array).
        public var jwtAudience: String?

        /// An app's settings.
        public init(jwtKeys: [String] = [], anonymous: Bool = true, jwtAudience: String? = nil) {
            self.jwtKeys = jwtKeys
            self.anonymous = anonymous
            self.jwtAudience = jwtAudience
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            jwtKeys = try container.decodeIfPresent([String].self, forKey: .jwtKeys) ?? []
            anonymous = try container.decodeIfPresent(Bool.self, forKey: .anonymous) ?? true
            jwtAudience = try container.decodeIfPresent(String.self, forKey: .jwtAudience)
        }
    }

    /// The configured apps, by id.
    public var apps: [String: App]
    /// Serve only the configured apps (others answer 404 and `error(.unknownApp)`); when false,
    /// an unconfigured app id is served with ``App/init(jwtKeys:anonymous:)``'s defaults.
    public var restrictApps: Bool
    /// After an upload, drop an app's history older than its newest `historyLimit` changesets;
    /// nil keeps it all. A client whose checkpoint falls behind gets a client reset.
    public var historyLimit: UInt64?
    /// How long an access token is good for, in seconds (default 1,800). Clients refresh
    /// theirs with their refresh token (valid 60 days) when the server refuses an expired one.
    public var accessTokenLifetime: UInt64?

    /// A configuration.
    public init(apps: [String: App] = [:], restrictApps: Bool = false, historyLimit: UInt64? = nil,
                accessTokenLifetime: UInt64? = nil) {
        self.apps = apps
        self.restrictApps = restrictApps
        self.historyLimit = historyLimit
        self.accessTokenLifetime = accessTokenLifetime
    }

    /// Any app id, anonymous logins, no compaction.
    public static let open = AppsConfiguration()

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        apps = try container.decodeIfPresent([String: App].self, forKey: .apps) ?? [:]
        restrictApps = try container.decodeIfPresent(Bool.self, forKey: .restrictApps) ?? false
        historyLimit = try container.decodeIfPresent(UInt64.self, forKey: .historyLimit)
        accessTokenLifetime = try container.decodeIfPresent(UInt64.self, forKey: .accessTokenLifetime)
    }

    /// Reads a configuration file; a file that is not the JSON above throws
    /// ``SyncServerError/invalidConfiguration(_:)`` naming what is wrong.
    public static func load(path: String) throws(SyncServerError) -> AppsConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .invalidConfiguration("cannot read \(path): \(error.localizedDescription)")
        }
        do { return try JSONDecoder().decode(AppsConfiguration.self, from: data) } catch {
            throw .invalidConfiguration("\(path) is not a valid configuration: \(error)")
        }
    }

    /// The settings of `appID`, or nil when the server does not serve it.
    public func app(_ appID: String) -> App? {
        if let app = apps[appID] { return app }
        return restrictApps ? nil : App()
    }

    /// Whether `appID` is a name the server accepts at all: 1 to 128 characters of letters,
    /// digits, `-`, `_` and `.`. The stores use app ids inside keys, so nothing else gets in.
    public static func isValidAppID(_ appID: some StringProtocol) -> Bool {
        guard !appID.isEmpty, appID.utf8.count <= 128 else { return false }
        return appID.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."): true
            default: false
            }
        }
    }
}
