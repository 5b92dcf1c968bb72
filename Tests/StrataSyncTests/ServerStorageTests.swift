import StrataSyncServer
import Testing

/// The storage contract on the embedded store.
@Suite("Server storage: embedded", .timeLimit(.minutes(10)))
struct ServerEmbeddedStorageTests {
    private func check(_ body: (any SyncStorage) async throws -> Void) async throws {
        let store = try await ServerStoreUnderTest.embedded()
        do { try await body(store.storage) } catch { await store.close(); throw error }
        await store.close()
    }

    @Test func sameBatchTwiceIsStoredOnce() async throws { try await check(ServerStorageChecks.sameBatchTwiceIsStoredOnce) }
    @Test func gapIsRefusedAndNothingStored() async throws { try await check(ServerStorageChecks.gapIsRefusedAndNothingStored) }
    @Test func concurrentUploadsGetGaplessSequences() async throws { try await check(ServerStorageChecks.concurrentUploadsGetGaplessSequences) }
    @Test func simultaneousUploadsEachGetTheirOwnOutcome() async throws { try await check(ServerStorageChecks.simultaneousUploadsEachGetTheirOwnOutcome) }
    @Test func statesEqualTheMergeOfTheHistory() async throws { try await check(ServerStorageChecks.statesEqualTheMergeOfTheHistory) }
    @Test func batchesTouchingObjectsRepeatedlyStoreTheirMerge() async throws { try await check(ServerStorageChecks.batchesTouchingObjectsRepeatedlyStoreTheirMerge) }
    @Test func compactionDropsOldHistoryAndReportsIt() async throws { try await check(ServerStorageChecks.compactionDropsOldHistoryAndReportsIt) }
    @Test func compactionRemembersWhoChangedWhichClass() async throws { try await check(ServerStorageChecks.compactionRemembersWhoChangedWhichClass) }
    @Test func schemasMergeAndMismatchesAreRefused() async throws { try await check(ServerStorageChecks.schemasMergeAndMismatchesAreRefused) }
    @Test func clientsAndSecretPersist() async throws { try await check(ServerStorageChecks.clientsAndSecretPersist) }
}

/// The same contract on PostgreSQL. Runs when `STRATA_TEST_POSTGRES_URL` names a database
/// (scripts/with-postgres.sh provides one); in CI (`STRATA_CI`) it runs regardless, so a missing
/// database fails instead of passing unnoticed; on a developer's machine without either it is
/// reported as skipped.
@Suite("Server storage: PostgreSQL", .enabled(if: ServerTestEnvironment.runsPostgres), .timeLimit(.minutes(10)))
struct ServerPostgresStorageTests {
    private func check(_ body: (any SyncStorage) async throws -> Void) async throws {
        let store = try await ServerStoreUnderTest.postgres()
        do { try await body(store.storage) } catch { await store.close(); throw error }
        await store.close()
    }

    @Test func sameBatchTwiceIsStoredOnce() async throws { try await check(ServerStorageChecks.sameBatchTwiceIsStoredOnce) }
    @Test func gapIsRefusedAndNothingStored() async throws { try await check(ServerStorageChecks.gapIsRefusedAndNothingStored) }
    @Test func concurrentUploadsGetGaplessSequences() async throws { try await check(ServerStorageChecks.concurrentUploadsGetGaplessSequences) }
    @Test func simultaneousUploadsEachGetTheirOwnOutcome() async throws { try await check(ServerStorageChecks.simultaneousUploadsEachGetTheirOwnOutcome) }
    @Test func statesEqualTheMergeOfTheHistory() async throws { try await check(ServerStorageChecks.statesEqualTheMergeOfTheHistory) }
    @Test func batchesTouchingObjectsRepeatedlyStoreTheirMerge() async throws { try await check(ServerStorageChecks.batchesTouchingObjectsRepeatedlyStoreTheirMerge) }
    @Test func compactionDropsOldHistoryAndReportsIt() async throws { try await check(ServerStorageChecks.compactionDropsOldHistoryAndReportsIt) }
    @Test func compactionRemembersWhoChangedWhichClass() async throws { try await check(ServerStorageChecks.compactionRemembersWhoChangedWhichClass) }
    @Test func schemasMergeAndMismatchesAreRefused() async throws { try await check(ServerStorageChecks.schemasMergeAndMismatchesAreRefused) }
    @Test func clientsAndSecretPersist() async throws { try await check(ServerStorageChecks.clientsAndSecretPersist) }
}
