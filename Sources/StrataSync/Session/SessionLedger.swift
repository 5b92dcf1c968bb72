package import StrataSyncProtocol

/// What a session needs from its file: the outbox to upload, the checkpoint and subscriptions
/// to announce, and the places downloads and acknowledgements go. `SyncLedger` is the real
/// one; tests give a session an in-memory one.
///
/// Every member is called from the session's own task, one at a time; implementations may
/// block on file I/O.
package protocol SessionLedger: AnyObject, Sendable {
    var clientID: UInt64 { get }
    var schema: SyncSchema { get }
    func checkpoint() throws -> UInt64
    func lastRecordedSequence() throws -> UInt64
    func pendingChangesets(after clientSequence: UInt64, limit: Int) throws -> [ClientChangeset]
    func acknowledge(through clientSequence: UInt64) throws
    func apply(changesets: [ServerChangeset], checkpoint: Checkpoint) throws
    func apply(snapshot: SyncMessage.Snapshot) throws
    func subscriptions() throws -> StoredSubscriptions
    func setSubscriptions(version: UInt64, specs: [SubscriptionSpec]) throws
    func markSubscriptionsComplete(version: UInt64) throws
    func setLocalChangeHandler(_ handler: (@Sendable () -> Void)?)
}

extension SyncLedger: SessionLedger {}
