// Properties with persisted names (`propertiesMapping()`) sync under those names: the
// operations a commit records name the stored properties, and a download that names them
// lands in the Swift properties.

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Testing

final class LedgerMappedItem: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var tags: List<String>

    override class func propertiesMapping() -> [String: String] {
        ["id": "_id", "title": "item_title", "tags": "item_tags"]
    }
}

@Suite struct LedgerPersistedNameTests {
    private func open(_ name: String, in folder: LedgerFolder, start: UInt64) throws -> (SyncLedger, Database) {
        var configuration = Database.Configuration(fileURL: folder.url.appendingPathComponent("\(name).strata"),
                                                   objectTypes: [LedgerMappedItem.self])
        configuration.maximumFileSize = 1 << 30
        let clock = LedgerWallClock(start)
        let ledger = try SyncLedger.attach(configuration: configuration, syncedTypes: [LedgerMappedItem.self], wallClock: clock.read)
        return (ledger, try Database(configuration: configuration))
    }

    @Test func recordedOperationsNameThePersistedProperties() throws {
        let folder = LedgerFolder()
        let (ledger, db) = try open("a", in: folder, start: 1_000)
        defer { ledger.detach() }
        try db.write { db.create(LedgerMappedItem.self, value: ["id": "i1", "title": "draft", "tags": ["x"]]) }
        try db.write { db.object(ofType: LedgerMappedItem.self, forPrimaryKey: "i1")?.title = "final" }
        let changesets = try ledger.pendingChangesets(after: 0, limit: 10)
        guard case .create(let values)? = changesets.first?.operations.first?.change else {
            Issue.record("the first operation is not a create: \(changesets)"); return
        }
        #expect(values["item_title"] == .string("draft"))
        #expect(values["title"] == nil)
        #expect(changesets.first?.operations.first?.object.primaryKey == .string("i1"))
        #expect(changesets.count == 2)
        #expect(changesets.last?.operations.map(\.change) == [.set(property: "item_title", value: .string("final"))])
        let listOperations = changesets.first?.operations.dropFirst().map(\.change) ?? []
        #expect(listOperations.allSatisfy { if case .listInsert(let property, _, _) = $0 { property == "item_tags" } else { true } })
        #expect(listOperations.count == 1)
    }

    @Test func aDownloadNamingPersistedPropertiesFillsTheSwiftProperties() throws {
        let folder = LedgerFolder()
        let (source, sourceDB) = try open("a", in: folder, start: 1_000)
        defer { source.detach() }
        let (target, targetDB) = try open("b", in: folder, start: 2_000)
        defer { target.detach() }
        try sourceDB.write { sourceDB.create(LedgerMappedItem.self, value: ["id": "i1", "title": "draft", "tags": ["x", "y"]]) }
        let uploaded = try source.pendingChangesets(after: 0, limit: 10).enumerated().map { position, changeset in
            ServerChangeset(serverSequence: UInt64(position + 1), clientID: source.clientID,
                            clientSequence: changeset.clientSequence, operations: changeset.operations)
        }
        try target.apply(changesets: uploaded, checkpoint: Checkpoint(sequence: UInt64(uploaded.count), checksum: 0))
        targetDB.refresh()
        let item = try #require(targetDB.object(ofType: LedgerMappedItem.self, forPrimaryKey: "i1"))
        #expect(item.title == "draft")
        #expect(Array(item.tags) == ["x", "y"])
    }
}
