// `strata sync-status FILE`: what a synced file has still to upload and how far it has
// downloaded — its client id, its pending uploads and its last checkpoint — read without
// connecting to anything.

import ArgumentParser
import Foundation
import StrataSync

/// `strata sync-status FILE`.
struct SyncStatus: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-status",
        abstract: "Print a synced file's client id, pending uploads and last checkpoint.",
        discussion: "Reads the file's sync state without connecting to a server. A file that never synced is a failure."
    )

    @Argument(help: "The database file.")
    var file: String

    func run() throws {
        let report: SyncStatusReport?
        do {
            report = try SyncLedger.status(ofFileAt: URL(fileURLWithPath: file))
        } catch {
            throw CommandFailure("\(file): \(error)")
        }
        guard let report else { throw CommandFailure("\(file): this file has never been synced") }
        print("\(file): sync client \(String(report.clientID, radix: 16))")
        print("  pending uploads: \(report.pendingUploads) changeset\(plural(report.pendingUploads))")
        print("  last acknowledged upload: \(report.lastAcknowledged)")
        print("  last checkpoint: \(report.checkpoint)")
    }
}
