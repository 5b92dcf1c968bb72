import Foundation
import Logging
import Synchronization
import NIOCore
public import PostgresNIO
public import StrataSyncProtocol

/// The shared store: PostgreSQL through postgres-nio's pooled, reconnecting ``PostgresClient``.
/// Any number of server instances use one database; uploads are stored in PostgreSQL
/// transactions that each hold every upload of the app that arrived meanwhile (group commit,
/// `UploadGroupCommit`), and each commit is announced with
/// `NOTIFY strata_sync, '<app>:<sequence>'`, which every instance `LISTEN`s to
/// (``run(onCommit:)``).
///
/// Tables (created and migrated by ``prepare()``; `schema_migrations` records the version):
/// `server_secret`, `apps` (newest sequence, compacted-through, schema; its row is locked (by
/// an upsert) while an upload assigns sequences, so they are gapless and commit in order), `history` (primary key (app, sequence), UNIQUE (app, client, client_seq)), `objects`
/// (app, class, primary key bytes → state), `clients` (last acknowledged, subscriptions), `users`,
/// `compacted_classes` (per app and class, the ``ClassCompaction`` of its compacted history; the
/// app's `compaction_summary_from` is the compacted-through sequence from which it was kept).
/// Client ids and sequences are stored as `bigint` (the u64's bit pattern).
public final class PostgresSyncStorage: SyncStorage {
    /// The pool; run by ``run(onCommit:)``.
    public let client: PostgresClient
    private let logger: Logger
    private let groupCommit = UploadGroupCommit()
    /// Ends calls whose connection closes (``ConnectionWatch``).
    private let watch = ConnectionWatch()
    private static let channel = "strata_sync"
    private static let schemaVersion = 2

    /// How long a store call may wait for a pooled connection (``connectionLimit``) and then
    /// take on it (``operationLimit``) before the session gives up on it.
    private let limits: (connection: Duration, operation: Duration)
    /// Where a call the pool leased no connection to connects on its own (`leased`).
    private let directConnection: PostgresConnection.Configuration
    /// The id of the next connection made outside the pool: negative, so that it never equals
    /// a pooled connection's (``ConnectionWatch`` tells connections apart by id).
    private let nextDirectConnectionID = Atomic<Int>(-1)

    /// A store on the database at `url` (`postgres://user[:password]@host[:port]/database`).
    ///
    /// - Parameters:
    ///   - operationLimit: How long one store call (a transaction or a query) may run once it
    ///     holds a connection before the session gives up on it with
    ///     ``SyncServerError/storageUnavailable(_:)``; 30 seconds by default. See
    ///     ``operationLimit``.
    ///   - connectionLimit: How long a store call may wait for the pool to lease it a
    ///     connection (the pool connecting, or every connection busy); 30 seconds by default.
    ///     See ``connectionLimit``.
    public convenience init(url: String, operationLimit: Duration = .seconds(30), connectionLimit: Duration = .seconds(30),
                            logger: Logger = Logger(label: "strata.sync.postgres")) throws(SyncServerError) {
        try self.init(url: url, operationLimit: operationLimit, connectionLimit: connectionLimit, logger: logger,
                      maximumConnections: PostgresClient.Configuration.Options().maximumConnections)
    }

