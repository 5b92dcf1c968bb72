// Starting read transactions: a reader slot in the lock file pins a version; the snapshot
// reads that version's pages through the mapping.

extension StorageEngine {
    /// Starts a read transaction on the newest version.
    public func beginRead() throws -> ReadTransaction {
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            for _ in 0..<1000 {
                let txid = lockFile.pinPublished(slot: slot)
                if let meta = try meta(for: txid) {
                    return ReadTransaction(engine: self, snapshot: Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier), slot: slot, serial: serial)
                }
            }
            lockFile.releaseSlot(slot)
            throw StorageError.corrupted(page: nil, reason: "could not read a stable meta page")
        } catch {
            endTransaction()
            throw error
        }
    }

    /// A read transaction on the version `meta` describes, which the calling writer is about to
    /// publish (a logged commit opens it while the disk writes its record, so that its caller
    /// need not begin one after the sync: `WriteTransaction.readsAfterCommit`). Pinning a
    /// version not yet published holds back nothing older; the transaction is used only once
    /// the commit is published, and closed if it is not.
    func openRead(committing meta: MetaPage) throws -> ReadTransaction {
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            lockFile.pin(slot: slot, txid: meta.txid)
            return ReadTransaction(engine: self, snapshot: Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier), slot: slot, serial: serial)
        } catch {
            endTransaction()
            throw error
        }
    }

    /// Starts a read transaction on the version `other` reads, which must still be open (its
    /// pin keeps that version's pages from reuse while the new one pins it too). Frozen
    /// snapshots use this to keep the version of the instance they were taken from.
    public func beginRead(sameVersionAs other: ReadTransaction) throws -> ReadTransaction {
        guard !other.isClosed else { throw StorageError.transactionClosed }
        let serial = try beginTransaction()
        do {
            let slot = try lockFile.acquireSlot()
            lockFile.pin(slot: slot, txid: other.version)
            return ReadTransaction(engine: self, snapshot: other.snapshot, slot: slot, serial: serial)
        } catch {
            endTransaction()
            throw error
        }
    }

    func releaseReader(slot: Int) {
        lockFile.releaseSlot(slot)
        endTransaction()
    }

    /// Runs `body` in a read transaction on the newest version.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let transaction = try beginRead()
        defer { transaction.close() }
        return try body(transaction)
    }
}
