// Observing maps: keys removed, added and modified (values, and the objects of maps of objects,
// with or without key paths); the owner's deletion; other actors and async sequences.

import Foundation
import Testing
@testable import Strata
import StrataStore

/// A change as a line: `initial [keys]` or `-deleted +inserted ~modified [keys]`.
private func describe<V>(_ change: MapChange<Map<String, V>>) -> String {
    switch change {
    case .initial(let map): "initial \(map.keys)"
    case .update(let map, let deletions, let insertions, let modifications): "-\(deletions) +\(insertions) ~\(modifications) \(map.keys)"
    case .error: "error"
    }
}

@Suite struct MapNotificationTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Player.self]) }

    @Test func keysRemovedAddedAndModified() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2, "c": 3]]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        var lines: [String] = []
        let token = player.scores.observe { lines.append(describe($0)) }
        try db.write {
            player.scores["b"] = nil
            player.scores["d"] = 4
            player.scores["c"] = 30
        }
        try db.write { player.scores["a"] = 1 }  // the value it had: nothing to report
        try db.write { player.name = "Ann" }      // another property: nothing to report
        try db.write { player.scores.removeAll() }
        #expect(lines == ["initial [\"a\", \"b\", \"c\"]",
                          "-[\"b\"] +[\"d\"] ~[\"c\"] [\"a\", \"c\", \"d\"]",
                          "-[\"a\", \"c\", \"d\"] +[] ~[] []"])
        token.invalidate()
    }

    @Test func mapsOfObjectsReportTheirObjectsChanges() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "name": "Ann"])
            ann.friends["bo"] = db.create(Player.self, value: ["id": 2, "name": "Bo"])
            ann.friends["cy"] = db.create(Player.self, value: ["id": 3, "name": "Cy"])
        }
        let ann = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        let bo = try #require(db.object(ofType: Player.self, forPrimaryKey: 2))
        var all: [String] = [], names: [String] = []
        var typed: [String] = []
        let tokens = [ann.friends.observe { all.append(describe($0)) },
                      ann.friends.observe(keyPaths: ["name"]) { names.append(describe($0)) },
                      ann.friends.observe(keyPaths: [\Player.name]) { typed.append(describe($0)) }]
        try db.write { bo.name = "Bob" }
        try db.write { bo.scores["x"] = 1 }
        try db.write { db.delete(bo) }  // the key stays, with nil: a modification
        #expect(all == ["initial [\"bo\", \"cy\"]",
                        "-[] +[] ~[\"bo\"] [\"bo\", \"cy\"]",
                        "-[] +[] ~[\"bo\"] [\"bo\", \"cy\"]",
                        "-[] +[] ~[\"bo\"] [\"bo\", \"cy\"]"])
        #expect(names == ["initial [\"bo\", \"cy\"]",
                          "-[] +[] ~[\"bo\"] [\"bo\", \"cy\"]",
                          "-[] +[] ~[\"bo\"] [\"bo\", \"cy\"]"])
        #expect(typed == names)
        tokens.forEach { $0.invalidate() }
    }

    @Test func resultsWatchTheObjectsTheirMapsHold() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let ann = db.create(Player.self, value: ["id": 1, "name": "Ann"])
            ann.friends["bo"] = db.create(Player.self, value: ["id": 2, "name": "Bo"])
        }
        let named = db.objects(Player.self).where { $0.name == "Ann" }
        var lines: [String] = []
        let token = named.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change { lines.append("-\(deletions) +\(insertions) ~\(modifications)") }
        }
        let bo = try #require(db.object(ofType: Player.self, forPrimaryKey: 2))
        try db.write { bo.scores["x"] = 1 }  // Ann's friend changed: Ann is modified
        #expect(lines == ["-[] +[] ~[0]"])
        token.invalidate()
    }

    @Test func deletingTheOwnerEndsTheObservation() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1, "b": 2]]) }
        let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
        var lines: [String] = []
        let token = player.scores.observe { lines.append(describe($0)) }
        try db.write { db.delete(player) }
        try db.write { db.create(Player.self, value: ["id": 1, "scores": ["z": 1]]) }
        #expect(lines == ["initial [\"a\", \"b\"]", "-[\"a\", \"b\"] +[] ~[] []"])
        token.invalidate()
    }

    @Test func mapsAreFollowedOnOtherActorsAndAsSequences() async throws {
        let configuration = self.configuration
        try {
            let db = try openHere(configuration)
            try db.write { db.create(Player.self, value: ["id": 1, "scores": ["a": 1]]) }
        }()
        let reader = try await MapReader(configuration)
        let log = Log()
        let token: NotificationToken = try await {
            let db = try openHere(configuration)
            let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
            return await player.scores.observe(on: reader) { _, change in log.append(describe(change)) }
        }()
        try {
            let db = try openHere(configuration)
            let player = try #require(db.object(ofType: Player.self, forPrimaryKey: 1))
            try db.write { player.scores["b"] = 2 }
        }()
        await reader.refresh()
        #expect(log.lines == ["initial [\"a\"]", "-[] +[\"b\"] ~[] [\"a\", \"b\"]"])
        token.invalidate()
        #expect(await reader.firstTwoChangesAfterRemoving("a") == ["initial [\"a\", \"b\"]", "-[\"a\"] +[] ~[] [\"b\"]"])
    }
}

/// An actor with its own instance, following maps.
actor MapReader {
    var db: Database!

    init(_ configuration: Database.Configuration) async throws {
        db = try await Database(configuration: configuration, actor: self)
    }

    func refresh() { db.refresh() }

    /// The keys of a map handed over from another context.
    func keys(@ThreadSafe of scores: Map<String, Int>?) -> [String]? { scores?.keys }

    func firstTwoChangesAfterRemoving(_ key: String) async -> [String] {
        db.refresh()
        guard let player = db.object(ofType: Player.self, forPrimaryKey: 1) else { return [] }
        var described: [String] = []
        for await change in player.scores.changes {
            described.append(describe(change))
            if case .initial = change { try? await db.asyncWrite { player.scores.removeObject(for: key) } }
            if described.count == 2 { break }
        }
        return described
    }
}
