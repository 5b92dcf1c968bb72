import CSQLite

/// SQLite through its C API: one table `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`, WAL
/// mode, `synchronous=FULL` in every workload (each commit syncs the WAL, like the other
/// engines' commits), a 256 MiB page cache so the whole store stays cached, and prepared
/// statements reused across operations (including BEGIN and COMMIT).
final class SQLiteEngine: KVEngine {
    static let name = "sqlite"
    static let settings = "journal_mode=WAL, synchronous=FULL, cache_size=256 MiB, WITHOUT ROWID table"

    private let db: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    private let insert: OpaquePointer
    private let select: OpaquePointer
    private let selectAll: OpaquePointer

    init(directory: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(
            directory + "/kv.sqlite", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close(db)
            throw BenchError("sqlite: open failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        self.db = db
        do {
            for sql in [
                "PRAGMA journal_mode=WAL",
                "PRAGMA synchronous=FULL",
                "PRAGMA cache_size=-262144",
                "CREATE TABLE kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID",
            ] {
                try exec(db, sql)
            }
            begin = try prepare(db, "BEGIN")
            commit = try prepare(db, "COMMIT")
            insert = try prepare(db, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
            select = try prepare(db, "SELECT v FROM kv WHERE k = ?1")
            selectAll = try prepare(db, "SELECT k, v FROM kv ORDER BY k")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    func close() {
        for statement in [begin, commit, insert, select, selectAll] { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    @inline(__always) private func step(_ statement: OpaquePointer, expecting: Int32 = SQLITE_DONE) throws {
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard rc == expecting else { throw BenchError("sqlite: step failed: \(String(cString: sqlite3_errmsg(db)))") }
    }

    @inline(__always) private func put(_ data: Dataset, _ i: Int) throws {
        sqlite3_bind_blob(insert, 1, data.key(i), Int32(keySize), nil)      // nil: SQLITE_STATIC
        sqlite3_bind_blob(insert, 2, data.value(i), Int32(valueSize), nil)
        try step(insert)
    }

    func putAll(_ data: Dataset, count: Int) throws {
        try step(begin)
        for i in 0..<count { try put(data, i) }
        try step(commit)
    }

    func putEach(_ data: Dataset, range: Range<Int>) throws {
        for i in range {
            try step(begin)
            try put(data, i)
            try step(commit)
        }
    }

    func randomGets(_ data: Dataset) throws -> UInt64 {
        try step(begin)   // one read transaction around all gets, like the other engines
        var sum: UInt64 = 0
        for j in 0..<data.getCount {
            sqlite3_bind_blob(select, 1, data.key(Int(data.getOrder[j])), Int32(keySize), nil)
            guard sqlite3_step(select) == SQLITE_ROW, let v = sqlite3_column_blob(select, 0) else {
                sqlite3_reset(select)
                throw BenchError("sqlite: key not found")
            }
            sum &+= UInt64(v.load(as: UInt8.self))
            sqlite3_reset(select)
        }
        try step(commit)
        return sum
    }

    func scan() throws -> (count: Int, checksum: UInt64) {
        try step(begin)
        var tally = ScanTally()
        var rc = sqlite3_step(selectAll)
        while rc == SQLITE_ROW {
            guard let k = sqlite3_column_blob(selectAll, 0), let v = sqlite3_column_blob(selectAll, 1),
                  sqlite3_column_bytes(selectAll, 0) == keySize, sqlite3_column_bytes(selectAll, 1) == valueSize
            else { sqlite3_reset(selectAll); throw BenchError("sqlite: bad row") }
            tally.add(key: k, value: v)
            rc = sqlite3_step(selectAll)
        }
        sqlite3_reset(selectAll)
        guard rc == SQLITE_DONE else { throw BenchError("sqlite: scan failed: \(String(cString: sqlite3_errmsg(db)))") }
        try step(commit)
        return try tally.result(Self.name)
    }
}

private func exec(_ db: OpaquePointer, _ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
        throw BenchError("sqlite: \(sql) failed: \(String(cString: sqlite3_errmsg(db)))")
    }
}

private func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
          let statement
    else { throw BenchError("sqlite: prepare \(sql) failed: \(String(cString: sqlite3_errmsg(db)))") }
    return statement
}
