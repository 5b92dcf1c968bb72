// Raw SQLite in workload 12: the snapshot is a read transaction held open on a second
// connection (WAL mode keeps it on its version); the commits run on a third connection,
// autocommitted one UPDATE at a time with synchronous=FULL. While the reader holds its version,
// checkpoints cannot move the WAL past it, so the WAL grows with every commit.

import CSQLite

extension SQLiteObjectEngine: SnapshotGrowthEngine {
    func commitUnderSnapshot(_ people: [Person], commits: Int, holdingSnapshot: Bool) async throws -> (before: Int, after: Int) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        let writer = try Self.connect(path)
        defer { sqlite3_close_v2(writer) }
        try Self.run(writer, "PRAGMA synchronous=FULL")
        var reader: OpaquePointer?
        var snapshotSum: Int64 = 0
        if holdingSnapshot {
            let connection = try Self.connect(path)
            reader = connection
            try Self.run(connection, "BEGIN")
            snapshotSum = try Self.sumOfAges(connection)
        }
        defer { if let reader { sqlite3_close_v2(reader) } }
        let before = directorySize(folder)
        var update: OpaquePointer?
        guard sqlite3_prepare_v2(writer, "UPDATE person SET age = age + 1 WHERE id = ?1", -1, &update, nil) == SQLITE_OK, let update else {
            throw BenchError("sqlite: prepare failed: \(String(cString: sqlite3_errmsg(writer)))")
        }
        defer { sqlite3_finalize(update) }
        for index in 0..<commits {
            sqlite3_bind_int64(update, 1, Int64(people[index % people.count].id))
            let rc = sqlite3_step(update)
            sqlite3_reset(update)
            guard rc == SQLITE_DONE else { throw BenchError("sqlite: update failed: \(String(cString: sqlite3_errmsg(writer)))") }
        }
        let after = directorySize(folder)
        if let reader {
            guard try Self.sumOfAges(reader) == snapshotSum else { throw BenchError("sqlite: the snapshot changed") }
            try Self.run(reader, "COMMIT")
        }
        return (before, after)
    }

    private static func connect(_ path: String) throws -> OpaquePointer {
        var connection: OpaquePointer?
        let rc = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let connection else {
            sqlite3_close(connection)
            throw BenchError("sqlite: open failed: \(String(cString: sqlite3_errstr(rc)))")
        }
        return connection
    }

    private static func run(_ connection: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchError("sqlite: \(sql) failed: \(String(cString: sqlite3_errmsg(connection)))")
        }
    }

    private static func sumOfAges(_ connection: OpaquePointer) throws -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "SELECT sum(age) FROM person", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchError("sqlite: prepare failed: \(String(cString: sqlite3_errmsg(connection)))")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw BenchError("sqlite: sum failed") }
        return sqlite3_column_int64(statement, 0)
    }
}
