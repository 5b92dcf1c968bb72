import GRDB

/// GRDB.swift 7 with `RepoItem` as a Codable record: `FetchableRecord & PersistableRecord`
/// conformances that GRDB derives from `Codable` (no hand-written row code), in a
/// `DatabasePool` (WAL) whose writer is set back to `synchronous=FULL` as in `GRDBObjectEngine`.
/// Each call is one async `read` or `write` of the pool: GRDB's hop to its reader or writer
/// queue, as the repositories' actor hop. `save` is the record's `save(_:)` (update, else insert);
/// lookups `fetchOne(_:key:)`; `decodeAll` `fetchAll`.
final class GRDBRepoEngine: RepoEngine {
    static let name = "grdb"
    static let savesPerRun = 100
    private let pool: DatabasePool

    init(directory: String) async throws {
        pool = try DatabasePool(path: directory + "/items.sqlite")
        let synchronous = try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.create(table: RepoItem.databaseTableName, options: .ifNotExists) { table in
                table.primaryKey("id", .integer)
                table.column("name", .text).notNull()
                table.column("age", .integer).notNull()
                table.column("score", .double).notNull()
                table.column("active", .boolean).notNull()
            }
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard synchronous == 2 else { throw BenchError("grdb: synchronous is \(String(describing: synchronous)), not FULL") }
    }

    func close() async throws { try pool.close() }

    func saveAll(_ items: [RepoItem]) async throws {
        try await pool.write { db in
            for item in items { try item.save(db) }
        }
    }

    func save(_ item: RepoItem) async throws {
        try await pool.write { db in try item.save(db) }
    }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        var sum = 0
        for id in ids {
            guard let item = try await pool.read({ db in try RepoItem.fetchOne(db, key: id) }) else {
                throw BenchError("grdb: no item \(id)")
            }
            sum &+= item.age
        }
        return sum
    }

    func decodeAll() async throws -> [RepoItem] {
        try await pool.read { db in try RepoItem.fetchAll(db) }
    }
}

extension RepoItem: FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
}
