// Maps in the store: the stored schema's `isMap` (written only for maps, read by both
// readers), the rules `setMap` keeps, what verification finds, and dropping a map's column.

import Foundation
import Testing
import StrataStorage
@testable import StrataStore

private let playerSchema = Schema([ObjectSchema(name: "Player", properties: [
    PropertySchema(name: "id", kind: .int, isPrimaryKey: true),
    PropertySchema(name: "scores", kind: .int, isMap: true),
])])

@Suite struct SchemaMapTests {
    @Test func theStoredSchemaNamesMapsOnlyWhenThereAreSome() throws {
        let list = PropertySchema(name: "scores", kind: .int, isList: true)
        let map = PropertySchema(name: "scores", kind: .int, isMap: true)
        #expect(map.isList && map.isMap && !map.isSet && map.typeDescription == "map<string, int>")
        #expect(!map.hasSameStorage(as: list))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let listJSON = String(decoding: try encoder.encode(Schema([ObjectSchema(name: "A", properties: [list])])), as: UTF8.self)
        let mapJSON = try encoder.encode(Schema([ObjectSchema(name: "A", properties: [map])]))
        #expect(!listJSON.contains("isMap"))
        #expect(String(decoding: mapJSON, as: UTF8.self).contains("\"isMap\":true"))
        let fast = mapJSON.withUnsafeBytes { SchemaJSON.decode($0) }
        #expect(fast?.objectSchemas[0].properties[0].isMap == true)
        #expect(try JSONDecoder().decode(Schema.self, from: mapJSON) == fast)
        // A map that is not a list does not read.
        let broken = String(decoding: mapJSON, as: UTF8.self).replacingOccurrences(of: "\"isList\":true", with: "\"isList\":false")
        #expect(Data(broken.utf8).withUnsafeBytes { SchemaJSON.decode($0) } == nil)
        // Column ids stay below the map keys' ids.
        var crowded = ObjectSchema(name: "A", properties: [map])
        crowded.properties[0].columnID = 0x8000
        #expect(throws: StoreError.self) { try crowded.validate() }
    }

    /// Runs `body` in a write transaction on the Player table of a store at `folder`.
    private func writingPlayers(_ folder: TemporaryFolder, _ body: (StoreSession, TableAccess) throws -> Void) throws {
        let store = try Store.open(path: folder.file(), schema: playerSchema)
        defer { store.close() }
        let session = try store.makeSession()
        defer { session.close() }
        let players = try #require(session.table(named: "Player"))
        try session.beginWrite()
        try body(session, players)
    }

    @Test func setMapKeepsKeysDistinctAndInOrder() throws {
        try writingPlayers(TemporaryFolder()) { session, players in
            let key = try players.insert([.int(1), .null])
            for (keys, values) in [(["b", "a"], [StoreValue.int(1), .int(2)]), (["a", "a"], [.int(1), .int(2)]), (["a"], [.int(1), .int(2)])] {
                #expect(throws: StoreError.self) { try players.setMap(keys: keys, values: values, for: key, property: 1) }
            }
            #expect(throws: StoreError.self) { try players.setMap(keys: ["a"], values: [.null], for: key, property: 1) }
            #expect(throws: StoreError.self) { try players.setMap(keys: ["a"], values: [.int(1)], for: key, property: 0) }
            try players.setMap(keys: ["Z", "a", "é"], values: [.int(1), .int(2), .int(3)], for: key, property: 1)
            _ = try session.commit()
            #expect(try players.mapKeys(key, property: 1) == ["Z", "a", "é"])
            #expect(try players.list(key, property: 1) == [.int(1), .int(2), .int(3)])
            #expect(players.verifyObjects().problems.isEmpty)
        }
    }

    @Test func verificationFindsKeysThatDoNotMatchTheValues() throws {
        try writingPlayers(TemporaryFolder()) { session, players in
            let key = try players.insert([.int(1), .null])
            try players.setMap(keys: ["a", "b"], values: [.int(1), .int(2)], for: key, property: 1)
            // What a damaged file or a bug would leave: one key for two values.
            players.dirtyLists[TableAccess.ListID(property: 1, key: key.rawValue, isMapKeys: true)] = [.string("a")]
            _ = try session.commit()
            let problems = players.verifyObjects().problems
            #expect(problems.count == 1 && problems[0].contains("1 keys and 2 values"), "\(problems)")
        }
    }

    @Test func droppingAMapDropsItsKeys() throws {
        let folder = TemporaryFolder()
        try writingPlayers(folder) { session, players in
            for i in 0..<3 {
                let key = try players.insert([.int(Int64(i)), .null])
                try players.setMap(keys: ["a", "b"], values: [.int(1), .int(2)], for: key, property: 1)
            }
            _ = try session.commit()
        }
        #expect(try listEntries(folder.file()) == 6)  // three values chunks, three keys chunks
        var without = playerSchema
        without.objectSchemas[0].properties.removeLast()
        try Store.open(path: folder.file(), schema: without, schemaVersion: 1, policy: .migrate(renames: [:])).close()
        #expect(try listEntries(folder.file()) == 0)
    }

    /// The entries of the Player table's list tree.
    private func listEntries(_ path: String) throws -> Int {
        let engine = try StorageEngine.open(path: path, options: StorageOptions())
        defer { engine.close() }
        return try engine.read { t in
            guard let tree = try t.tree(named: "t1.l") else { return 0 }
            var count = 0
            try t.forEach(in: tree) { _, _ in
                count += 1
                return true
            }
            return count
        }
    }
}
