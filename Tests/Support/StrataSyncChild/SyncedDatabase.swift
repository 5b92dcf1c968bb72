// The child's only contact with the sync client's public API: anonymous login, a
// subscription to every class of the test model, a synced database on the main actor, and
// waiting for uploads and downloads.

import Foundation
import Strata
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
    // The app's folder (its users file) belongs to this file, so a client started again on
    // its file is still logged in, as an app is after a relaunch.
    let folder = URL(fileURLWithPath: arguments.file + ".app", isDirectory: true)
    let app = App(id: appID, configuration: AppConfiguration(baseURL: serverURL.absoluteString, rootDirectory: folder))
    let user: User
    if let current = app.currentUser {
        user = current
    } else {
        // Login is one HTTP request through the fault proxy, which may drop it: retry a few
        // times (the sync session itself reconnects on its own).
        var attempt = 0
        while true {
            do {
                user = try await app.login(credentials: .anonymous)
                break
            } catch {
                attempt += 1
                if attempt >= 20 { throw error }
            }
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
