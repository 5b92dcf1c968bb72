// An open object database file: the engine, the stored schema, and how sessions start.

public import StrataStorage
import Foundation
import Synchronization

/// An open object database. Thread-safe: sessions (one per database instance) do the reading
/// and writing.
public final class Store: @unchecked Sendable {
    /// The storage engine underneath.
    public let engine: StorageEngine
    /// The schema stored in the file (after any upgrade made by `open`, and with the types
    /// sessions have added since).
    public var schema: Schema { schemaState.withLock { $0 } }
    let schemaState: Locked<Schema>
    /// The participant in every commit (CommitParticipant.swift), set at most once.
    let participantReference = AtomicLazyReference<CommitParticipantBox>()
    /// The file's schema version.
    public private(set) var schemaVersion: UInt64
    /// What `open` did to the schema, when it changed it.
    public private(set) var upgrade: SchemaUpgrade?

    static let schemaTree = "strata.schema"
    static let tablesTree = "strata.tables"
    static let logTree = "strata.log"

    init(engine: StorageEngine, schema: Schema, schemaVersion: UInt64, upgrade: SchemaUpgrade?) {
        self.engine = engine
        self.schemaState = Locked(schema)
        self.schemaVersion = schemaVersion
        self.upgrade = upgrade
    }

    /// Opens (creating if needed) the database at `path`.
    ///
    /// - Parameters:
    ///   - schema: the object types the code declares, or nil to use whatever the file has.
    ///   - schemaVersion: the code's schema version.
    ///   - policy: what to do when the schemas differ.
    public static func open(path: String, options: StorageOptions = StorageOptions(), schema: Schema?,
                            schemaVersion: UInt64 = 0, policy: SchemaMismatchPolicy = .error,
                            migration: ((StoreMigration) throws -> Void)? = nil) throws(StoreError) -> Store {
        do {
            try schema?.validate()
            let engine = try StorageEngine.open(path: path, options: options)
            do {
                return try open(engine: engine, schema: schema, schemaVersion: schemaVersion, policy: policy, migration: migration)
            } catch {
                engine.close()
                throw error
            }
        } catch {
            throw StoreError.wrap(error)
        }
    }

    /// Opens the object database in an already open engine.
    public static func open(engine: StorageEngine, schema requested: Schema?, schemaVersion: UInt64 = 0,
                            policy: SchemaMismatchPolicy = .error,
                            migration: ((StoreMigration) throws -> Void)? = nil) throws(StoreError) -> Store {
        do {
            let (stored, storedVersion) = try engine.read { try readSchema($0) }
            guard let requested else {
                return Store(engine: engine, schema: stored ?? Schema([]), schemaVersion: storedVersion, upgrade: nil)
            }
            if let stored {
                if let same = try reconcile(stored: stored, requested: requested, exactOnly: true), storedVersion == schemaVersion {
                    return Store(engine: engine, schema: same, schemaVersion: storedVersion, upgrade: nil)
                }
                if storedVersion > schemaVersion && !isDeleteData(policy) {
                    throw StoreError.schemaVersionTooOld(fileVersion: storedVersion, requestedVersion: schemaVersion)
                }
            }
            guard !engine.options.readOnly else {
                if stored == nil { throw StoreError.readOnly }
                // A read-only file opens with the stored schema when the requested one is compatible.
                if let merged = try reconcile(stored: stored!, requested: requested, exactOnly: true) {
                    return Store(engine: engine, schema: merged, schemaVersion: storedVersion, upgrade: nil)
                }
                throw try mismatch(stored: stored!, requested: requested)
            }
            // Anything to change is written in one transaction, under the write lock, after
            // reading the schema again (another process may have upgraded it meanwhile). A
            // migration block runs in the same transaction, so the new schema, the block's
            // changes and the removal of old columns commit together or not at all.
            let store = Store(engine: engine, schema: stored ?? Schema([]), schemaVersion: storedVersion, upgrade: nil)
            let session = try store.makeSession()
            defer { session.close() }
            try session.beginWrite()
            let write = try session.writer()
            let (current, currentVersion) = try readSchema(write)
            let final: Schema
            var upgrade: SchemaUpgrade?
            var migrationContext: StoreMigration?
            if let current {
                if let same = try reconcile(stored: current, requested: requested, exactOnly: false) {
                    final = same
                    if currentVersion < schemaVersion {
                        upgrade = SchemaUpgrade(oldVersion: currentVersion, oldSchema: current, changed: same != current)
                    }
                } else {
                    switch policy {
                    case .deleteData:
                        try deleteAll(write)
                        final = assignIDs(requested, basedOn: nil)
                    case .error, .migrate:
                        guard currentVersion < schemaVersion else { throw try mismatch(stored: current, requested: requested) }
                        var renames: [String: [String: String]] = [:]
                        if case .migrate(let given) = policy { renames = given }
                        final = assignIDs(requested, basedOn: current, renames: renames)
                    }
                    upgrade = SchemaUpgrade(oldVersion: currentVersion, oldSchema: current, changed: true)
                }
            } else {
                final = assignIDs(requested, basedOn: nil)
            }
            store.schemaState.withLock { $0 = final }
            session.resetTables()
            if let upgrade {
                let context = StoreMigration(session: session, oldSchema: upgrade.oldSchema, newSchema: final, oldVersion: upgrade.oldVersion)
                try context.prepare()
                try migration?(context)
                try context.finish()
                migrationContext = context
            }
            _ = migrationContext
            try writeSchema(final, version: max(schemaVersion, currentVersion), in: write)
            try session.commit()
            store.schemaVersion = max(schemaVersion, currentVersion)
            store.upgrade = upgrade
            return store
        } catch {
            throw StoreError.wrap(error)
        }
    }

