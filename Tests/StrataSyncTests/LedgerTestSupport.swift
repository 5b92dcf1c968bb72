// Models, files and a hand-operated server for the ledger tests: two (or more) ledgers on
// their own files exchange changesets through `LedgerTestServer` (upload: the outbox becomes
// server changesets with the next sequences; download: everything after the checkpoint).

import Foundation
import Strata
import StrataSync
import StrataSyncProtocol
import Synchronization
import Testing

enum LedgerPriority: Int, PersistableEnum {
    case low, high
}

final class LedgerNote: EmbeddedObject {
    @Persisted var text = ""
    @Persisted var words: List<String>
    @Persisted var author: LedgerPerson?
}

final class LedgerPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

final class LedgerTask: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var title = ""
    @Persisted var count = 0
    @Persisted var small: Int8 = 0
    @Persisted var short: Int16 = 0
    @Persisted var medium: Int32 = 0
    @Persisted var wide: Int64 = 0
    @Persisted var done = false
    @Persisted var ratio: Float = 0
    @Persisted var score: Double = 0
    @Persisted var blob = Data()
    @Persisted var due = Date(timeIntervalSince1970: 0)
    @Persisted var objectID: ObjectId?
    @Persisted var uuid: UUID?
    @Persisted var amount: Decimal128?
    @Persisted var maybe: Int?
    @Persisted var priority = LedgerPriority.low
    @Persisted var anything: MixedValue
    @Persisted var owner: LedgerPerson?
    @Persisted var people: List<LedgerPerson>
    @Persisted var steps: List<String>
    @Persisted var labels: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var note: LedgerNote?
    @Persisted var notes: List<LedgerNote>
    @Persisted var roles: Map<String, LedgerPerson?>
}

let ledgerTypes: [Object.Type] = [LedgerTask.self, LedgerPerson.self, LedgerNote.self]
let ledgerSyncedTypes: [Object.Type] = [LedgerTask.self, LedgerPerson.self]

/// A wall clock the test sets (milliseconds).
final class LedgerWallClock: Sendable {
    private let now: Mutex<UInt64>
    init(_ start: UInt64) { now = Mutex(start) }
    func set(_ value: UInt64) { now.withLock { $0 = value } }
    var read: @Sendable () -> UInt64 { { [self] in now.withLock { $0 } } }
}

/// One client: a file, its ledger, a database instance on it.
final class LedgerClient {
    let folder: URL
    let configuration: Database.Configuration
    let clock: LedgerWallClock
    var ledger: SyncLedger
    var db: Database
    /// The last client sequence uploaded to the test server.
    var uploaded: UInt64 = 0

    init(name: String, folder: URL, wallStart: UInt64 = 1_000) throws {
        self.folder = folder
        var configuration = Database.Configuration(fileURL: folder.appendingPathComponent("\(name).strata"), objectTypes: ledgerTypes)
        configuration.maximumFileSize = 1 << 30
        self.configuration = configuration
        clock = LedgerWallClock(wallStart)
        ledger = try SyncLedger.attach(configuration: configuration, syncedTypes: ledgerSyncedTypes, wallClock: clock.read)
        db = try Database(configuration: configuration)
    }

    /// Detaches the ledger and reopens (the process's instances of the file stay open).
    func reattach() throws {
        ledger.detach()
        ledger = try SyncLedger.attach(configuration: configuration, syncedTypes: ledgerSyncedTypes, wallClock: clock.read)
    }

    func tasks() -> [LedgerTask] {
        if !db.isInWriteTransaction { db.refresh() }
        return Array(db.objects(LedgerTask.self)).sorted { $0.id < $1.id }
    }

    func task(_ id: String) -> LedgerTask? {
        if !db.isInWriteTransaction { db.refresh() }
        return db.object(ofType: LedgerTask.self, forPrimaryKey: id)
    }

    /// Every synced object as text, for comparing clients.
    func dump() -> [String] {
        if !db.isInWriteTransaction { db.refresh() }
        let people = Array(db.objects(LedgerPerson.self)).sorted { $0.id < $1.id }.map { "person \($0.id) \($0.name)" }
        return people + tasks().map(Self.describe)
    }

    static func describe(_ task: LedgerTask) -> String {
        let anything: String
        switch task.anything {
        case .object(let object): anything = "object \((object as? LedgerPerson)?.id ?? -1)"
        default: anything = "\(task.anything)"
        }
        let fields: [String] = [
            task.id, task.title, "\(task.count)", "\(task.small)", "\(task.short)", "\(task.medium)", "\(task.wide)", "\(task.done)", "\(task.ratio)", "\(task.score)",
            "\([UInt8](task.blob))", "\(task.due.timeIntervalSince1970)", "\(task.objectID.map { "\($0)" } ?? "nil")",
            "\(task.uuid?.uuidString ?? "nil")", "\(task.amount.map { "\($0)" } ?? "nil")", "\(task.maybe.map(String.init) ?? "nil")",
            "\(task.priority)", anything, "owner \(task.owner?.id ?? -1)", "people \(task.people.map(\.id))",
            "steps \(Array(task.steps))", "labels \(Array(task.labels).sorted())",
            "scores \(task.scores.keys.sorted().map { "\($0)=\(task.scores[$0].map(String.init) ?? "nil")" })",
            "note \(task.note.map { "\($0.text) \(Array($0.words)) by \($0.author?.id ?? -1)" } ?? "nil")",
            "notes \(task.notes.map { "\($0.text) \(Array($0.words)) by \($0.author?.id ?? -1)" })",
            "roles \(task.roles.keys.sorted().map { "\($0)=\(task.roles[$0].flatMap { $0?.id } ?? -1)" })",
        ]
        return fields.joined(separator: "|")
    }

    deinit { ledger.detach() }
}

/// The server, by hand: a history of changesets with gapless sequences.
final class LedgerTestServer {
    private(set) var history: [ServerChangeset] = []

    /// Takes the client's outbox after what it uploaded, and acknowledges it.
    func upload(from client: LedgerClient) throws {
        for changeset in try client.ledger.pendingChangesets(after: client.uploaded, limit: 1_000) {
            history.append(ServerChangeset(serverSequence: UInt64(history.count + 1), clientID: client.ledger.clientID,
                                           clientSequence: changeset.clientSequence, operations: changeset.operations))
            client.uploaded = changeset.clientSequence
        }
        try client.ledger.acknowledge(through: client.uploaded)
    }

    /// The frame of everything after the client's checkpoint.
    func frame(for client: LedgerClient) throws -> (changesets: [ServerChangeset], checkpoint: Checkpoint) {
        let after = try client.ledger.checkpoint()
        return (history.filter { $0.serverSequence > after }, Checkpoint(sequence: UInt64(history.count), checksum: 0))
    }

    func download(to client: LedgerClient) throws {
        let frame = try frame(for: client)
        try client.ledger.apply(changesets: frame.changesets, checkpoint: frame.checkpoint)
    }

    /// Uploads from every client, then downloads to every client.
    func exchange(_ clients: [LedgerClient]) throws {
        for client in clients { try upload(from: client) }
        for client in clients { try download(to: client) }
    }
}

/// A folder removed when released.
final class LedgerFolder {
    let url: URL
    init() {
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-ledger-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
