import StrataStorage
import Synchronization

/// A commit prepared by `StoreSession.prepareCommit()`: the engine transaction, ready to be
/// written and synced from any thread, once.
public final class PendingCommit: @unchecked Sendable {  // used by one thread at a time
    private var write: WriteTransaction?
    /// What the commit changes.
    public let changes: ChangeSet
    let schema: Schema?
    private let finished = Atomic<Bool>(false)

    /// Whether `perform()` has returned (an acquiring load).
    public var isFinished: Bool { finished.load(ordering: .acquiring) }

    private let engine: StorageEngine
    /// The version the commit makes.
    public let version: UInt64

    init(write: WriteTransaction, changes: ChangeSet, schema: Schema?, engine: StorageEngine) {
        self.write = write
        self.changes = changes
        self.schema = schema
        self.engine = engine
        self.version = write.committingVersion
    }

    /// Writes and syncs the commit (per the durability), then releases the write lock. With
    /// `grouped`, the commit is written and visible but not synced when this returns (and the
    /// lock is free for the next writer): `waitUntilDurable()` then shares a sync with the
    /// other grouped commits waiting.
    public func perform(grouped: Bool = false) throws(StoreError) {
        defer { finished.store(true, ordering: .releasing) }
        guard let write else { throw .transactionEnded }
        self.write = nil
        do {
            try write.commit(grouped: grouped)
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Waits until the commit is durable (after a grouped `perform`).
    public func waitUntilDurable() throws(StoreError) {
        do { try engine.synchronize(through: version) } catch { throw StoreError.wrap(error) }
    }
}
