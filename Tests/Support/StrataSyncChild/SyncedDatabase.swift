// The child's only contact with the sync client's public API (sync-session's `App`, `User`,
// `Credentials`, `flexibleSyncConfiguration`, `Database(configuration:actor:downloadBeforeOpen:)`,
// `syncSession?.wait(for:)`). Until that API is on this branch the file compiles to the stubs at
// the bottom, and the child refuses sync runs with exit status 3 (`--local` still works).
// Once it has landed, remove the `#if` (or define STRATA_SYNC_CLIENT_API) and fix any name that
// differs from the brief's.

import Foundation
import Strata

#if STRATA_SYNC_CLIENT_API
import StrataSync

/// Whether this build of the child can sync.
let syncClientAvailable = true

/// Logs in anonymously at `--server` for `--app`, subscribes to every class of the test model,
/// and opens the synced file at `--file` on the main actor after downloading what the server has.
@MainActor
func openSyncedDatabase(_ arguments: ChildArguments) async throws -> Database {
    guard let server = arguments.server, let serverURL = URL(string: server), let appID = arguments.app else {
        throw ChildFailure.syncClientUnavailable
    }
    let app = App(id: appID, configuration: AppConfiguration(baseURL: serverURL.absoluteString))
    // Login is one HTTP request through the fault proxy, which may drop it: retry a few times
    // (the sync session itself reconnects on its own).
    var attempt = 0
    let user: User
    while true {
        do {
            user = try await app.login(credentials: .anonymous)
            break
        } catch {
            attempt += 1
            if attempt >= 20 { throw error }
        }
    }
    var configuration = user.flexibleSyncConfiguration(initialSubscriptions: { subscriptions in
        subscriptions.append(QuerySubscription<SyncItem>(name: "all-items"))
    })
    configuration.fileURL = URL(fileURLWithPath: arguments.file)
    configuration.objectTypes = syncTestModelTypes
    return try await Database(configuration: configuration, actor: MainActor.shared, downloadBeforeOpen: .always)
}

/// Waits until every local write is uploaded and everything the server has is downloaded.
@MainActor
func waitForSync(_ database: Database) async throws {
    guard let session = database.syncSession else { throw ChildFailure.notSynced }
    try await session.wait(for: .upload)
    try await session.wait(for: .download)
}

#else

/// Whether this build of the child can sync.
let syncClientAvailable = false

@MainActor
func openSyncedDatabase(_ arguments: ChildArguments) async throws -> Database {
    throw ChildFailure.syncClientUnavailable
}

@MainActor
func waitForSync(_ database: Database) async throws {
    throw ChildFailure.syncClientUnavailable
}

#endif

/// Why the child stopped without a dump.
enum ChildFailure: Error, CustomStringConvertible {
    /// This build has no sync client (see the top of SyncedDatabase.swift).
    case syncClientUnavailable
    /// The database opened without a sync session.
    case notSynced

    var description: String {
        switch self {
        case .syncClientUnavailable: "this StrataSyncChild was built without the sync client API"
        case .notSynced: "the database has no sync session"
        }
    }
}
