import GRDB

/// The query workloads in GRDB.swift 7 as its documentation writes them: a `DatabasePool`
/// (WAL, the writer set back to `synchronous=FULL` as in `GRDBObjectEngine`), `Member` as a
/// record with hand-written `init(row:)`/`encode(to:)`, and the query interface:
/// `Member.filter(Column("age") > age && Column("active")).fetchCount(db)`,
/// `Member.filter(Column("team") == team).fetchCount(db)` (answered from the index), and
/// `Member.order(Column("score").desc).limit(100).fetchAll(db)`.
final class GRDBQueryEngine: QueryEngine {
    static let name = "grdb"
    static let settings = "DatabasePool (WAL), synchronous=FULL, table member with an index on team, "
        + "query interface (filter/order/limit, fetchCount, fetchAll of records with hand-written init(row:))"

    private let pool: DatabasePool

    init(directory: String) async throws {
        pool = try DatabasePool(path: directory + "/members.sqlite")
        let synchronous = try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            for sql in memberSchemaSQL { try db.execute(sql: sql) }
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard synchronous == 2 else { throw BenchError("grdb: synchronous is \(String(describing: synchronous)), not FULL") }
    }

    func close() async throws { try pool.close() }

    func insertAll(_ members: [Member]) async throws {
        try await pool.write { db in
            for member in members { try member.insert(db) }
        }
    }

    func countActive(olderThan age: Int) async throws -> Int {
        try await pool.read { db in
            try Member.filter(Column("age") > age && Column("active")).fetchCount(db)
        }
    }

    func count(inTeam team: Int) async throws -> Int {
        try await pool.read { db in
            try Member.filter(Column("team") == team).fetchCount(db)
        }
    }

    func highestScores(limit: Int) async throws -> [Member] {
        try await pool.read { db in
            try Member.order(Column("score").desc).limit(limit).fetchAll(db)
        }
    }
}

extension Member: FetchableRecord, PersistableRecord {
    static let databaseTableName = "member"

    /// Columns in table order (`SELECT *`), read by index.
    init(row: Row) {
        id = row[0]
        name = row[1]
        age = row[2]
        score = row[3]
        active = row[4]
        team = row[5]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
        container["age"] = age
        container["score"] = score
        container["active"] = active
        container["team"] = team
    }
}
