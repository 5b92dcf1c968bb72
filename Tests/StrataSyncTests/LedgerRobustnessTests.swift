// Bad input and restarts: operations the schema does not have are refused without applying
// anything, damaged records are typed errors, and the outbox survives closing every instance.

import Foundation
import Strata
@testable import StrataSync
import StrataSyncProtocol
import Testing

@Suite struct LedgerRobustnessTests {
    @Test func aFrameWithAnUnknownClassIsRefusedWholeAndTheCheckpointStays() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        let time = HybridTimestamp(wallMilliseconds: 10, counter: 0, clientID: 5)
        let frame = ServerChangeset(serverSequence: 1, clientID: 5, clientSequence: 1, operations: [
            SyncOperation(timestamp: time, object: ObjectRef(className: "LedgerTask", primaryKey: .string("ok")), change: .create([:])),
            SyncOperation(timestamp: time, object: ObjectRef(className: "Unknown", primaryKey: .int(1)), change: .create([:])),
        ])
        #expect(throws: SyncLedgerError.self) {
            try client.ledger.apply(changesets: [frame], checkpoint: Checkpoint(sequence: 1, checksum: 0))
        }
        #expect(client.tasks().isEmpty)
        #expect(try client.ledger.checkpoint() == 0)
    }

    @Test func aValueOfTheWrongKindIsRefused() throws {
        let folder = LedgerFolder()
        let client = try LedgerClient(name: "a", folder: folder.url)
        let ref = ObjectRef(className: "LedgerTask", primaryKey: .string("t1"))
        let frame = ServerChangeset(serverSequence: 1, clientID: 5, clientSequence: 1, operations: [
            SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 10, counter: 0, clientID: 5), object: ref,
                          change: .create(["id": .string("t1"), "count": .string("not a number")])),
        ])
        #expect(throws: (any Error).self) { try client.ledger.apply(changesets: [frame], checkpoint: Checkpoint(sequence: 1, checksum: 0)) }
        #expect(client.tasks().isEmpty)
    }

    @Test func recordsRoundTripAndDamagedOnesAreTypedErrors() throws {
        var state = SyncObjectState(object: ObjectRef(className: "LedgerTask", primaryKey: .string("t1")))
        let time = HybridTimestamp(wallMilliseconds: 7, counter: 1, clientID: 3)
        state.apply(SyncOperation(timestamp: time, object: state.object, change: .create([
            "note": .embedded(EmbeddedValue(properties: ["text": .value(.string("x")), "words": .list([.string("w")])])),
            "amount": .decimal128(Array(repeating: 1, count: 16)), "due": .date(1.5),
        ])))
        state.apply(SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 8, counter: 0, clientID: 3), object: state.object,
                                  change: .listInsert(property: "steps", after: nil, value: .string("s"))))
        state.apply(SyncOperation(timestamp: HybridTimestamp(wallMilliseconds: 9, counter: 0, clientID: 3), object: state.object,
                                  change: .mapRemove(property: "scores", key: "k")))
        let bytes = LedgerEncoding.encode(state)
        #expect(try LedgerEncoding.decodeState(bytes) == state)
        for cut in [0, 1, bytes.count / 2, bytes.count - 1] {
            #expect(throws: SyncLedgerError.self) { try LedgerEncoding.decodeState(Array(bytes.prefix(cut))) }
        }
        #expect(throws: SyncLedgerError.self) { try LedgerEncoding.decodeState(bytes + [0]) }
    }

    @Test func theOutboxSurvivesClosingEveryInstanceAndSequencesContinue() throws {
        let folder = LedgerFolder()
        let clientID: UInt64
        do {
            let client = try LedgerClient(name: "a", folder: folder.url)
            try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t1"]) }
            try client.db.write { client.db.create(LedgerTask.self, value: ["id": "t2"]) }
            clientID = client.ledger.clientID
        }
        let reopened = try LedgerClient(name: "a", folder: folder.url)
        #expect(reopened.ledger.clientID == clientID)
        try reopened.db.write { reopened.db.create(LedgerTask.self, value: ["id": "t3"]) }
        #expect(try reopened.ledger.pendingChangesets(after: 0, limit: 10).map(\.clientSequence) == [1, 2, 3])
    }

    @Test func aFileThatNeverSyncedHasNoStatus() throws {
        let folder = LedgerFolder()
        let url = folder.url.appendingPathComponent("plain.strata")
        do {
            var configuration = Database.Configuration(fileURL: url, objectTypes: ledgerTypes)
            configuration.maximumFileSize = 1 << 30
            let db = try Database(configuration: configuration)
            try db.write { db.create(LedgerPerson.self, value: ["id": 1]) }
        }
        #expect(try SyncLedger.status(ofFileAt: url) == nil)
    }
}
