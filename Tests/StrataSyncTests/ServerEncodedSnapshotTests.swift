// Snapshots in their encoded form (`encodedSnapshot`): the embedded store hands over its stored
// state bytes when every state has the current encoding, and decodes and encodes each again
// when it cannot tell (a store without the marker); either way the bytes are exactly the
// encodings of `snapshot`'s states.

import Foundation
import StrataStorage
import StrataSyncProtocol
import StrataSyncServer
import Testing

@Suite struct ServerEncodedSnapshotTests {
    typealias F = ServerFixtures

    private func upload(_ storage: EmbeddedSyncStorage, app: String) async throws {
        _ = try await storage.upload(app: app, clientID: 3, changesets: [
            F.changeset(1, [F.createTodo("a", title: "one", at: 10, client: 3), F.createTodo("b", title: "two", at: 11, client: 3)]),
            F.changeset(2, [F.setTitle("a", "three", at: 12, client: 3)]),
        ])
    }

    @Test func aNewStoreSendsItsStoredStatesAsTheEncodingsOfTheSnapshot() async throws {
        let storage = try EmbeddedSyncStorage(directory: try ServerTestEnvironment.temporaryDirectory())
        try await storage.prepare()
        let app = ServerTestEnvironment.uniqueAppID("encoded")
        try await upload(storage, app: app)
        let decoded = try await storage.snapshot(app: app, classes: ["Todo"])
        let encoded = try await storage.encodedSnapshot(app: app, classes: ["Todo"])
        #expect(decoded.objects.count == 2)
        #expect(encoded.objects == decoded.objects.map { $0.encoded() })
        #expect(encoded.sequence == decoded.sequence)
        #expect(try await storage.encodedSnapshot(app: app, classes: ["Note"]).objects.isEmpty)
    }

    @Test func aStoreWithoutTheEncodingMarkerEncodesEachStateAgain() async throws {
        let directory = try ServerTestEnvironment.temporaryDirectory()
        let app = ServerTestEnvironment.uniqueAppID("unmarked")
        do {
            let storage = try EmbeddedSyncStorage(directory: directory)
            try await storage.prepare()
            try await upload(storage, app: app)
        }
        // As a store written before the marker existed: states stored, no marker.
        do {
            let engine = try StorageEngine.open(path: directory + "/sync.strata")
            try await engine.write { transaction in
                let meta = try transaction.createTree(named: "meta")
                #expect(try transaction.delete(forKey: Array("stateEncoding".utf8), in: meta))
            }
            engine.close()
        }
        let storage = try EmbeddedSyncStorage(directory: directory)
        try await storage.prepare()
        let decoded = try await storage.snapshot(app: app, classes: ["Todo"])
        let encoded = try await storage.encodedSnapshot(app: app, classes: ["Todo"])
        #expect(decoded.objects.count == 2)
        #expect(encoded.objects == decoded.objects.map { $0.encoded() })
    }
}
