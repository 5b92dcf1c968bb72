import Foundation
import StrataStorage
public import StrataSyncProtocol

/// The default store: one file (`sync.strata`) in the data folder, on Strata's storage engine.
///
/// Trees (every key starts with the app id and a zero byte; app ids never hold one, see
/// ``AppsConfiguration/isValidAppID(_:)``):
/// - `apps`: app → newest sequence, compacted-through (u64 big-endian each).
/// - `schemas`: app → the merged ``SyncSchema`` encoding.
/// - `history`: app, sequence (u64 big-endian, so keys sort by sequence) → ``ServerChangeset`` encoding.
/// - `objects`: app, class, zero, SHA-256 of the primary key's encoding (fixed length whatever the
///   key) → ``SyncObjectState`` encoding.
/// - `clients`: app, client id → last acknowledged, subscription version, class list.
/// - `users`: app, user id → provider. `meta`: `secret` → the token secret.
/// - `compactions`: app → the compacted-through sequence from which compaction kept the record
///   below (u64 big-endian; history compacted before it counts as changing every class); app,
///   class → that class's ``ClassCompaction`` (24 bytes).
///
/// Each method is one engine transaction; uploads commit with full durability before they return,
/// those of one app arriving together sharing one transaction (group commit).
/// One process owns the file: the engine's write lock serialises writers, so sequences are gapless.
public final class EmbeddedSyncStorage: SyncStorage {
    private let engine: StorageEngine
    private let groupCommit = UploadGroupCommit()