    private static func isDeleteData(_ policy: SchemaMismatchPolicy) -> Bool {
        if case .deleteData = policy { return true }
        return false
    }

    /// Records types a session added (after its commit).
    func publish(_ schema: Schema) {
        schemaState.withLock { current in
            if schema.objectSchemas.count > current.objectSchemas.count { current = schema }
        }
    }

    /// Per table id, the lowest object key no write transaction of this process has handed
    /// out. The file's counter covers committed writes only, and objects added in a write
    /// that was rolled back can outlive it; were their keys handed out again, they would
    /// silently name the next objects instead of being invalidated (`ObjectKey` promises
    /// keys are never reused). Kept for as long as the store is open, which is as long as any
    /// object of it lives.
    private let unusedKeys = Locked<[UInt32: Int64]>([:])
    /// Inverse relationships declared by the model layer, by type and name
    /// (InverseProperty.swift).
    let inverses = Locked<[String: [String: InverseProperty]]>([:])

    func firstUnusedKey(inTable id: UInt32) -> Int64 { unusedKeys.withLock { $0[id] ?? 0 } }

    func noteKeysUsed(inTable id: UInt32, below key: Int64) {
        unusedKeys.withLock { $0[id] = max($0[id] ?? 0, key) }
    }

    /// Closes the engine. Sessions must be closed first.
    public func close() { engine.close() }

    /// Starts a session reading the newest version.
    public func makeSession() throws(StoreError) -> StoreSession { try StoreSession(store: self) }

    // MARK: Schema in the file

    static func readSchema(_ t: any TransactionReading) throws -> (Schema?, UInt64) {
        let names = try t.treeNames()
        guard let tree = try t.tree(named: schemaTree) else {
            if !names.isEmpty { throw StoreError.notAnObjectDatabase(reason: "it has data but no schema (trees: \(names.prefix(5).joined(separator: ", ")))") }
            return (nil, 0)
        }
        return try readSchema(t, tree: tree)
    }

    /// The schema and schema version stored in the schema tree.
    static func readSchema(_ t: any TransactionReading, tree: Tree) throws -> (Schema, UInt64) {
        guard let json = try t.value(forKey: Array("schema".utf8), in: tree),
              let version = try t.value(forKey: Array("version".utf8), in: tree), version.count == 8 else {
            throw StoreError.corrupted("the stored schema is missing")
        }
        let schema: Schema
        if let plain = json.withUnsafeBytes({ SchemaJSON.decode($0) }) {
            schema = plain
        } else {
            do { schema = try JSONDecoder().decode(Schema.self, from: Data(json)) } catch {
                throw StoreError.corrupted("the stored schema cannot be read (\(error))")
            }
        }
        return (schema, version.withUnsafeBytes { TreeKey.readU64($0) })
    }

    static func writeSchema(_ schema: Schema, version: UInt64, in write: WriteTransaction) throws {
        let tree = try write.createTree(named: schemaTree)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try write.put(Array(try encoder.encode(schema)), forKey: Array("schema".utf8), in: tree)
        try write.put(TreeKey.u64(version), forKey: Array("version".utf8), in: tree)
    }

    /// The requested schema with the stored ids, when the two agree on storage (indexes may
    /// differ: those are rebuilt); nil when they differ.
    static func reconcile(stored: Schema, requested: Schema, exactOnly: Bool) throws -> Schema? {
        var result = stored
        var added: [ObjectSchema] = []
        for object in requested.objectSchemas {
            guard let old = stored[object.name] else {
                if exactOnly { return nil }
                added.append(object)
                continue
            }
            guard old.properties.count == object.properties.count, old.isEmbedded == object.isEmbedded else { return nil }
            var merged = old
            for (index, property) in object.properties.enumerated() {
                guard let oldProperty = old.properties.first(where: { $0.persistedName == property.persistedName }),
                      oldProperty.hasSameStorage(as: property) else { return nil }
                var p = property
                p.columnID = oldProperty.columnID
                p.isIndexed = oldProperty.isIndexed
                merged.properties[index] = p
            }
            // Index changes need a write: treat as a difference.
            for property in object.properties where property.isIndexed != (old.properties.first { $0.persistedName == property.persistedName }!.isIndexed) {
                return nil
            }
            result.objectSchemas[stored.index(of: object.name)!] = merged
        }
        if !added.isEmpty {
            // New types need no migration: they get fresh ids.
            let fresh = assignIDs(Schema(added), basedOn: stored)
            for object in added { result.objectSchemas.append(fresh[object.name]!) }
        }
        return result
    }

