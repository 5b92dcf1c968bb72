import Foundation
import StrataSyncProtocol
import StrataSyncServer
import Testing

/// The storage contract, checked the same way on every store (the embedded and PostgreSQL
/// suites call each of these).
enum ServerStorageChecks {
    typealias F = ServerFixtures

    static func sameBatchTwiceIsStoredOnce(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("once")
        let batch = [F.changeset(1, [F.createTodo("a", title: "one", at: 10, client: 5)]),
                     F.changeset(2, [F.setTitle("a", "two", at: 11, client: 5)])]
        let first = try await storage.upload(app: app, clientID: 5, changesets: batch)
        let second = try await storage.upload(app: app, clientID: 5, changesets: batch)
        #expect(first.appendedCount == 2 && first.lastAcknowledged == 2)
        #expect(second.appendedCount == 0 && second.lastAcknowledged == 2)
        let history = try await storage.history(app: app, after: 0, limit: 100)
        #expect(history.changesets.map(\.clientSequence) == [1, 2])
        #expect(history.changesets.map(\.serverSequence) == [1, 2])
        // A resend overlapping what is stored stores only the new part.
        let overlap = try await storage.upload(app: app, clientID: 5, changesets: batch + [F.changeset(3, [F.setTitle("a", "three", at: 12, client: 5)])])
        #expect(overlap.appendedCount == 1 && overlap.lastAcknowledged == 3 && overlap.position.latestSequence == 3)
        #expect(try await storage.client(app: app, clientID: 5).lastAcknowledged == 3)
    }

