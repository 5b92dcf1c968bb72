import CSQLite

/// The schema both SQLite-based object engines use (`id` is the rowid).
let personTableSQL =
    "CREATE TABLE IF NOT EXISTS person(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, score REAL, active INTEGER)"

/// Objects in SQLite through its C API, the floor for any SQLite-based object layer: the table
/// `person`, WAL mode, `synchronous=FULL`, SQLite's default page cache (as GRDB runs it, so
/// the two differ only by GRDB's layer), and prepared statements reused throughout, each
/// reading or writing only the columns it needs. Objects are updated and deleted one by one by
/// primary key, as an object layer does, not by one set-wide statement (`DELETE FROM person`
/// would take SQLite's truncate shortcut and measure freeing pages, not deleting objects).
final class SQLiteObjectEngine: ObjectEngine {
    static let name = "sqlite"
    static let settings = "journal_mode=WAL, synchronous=FULL, SQLite's default page cache, prepared statements"

    /// The database file (workload 12 opens its own connections to it: SQLiteSpaceGrowth.swift).
    let path: String
    private let db: OpaquePointer
    private let begin: OpaquePointer
    private let commit: OpaquePointer
    private let insert: OpaquePointer
    private let selectAge: OpaquePointer
    private let selectAll: OpaquePointer
    private let incrementAge: OpaquePointer
    private let delete: OpaquePointer

    init(directory: String) async throws {
        var db: OpaquePointer?
        path = directory + "/people.sqlite"
        let rc = sqlite3_open_v2(
            path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            sqlite3_close(db)
            throw BenchError("sqlite: open failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        self.db = db
        do {
            for sql in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", personTableSQL] {
                try execute(db, sql)
            }
            begin = try prepareStatement(db, "BEGIN")
            commit = try prepareStatement(db, "COMMIT")
            insert = try prepareStatement(db, "INSERT INTO person(id, name, age, score, active) VALUES(?1, ?2, ?3, ?4, ?5)")
            selectAge = try prepareStatement(db, "SELECT age FROM person WHERE id = ?1")
            selectAll = try prepareStatement(db, "SELECT name, age, score FROM person")
            incrementAge = try prepareStatement(db, "UPDATE person SET age = age + 1 WHERE id = ?1")
            delete = try prepareStatement(db, "DELETE FROM person WHERE id = ?1")
        } catch {
            sqlite3_close_v2(db)
            throw error
        }
    }

    func close() async throws {
        for statement in [begin, commit, insert, selectAge, selectAll, incrementAge, delete] {
            sqlite3_finalize(statement)
        }
        sqlite3_close(db)
    }

    private func step(_ statement: OpaquePointer, expecting expected: Int32 = SQLITE_DONE) throws {
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        guard rc == expected else { throw BenchError("sqlite: step failed: \(String(cString: sqlite3_errmsg(db)))") }
    }

    /// Runs `body` in one transaction: BEGIN, then COMMIT, or ROLLBACK when it throws.
    private func transaction<T>(_ body: () throws -> T) throws -> T {
        try step(begin)
        do {
            let result = try body()
            try step(commit)
            return result
        } catch {
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    func insertAll(_ people: [Person]) async throws {
        try transaction {
            for person in people {
                sqlite3_bind_int64(insert, 1, Int64(person.id))
                sqlite3_bind_int64(insert, 3, Int64(person.age))
                sqlite3_bind_double(insert, 4, person.score)
                sqlite3_bind_int(insert, 5, person.active ? 1 : 0)
                // Borrows the string's UTF-8 without a copy (a native string is contiguous);
                // the pointer is valid until the step finishes (nil: SQLITE_STATIC).
                var name = person.name
                try name.withUTF8 { bytes in
                    sqlite3_bind_text(insert, 2, bytes.baseAddress, Int32(bytes.count), nil)
                    try step(insert)
                }
            }
        }
    }

    func scan() async throws -> ObjectScanSums {
        try transaction {
            var sums = ObjectScanSums()
            var rc = sqlite3_step(selectAll)
            while rc == SQLITE_ROW {
                let length = Int(sqlite3_column_bytes(selectAll, 0))
                let first = length > 0 ? sqlite3_column_text(selectAll, 0)?.pointee ?? 0 : 0
                sums.add(
                    nameLength: length, nameFirstByte: first,
                    age: Int(sqlite3_column_int64(selectAll, 1)), score: sqlite3_column_double(selectAll, 2))
                rc = sqlite3_step(selectAll)
            }
            sqlite3_reset(selectAll)
            guard rc == SQLITE_DONE else { throw BenchError("sqlite: scan failed: \(String(cString: sqlite3_errmsg(db)))") }
            return sums
        }
    }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        try transaction {
            var sum = 0
            for id in ids {
                sqlite3_bind_int64(selectAge, 1, Int64(id))
                guard sqlite3_step(selectAge) == SQLITE_ROW else {
                    sqlite3_reset(selectAge)
                    throw BenchError("sqlite: no person \(id)")
                }
                sum &+= Int(sqlite3_column_int64(selectAge, 0))
                sqlite3_reset(selectAge)
            }
            return sum
        }
    }

    func incrementAllAges(_ people: [Person]) async throws {
        try transaction {
            for person in people {
                sqlite3_bind_int64(incrementAge, 1, Int64(person.id))
                try step(incrementAge)
                guard sqlite3_changes(db) == 1 else { throw BenchError("sqlite: no person \(person.id)") }
            }
        }
    }

    func deleteAll(_ people: [Person]) async throws {
        try transaction {
            for person in people {
                sqlite3_bind_int64(delete, 1, Int64(person.id))
                try step(delete)
                guard sqlite3_changes(db) == 1 else { throw BenchError("sqlite: no person \(person.id)") }
            }
        }
    }
}

private func execute(_ db: OpaquePointer, _ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
        throw BenchError("sqlite: \(sql) failed: \(String(cString: sqlite3_errmsg(db)))")
    }
}

private func prepareStatement(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
          let statement
    else { throw BenchError("sqlite: prepare \(sql) failed: \(String(cString: sqlite3_errmsg(db)))") }
    return statement
}