    static func mismatch(stored: Schema, requested: Schema) throws -> StoreError {
        // A new type is named only when nothing else differs: where new types are allowed
        // (a writable open), the difference that needs the migration is elsewhere.
        var newType: String?
        for object in requested.objectSchemas {
            guard let old = stored[object.name] else {
                if newType == nil { newType = object.name }
                continue
            }
            if old.isEmbedded != object.isEmbedded {
                return .schemaMismatch(type: object.name, property: nil,
                                       reason: object.isEmbedded ? "it was a top-level type and is now embedded" : "it was embedded and is now a top-level type")
            }
            for property in object.properties {
                guard let oldProperty = old.properties.first(where: { $0.persistedName == property.persistedName }) else {
                    let persisted = property.persistedName == property.name ? "" : " (persisted as '\(property.persistedName)')"
                    return .schemaMismatch(type: object.name, property: property.name, reason: "the property\(persisted) was added")
                }
                if !oldProperty.hasSameStorage(as: property) {
                    return .schemaMismatch(type: object.name, property: property.name,
                                           reason: "it was \(oldProperty.description) and is now \(property.description)")
                }
                if oldProperty.isIndexed != property.isIndexed {
                    return .schemaMismatch(type: object.name, property: property.name,
                                           reason: property.isIndexed ? "an index was added" : "its index was removed")
                }
            }
            for property in old.properties where object.propertyIndex(persistedAs: property.persistedName) == nil {
                return .schemaMismatch(type: object.name, property: property.name, reason: "the property was removed")
            }
        }
        if let newType { return .schemaMismatch(type: newType, property: nil, reason: "the type is new") }
        return .schemaMismatch(type: requested.objectSchemas.first?.name ?? "?", property: nil, reason: "the schemas differ")
    }

    /// Gives new tables and columns fresh ids, keeping the ids of `base` where names match.
    static func assignIDs(_ schema: Schema, basedOn base: Schema?, renames: [String: [String: String]] = [:]) -> Schema {
        var result = schema
        var nextTable = (base?.objectSchemas.map(\.tableID).max() ?? 0) + 1
        for t in result.objectSchemas.indices {
            let name = result.objectSchemas[t].name
            let old = base?[name]
            result.objectSchemas[t].tableID = old?.tableID ?? { defer { nextTable += 1 }; return nextTable }()
            var nextColumn = (old?.properties.map(\.columnID).max() ?? 0) + 1
            let typeRenames = renames[name] ?? [:]
            for p in result.objectSchemas[t].properties.indices {
                // Old properties are matched by the name the file stores them under; a rename
                // may name the new property by either of its names.
                let propertyName = result.objectSchemas[t].properties[p].name
                let persistedName = result.objectSchemas[t].properties[p].persistedName
                let oldName = typeRenames.first(where: { $0.value == propertyName || $0.value == persistedName })?.key ?? persistedName
                if let oldProperty = old?.properties.first(where: { $0.persistedName == oldName }),
                   oldProperty.holdsValuesLike(result.objectSchemas[t].properties[p]) {
                    result.objectSchemas[t].properties[p].columnID = oldProperty.columnID
                } else {
                    result.objectSchemas[t].properties[p].columnID = UInt16(truncatingIfNeeded: nextColumn)
                    nextColumn += 1
                }
            }
        }
        // Keep tables the code no longer declares (their data stays in the file).
        if let base {
            for object in base.objectSchemas where result[object.name] == nil { result.objectSchemas.append(object) }
        }
        return result
    }

    static func dropColumn(_ property: PropertySchema, of object: ObjectSchema, in write: WriteTransaction) throws {
        if property.isList {
            if let tree = try write.tree(named: "t\(object.tableID).l") {
                var keys: [[UInt8]] = []
                // A map's keys are stored beside its values, under their own column id.
                let columns = property.isMap ? [property.columnID, TreeKey.mapKeysColumn(property.columnID)] : [property.columnID]
                for column in columns {
                    let prefix: [UInt8] = [UInt8(column >> 8), UInt8(column & 0xFF)]
                    try write.forEach(in: tree, from: prefix) { key, _ in
                        guard key.starts(with: prefix) else { return false }
                        keys.append(Array(key))
                        return true
                    }
                }
                for key in keys { _ = try write.delete(forKey: key, in: tree) }
            }
        } else if let tree = try write.tree(named: "t\(object.tableID).c") {
            var keys: [[UInt8]] = []
            try write.forEach(in: tree) { key, _ in
                if key.count == 10 && UInt16(key[8]) << 8 | UInt16(key[9]) == property.columnID { keys.append(Array(key)) }
                return true
            }
            for key in keys { _ = try write.delete(forKey: key, in: tree) }
        }
        if property.isIndexed && !property.isPrimaryKey { _ = try write.dropTree(named: "t\(object.tableID).i\(property.columnID)") }
        if property.isPrimaryKey { _ = try write.dropTree(named: "t\(object.tableID).pk") }
    }

    private static func deleteAll(_ write: WriteTransaction) throws {
        for name in try write.treeNames() { _ = try write.dropTree(named: name) }
    }
}
