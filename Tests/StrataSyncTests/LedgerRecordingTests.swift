// Recording local writes into the outbox: one changeset per commit with the next sequence, in
// the same commit (a rolled-back write records nothing), through every write path; the outbox,
// sequence and clock survive closing the file without a clean shutdown.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Synchronization
import Testing

@Suite struct LedgerRecordingTests {
    @Test func aCommitRecordsOneChangesetWithTheNextSequence() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1", "title": "draft", "count": 2]) }
        try client.db.write { client.task("t1")?.title = "final" }
        let changesets = try client.ledger.pendingChangesets(after: 0, limit: 10)
        #expect(changesets.map(\.clientSequence) == [1, 2])
        guard case .create(let values)? = changesets.first?.operations.first?.change else {
            Issue.record("the first operation is not a create: \(changesets)"); return
        }
        #expect(values["title"] == .string("draft"))
        #expect(values["count"] == .int(2))
        #expect(changesets[1].operations.map(\.change) == [.set(property: "title", value: .string("final"))])
        #expect(try client.ledger.lastRecordedSequence() == 2)
    }

    @Test func aWriteThatThrowsOrIsCancelledRecordsNothing() throws {
        struct Refusal: Error {}
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        #expect(throws: Refusal.self) {
            try client.db.write {
                client.db.create(LedgerTask.self, value: ["id": "t1"])
                throw Refusal()
            }
        }
        client.db.beginWrite()
        client.db.create(LedgerTask.self, value: ["id": "t2"])
        client.db.cancelWrite()
        #expect(try client.ledger.lastRecordedSequence() == 0)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).isEmpty)
    }

    @Test func writesWithNoSyncedChangeRecordNothing() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1", "title": "same"]) }
        try client.db.write { client.task("t1")?.title = "same" }
        #expect(try client.ledger.lastRecordedSequence() == 1)
    }

    @Test func everySynchronousWritePathRecords() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        let db = client.db
        // beginWrite / commitWrite
        db.beginWrite()
        db.create(LedgerTask.self, value: ["id": "t1"])
        try db.commitWrite()
        // dynamic API: create and subscript
        try db.write { _ = db.dynamicCreate("LedgerTask", value: ["id": "t2", "title": "dynamic"]) }
        try db.write { db.dynamicObject(ofType: "LedgerTask", forPrimaryKey: "t2")?["count"] = 7 }
        // create(update:)
        try db.write { db.create(LedgerTask.self, value: ["id": "t1", "title": "updated"], update: .modified) }
        // add of an unmanaged object
        try db.write {
            let task = LedgerTask()
            task.id = "t3"
            db.add(task)
        }
        // collections
        try db.write {
            guard let task = client.task("t1") else { return }
            task.steps.append("one")
            task.labels.insert("red")
            task.scores["a"] = 1
        }
        // delete and deleteAll
        try db.write { if let task = client.task("t3") { db.delete(task) } }
        try db.write { db.deleteAll() }
        let changes = try client.ledger.pendingChangesets(after: 0, limit: 100).map { $0.operations.map(\.change) }
        #expect(changes.count == 8)
        #expect(changes[2] == [.set(property: "count", value: .int(7))])
        #expect(changes[3] == [.set(property: "title", value: .string("updated"))])
        #expect(Set(changes[5].map { "\($0)" }).count == 3)
        #expect(changes[6] == [.delete])
        #expect(changes[7] == [.delete, .delete])
    }

    @Test func groupedAsyncCommitsRecordEveryWriteOnce() async throws {
        let folder = LedgerFolder()
        let client = try await LedgerMainActorClient.make(folder: folder.url)
        let sequence = try await client.writeGrouped()
        // Each write recorded once, whatever the grouping made of the commits.
        #expect(sequence.titles == ["t0", "t1", "t2", "t8", "t9"])
        #expect(sequence.recorded >= 2)
    }

    @Test func reopeningKeepsTheOutboxAndContinuesSequencesAndTheClock() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url, wallStart: 5_000)
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1"]) }
        let first = try #require(try client.ledger.pendingChangesets(after: 0, limit: 1).first?.operations.first?.timestamp)
        // No clean shutdown: the ledger lets go, and the wall clock goes back.
        client.clock.set(10)
        try client.reattach()
        try client.db.write { client.task("t1")?.title = "again" }
        let changesets = try client.ledger.pendingChangesets(after: 0, limit: 10)
        #expect(changesets.map(\.clientSequence) == [1, 2])
        let second = try #require(changesets.last?.operations.first?.timestamp)
        #expect(second > first)
    }

    @Test func theLocalChangeHandlerHearsOfRecordingCommits() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        let calls = Mutex(0)
        client.ledger.setLocalChangeHandler { calls.withLock { $0 += 1 } }
        try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1"]) }
        try client.db.write { client.task("t1")?.title = "x" }
        #expect(calls.withLock { $0 } == 2)
        client.ledger.setLocalChangeHandler(nil)
    }

    @Test func acknowledgingRemovesChangesetsFromTheOutbox() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        for index in 0..<3 { try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t\(index)"]) } }
        try client.ledger.acknowledge(through: 2)
        #expect(try client.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [3])
        let status = try client.ledger.status()
        #expect(status.pendingUploads == 1)
        #expect(status.lastAcknowledged == 2)
        #expect(status.clientID == client.ledger.clientID)
    }

    @Test func statusOfAFileReadsWithoutAttaching() throws {
        let folder = LedgerFolder()
        let url: URL
        let clientID: UInt64
        do {
            let client = try LedgerClient(name: "a", folder: folder.url)
            try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1"]) }
            url = try #require(client.configuration.fileURL)
            clientID = client.ledger.clientID
        }
        let status = try #require(try SyncLedger.status(ofFileAt: url))
        #expect(status.clientID == clientID)
        #expect(status.pendingUploads == 1)
    }

    @Test func subscriptionsAreStoredWithTheirCompletedVersion() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        try client.ledger.setSubscriptions(version: 2, specs: [SubscriptionSpec(name: "all", className: "LedgerTask")])
        try client.ledger.markSubscriptionsComplete(version: 2)
        let stored = try client.ledger.subscriptions()
        #expect(stored == StoredSubscriptions(version: 2, specs: [SubscriptionSpec(name: "all", className: "LedgerTask")], completedVersion: 2))
    }
}

