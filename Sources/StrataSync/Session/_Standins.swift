// THROWAWAY STAND-INS (issue 31): the lead deletes this file when sync-clientfile (the real
// `SyncLedger`, `StoredSubscriptions`, `SyncStatusReport`) and sync-proto (`SyncFrameCodec`)
// are merged. The signatures are exactly the contracts' ones; the bodies keep state in memory
// only and do not touch the database file.
package import Foundation
package import Strata
public import StrataSyncProtocol
import Synchronization

/// Stand-in: the subscriptions a file stores.
package struct StoredSubscriptions: Sendable, Hashable {
    package var version: UInt64
    package var specs: [SubscriptionSpec]
    package var completedVersion: UInt64
    package init(version: UInt64, specs: [SubscriptionSpec], completedVersion: UInt64) {
        self.version = version
        self.specs = specs
        self.completedVersion = completedVersion
    }
}

/// Stand-in: a file's sync status.
package struct SyncStatusReport: Sendable, Hashable {
    package var clientID: UInt64
    package var pendingUploads: UInt64
    package var lastAcknowledged: UInt64
    package var checkpoint: UInt64
}

/// Stand-in for sync-clientfile's ledger, in memory.
package final class SyncLedger: Sendable {
    private struct State {
        var checkpoint: UInt64 = 0
        var acknowledged: UInt64 = 0
        var recorded: UInt64 = 0
        var outbox: [ClientChangeset] = []
        var subscriptions = StoredSubscriptions(version: 0, specs: [], completedVersion: 0)
        var handler: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    package let clientID: UInt64
    package let schema: SyncSchema

    private init(clientID: UInt64, schema: SyncSchema) {
        self.clientID = clientID
        self.schema = schema
    }

    package static func attach(configuration: Database.Configuration, syncedTypes: [Object.Type]) throws -> SyncLedger {
        SyncLedger(clientID: UInt64.random(in: 1...UInt64.max),
                   schema: SyncSchema(classes: syncedTypes.map { SyncClassSchema(name: $0.className(), primaryKey: "_id", properties: []) }))
    }
    package func checkpoint() throws -> UInt64 { state.withLock { $0.checkpoint } }
    package func lastRecordedSequence() throws -> UInt64 { state.withLock { $0.recorded } }
    package func pendingChangesets(after clientSequence: UInt64, limit: Int) throws -> [ClientChangeset] {
        state.withLock { Array($0.outbox.filter { $0.clientSequence > clientSequence }.prefix(limit)) }
    }
    package func acknowledge(through clientSequence: UInt64) throws {
        state.withLock { state in
            state.acknowledged = max(state.acknowledged, clientSequence)
            state.outbox.removeAll { $0.clientSequence <= clientSequence }
        }
    }
    package func apply(changesets: [ServerChangeset], checkpoint: Checkpoint) throws {
        state.withLock { $0.checkpoint = max($0.checkpoint, checkpoint.sequence) }
    }
    package func apply(snapshot: SyncMessage.Snapshot) throws {
        state.withLock { $0.checkpoint = max($0.checkpoint, snapshot.checkpoint.sequence) }
    }
    package func subscriptions() throws -> StoredSubscriptions { state.withLock { $0.subscriptions } }
    package func setSubscriptions(version: UInt64, specs: [SubscriptionSpec]) throws {
        state.withLock { $0.subscriptions.version = version; $0.subscriptions.specs = specs }
    }
    package func markSubscriptionsComplete(version: UInt64) throws {
        state.withLock { $0.subscriptions.completedVersion = max($0.subscriptions.completedVersion, version) }
    }
    package func setLocalChangeHandler(_ handler: (@Sendable () -> Void)?) { state.withLock { $0.handler = handler } }
    package func status() throws -> SyncStatusReport {
        state.withLock { SyncStatusReport(clientID: clientID, pendingUploads: UInt64($0.outbox.count), lastAcknowledged: $0.acknowledged, checkpoint: $0.checkpoint) }
    }
    package static func status(ofFileAt url: URL) throws -> SyncStatusReport? { nil }
}

/// Stand-in for sync-proto's codec: encodes nothing useful and decodes nothing.
public enum SyncFrameCodec {
    /// Stand-in.
    public static func encode(_ m: SyncMessage) -> [UInt8] { [0x53, 0x59] }
    /// Stand-in: always throws.
    public static func decode(_ b: [UInt8]) throws -> SyncMessage { throw StandinCodecError() }
}

/// Stand-in codec's error.
package struct StandinCodecError: Error {}
