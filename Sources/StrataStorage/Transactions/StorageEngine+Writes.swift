// Starting write transactions: the write lock (WriteLock.swift), then the newest version and
// its free space. One writer at a time across threads and processes; three ways to wait for
// the lock (blocking, suspending, or a callback).

extension StorageEngine {
    /// Starts the write transaction, blocking the calling thread while another writer (in
    /// this or another process) holds the lock.
    public func beginWrite() throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        let serial = try beginTransaction()
        do {
            try writeLock.acquire()
        } catch {
            endTransaction()
            throw error
        }
        return try makeWrite(serial: serial)
    }

    /// Starts the write transaction, suspending (without blocking a thread) while another
    /// writer holds the lock.
    public func beginWrite() async throws -> WriteTransaction {
        guard !options.readOnly else { throw StorageError.readOnly }
        let serial = try beginTransaction()
        do {
            try await writeLock.acquire()
        } catch {
            endTransaction()
            throw error
        }
        return try makeWrite(serial: serial)
    }

    /// Starts the write transaction without any thread or task waiting for the lock: `then`
    /// is called with it once the lock is ours (on the thread that released it, or on a
    /// dispatch thread), or with the error.
    public func beginWrite(then completion: @escaping @Sendable (Result<AcquiredTransaction, any Error>) -> Void) {
        guard !options.readOnly else { return completion(.failure(StorageError.readOnly)) }
        let serial: UInt64
        do { serial = try beginTransaction() } catch { return completion(.failure(error)) }
        writeLock.acquire { result in
            switch result {
            case .success:
                completion(Result { AcquiredTransaction(transaction: try self.makeWrite(serial: serial)) })
            case .failure(let error):
                self.endTransaction()
                completion(.failure(error))
            }
        }
    }

    /// With the write lock held: the transaction on the newest version. On failure the lock
    /// is released and the transaction no longer counted.
    private func makeWrite(serial: UInt64) throws -> WriteTransaction {
        do {
            if let poisoned = state.withLock({ $0.poisoned }) { throw poisoned }
            let published = lockFile.publishedTxid
            guard let meta = try meta(for: published) else {
                throw StorageError.corrupted(page: lockFile.publishedMetaPage, reason: "published version \(published) has no valid meta")
            }
            try settleForeignGroup(base: meta)
            let snapshot = Snapshot(base: base, pageSize: pageSize, meta: meta, verifier: verifier)
            let (space, chain) = try loadFreeSpace(snapshot)
            // Pages freed by earlier commits become reusable when the commit lays out its
            // pages (`WriteTransaction.releaseFreedPages`), not here: nothing allocates before.
            return WriteTransaction(engine: self, snapshot: snapshot, freeSpace: space, freeListPages: chain, serial: serial)
        } catch {
            writeLock.release()
            endTransaction()
            throw error
        }
    }

    func takeArena() -> Arena {
        state.withLock { state in
            defer { state.spareArena = nil }
            return state.spareArena ?? Arena()
        }
    }

    func returnArena(_ arena: Arena) {
        state.withLock { $0.spareArena = arena }
    }

    /// How many nodes kept from a commit later transactions took instead of reading their
    /// pages (`Arena.takeKept`; for tests). Zero while a write transaction holds the arena.
    var keptNodesTaken: Int { state.withLock { $0.spareArena?.keptTaken ?? 0 } }

    /// A random, nonzero token for the next commit record (see MetaPage.swift). Tokens only
    /// need to be unpredictable to stale pages, so a seeded generator is enough, and it spares
    /// a system call per commit.
    func nextToken() -> UInt64 {
        state.withLock { state in
            state.tokenState &+= 0x9E37_79B9_7F4A_7C15
            var z = state.tokenState
            z = (z ^ (z >> 30)) &* 0xBF58_476C_E5B9_E1D5
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return (z ^ (z >> 31)) | 1
        }
    }

    func endWrite() {
        writeLock.release()
        endTransaction()
    }

    private func loadFreeSpace(_ snapshot: Snapshot) throws -> (FreeSpace, [PageNumber]) {
        let meta = snapshot.meta
        // Taken out of the cache, not copied: the transaction then owns the only reference to
        // its arrays and changes them in place (no copy on its first change, and nothing to
        // free when the commit puts its own back). A transaction that does not commit leaves
        // the cache empty, and the next one decodes the pages.
        if let cache = state.withLock({ $0.freeSpaceCache.take() }), cache.txid == meta.txid {
            return (cache.space, cache.chain)
        }
        if !meta.freeList.isEmpty {
            return (try FreeSpace.decode(meta.freeList, pageCount: meta.pageCount, firstPage: meta.selfPage), [])
        }
        var bytes: [UInt8] = []
        var chain: [PageNumber] = []
        var page = meta.freeListHead
        for _ in 0..<meta.freeListPages {
            let view = try snapshot.page(page)
            guard view.kindRaw == PageKind.freeList.rawValue else {
                throw StorageError.corrupted(page: page, reason: "expected a free-list page")
            }
            chain.append(page)
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: view.base + PageLayout.headerSize, count: FreeSpace.payloadPerPage(pageSize)))
            page = view.aux
        }
        let space = try FreeSpace.decode(bytes, pageCount: meta.pageCount, firstPage: meta.freeListHead)
        return (space, chain)
    }

    /// Runs `body` in a write transaction and commits it when `body` returns; rolls back and
    /// rethrows when `body` throws.
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        try Self.run(try beginWrite(), body)
    }

    /// Async form of `write(_:)`: waits for the write lock without blocking a thread.
    public func write<R>(_ body: (WriteTransaction) throws -> R) async throws -> R {
        try Self.run(try await beginWrite(), body)
    }

    private static func run<R>(_ transaction: WriteTransaction, _ body: (WriteTransaction) throws -> R) throws -> R {
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.rollback()
            throw error
        }
    }
}

/// A write transaction handed from the thread that acquired the lock to the one that will use
/// it (used by one of them at a time; the hand-off orders the two).
public struct AcquiredTransaction: @unchecked Sendable {
    /// The transaction.
    public let transaction: WriteTransaction
}