/// A client whose instance lives on the main actor, for the async write paths.
@MainActor final class LedgerMainActorClient {
    let db: Database
    let ledger: SyncLedger

    private init(db: Database, ledger: SyncLedger) {
        self.db = db
        self.ledger = ledger
    }

    static func make(folder: URL) async throws -> LedgerMainActorClient {
        var configuration = Database.Configuration(fileURL: folder.appendingPathComponent("main.strata"), objectTypes: ledgerTypes)
        configuration.maximumFileSize = 1 << 30
        let ledger = try SyncLedger.attach(configuration: configuration, syncedTypes: ledgerSyncedTypes)
        let db = try await Database(configuration: configuration)
        return LedgerMainActorClient(db: db, ledger: ledger)
    }

    /// Three grouped async writes, a `writeAsync` and an `asyncWrite`; returns the titles of
    /// the objects the outbox creates and how many changesets were recorded.
    func writeGrouped() async throws -> (titles: [String], recorded: Int) {
        for index in 0..<3 {
            db.beginAsyncWrite { [db] in
                db.create(LedgerTask.self, value: ["id": "t\(index)", "title": "t\(index)"])
                db.commitAsyncWrite(allowGrouping: true)
            }
        }
        // The callback form, then the suspending one (which runs after the queued writes).
        _ = db.writeAsync { [db] in db.create(LedgerTask.self, value: ["id": "t8", "title": "t8"]) }
        try await db.asyncWrite { db.create(LedgerTask.self, value: ["id": "t9", "title": "t9"]) }
        let changesets = try ledger.pendingChangesets(after: 0, limit: 100)
        var titles: [String] = []
        for changeset in changesets {
            for operation in changeset.operations {
                if case .create(let values) = operation.change, case .string(let title)? = values["title"] { titles.append(title) }
            }
        }
        defer { ledger.detach() }
        return (titles.sorted(), changesets.count)
    }
}