    private convenience init(url: String, operationLimit: Duration, connectionLimit: Duration, logger: Logger,
                             maximumConnections: Int) throws(SyncServerError) {
        guard operationLimit > .zero, connectionLimit > .zero else {
            throw .invalidConfiguration("the PostgreSQL store's limits must be positive (operation \(operationLimit), connection \(connectionLimit))")
        }
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty else {
            throw .invalidConfiguration("\(url) is not a postgres://user@host:port/database URL")
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.init(host: host, port: components.port ?? 5432, username: components.user ?? "postgres", password: components.password,
                  database: database.isEmpty ? nil : database, limits: (connectionLimit, operationLimit), logger: logger,
                  maximumConnections: maximumConnections)
    }

    /// The store itself, once its arguments are checked. It does not throw: an initializer that
    /// can fail after the `Atomic` property is set makes Swift 6.3's optimizer crash (release
    /// builds, CopyPropagation on the failure path's `drop_deinit`).
    private init(host: String, port: Int, username: String, password: String?, database: String?,
                 limits: (connection: Duration, operation: Duration), logger: Logger, maximumConnections: Int) {
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        self.client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.directConnection = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        self.logger = logger
        self.limits = limits
    }

    /// The public initializer's store with at most `maximumConnections` pooled connections
    /// (postgres-nio's default, 20, otherwise).
    convenience init(url: String, operationLimit: Duration = .seconds(30), connectionLimit: Duration = .seconds(30),
                     maximumConnections: Int, logger: Logger = Logger(label: "strata.sync.postgres")) throws(SyncServerError) {
        try self.init(url: url, operationLimit: operationLimit, connectionLimit: connectionLimit,
                      logger: logger, maximumConnections: maximumConnections)
    }

    public func run(onCommit: @escaping @Sendable (String, UInt64) -> Void) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await self.client.run() }
            group.addTask { try await self.listen(onCommit: onCommit) }
        }
    }

    /// Listens on one pooled connection; when the connection or the server goes away, listens
    /// again (commits made meanwhile are found by each session's next history read).
    private func listen(onCommit: @escaping @Sendable (String, UInt64) -> Void) async throws {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    // The `LISTEN` statement itself can go unanswered like any query.
                    try await self.watch.run(on: connection, "LISTEN \(Self.channel)") {
                        try await connection.listen(on: Self.channel) { notifications in
                            for try await notification in notifications {
                                let parts = notification.payload.split(separator: ":")
                                if parts.count == 2, let sequence = UInt64(parts[1]) { onCommit(String(parts[0]), sequence) }
                            }
                        }
                    }
                }
            } catch where !Task.isCancelled {
                logger.warning("LISTEN \(Self.channel) ended: \(String(reflecting: error)); listening again")
                try await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// How long one store call may take, once it holds a connection, before the session gives
    /// up on it (see `withDeadline`). A call whose connection closes ends at once
    /// (``ConnectionWatch``); this bounds every other wait (a call queued for an app's row lock
    /// behind other uploads, a statement PostgreSQL never answers). One given up on costs only
    /// a resend (uploads are exactly-once).
    ///
    /// The limit starts when the pool leases the connection, not when the call is made: time
    /// spent before that (the pool connecting, or the call's task waiting for a thread of a
    /// busy concurrency pool to start it) counts against ``connectionLimit`` instead.
    public var operationLimit: Duration { limits.operation }

    /// How long a store call may wait for the pool to lease it a connection (the pool cannot
    /// connect, every connection is busy); a call that waited that long then connects on its
    /// own, within the same limit again, and only if that fails too does the session give up on
    /// it with ``SyncServerError/storageUnavailable(_:)``.
    public var connectionLimit: Duration { limits.connection }

    /// Runs `body` on a pooled connection: waiting for the lease within ``connectionLimit``,
    /// then `body` within ``operationLimit``, ending at once if the connection closes
    /// (``ConnectionWatch``). `what` names the call in errors.
    ///
    /// A call the pool leased no connection to (within the limit, or failing the lease) is not
    /// given up on while PostgreSQL itself takes connections: it connects on its own, within
    /// ``connectionLimit`` again, runs `body` there and closes that connection. The pool can
    /// fail to lease to a reachable database: after failed connection attempts (PostgreSQL
    /// restarting or out of connection slots) postgres-nio's pool retries one connection at a
    /// time, waiting longer after each failure (up to a minute), queues every lease behind that
    /// retry, and after 15 s fails leases at once until a retry succeeds. The call fails only
    /// if the connection of its own fails too.
    private func leased<Result: Sendable>(_ what: String,
                                          _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let limits = self.limits
        let leasedOne = Atomic<Bool>(false)
        do {
            return try await withDeadline(limits.connection, "leasing a PostgreSQL connection for \(what)") { stage in
                try await self.client.withConnection { connection in
                    leasedOne.store(true, ordering: .relaxed)
                    stage.begin(limits.operation, "\(what) on PostgreSQL")
                    return try await self.watch.run(on: connection, what) { try await body(connection) }
                }
            }
        } catch let leaseFailure where !leasedOne.load(ordering: .relaxed) && !Task.isCancelled {
            logger.warning("\(what): the pool leased no connection (\(String(describing: leaseFailure))); connecting directly")
            let connected = Atomic<Bool>(false)
            do {
                return try await withDeadline(limits.connection, "connecting to PostgreSQL for \(what)") { stage in
                    try await self.onDirectConnection { connection in
                        connected.store(true, ordering: .relaxed)
                        stage.begin(limits.operation, "\(what) on PostgreSQL")
                        return try await self.watch.run(on: connection, what) { try await body(connection) }
                    }
                }
            } catch let connectFailure where !connected.load(ordering: .relaxed) && !Task.isCancelled {
                throw SyncServerError.storageUnavailable(
                    "\(Self.describe(leaseFailure)), and connecting to PostgreSQL directly failed: \(Self.describe(connectFailure))")
            }
        }
    }

    /// Runs `body` on a connection of its own (not the pool's), closed afterwards.
    private func onDirectConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let id = nextDirectConnectionID.subtract(1, ordering: .relaxed).oldValue
        let connection = try await PostgresConnection.connect(configuration: directConnection, id: id, logger: logger)
        do {
            let result = try await body(connection)
            try? await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// An error's message for another error's text: a store error's own message.
    private static func describe(_ error: any Error) -> String {
        if case .storageUnavailable(let message)? = error as? SyncServerError { return message }
        return String(reflecting: error)
    }

    /// Runs `body` in one transaction on a pooled connection, within ``operationLimit`` from the
    /// lease (``connectionLimit`` before it), ending at once if the connection closes
    /// (``ConnectionWatch``); an error thrown by `body` reaches the caller as itself.
    ///
    /// Not postgres-nio's `withTransaction`: after a statement failed because PostgreSQL
    /// closed the connection, it still sends `ROLLBACK` there, which is never answered.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await leased("a transaction") { connection in
            try await connection.query("BEGIN", logger: self.logger)
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                // Ends the transaction so that the connection goes back to the pool
                // clean; a closed connection has none left to end.
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: self.logger) }
                throw error
            }
            try await connection.query("COMMIT", logger: self.logger)
            return result
        }
    }

    /// Runs `body` on a pooled connection, within ``operationLimit`` from the lease
    /// (``connectionLimit`` before it), ending at once if the connection closes.
    func connection<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        try await leased("a query", body)
    }

    public func prepare() async throws {
        try await transaction { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7320331)", logger: self.logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY)", logger: self.logger)
            var current = 0
            for try await version in try await connection.query("SELECT max(version) FROM schema_migrations", logger: self.logger)
                .decode(Int?.self) {
                current = version ?? 0
            }
            let migrations = [Self.migrationOne, Self.migrationTwo]
            for (index, migration) in migrations.enumerated() where index + 1 > current {
                for statement in migration {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                }
                try await connection.query("INSERT INTO schema_migrations (version) VALUES (\(index + 1))", logger: self.logger)
            }
        }
    }

    /// Per-class summaries of compacted history (``ClassCompaction``). History an app had
    /// compacted before this migration has none: its `compaction_summary_from` starts at its
    /// compacted-through sequence, so it counts as changing every class.
    private static let migrationTwo = [
        "ALTER TABLE apps ADD COLUMN compaction_summary_from bigint NOT NULL DEFAULT 0",
        "UPDATE apps SET compaction_summary_from = compacted_through",
        """
        CREATE TABLE compacted_classes (app text NOT NULL, class text NOT NULL, newest bigint NOT NULL,
            newest_client bigint NOT NULL, newest_from_others bigint NOT NULL, PRIMARY KEY (app, class))
        """,
    ]

    private static let migrationOne = [
        "CREATE TABLE server_secret (id integer PRIMARY KEY, secret bytea NOT NULL)",
        """
        CREATE TABLE apps (app text PRIMARY KEY, latest_sequence bigint NOT NULL DEFAULT 0,
            compacted_through bigint NOT NULL DEFAULT 0, schema bytea)
        """,
        """
        CREATE TABLE history (app text NOT NULL, sequence bigint NOT NULL, client bigint NOT NULL,
            client_seq bigint NOT NULL, changeset bytea NOT NULL, PRIMARY KEY (app, sequence),
            UNIQUE (app, client, client_seq))
        """,
        """
        CREATE TABLE objects (app text NOT NULL, class text NOT NULL, pk bytea NOT NULL, state bytea NOT NULL,
            PRIMARY KEY (app, class, pk))
        """,
        """
        CREATE TABLE clients (app text NOT NULL, client bigint NOT NULL, last_ack bigint NOT NULL DEFAULT 0,
            subscription_version bigint NOT NULL DEFAULT 0, subscriptions bytea NOT NULL DEFAULT ''::bytea,
            PRIMARY KEY (app, client))
        """,
        """
        CREATE TABLE users (app text NOT NULL, user_id text NOT NULL, provider text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (app, user_id))
        """,
    ]

    public func serverSecret() async throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let candidate = ByteBuffer(bytes: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return try await connection { connection in
            try await connection.query("INSERT INTO server_secret (id, secret) VALUES (1, \(candidate)) ON CONFLICT (id) DO NOTHING",
                                       logger: self.logger)
            for try await secret in try await connection.query("SELECT secret FROM server_secret WHERE id = 1", logger: self.logger)
                .decode(ByteBuffer.self) {
                return Array(secret.readableBytesView)
            }
            throw SyncServerError.storageUnavailable("the server secret could not be stored")
        }
    }

    public func schema(app: String) async throws -> SyncSchema? {
        try await connection { connection in
            for try await bytes in try await connection.query("SELECT schema FROM apps WHERE app = \(app)", logger: self.logger)
                .decode(ByteBuffer?.self) {
                return try bytes.map { try SyncSchema(decoding: $0.readableBytesView) }
            }
            return nil
        }
    }

    public func register(schema: SyncSchema, app: String) async throws -> SchemaRegistration {
        try await transaction { connection in
            let position = try await self.lockApp(app, on: connection)
            _ = position
            var existing = SyncSchema(classes: [])
            for try await bytes in try await connection.query("SELECT schema FROM apps WHERE app = \(app)", logger: self.logger)
                .decode(ByteBuffer?.self) {
                if let bytes { existing = try SyncSchema(decoding: bytes.readableBytesView) }
            }
            let problems = schema.breakingDifferences(from: existing)
            guard problems.isEmpty else { return SchemaRegistration.refused(problems) }
            let merged = existing.merged(with: schema)
            if merged != existing {
                try await connection.query("UPDATE apps SET schema = \(ByteBuffer(bytes: merged.encoded())) WHERE app = \(app)",
                                           logger: self.logger)
            }
            return SchemaRegistration.accepted(merged)
        }
    }

    /// Creates the app's row if needed and locks it until the transaction ends, in one round
    /// trip: the upsert's no-op update takes the row lock (waiting for any other holder) and
    /// returns the row as of that lock.
    private func lockApp(_ app: String, on connection: PostgresConnection) async throws -> HistoryPosition {
        let rows = try await connection.query("""
            INSERT INTO apps (app) VALUES (\(app)) ON CONFLICT (app) DO UPDATE SET app = EXCLUDED.app
            RETURNING latest_sequence, compacted_through
            """, logger: logger)
        for try await (latest, compacted) in rows.decode((Int64, Int64).self) {
            return HistoryPosition(latestSequence: UInt64(latest), compactedThrough: UInt64(compacted))
        }
        throw SyncServerError.storageUnavailable("the row of app \(app) vanished")
    }

    private func position(app: String, on connection: PostgresConnection) async throws -> HistoryPosition {
        let rows = try await connection.query("SELECT latest_sequence, compacted_through FROM apps WHERE app = \(app)", logger: logger)
        for try await (latest, compacted) in rows.decode((Int64, Int64).self) {
            return HistoryPosition(latestSequence: UInt64(latest), compactedThrough: UInt64(compacted))
        }
        return HistoryPosition(latestSequence: 0, compactedThrough: 0)
    }

    public func position(app: String) async throws -> HistoryPosition {
        try await connection { connection in try await self.position(app: app, on: connection) }
    }

    private func client(app: String, clientID: UInt64, on connection: PostgresConnection) async throws -> ClientRecord {
        let rows = try await connection.query("""
            SELECT last_ack, subscription_version, subscriptions FROM clients WHERE app = \(app) AND client = \(Int64(bitPattern: clientID))
            """, logger: logger)
        for try await (lastAck, version, classes) in rows.decode((Int64, Int64, ByteBuffer).self) {
            return ClientRecord(lastAcknowledged: UInt64(bitPattern: lastAck),
                                subscribedClasses: try decodeClasses(Array(classes.readableBytesView)),
                                subscriptionVersion: UInt64(bitPattern: version))
        }
        return ClientRecord()
    }

    public func client(app: String, clientID: UInt64) async throws -> ClientRecord {
        try await connection { connection in try await self.client(app: app, clientID: clientID, on: connection) }
    }

    public func setSubscriptions(app: String, clientID: UInt64, classes: Set<String>, version: UInt64) async throws {
        let encoded = ByteBuffer(bytes: encodeClasses(classes))
        try await connection { connection in _ = try await connection.query("""
            INSERT INTO clients (app, client, subscription_version, subscriptions)
            VALUES (\(app), \(Int64(bitPattern: clientID)), \(Int64(bitPattern: version)), \(encoded))
            ON CONFLICT (app, client) DO UPDATE SET subscription_version = EXCLUDED.subscription_version,
                subscriptions = EXCLUDED.subscriptions
            """, logger: self.logger) }
    }

    /// Stores the upload in a group commit (``UploadGroupCommit``): uploads of the app arriving
    /// from any session while one transaction is under way share the next transaction.
    public func upload(app: String, clientID: UInt64, changesets: [ClientChangeset]) async throws -> UploadResult {
        try await groupCommit.upload(app: app, clientID: clientID, changesets: changesets) { app, requests in
            try await self.commitGroup(app: app, requests)
        }
    }

    /// One transaction of four statements however many uploads and changesets: lock the app's
    /// row, read the clients' records, read the touched objects' states, then one statement
    /// that inserts the history rows, upserts the states and the clients' acknowledgements,
    /// advances the app and sends one `NOTIFY` (each set of rows bound as arrays and expanded
    /// with `unnest`). The uploads are planned in order, each against the records as the ones
    /// before it left them; one refused is left out of the writes.
    private func commitGroup(app: String, _ requests: [UploadRequest]) async throws -> [Result<UploadResult, SyncServerError>] {
        try await transaction { connection in
            let position = try await self.lockApp(app, on: connection)
            var records = try await self.lastAcknowledged(app: app, clients: Set(requests.map(\.clientID)), on: connection)
            var plans: [UploadPlan] = []
            var outcomes: [Result<UploadResult, SyncServerError>] = []
            var latest = position.latestSequence
            for request in requests {
                let lastAcknowledged = records[request.clientID] ?? 0
                do throws(SyncServerError) {
                    let plan = try UploadPlan(clientID: request.clientID, changesets: request.changesets,
                                              lastAcknowledged: lastAcknowledged, latestSequence: latest)
                    latest = plan.latestSequence
                    records[request.clientID] = plan.lastAcknowledged
                    if !plan.accepted.isEmpty { plans.append(plan) }
                    var after = position
                    after.latestSequence = plan.latestSequence
                    outcomes.append(.success(UploadResult(lastAcknowledged: plan.lastAcknowledged, position: after,
                                                          appendedCount: plan.accepted.count)))
                } catch {
                    outcomes.append(.failure(error))
                }
            }
            guard !plans.isEmpty else { return outcomes }
            var touched: [ObjectRef] = []
            var seen: Set<ObjectRef> = []
            for plan in plans {
                for object in plan.touchedObjects where seen.insert(object).inserted { touched.append(object) }
            }
            var states = try await self.states(of: touched, app: app, on: connection)
            for plan in plans { plan.apply(to: &states) }
            let accepted = plans.flatMap(\.accepted)
            let sequences = accepted.map { Int64($0.serverSequence) }
            let historyClients = accepted.map { Int64(bitPattern: $0.clientID) }
            let clientSequences = accepted.map { Int64(bitPattern: $0.clientSequence) }
            let encodedChangesets = accepted.map { ByteBuffer(bytes: $0.encoded()) }
            let written = Array(states)
            let classes = written.map { $0.key.className }
            let keys = written.map { ByteBuffer(bytes: primaryKeyBytes($0.key.primaryKey)) }
            let encodedStates = written.map { ByteBuffer(bytes: $0.value.encoded()) }
            var acknowledgements: [UInt64: UInt64] = [:]
            for plan in plans { acknowledgements[plan.accepted[0].clientID] = plan.lastAcknowledged }
            let acknowledgedClients = acknowledgements.keys.map { Int64(bitPattern: $0) }
            let acknowledgedThrough = acknowledgements.keys.map { Int64(bitPattern: acknowledgements[$0] ?? 0) }
            try await connection.query("""
                WITH appended AS (
                    INSERT INTO history (app, sequence, client, client_seq, changeset)
                    SELECT \(app), sequence, client, client_seq, changeset
                    FROM unnest(\(sequences)::bigint[], \(historyClients)::bigint[], \(clientSequences)::bigint[],
                        \(encodedChangesets)::bytea[]) AS batch(sequence, client, client_seq, changeset)
                ), applied AS (
                    INSERT INTO objects (app, class, pk, state)
                    SELECT \(app), class, pk, state
                    FROM unnest(\(classes)::text[], \(keys)::bytea[], \(encodedStates)::bytea[]) AS batch(class, pk, state)
                    ON CONFLICT (app, class, pk) DO UPDATE SET state = EXCLUDED.state
                ), acknowledged AS (
                    INSERT INTO clients (app, client, last_ack)
                    SELECT \(app), client, last_ack
                    FROM unnest(\(acknowledgedClients)::bigint[], \(acknowledgedThrough)::bigint[]) AS batch(client, last_ack)
                    ON CONFLICT (app, client) DO UPDATE SET last_ack = EXCLUDED.last_ack
                ), advanced AS (
                    UPDATE apps SET latest_sequence = \(Int64(latest)) WHERE app = \(app)
                )
                SELECT pg_notify(\(Self.channel), \(app + ":" + String(latest)))
                """, logger: self.logger)
            return outcomes
        }
    }

    /// The last acknowledged sequence of each of `clients` that has a record, in one query.
    private func lastAcknowledged(app: String, clients: Set<UInt64>, on connection: PostgresConnection) async throws -> [UInt64: UInt64] {
        let ids = clients.map { Int64(bitPattern: $0) }
        let rows = try await connection.query("""
            SELECT client, last_ack FROM clients WHERE app = \(app) AND client = ANY(\(ids)::bigint[])
            """, logger: logger)
        var records: [UInt64: UInt64] = [:]
        for try await (client, lastAck) in rows.decode((Int64, Int64).self) {
            records[UInt64(bitPattern: client)] = UInt64(bitPattern: lastAck)
        }
        return records
    }

    /// The stored states of `objects` (those not stored yet are absent), read in one query.
    private func states(of objects: [ObjectRef], app: String, on connection: PostgresConnection) async throws -> [ObjectRef: SyncObjectState] {
        struct StoredKey: Hashable {
            let className: String
            let primaryKey: [UInt8]
        }
        var byKey: [StoredKey: ObjectRef] = [:]
        for object in objects { byKey[StoredKey(className: object.className, primaryKey: primaryKeyBytes(object.primaryKey))] = object }
        let classes = objects.map(\.className)
        let keys = objects.map { ByteBuffer(bytes: primaryKeyBytes($0.primaryKey)) }
        let rows = try await connection.query("""
            SELECT objects.class, objects.pk, objects.state
            FROM unnest(\(classes)::text[], \(keys)::bytea[]) AS wanted(class, pk)
            JOIN objects ON objects.app = \(app) AND objects.class = wanted.class AND objects.pk = wanted.pk
            """, logger: logger)
        var states: [ObjectRef: SyncObjectState] = [:]
        for try await (className, key, state) in rows.decode((String, ByteBuffer, ByteBuffer).self) {
            guard let object = byKey[StoredKey(className: className, primaryKey: Array(key.readableBytesView))] else {
                throw SyncServerError.corruptStorage("app \(app)'s objects returned a state nobody asked for in class \(className)")
            }
            states[object] = try SyncObjectState(decoding: state.readableBytesView)
        }
        return states
    }

    public func history(app: String, after: UInt64, limit: Int) async throws -> HistoryPage {
        try await transaction { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: self.logger)
            let position = try await self.position(app: app, on: connection)
            guard after >= position.compactedThrough, after < position.latestSequence, limit > 0 else {
                return HistoryPage(changesets: [], position: position)
            }
            // One row holding the page as an array: postgres-nio stops the process when a
            // connection ends (PostgreSQL restarting) while a stream of many rows waits for its
            // reader, and a page is many large rows read at the pace of their decoding.
            var changesets: [ServerChangeset] = []
            let rows = try await connection.query("""
                SELECT array_agg(changeset ORDER BY sequence) FROM (SELECT sequence, changeset FROM history
                WHERE app = \(app) AND sequence > \(Int64(after)) AND sequence <= \(Int64(position.latestSequence))
                ORDER BY sequence LIMIT \(limit)) AS page
                """, logger: self.logger)
            for try await page in rows.decode([ByteBuffer]?.self) {
                for bytes in page ?? [] { changesets.append(try ServerChangeset(decoding: bytes.readableBytesView)) }
            }
            return HistoryPage(changesets: changesets, position: position)
        }
    }

    public func snapshot(app: String, classes: Set<String>) async throws -> ObjectSnapshot {
        try await transaction { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: self.logger)
            let position = try await self.position(app: app, on: connection)
            var states: [SyncObjectState] = []
            for className in classes.sorted() {
                let rows = try await connection.query(
                    "SELECT state FROM objects WHERE app = \(app) AND class = \(className) ORDER BY pk", logger: self.logger)
                for try await bytes in rows.decode(ByteBuffer.self) {
                    states.append(try SyncObjectState(decoding: bytes.readableBytesView))
                }
            }
            return ObjectSnapshot(objects: states, sequence: position.latestSequence)
        }
    }

    @discardableResult
    public func compact(app: String, keepingLast: UInt64) async throws -> UInt64 {
        try await transaction { connection in
            let position = try await self.lockApp(app, on: connection)
            let target = position.latestSequence > keepingLast ? position.latestSequence - keepingLast : 0
            guard target > position.compactedThrough else { return position.compactedThrough }
            var dropped: [ServerChangeset] = []
            // One row, as in `history`.
            let rows = try await connection.query("""
                WITH dropped AS (DELETE FROM history WHERE app = \(app) AND sequence <= \(Int64(target)) RETURNING changeset)
                SELECT array_agg(changeset) FROM dropped
                """, logger: self.logger)
            for try await page in rows.decode([ByteBuffer]?.self) {
                for bytes in page ?? [] { dropped.append(try ServerChangeset(decoding: bytes.readableBytesView)) }
            }
            var summary: [String: ClassCompaction] = [:]
            for changeset in dropped.sorted(by: { $0.serverSequence < $1.serverSequence }) {
                ClassCompaction.record(changeset, into: &summary)
            }
            let stored = try await self.classCompactions(app: app, on: connection)
            for (className, later) in summary {
                var merged = stored[className] ?? ClassCompaction()
                merged.append(later)
                try await connection.query("""
                    INSERT INTO compacted_classes (app, class, newest, newest_client, newest_from_others)
                    VALUES (\(app), \(className), \(Int64(bitPattern: merged.newest)), \(Int64(bitPattern: merged.newestClient)),
                        \(Int64(bitPattern: merged.newestFromOthers)))
                    ON CONFLICT (app, class) DO UPDATE SET newest = EXCLUDED.newest, newest_client = EXCLUDED.newest_client,
                        newest_from_others = EXCLUDED.newest_from_others
                    """, logger: self.logger)
            }
            try await connection.query("UPDATE apps SET compacted_through = \(Int64(target)) WHERE app = \(app)", logger: self.logger)
            return target
        }
    }

    public func newestCompactedChange(app: String, classes: Set<String>, notFrom clientID: UInt64) async throws -> UInt64 {
        try await transaction { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: self.logger)
            var newest: UInt64 = 0
            let rows = try await connection.query("SELECT compaction_summary_from FROM apps WHERE app = \(app)", logger: self.logger)
            for try await from in rows.decode(Int64.self) { newest = UInt64(bitPattern: from) }
            for (className, record) in try await self.classCompactions(app: app, on: connection) where classes.contains(className) {
                newest = max(newest, record.newest(notFrom: clientID))
            }
            return newest
        }
    }

    /// The app's stored ``ClassCompaction``s by class.
    private func classCompactions(app: String, on connection: PostgresConnection) async throws -> [String: ClassCompaction] {
        var records: [String: ClassCompaction] = [:]
        let rows = try await connection.query(
            "SELECT class, newest, newest_client, newest_from_others FROM compacted_classes WHERE app = \(app)", logger: logger)
        for try await (className, newest, client, others) in rows.decode((String, Int64, Int64, Int64).self) {
            records[className] = ClassCompaction(newest: UInt64(bitPattern: newest), newestClient: UInt64(bitPattern: client),
                                                 newestFromOthers: UInt64(bitPattern: others))
        }
        return records
    }

    public func recordUser(app: String, userID: String, provider: String) async throws {
        try await connection { connection in
            _ = try await connection.query("""
                INSERT INTO users (app, user_id, provider) VALUES (\(app), \(userID), \(provider))
                ON CONFLICT (app, user_id) DO NOTHING
                """, logger: self.logger)
        }
    }
}