    /// Opens (or creates) the store in `directory`, creating the folder if needed.
    public init(directory: String) throws(SyncServerError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            engine = try StorageEngine.open(path: (directory as NSString).appendingPathComponent("sync.strata"))
        } catch {
            throw .storageUnavailable("cannot open the data folder \(directory): \(error)")
        }
    }

    deinit { engine.close() }

    private enum Trees {
        static let apps = "apps", schemas = "schemas", history = "history", objects = "objects"
        static let clients = "clients", users = "users", meta = "meta", compactions = "compactions"
        static let all = [apps, schemas, history, objects, clients, users, meta, compactions]
    }

    public func prepare() async throws {
        try await engine.write { transaction in
            for name in Trees.all { _ = try transaction.createTree(named: name) }
            // A store whose states are all in this version's encoding says so: snapshots then
            // send the stored bytes as they are (`encodedSnapshot`). States are only ever
            // written in the current encoding, so an empty objects tree qualifies.
            let meta = try transaction.createTree(named: Trees.meta)
            let objects = try transaction.createTree(named: Trees.objects)
            if try transaction.value(forKey: Self.stateEncodingKey, in: meta) == nil, try transaction.count(in: objects) == 0 {
                try transaction.put(Self.currentStateEncoding, forKey: Self.stateEncodingKey, in: meta)
            }
        }
    }

    /// The meta entry naming the protocol version whose encoding every stored state has
    /// (absent: some may be older, and snapshots decode and encode each state again).
    private static let stateEncodingKey = Array("stateEncoding".utf8)
    private static var currentStateEncoding: [UInt8] { [UInt8(SyncProtocol.version >> 8), UInt8(SyncProtocol.version & 0xFF)] }

    public func run(onCommit: @escaping @Sendable (String, UInt64) -> Void) async throws {
        // The embedded store has a single writer, this process; the server notifies its own
        // sessions after each upload. Wait until cancelled (a stream that never yields ends
        // its iteration when the task is cancelled).
        let (never, continuation) = AsyncStream<Void>.makeStream()
        for await _ in never {}
        continuation.finish()
    }

    public func serverSecret() async throws -> [UInt8] {
        try await engine.write { transaction in
            let meta = try transaction.createTree(named: Trees.meta)
            if let secret = try transaction.value(forKey: Array("secret".utf8), in: meta) { return secret }
            var generator = SystemRandomNumberGenerator()
            let secret = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try transaction.put(secret, forKey: Array("secret".utf8), in: meta)
            return secret
        }
    }

    public func schema(app: String) async throws -> SyncSchema? {
        try engine.read { transaction in try Self.schema(app: app, in: transaction) }
    }

    public func register(schema: SyncSchema, app: String) async throws -> SchemaRegistration {
        try await engine.write { transaction in
            let existing = try Self.schema(app: app, in: transaction) ?? SyncSchema(classes: [])
            let problems = schema.breakingDifferences(from: existing)
            guard problems.isEmpty else { return .refused(problems) }
            let merged = existing.merged(with: schema)
            if merged != existing {
                try transaction.put(merged.encoded(), forKey: Self.appKey(app), in: try transaction.createTree(named: Trees.schemas))
            }
            return .accepted(merged)
        }
    }

    public func position(app: String) async throws -> HistoryPosition {
        try engine.read { transaction in try Self.position(app: app, in: transaction) }
    }

    public func client(app: String, clientID: UInt64) async throws -> ClientRecord {
        try engine.read { transaction in try Self.client(app: app, clientID: clientID, in: transaction) }
    }

    public func setSubscriptions(app: String, clientID: UInt64, classes: Set<String>, version: UInt64) async throws {
        try await engine.write { transaction in
            var record = try Self.client(app: app, clientID: clientID, in: transaction)
            record.subscribedClasses = classes
            record.subscriptionVersion = version
            try Self.put(record, app: app, clientID: clientID, in: transaction)
        }
    }

    /// Stores the upload in a group commit (`UploadGroupCommit`): uploads of the app arriving
    /// from any session while one commit is under way share the next durable commit.
    public func upload(app: String, clientID: UInt64, changesets: [ClientChangeset]) async throws -> UploadResult {
        try await groupCommit.upload(app: app, clientID: clientID, changesets: changesets) { app, requests in
            try await self.commitGroup(app: app, requests)
        }
    }

    /// One engine transaction storing `requests` in order, each planned against what the ones
    /// before it stored; one refused (out of order) is left out.
    private func commitGroup(app: String, _ requests: [UploadRequest]) async throws -> [Result<UploadResult, SyncServerError>] {
        try await engine.write { transaction in
            var position = try Self.position(app: app, in: transaction)
            let history = try transaction.createTree(named: Trees.history)
            let objects = try transaction.createTree(named: Trees.objects)
            var outcomes: [Result<UploadResult, SyncServerError>] = []
            var changed = false
            for request in requests {
                var record = try Self.client(app: app, clientID: request.clientID, in: transaction)
                let plan: UploadPlan
                do throws(SyncServerError) {
                    plan = try UploadPlan(clientID: request.clientID, changesets: request.changesets,
                                          lastAcknowledged: record.lastAcknowledged, latestSequence: position.latestSequence)
                } catch {
                    outcomes.append(.failure(error))
                    continue
                }
                guard !plan.accepted.isEmpty else {
                    outcomes.append(.success(UploadResult(lastAcknowledged: record.lastAcknowledged, position: position, appendedCount: 0)))
                    continue
                }
                for changeset in plan.accepted {
                    try transaction.put(changeset.encoded(), forKey: Self.historyKey(app, changeset.serverSequence), in: history)
                }
                var states: [ObjectRef: SyncObjectState] = [:]
                for object in plan.touchedObjects {
                    if let bytes = try transaction.value(forKey: Self.objectKey(app, object), in: objects) {
                        states[object] = try SyncObjectState(decoding: bytes)
                    }
                }
                plan.apply(to: &states)
                for (object, state) in states {
                    try transaction.put(state.encoded(), forKey: Self.objectKey(app, object), in: objects)
                }
                record.lastAcknowledged = plan.lastAcknowledged
                try Self.put(record, app: app, clientID: request.clientID, in: transaction)
                position.latestSequence = plan.latestSequence
                changed = true
                outcomes.append(.success(UploadResult(lastAcknowledged: plan.lastAcknowledged, position: position,
                                                      appendedCount: plan.accepted.count)))
            }
            if changed { try Self.put(position, app: app, in: transaction) }
            return outcomes
        }
    }

    /// The stored states as they are, when every one has the current encoding; otherwise
    /// each decoded and encoded again.
    public func encodedSnapshot(app: String, classes: Set<String>) async throws -> EncodedObjectSnapshot {
        let raw: EncodedObjectSnapshot? = try engine.read { transaction in
            guard let meta = try transaction.tree(named: Trees.meta),
                  try transaction.value(forKey: Self.stateEncodingKey, in: meta) == Self.currentStateEncoding else { return nil }
            let position = try Self.position(app: app, in: transaction)
            guard let objects = try transaction.tree(named: Trees.objects) else {
                return EncodedObjectSnapshot(objects: [], sequence: position.latestSequence)
            }
            var states: [[UInt8]] = []
            for className in classes.sorted() {
                let prefix = Self.classPrefix(app, className)
                try transaction.forEach(in: objects, from: prefix) { key, value in
                    guard key.starts(with: prefix) else { return false }
                    states.append([UInt8](value))
                    return true
                }
            }
            return EncodedObjectSnapshot(objects: states, sequence: position.latestSequence)
        }
        if let raw { return raw }
        let snapshot = try await snapshot(app: app, classes: classes)
        return EncodedObjectSnapshot(objects: snapshot.objects.map { $0.encoded() }, sequence: snapshot.sequence)
    }

    public func history(app: String, after: UInt64, limit: Int) async throws -> HistoryPage {
        try engine.read { transaction in
            let position = try Self.position(app: app, in: transaction)
            guard after >= position.compactedThrough, after < position.latestSequence, limit > 0,
                  let history = try transaction.tree(named: Trees.history) else {
                return HistoryPage(changesets: [], position: position)
            }
            var changesets: [ServerChangeset] = []
            var failure: (any Error)?
            try transaction.forEach(in: history, from: Self.historyKey(app, after + 1),
                                    to: Self.historyKey(app, position.latestSequence)) { _, value in
                do { changesets.append(try ServerChangeset(decoding: value)) } catch { failure = error; return false }
                return changesets.count < limit
            }
            if let failure { throw failure }
            return HistoryPage(changesets: changesets, position: position)
        }
    }

    public func snapshot(app: String, classes: Set<String>) async throws -> ObjectSnapshot {
        try engine.read { transaction in
            let position = try Self.position(app: app, in: transaction)
            guard let objects = try transaction.tree(named: Trees.objects) else {
                return ObjectSnapshot(objects: [], sequence: position.latestSequence)
            }
            var states: [SyncObjectState] = []
            var failure: (any Error)?
            for className in classes.sorted() {
                let prefix = Self.classPrefix(app, className)
                try transaction.forEach(in: objects, from: prefix) { key, value in
                    guard key.starts(with: prefix) else { return false }
                    do { states.append(try SyncObjectState(decoding: value)) } catch { failure = error; return false }
                    return true
                }
                if let failure { throw failure }
            }
            return ObjectSnapshot(objects: states, sequence: position.latestSequence)
        }
    }

    @discardableResult
    public func compact(app: String, keepingLast: UInt64) async throws -> UInt64 {
        try await engine.write { transaction in
            var position = try Self.position(app: app, in: transaction)
            let target = position.latestSequence > keepingLast ? position.latestSequence - keepingLast : 0
            guard target > position.compactedThrough else { return position.compactedThrough }
            let history = try transaction.createTree(named: Trees.history)
            let compactions = try transaction.createTree(named: Trees.compactions)
            if try transaction.value(forKey: Self.appKey(app), in: compactions) == nil {
                try transaction.put(Self.bigEndian(position.compactedThrough), forKey: Self.appKey(app), in: compactions)
            }
            var summary: [String: ClassCompaction] = [:]
            for sequence in (position.compactedThrough + 1)...target {
                let key = Self.historyKey(app, sequence)
                guard let bytes = try transaction.value(forKey: key, in: history) else { continue }
                ClassCompaction.record(try ServerChangeset(decoding: bytes), into: &summary)
                _ = try transaction.delete(forKey: key, in: history)
            }
            for (className, dropped) in summary {
                let key = Self.appKey(app) + Array(className.utf8)
                var merged = ClassCompaction()
                if let bytes = try transaction.value(forKey: key, in: compactions) {
                    guard let stored = ClassCompaction(decoding: bytes) else {
                        throw SyncServerError.corruptStorage("the compaction record of class \(className) of app \(app) is \(bytes.count) bytes")
                    }
                    merged = stored
                }
                merged.append(dropped)
                try transaction.put(merged.encoded, forKey: key, in: compactions)
            }
            position.compactedThrough = target
            try Self.put(position, app: app, in: transaction)
            return target
        }
    }

    public func newestCompactedChange(app: String, classes: Set<String>, notFrom clientID: UInt64) async throws -> UInt64 {
        try engine.read { transaction in
            let position = try Self.position(app: app, in: transaction)
            guard position.compactedThrough > 0 else { return 0 }
            guard let compactions = try transaction.tree(named: Trees.compactions),
                  let from = try transaction.value(forKey: Self.appKey(app), in: compactions), from.count == 8 else {
                return position.compactedThrough
            }
            var newest = Self.readBigEndian(from[...])
            for className in classes {
                guard let bytes = try transaction.value(forKey: Self.appKey(app) + Array(className.utf8), in: compactions) else { continue }
                guard let record = ClassCompaction(decoding: bytes) else {
                    throw SyncServerError.corruptStorage("the compaction record of class \(className) of app \(app) is \(bytes.count) bytes")
                }
                newest = max(newest, record.newest(notFrom: clientID))
            }
            return newest
        }
    }

    public func recordUser(app: String, userID: String, provider: String) async throws {
        try await engine.write { transaction in
            let users = try transaction.createTree(named: Trees.users)
            try transaction.put(Array(provider.utf8), forKey: Self.appKey(app) + Array(userID.utf8).prefix(512), in: users)
        }
    }

    // MARK: Keys and records

    private static func appKey(_ app: String) -> [UInt8] { Array(app.utf8) + [0] }

    private static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
    }

    private static func readBigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func historyKey(_ app: String, _ sequence: UInt64) -> [UInt8] { appKey(app) + bigEndian(sequence) }

    private static func classPrefix(_ app: String, _ className: String) -> [UInt8] { appKey(app) + Array(className.utf8) + [0] }

    private static func objectKey(_ app: String, _ object: ObjectRef) -> [UInt8] {
        classPrefix(app, object.className) + SHA256.hash(primaryKeyBytes(object.primaryKey))
    }

    private static func schema(app: String, in transaction: some TransactionReading) throws -> SyncSchema? {
        guard let tree = try transaction.tree(named: Trees.schemas),
              let bytes = try transaction.value(forKey: appKey(app), in: tree) else { return nil }
        return try SyncSchema(decoding: bytes)
    }

    private static func position(app: String, in transaction: some TransactionReading) throws -> HistoryPosition {
        guard let tree = try transaction.tree(named: Trees.apps),
              let bytes = try transaction.value(forKey: appKey(app), in: tree) else {
            return HistoryPosition(latestSequence: 0, compactedThrough: 0)
        }
        guard bytes.count == 16 else { throw SyncServerError.corruptStorage("the position of app \(app) is \(bytes.count) bytes") }
        return HistoryPosition(latestSequence: readBigEndian(bytes[0..<8]), compactedThrough: readBigEndian(bytes[8..<16]))
    }

    private static func put(_ position: HistoryPosition, app: String, in transaction: WriteTransaction) throws {
        let value = bigEndian(position.latestSequence) + bigEndian(position.compactedThrough)
        try transaction.put(value, forKey: appKey(app), in: try transaction.createTree(named: Trees.apps))
    }

    private static func client(app: String, clientID: UInt64, in transaction: some TransactionReading) throws -> ClientRecord {
        guard let tree = try transaction.tree(named: Trees.clients),
              let bytes = try transaction.value(forKey: appKey(app) + bigEndian(clientID), in: tree) else {
            return ClientRecord()
        }
        guard bytes.count >= 16 else { throw SyncServerError.corruptStorage("the record of client \(clientID) is \(bytes.count) bytes") }
        return ClientRecord(lastAcknowledged: readBigEndian(bytes[0..<8]),
                            subscribedClasses: try decodeClasses(Array(bytes[16...])),
                            subscriptionVersion: readBigEndian(bytes[8..<16]))
    }

    private static func put(_ record: ClientRecord, app: String, clientID: UInt64, in transaction: WriteTransaction) throws {
        let value = bigEndian(record.lastAcknowledged) + bigEndian(record.subscriptionVersion) + encodeClasses(record.subscribedClasses)
        try transaction.put(value, forKey: appKey(app) + bigEndian(clientID), in: try transaction.createTree(named: Trees.clients))
    }
}
