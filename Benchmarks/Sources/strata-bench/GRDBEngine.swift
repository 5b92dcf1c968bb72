import GRDB

/// GRDB.swift 7 the way its documentation recommends for speed: a `DatabasePool` (WAL mode),
/// and `Person` as a record with hand-written `init(row:)` reading columns by index and
/// hand-written `encode(to:)` — GRDB's fast path, no Codable. Reads go through the record API
/// (`fetchCursor`, `fetchOne` on a cached statement, `fetchAll`), writes through `insert`,
/// `update` and `delete` of records, whose statements GRDB caches. Accessed with GRDB's async
/// methods, as Swift concurrency code does.
///
/// GRDB sets `synchronous=NORMAL` when it puts a pool in WAL mode (a commit then syncs only at
/// checkpoints); every engine here commits durably, so the writer connection is set back to
/// `synchronous=FULL` right after the pool opens, and the setting is checked.
final class GRDBObjectEngine: ObjectEngine {
    static let name = "grdb"
    static let settings = "DatabasePool (WAL), synchronous=FULL, SQLite's default page cache, "
        + "records with hand-written init(row:)/encode(to:)"

    private let pool: DatabasePool

    init(directory: String) async throws {
        pool = try DatabasePool(path: directory + "/people.sqlite")
        let synchronous = try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: personTableSQL)
            return try Int.fetchOne(db, sql: "PRAGMA synchronous")
        }
        guard synchronous == 2 else { throw BenchError("grdb: synchronous is \(String(describing: synchronous)), not FULL") }
    }

    func close() async throws { try pool.close() }

    func insertAll(_ people: [Person]) async throws {
        try await pool.write { db in
            for person in people { try person.insert(db) }
        }
    }

    func scan() async throws -> ObjectScanSums {
        try await pool.read { db in
            var sums = ObjectScanSums()
            let cursor = try Person.fetchCursor(db)
            while let person = try cursor.next() {
                sums.add(name: person.name, age: person.age, score: person.score)
            }
            return sums
        }
    }

    func sumAges(ofIDs ids: [Int]) async throws -> Int {
        // A cached statement decoded into records: `Person.fetchOne(db, key:)` would generate
        // and prepare its SQL on every call (about 50 µs each here), which no one does in a loop.
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT * FROM person WHERE id = ?")
            var sum = 0
            for id in ids {
                guard let person = try Person.fetchOne(statement, arguments: [id]) else {
                    throw BenchError("grdb: no person \(id)")
                }
                sum &+= person.age
            }
            return sum
        }
    }

    func incrementAllAges(_ people: [Person]) async throws {
        // Fetch the records, change them, save them: GRDB documents against writing to a table
        // while a cursor over it is open, so the records are fetched into an array first.
        try await pool.write { db in
            var stored = try Person.fetchAll(db)
            for i in stored.indices {
                stored[i].age += 1
                try stored[i].update(db)
            }
        }
    }

    func deleteAll(_ people: [Person]) async throws {
        try await pool.write { db in
            for person in people { try person.delete(db) }
        }
    }
}

extension Person: FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"

    /// Columns in table order (`SELECT *`), read by index.
    init(row: Row) {
        id = row[0]
        name = row[1]
        age = row[2]
        score = row[3]
        active = row[4]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["name"] = name
        container["age"] = age
        container["score"] = score
        container["active"] = active
    }
}
