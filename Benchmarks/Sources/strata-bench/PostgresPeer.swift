// `sync-server`'s `postgres` engine: postgres-nio alone inserting the rows the sync workload's
// 100 clients write (the `SyncPerson` shape), from as many concurrent writers, in batches of
// as many rows as a client commits at once, each batch one multi-row INSERT (one implicit
// transaction). The floor for what the sync server's PostgreSQL store can ingest.

#if !NO_STRATA

import Foundation
import Logging
import PostgresNIO

enum PostgresPeer {
    /// Inserts `writers` × `perWriter` rows in batches of `batch` into a new table; returns rows/s.
    static func ingest(url: String, table: String, writers: Int, perWriter: Int, batch: Int) async throws -> Double {
        guard let components = URLComponents(string: url), let host = components.host else {
            throw BenchError("\(url) is not a postgres://user@host:port/database URL")
        }
        let database = String(components.path.drop { $0 == "/" })
        var configuration = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password, database: database.isEmpty ? nil : database, tls: .disable)
        configuration.options.maximumConnections = min(writers, 50)
        var logger = Logger(label: "strata-bench.postgres")
        logger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: Double.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await client.query(PostgresQuery(unsafeSQL:
                "CREATE TABLE \(table) (id bigint PRIMARY KEY, name text NOT NULL, age bigint NOT NULL, "
                + "score double precision NOT NULL, active boolean NOT NULL)"))
            let start = monotonicNanos()
            try await withThrowingTaskGroup(of: Void.self) { writersGroup in
                for writer in 0..<writers {
                    writersGroup.addTask {
                        var first = writer * perWriter
                        let end = first + perWriter
                        while first < end {
                            let last = min(first + batch, end)
                            try await client.query(insert(table: table, ids: first..<last))
                            first = last
                        }
                    }
                }
                try await writersGroup.waitForAll()
            }
            let elapsed = monotonicNanos() - start
            let rows = try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"))
            var count = 0
            for try await (value) in rows.decode(Int.self) { count = value }
            guard count == writers * perWriter else {
                throw BenchError("postgres: \(count) rows stored of \(writers * perWriter)")
            }
            try await client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"))
            return Double(count) / (Double(max(elapsed, 1)) / 1e9)
        }
    }

    /// One INSERT of the rows `ids`, with the values the sync clients give those ids.
    private static func insert(table: String, ids: Range<Int>) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: ids.count * 5)
        var rows: [String] = []
        rows.reserveCapacity(ids.count)
        for id in ids {
            let p = bindings.count
            rows.append("($\(p + 1), $\(p + 2), $\(p + 3), $\(p + 4), $\(p + 5))")
            bindings.append(id)
            bindings.append("person \(id)")
            bindings.append(id % 100)
            bindings.append(Double(id % 1_000) / 8)
            bindings.append(id % 2 == 0)
        }
        return PostgresQuery(unsafeSQL: "INSERT INTO \(table) (id, name, age, score, active) VALUES " + rows.joined(separator: ", "),
                             binds: bindings)
    }
}
#endif