    static func gapIsRefusedAndNothingStored(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("gap")
        _ = try await storage.upload(app: app, clientID: 9, changesets: [F.changeset(1, [F.createTodo("a", title: "x", at: 1, client: 9)])])
        await #expect(throws: SyncServerError.outOfOrderUpload(expected: 2, received: 3)) {
            try await storage.upload(app: app, clientID: 9, changesets: [F.changeset(3, [F.setTitle("a", "y", at: 2, client: 9)])])
        }
        await #expect(throws: SyncServerError.outOfOrderUpload(expected: 3, received: 4)) {
            try await storage.upload(app: app, clientID: 9, changesets: [F.changeset(2, [F.setTitle("a", "y", at: 2, client: 9)]),
                                                                            F.changeset(4, [F.setTitle("a", "z", at: 3, client: 9)])])
        }
        #expect(try await storage.position(app: app).latestSequence == 1)
        #expect(try await storage.client(app: app, clientID: 9).lastAcknowledged == 1)
        let snapshot = try await storage.snapshot(app: app, classes: ["Todo"])
        #expect(snapshot.objects.first?.value(of: "title") == .string("x"))
    }

    static func concurrentUploadsGetGaplessSequences(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("gapless")
        let clients: [UInt64] = Array(1...8)
        let perClient: UInt64 = 10
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask {
                    for sequence in 1...perClient {
                        _ = try await storage.upload(app: app, clientID: client, changesets: [
                            F.changeset(sequence, [F.createTodo("c\(client)-\(sequence)", title: "t", at: sequence, client: client)]),
                        ])
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = UInt64(clients.count) * perClient
        let history = try await storage.history(app: app, after: 0, limit: 1_000)
        #expect(history.changesets.map(\.serverSequence) == Array(1...total))
        #expect(history.position.latestSequence == total)
        for client in clients {
            let mine = history.changesets.filter { $0.clientID == client }.map(\.clientSequence)
            #expect(mine == Array(1...perClient), "client \(client)'s changesets in its order")
        }
    }

    /// Uploads arriving together (a store may commit them in one group): every client's
    /// repeats, its next changeset and a gap at once, all touching the same objects. Each
    /// upload gets its own outcome whichever order or grouping the store chose.
    static func simultaneousUploadsEachGetTheirOwnOutcome(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("group")
        let clients: [UInt64] = Array(1...12)
        func first(_ client: UInt64) -> [ClientChangeset] {
            [F.changeset(1, [F.createTodo("shared\(client % 3)", title: "c\(client)", at: client, client: client),
                             F.createNote(Int64(client), text: "own", at: client, client: client)]),
             F.changeset(2, [F.setTitle("shared\((client + 1) % 3)", "second c\(client)", at: 100 + client, client: client)])]
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in clients {
                group.addTask {
                    let stored = try await storage.upload(app: app, clientID: client, changesets: first(client))
                    #expect(stored.appendedCount == 2 && stored.lastAcknowledged == 2)
                    try await withThrowingTaskGroup(of: Void.self) { inner in
                        inner.addTask {
                            let repeated = try await storage.upload(app: app, clientID: client, changesets: first(client))
                            #expect(repeated.appendedCount == 0 && repeated.lastAcknowledged >= 2, "client \(client)'s repeat")
                        }
                        inner.addTask {
                            let third = try await storage.upload(app: app, clientID: client, changesets: [
                                F.changeset(3, [F.setTitle("shared\(client % 3)", "third c\(client)", at: 200 + client, client: client)]),
                            ])
                            #expect(third.appendedCount == 1 && third.lastAcknowledged == 3, "client \(client)'s third")
                        }
                        inner.addTask {
                            await #expect(throws: SyncServerError.self, "client \(client)'s gap") {
                                try await storage.upload(app: app, clientID: client, changesets: [
                                    F.changeset(5, [F.setTitle("shared0", "gap", at: 900, client: client)]),
                                ])
                            }
                        }
                        try await inner.waitForAll()
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = UInt64(clients.count) * 3
        let history = try await storage.history(app: app, after: 0, limit: 1_000)
        #expect(history.changesets.map(\.serverSequence) == Array(1...total))
        #expect(history.position.latestSequence == total)
        for client in clients {
            let mine = history.changesets.filter { $0.clientID == client }.map(\.clientSequence)
            #expect(mine == [1, 2, 3], "client \(client)'s changesets once each, in its order")
            #expect(try await storage.client(app: app, clientID: client).lastAcknowledged == 3)
        }
        var expected: [ObjectRef: SyncObjectState] = [:]
        for changeset in history.changesets {
            for operation in changeset.operations {
                expected[operation.object, default: SyncObjectState(object: operation.object)].apply(operation)
            }
        }
        let snapshot = try await storage.snapshot(app: app, classes: ["Todo", "Note"])
        #expect(snapshot.sequence == total)
        #expect(Dictionary(uniqueKeysWithValues: snapshot.objects.map { ($0.object, $0) }) == expected)
        #expect(snapshot.objects.contains { $0.value(of: "title") == .string("gap") } == false)
    }

    static func statesEqualTheMergeOfTheHistory(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("merge")
        var generator = ServerSeededGenerator(seed: 31)
        var next: [UInt64: UInt64] = [1: 1, 2: 1, 3: 1]
        for round in 0..<60 {
            let client = UInt64.random(in: 1...3, using: &generator)
            let id = "t\(Int.random(in: 0..<5, using: &generator))"
            let at = UInt64.random(in: 1...500, using: &generator)
            let operation: SyncOperation
            switch Int.random(in: 0..<5, using: &generator) {
            case 0: operation = F.createTodo(id, title: "r\(round)", at: at, client: client)
            case 1: operation = SyncOperation(timestamp: F.timestamp(at, client: client), object: F.todo(id), change: .delete)
            case 2: operation = SyncOperation(timestamp: F.timestamp(at, client: client), object: F.todo(id),
                                              change: .setInsert(property: "tags", value: .string("g\(round % 3)")))
            case 3: operation = SyncOperation(timestamp: F.timestamp(at, client: client), object: F.todo(id),
                                              change: .listInsert(property: "steps", after: nil, value: .string("s\(round)")))
            default: operation = F.setTitle(id, "r\(round)", at: at, client: client)
            }
            let sequence = next[client, default: 1]
            next[client] = sequence + 1
            _ = try await storage.upload(app: app, clientID: client, changesets: [F.changeset(sequence, [operation])])
        }
        var expected: [ObjectRef: SyncObjectState] = [:]
        for changeset in try await storage.history(app: app, after: 0, limit: 1_000).changesets {
            for operation in changeset.operations {
                expected[operation.object, default: SyncObjectState(object: operation.object)].apply(operation)
            }
        }
        let snapshot = try await storage.snapshot(app: app, classes: ["Todo"])
        #expect(snapshot.sequence == 60)
        #expect(Dictionary(uniqueKeysWithValues: snapshot.objects.map { ($0.object, $0) }) == expected)
        #expect(try await storage.snapshot(app: app, classes: ["Note"]).objects.isEmpty)
    }

    static func batchesTouchingObjectsRepeatedlyStoreTheirMerge(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("batch")
        var generator = ServerSeededGenerator(seed: 34)
        var next: [UInt64: UInt64] = [1: 1, 2: 1]
        var latest: UInt64 = 0
        for round in 0..<12 {
            let client = UInt64.random(in: 1...2, using: &generator)
            // Several changesets per upload, each touching a few of the same objects of two
            // classes, so one batch reads, merges and writes an object several times over.
            var batch: [ClientChangeset] = []
            for _ in 0..<Int.random(in: 1...15, using: &generator) {
                var operations: [SyncOperation] = []
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let at = UInt64.random(in: 1...1_000, using: &generator)
                    let id = Int.random(in: 0..<6, using: &generator)
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: operations.append(F.createTodo("t\(id)", title: "r\(round)", at: at, client: client))
                    case 1: operations.append(F.setTitle("t\(id)", "s\(round)", at: at, client: client))
                    case 2: operations.append(SyncOperation(timestamp: F.timestamp(at, client: client), object: F.todo("t\(id)"), change: .delete))
                    default: operations.append(F.createNote(Int64(id), text: "n\(round)", at: at, client: client))
                    }
                }
                batch.append(F.changeset(next[client, default: 1], operations))
                next[client, default: 1] += 1
            }
            let result = try await storage.upload(app: app, clientID: client, changesets: batch)
            #expect(result.appendedCount == batch.count && result.lastAcknowledged == next[client, default: 1] - 1)
            latest += UInt64(batch.count)
            #expect(result.position.latestSequence == latest)
        }
        let history = try await storage.history(app: app, after: 0, limit: 1_000)
        #expect(history.changesets.map(\.serverSequence) == Array(1...latest))
        for client in [UInt64(1), 2] {
            let mine = history.changesets.filter { $0.clientID == client }.map(\.clientSequence)
            #expect(mine == Array(UInt64(1)..<next[client, default: 1]), "client \(client)'s changesets in its order")
        }
        var expected: [ObjectRef: SyncObjectState] = [:]
        for changeset in history.changesets {
            for operation in changeset.operations {
                expected[operation.object, default: SyncObjectState(object: operation.object)].apply(operation)
            }
        }
        let snapshot = try await storage.snapshot(app: app, classes: ["Todo", "Note"])
        #expect(snapshot.sequence == latest)
        #expect(Dictionary(uniqueKeysWithValues: snapshot.objects.map { ($0.object, $0) }) == expected)
    }

    static func compactionDropsOldHistoryAndReportsIt(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("compact")
        for sequence in UInt64(1)...10 {
            _ = try await storage.upload(app: app, clientID: 4, changesets: [F.changeset(sequence, [F.setTitle("a", "v\(sequence)", at: sequence, client: 4)])])
        }
        #expect(try await storage.compact(app: app, keepingLast: 3) == 7)
        #expect(try await storage.compact(app: app, keepingLast: 5) == 7, "compaction never moves back")
        let position = try await storage.position(app: app)
        #expect(position == HistoryPosition(latestSequence: 10, compactedThrough: 7))
        // A reader behind the compacted history gets an empty page and the position that says so.
        let behind = try await storage.history(app: app, after: 2, limit: 100)
        #expect(behind.changesets.isEmpty && behind.position.compactedThrough == 7)
        #expect(try await storage.history(app: app, after: 7, limit: 100).changesets.map(\.serverSequence) == [8, 9, 10])
        // The states still hold everything.
        let snapshot = try await storage.snapshot(app: app, classes: ["Todo"])
        #expect(snapshot.objects.first?.value(of: "title") == .string("v10"))
    }

    static func compactionRemembersWhoChangedWhichClass(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("compacted-classes")
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo", "Note"], notFrom: 1) == 0, "nothing compacted yet")
        // Sequences 1–2: client 1 writes Todo; 3: client 2 writes Note; 4–5: client 1 writes Todo; 6: client 2 writes Todo.
        _ = try await storage.upload(app: app, clientID: 1, changesets: [F.changeset(1, [F.createTodo("a", title: "1", at: 1, client: 1)]),
                                                                        F.changeset(2, [F.setTitle("a", "2", at: 2, client: 1)])])
        _ = try await storage.upload(app: app, clientID: 2, changesets: [F.changeset(1, [F.createNote(1, text: "3", at: 3, client: 2)])])
        _ = try await storage.upload(app: app, clientID: 1, changesets: [F.changeset(3, [F.setTitle("a", "4", at: 4, client: 1)]),
                                                                        F.changeset(4, [F.setTitle("a", "5", at: 5, client: 1)])])
        _ = try await storage.upload(app: app, clientID: 2, changesets: [F.changeset(2, [F.setTitle("a", "6", at: 6, client: 2)])])
        #expect(try await storage.compact(app: app, keepingLast: 3) == 3)
        // Through 3: Todo only from client 1 (2), Note only from client 2 (3).
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 1) == 0)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 2) == 2)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Note"], notFrom: 2) == 0)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo", "Note"], notFrom: 1) == 3)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Other"], notFrom: 9) == 0)
        // Through 5 (a second compaction merges with the first): Todo's newest is client 1's 5.
        #expect(try await storage.compact(app: app, keepingLast: 1) == 5)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 1) == 0)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 3) == 5)
        // Through 6: client 2's Todo change makes client 1's newest loss 6, and client 2's 5 (client 1's).
        #expect(try await storage.compact(app: app, keepingLast: 0) == 6)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 1) == 6)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Todo"], notFrom: 2) == 5)
        #expect(try await storage.newestCompactedChange(app: app, classes: ["Note"], notFrom: 1) == 3)
    }

    static func schemasMergeAndMismatchesAreRefused(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("schema")
        #expect(try await storage.schema(app: app) == nil)
        guard case .accepted = try await storage.register(schema: F.schema, app: app) else {
            Issue.record("the first schema is accepted"); return
        }
        let newer = SyncSchema(classes: [SyncClassSchema(name: "Tag", primaryKey: "_id", properties: [SyncPropertySchema(name: "_id", type: "string")])])
        guard case .accepted(let merged) = try await storage.register(schema: newer, app: app) else {
            Issue.record("a new class is accepted"); return
        }
        #expect(Set(merged.classes.map(\.name)) == ["Todo", "Note", "Tag"])
        #expect(try await storage.schema(app: app) == merged)
        let breaking = SyncSchema(classes: [SyncClassSchema(name: "Note", primaryKey: "_id", properties: [
            SyncPropertySchema(name: "_id", type: "int"), SyncPropertySchema(name: "text", type: "int"),
        ])])
        guard case .refused(let problems) = try await storage.register(schema: breaking, app: app) else {
            Issue.record("a property of another type is refused"); return
        }
        #expect(!problems.isEmpty)
        #expect(try await storage.schema(app: app) == merged, "a refused schema changes nothing")
    }

    static func clientsAndSecretPersist(_ storage: any SyncStorage) async throws {
        let app = ServerTestEnvironment.uniqueAppID("clients")
        #expect(try await storage.client(app: app, clientID: 77) == ClientRecord())
        try await storage.setSubscriptions(app: app, clientID: 77, classes: ["Todo", "Note"], version: 3)
        let record = try await storage.client(app: app, clientID: 77)
        #expect(record.subscribedClasses == ["Todo", "Note"] && record.subscriptionVersion == 3)
        let secret = try await storage.serverSecret()
        #expect(secret.count == 32)
        #expect(try await storage.serverSecret() == secret)
        try await storage.recordUser(app: app, userID: "ann", provider: "anonymous")
        try await storage.recordUser(app: app, userID: "ann", provider: "anonymous")
    }
}

/// A deterministic generator (SplitMix64) for seeded workloads.
struct ServerSeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
