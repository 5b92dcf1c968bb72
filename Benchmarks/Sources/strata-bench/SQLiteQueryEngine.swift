import CSQLite

/// The schema both SQLite-based query engines use: `id` is the rowid, and `team` has an index,
/// created with the table (as an app's schema setup would), before any row is inserted.
let memberSchemaSQL = [
    "CREATE TABLE IF NOT EXISTS member(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, "
        + "active INTEGER, team INTEGER)",
    "CREATE INDEX IF NOT EXISTS member_team ON member(team)",
]

/// The query workloads in SQLite through its C API, the floor for any SQLite-based layer: the
/// table `member` with an index on `team`, WAL mode, `synchronous=FULL`, SQLite's default page
/// cache (as GRDB runs it), and prepared statements reused throughout:
/// `SELECT count(*) FROM member WHERE age > ?1 AND active`, `… WHERE team = ?1` (answered from
/// the index alone), and `SELECT <all columns> FROM member ORDER BY score DESC LIMIT ?1`.
final class SQLiteQueryEngine: QueryEngine {
    static let name = "sqlite"
    static let settings = "table member with an index on team, journal_mode=WAL, synchronous=FULL, "
        + "SQLite's default page cache, prepared statements"

    private let db: OpaquePointer
    private let insert: OpaquePointer
    private let countActive: OpaquePointer
    private let countTeam: OpaquePointer
    private let top: OpaquePointer

    init(directory: String) async throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(
            directory + "/members.sqlite", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close(db)
            throw BenchError("sqlite: open failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        self.db = db
        do {
            for sql in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"] + memberSchemaSQL {
                try sqliteExecute(db, sql)
            }
            insert = try sqlitePrepare(
                db, "INSERT INTO member(id, name, age, score, active, team) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
            countActive = try sqlitePrepare(db, "SELECT count(*) FROM member WHERE age > ?1 AND active")
            countTeam = try sqlitePrepare(db, "SELECT count(*) FROM member WHERE team = ?1")
            top = try sqlitePrepare(db, "SELECT id, name, age, score, active, team FROM member ORDER BY score DESC LIMIT ?1")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    func close() async throws {
        for statement in [insert, countActive, countTeam, top] { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    private func failure(_ what: String) -> BenchError {
        BenchError("sqlite: \(what) failed: \(String(cString: sqlite3_errmsg(db)))")
    }

    func insertAll(_ members: [Member]) async throws {
        try sqliteExecute(db, "BEGIN")
        do {
            for member in members {
                sqlite3_bind_int64(insert, 1, Int64(member.id))
                sqlite3_bind_int64(insert, 3, Int64(member.age))
                sqlite3_bind_double(insert, 4, member.score)
                sqlite3_bind_int(insert, 5, member.active ? 1 : 0)
                sqlite3_bind_int64(insert, 6, Int64(member.team))
                var name = member.name
                let rc = name.withUTF8 { bytes in
                    sqlite3_bind_text(insert, 2, bytes.baseAddress, Int32(bytes.count), nil)
                    return sqlite3_step(insert)
                }
                sqlite3_reset(insert)
                guard rc == SQLITE_DONE else { throw failure("insert") }
            }
            try sqliteExecute(db, "COMMIT")
        } catch {
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    /// Steps `statement`, bound by the caller, for its one row and returns the row's integer.
    private func countRow(_ statement: OpaquePointer) throws -> Int {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw failure("count") }
        return Int(sqlite3_column_int64(statement, 0))
    }

    func countActive(olderThan age: Int) async throws -> Int {
        sqlite3_bind_int64(countActive, 1, Int64(age))
        return try countRow(countActive)
    }

    func count(inTeam team: Int) async throws -> Int {
        sqlite3_bind_int64(countTeam, 1, Int64(team))
        return try countRow(countTeam)
    }

    func highestScores(limit: Int) async throws -> [Member] {
        defer { sqlite3_reset(top) }
        sqlite3_bind_int64(top, 1, Int64(limit))
        var members: [Member] = []
        members.reserveCapacity(limit)
        var rc = sqlite3_step(top)
        while rc == SQLITE_ROW {
            // The text first, then its length (SQLite's documented order).
            let text = sqlite3_column_text(top, 1)
            let length = Int(sqlite3_column_bytes(top, 1))
            let name = text.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
            members.append(Member(
                id: Int(sqlite3_column_int64(top, 0)), name: name, age: Int(sqlite3_column_int64(top, 2)),
                score: sqlite3_column_double(top, 3), active: sqlite3_column_int64(top, 4) != 0,
                team: Int(sqlite3_column_int64(top, 5))))
            rc = sqlite3_step(top)
        }
        guard rc == SQLITE_DONE else { throw failure("sort") }
        return members
    }
}

func sqliteExecute(_ db: OpaquePointer, _ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
        throw BenchError("sqlite: \(sql) failed: \(String(cString: sqlite3_errmsg(db)))")
    }
}

func sqlitePrepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
          let statement
    else { throw BenchError("sqlite: prepare \(sql) failed: \(String(cString: sqlite3_errmsg(db)))") }
    return statement
}
