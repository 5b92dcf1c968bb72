// The PostgreSQL store's two limits: a call waits for a pooled connection within its
// connection limit, and its own work is bounded by the operation limit from the moment it holds
// the connection, so time spent before the lease (the pool connecting, a busy concurrency pool
// starting the call's task) never counts against the work. Both are set at the store's
// creation; the stages of the deadline are checked on their own, without PostgreSQL.

import Logging
import PostgresNIO
import Testing
@testable import StrataSyncServer

@Suite("PostgreSQL store limits", .timeLimit(.minutes(10)))
struct PostgresStoreLimitsTests {
    /// Returns once at least `duration` has passed (time passing is what is checked here, not
    /// how long anything takes).
    private static func letPass(_ duration: Duration) async throws {
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end { try await Task.sleep(until: end, clock: .continuous) }
    }

    /// The message of `error` if it is `storageUnavailable`, else nil.
    private static func unavailableMessage(_ error: (any Error)?) -> String? {
        guard case .storageUnavailable(let message)? = error as? SyncServerError else { return nil }
        return message
    }

    @Test func theStoreKeepsTheLimitsItWasGivenAndDefaultsToThirtySeconds() throws {
        let defaults = try PostgresSyncStorage(url: "postgres://strata@127.0.0.1:5432/strata")
        #expect(defaults.operationLimit == .seconds(30) && defaults.connectionLimit == .seconds(30))
        let configured = try PostgresSyncStorage(url: "postgres://strata@127.0.0.1:5432/strata",
                                                 operationLimit: .seconds(90), connectionLimit: .seconds(5))
        #expect(configured.operationLimit == .seconds(90) && configured.connectionLimit == .seconds(5))
    }

    @Test func aLimitThatIsNotPositiveIsRefused() {
        #expect(throws: SyncServerError.self) {
            _ = try PostgresSyncStorage(url: "postgres://strata@127.0.0.1:5432/strata", operationLimit: .zero)
        }
        #expect(throws: SyncServerError.self) {
            _ = try PostgresSyncStorage(url: "postgres://strata@127.0.0.1:5432/strata", connectionLimit: .seconds(-1))
        }
    }

    @Test func aCallThatCannotGetAConnectionIsGivenUpOnAtTheConnectionLimit() async throws {
        // Nothing listens on the port: the pool keeps trying to connect, and the call waits
        // for a lease that never comes.
        let port = try freeLoopbackPort()
        var logger = Logger(label: "limits-tests")
        logger.logLevel = .critical  // the pool logs each refused connection
        let storage = try PostgresSyncStorage(url: "postgres://strata@127.0.0.1:\(port)/strata",
                                              operationLimit: .seconds(600), connectionLimit: .milliseconds(200), logger: logger)
        let pool = Task { try await storage.run { _, _ in } }
        defer { pool.cancel() }
        let error = await #expect(throws: SyncServerError.self) { try await storage.position(app: "limits") }
        let message = Self.unavailableMessage(error)
        #expect(message?.contains("leasing a PostgreSQL connection for a query did not finish within") == true, "\(String(describing: error))")
        // The call then tried a connection of its own, which was refused as well.
        #expect(message?.contains("connecting to PostgreSQL directly failed") == true, "\(String(describing: error))")
        pool.cancel()
        _ = await pool.result
    }

    /// The id PostgreSQL gave the session on the other end of `connection`.
    private static func backendID(_ connection: PostgresConnection) async throws -> Int32 {
        for try await id in try await connection.query("SELECT pg_backend_pid()", logger: connection.logger).decode(Int32.self) {
            return id
        }
        throw SyncServerError.storageUnavailable("pg_backend_pid() returned no row")
    }

    @Test(.enabled(if: PostgresTestEnvironment.shouldRun, "needs STRATA_TEST_POSTGRES_URL"))
    func aCallThePoolLeasesNoConnectionToRunsOnAConnectionOfItsOwn() async throws {
        // The pool has one connection, held by a call that waits for this test: the pool can
        // lease nothing else (as when it waits out a reconnection backoff while PostgreSQL is
        // up again), and a second call connects on its own once its connection limit passes.
        // The limit also bounds that connection's handshake, so it is not made short.
        var logger = Logger(label: "limits-tests")
        logger.logLevel = .error  // the store warns of each call it connects directly
        let storage = try PostgresSyncStorage(url: try PostgresTestEnvironment.requireURL(),
                                              connectionLimit: .seconds(5), maximumConnections: 1, logger: logger)
        // The pool alone, without the store's LISTEN, which would hold the one connection.
        let pool = Task { await storage.client.run() }
        let (held, holding) = AsyncStream<Int32>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await storage.connection { connection in
                let id = try await Self.backendID(connection)
                holding.yield(id)
                for await _ in release { break }
                return id
            }
        }
        var heldIDs = held.makeAsyncIterator()
        let heldID = try #require(await heldIDs.next())
        let otherID = try await storage.connection { connection in try await Self.backendID(connection) }
        #expect(otherID != heldID, "the second call ran on a connection other than the held one")
        releasing.yield()
        releasing.finish()
        #expect(try await holder.value == heldID)
        // Once the held connection is back in the pool, calls lease it again.
        #expect(try await storage.connection { connection in try await Self.backendID(connection) } == heldID)
        pool.cancel()
        _ = await pool.result
    }

    @Test func theWorkStageGetsItsWholeLimitFromWhenItBegins() async throws {
        // The first stage's limit passes while the second runs: only the second's counts.
        let value = try await withDeadline(.milliseconds(50), "waiting") { stage in
            stage.begin(.seconds(600), "working")
            try await Self.letPass(.milliseconds(200))
            return 42
        }
        #expect(value == 42)
    }

    @Test func aStageThatRunsOutIsNamedInTheError() async throws {
        let error = await #expect(throws: SyncServerError.self) {
            try await withDeadline(.seconds(600), "waiting") { stage in
                stage.begin(.milliseconds(20), "the second stage")
                // A wait no one ends, as a query on a connection PostgreSQL dropped can be.
                let (never, continuation) = AsyncStream<Int>.makeStream()
                defer { continuation.finish() }
                for await value in never { return value }
                throw CancellationError()
            }
        }
        #expect(Self.unavailableMessage(error)?.contains("the second stage did not finish") == true, "\(String(describing: error))")
    }

    @Test func aFirstStageThatRunsOutIsNamedInTheError() async throws {
        let error = await #expect(throws: SyncServerError.self) {
            try await withDeadline(.milliseconds(20), "leasing a connection") { _ in
                let (never, continuation) = AsyncStream<Int>.makeStream()
                defer { continuation.finish() }
                for await value in never { return value }
                throw CancellationError()
            }
        }
        #expect(Self.unavailableMessage(error)?.contains("leasing a connection did not finish") == true, "\(String(describing: error))")
    }
}
