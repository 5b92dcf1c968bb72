import CLMDB

/// LMDB through its C API: one environment (a directory) with the unnamed database, a 4 GiB
/// map, `MDB_NOTLS`, and the default durability (no `MDB_NOSYNC`/`MDB_NOMETASYNC`): every
/// commit is synced.
final class LMDBEngine: KVEngine {
    static let name = "lmdb"

    private let env: OpaquePointer
    private let dbi: MDB_dbi

    init(directory: String) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw BenchError("lmdb: no environment") }
        do {
            try check(mdb_env_set_mapsize(env, 4 << 30), "mdb_env_set_mapsize")
            try check(mdb_env_open(env, directory, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
            var txn: OpaquePointer?
            try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            var dbi: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, nil, 0, &dbi)
            guard rc == MDB_SUCCESS else { mdb_txn_abort(txn); throw failure(rc, "mdb_dbi_open") }
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
            self.dbi = dbi
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.env = env
    }

    func close() { mdb_env_close(env) }

    func putAll(_ data: Dataset, count: Int) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        var k = MDB_val(), v = MDB_val()
        k.mv_size = keySize
        v.mv_size = valueSize
        for i in 0..<count {
            k.mv_data = UnsafeMutableRawPointer(mutating: data.key(i))
            v.mv_data = UnsafeMutableRawPointer(mutating: data.value(i))
            let rc = mdb_put(txn, dbi, &k, &v, 0)
            guard rc == MDB_SUCCESS else { mdb_txn_abort(txn); throw failure(rc, "mdb_put") }
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func putEach(_ data: Dataset, range: Range<Int>) throws {
        var k = MDB_val(), v = MDB_val()
        k.mv_size = keySize
        v.mv_size = valueSize
        for i in range {
            var txn: OpaquePointer?
            try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            k.mv_data = UnsafeMutableRawPointer(mutating: data.key(i))
            v.mv_data = UnsafeMutableRawPointer(mutating: data.value(i))
            let rc = mdb_put(txn, dbi, &k, &v, 0)
            guard rc == MDB_SUCCESS else { mdb_txn_abort(txn); throw failure(rc, "mdb_put") }
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
        }
    }

    func randomGets(_ data: Dataset) throws -> UInt64 {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var sum: UInt64 = 0
        var k = MDB_val(), v = MDB_val()
        k.mv_size = keySize
        for j in 0..<data.getCount {
            k.mv_data = UnsafeMutableRawPointer(mutating: data.key(Int(data.getOrder[j])))
            try check(mdb_get(txn, dbi, &k, &v), "mdb_get")
            sum &+= UInt64(v.mv_data.load(as: UInt8.self))
        }
        return sum
    }

    func scan() throws -> (count: Int, checksum: UInt64) {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var tally = ScanTally()
        var k = MDB_val(), v = MDB_val()
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == MDB_SUCCESS {
            guard k.mv_size == keySize, v.mv_size == valueSize else { throw BenchError("lmdb: bad sizes") }
            tally.add(key: k.mv_data, value: v.mv_data)
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        guard rc == MDB_NOTFOUND else { throw failure(rc, "mdb_cursor_get") }
        return try tally.result(Self.name)
    }
}

private func failure(_ rc: Int32, _ what: String) -> BenchError {
    BenchError("lmdb: \(what) failed: \(String(cString: mdb_strerror(rc)))")
}

private func check(_ rc: Int32, _ what: String) throws {
    guard rc == MDB_SUCCESS else { throw failure(rc, what) }
}
