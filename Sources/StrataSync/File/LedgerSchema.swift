// The synced classes of one ledger, as the store names them, and the schema sent to the server.

import StrataStore
import StrataSyncProtocol

/// Which of the file's classes sync, and how.
struct LedgerSchema: Sendable {
    /// Synced top-level classes (each with a primary key), by persisted name.
    let synced: [String: ObjectSchema]
    /// Embedded classes reachable from the synced ones.
    let embedded: Set<String>
    /// What the client declares to the server.
    let syncSchema: SyncSchema

    init(objectSchemas: [ObjectSchema], syncedNames: Set<String>) throws(SyncLedgerError) {
        var synced: [String: ObjectSchema] = [:]
        var embedded: Set<String> = []
        var classes: [SyncClassSchema] = []
        let byName = Dictionary(objectSchemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        // The synced classes and the embedded classes they reach, transitively.
        var pending = Array(syncedNames).sorted()
        var seen: Set<String> = []
        while let name = pending.popLast() {
            guard seen.insert(name).inserted else { continue }
            guard let schema = byName[name] else { throw .unknownClass(name) }
            if schema.isEmbedded {
                embedded.insert(name)
            } else if syncedNames.contains(name) {
                guard schema.primaryKeyIndex != nil else { throw .missingPrimaryKey(className: name) }
                synced[name] = schema
            } else {
                continue  // a linked class that does not sync itself: its links travel by reference
            }
            for property in schema.properties {
                if let target = property.objectType, byName[target]?.isEmbedded == true { pending.append(target) }
            }
            let primaryKey = schema.primaryKeyIndex.map { schema.properties[$0].persistedName } ?? ""
            classes.append(SyncClassSchema(name: name, primaryKey: primaryKey, properties: schema.properties.map(Self.property),
                                           isEmbedded: schema.isEmbedded))
        }
        self.synced = synced
        self.embedded = embedded
        self.syncSchema = SyncSchema(classes: classes.sorted { $0.name < $1.name })
    }

    private static func property(_ property: PropertySchema) -> SyncPropertySchema {
        let collection: SyncPropertySchema.Collection = property.isMap ? .map : property.isSet ? .set : property.isList ? .list : .single
        return SyncPropertySchema(name: property.persistedName, type: property.kind.description, collection: collection,
                                  isOptional: property.isOptional, objectClass: property.objectType)
    }
}
