// A PostgreSQL store call whose connection closes under it (as when PostgreSQL crashes) ends at
// once with `storageUnavailable`, not at the store's 30 s deadline, and the store keeps
// working on new connections. The connection is closed by PostgreSQL itself
// (`pg_terminate_backend` of its own backend), and the next statement goes to it only after
// its close was observed, which is the statement postgres-nio drops (see `ConnectionWatch`).

import NIOCore
import PostgresNIO
import Testing
@testable import StrataSyncServer

@Suite("PostgreSQL connection loss", .serialized, .timeLimit(.minutes(10)))
struct PostgresConnectionLossTests {
    /// Ends the backend of `connection` and returns once the connection closed.
    private static func terminateBackend(of connection: PostgresConnection) async throws {
        // PostgreSQL answers with the backend's end (FATAL), not a row: the error is expected.
        _ = try? await connection.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: connection.logger)
        try await connection.closeFuture.get()
    }

    /// The message of `error` if it is `storageUnavailable`, else nil.
    private static func unavailableMessage(_ error: (any Error)?) -> String? {
        guard case .storageUnavailable(let message)? = error as? SyncServerError else { return nil }
        return message
    }

    @Test(.enabled(if: PostgresTestEnvironment.shouldRun, "needs STRATA_TEST_POSTGRES_URL"))
    func aTransactionWhoseConnectionClosesFailsAtOnceAndTheStoreGoesOn() async throws {
        let store = try await ServerStoreUnderTest.postgres()
        let storage = try #require(store.storage as? PostgresSyncStorage)
        let error = await #expect(throws: (any Error).self) {
            try await storage.transaction { connection in
                try await Self.terminateBackend(of: connection)
                try await connection.query("SELECT 1", logger: connection.logger)
                return 1
            }
        }
        let message = Self.unavailableMessage(error)
        #expect(message?.contains("connection closed during a transaction") == true, "\(String(describing: error))")
        let app = ServerTestEnvironment.uniqueAppID("connection-loss")
        #expect(try await storage.position(app: app) == HistoryPosition(latestSequence: 0, compactedThrough: 0))
        await store.close()
    }

    @Test(.enabled(if: PostgresTestEnvironment.shouldRun, "needs STRATA_TEST_POSTGRES_URL"))
    func aQueryWhoseConnectionClosesFailsAtOnceAndTheStoreGoesOn() async throws {
        let store = try await ServerStoreUnderTest.postgres()
        let storage = try #require(store.storage as? PostgresSyncStorage)
        let error = await #expect(throws: (any Error).self) {
            try await storage.connection { connection in
                try await Self.terminateBackend(of: connection)
                try await connection.query("SELECT 1", logger: connection.logger)
                return 1
            }
        }
        let message = Self.unavailableMessage(error)
        #expect(message?.contains("connection closed during a query") == true, "\(String(describing: error))")
        let app = ServerTestEnvironment.uniqueAppID("connection-loss")
        #expect(try await storage.client(app: app, clientID: 7) == ClientRecord())
        await store.close()
    }
}
