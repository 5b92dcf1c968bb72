// Between the store's values and sync's: reading an object's properties as `SyncValue`s (links
// as their target's class and primary key, embedded objects as whole values) and turning
// `SyncValue`s back into stored values (finding link targets, making embedded objects).

import Foundation
import StrataStore
import StrataSyncProtocol

/// Reads and writes sync values through one store session.
struct LedgerValues {
    let session: StoreSession

    // MARK: Stored → sync

    /// A scalar stored value as it travels. `linkTarget` is the table of a `.link` (the
    /// property's target); links to objects without a primary key (which cannot sync) are null.
    func syncValue(_ value: StoreValue, linkTarget: TableAccess?) throws -> SyncValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .int(let v): return .int(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .data(let v): return .data([UInt8](v))
        case .date(let v): return .date(v.timeIntervalSince1970)
        case .uuid(let v): return .uuid(withUnsafeBytes(of: v.uuid) { [UInt8]($0) })
        case .objectId(let v): return .objectID(v.byteArray)
        case .decimal128(let v): return .decimal128(Self.bytes(of: v))
        case .link(let key):
            guard let linkTarget else { return .null }
            return try linked(key, in: linkTarget)
        case .typedLink(let tableID, let key):
            guard let table = session.table(id: tableID) else { return .null }
            return try linked(key, in: table)
        case .mixedList(let elements):
            return .mixedList(try elements.map { try syncValue($0, linkTarget: nil) })
        case .mixedDictionary(let entries):
            return .mixedDictionary(try entries.mapValues { try syncValue($0, linkTarget: nil) })
        }
    }

    /// A linked object: its reference, or, for an embedded object, its whole value.
    private func linked(_ key: ObjectKey, in table: TableAccess) throws -> SyncValue {
        if table.schema.isEmbedded { return .embedded(try embeddedValue(key, in: table)) }
        guard let primaryKey = table.primaryKeyIndex, try table.contains(key) else { return .null }
        let pk = try syncValue(try table.value(key, property: primaryKey), linkTarget: nil)
        return .link(ObjectRef(className: table.schema.name, primaryKey: pk))
    }

    /// Every property of an embedded object.
    func embeddedValue(_ key: ObjectKey, in table: TableAccess) throws -> EmbeddedValue {
        var fields: [String: EmbeddedField] = [:]
        for (index, property) in table.schema.properties.enumerated() {
            let target = property.objectType.flatMap { session.table(named: $0) }
            if property.isMap {
                fields[property.persistedName] = .map(try mapValue(key, index, in: table, target: target))
            } else if property.isSet {
                fields[property.persistedName] = .set(try table.list(key, property: index).map { try syncValue($0, linkTarget: target) })
            } else if property.isList {
                fields[property.persistedName] = .list(try table.list(key, property: index).map { try syncValue($0, linkTarget: target) })
            } else {
                fields[property.persistedName] = .value(try syncValue(try table.value(key, property: index), linkTarget: target))
            }
        }
        return EmbeddedValue(properties: fields)
    }

    /// A non-collection property of an object.
    func property(_ index: Int, of key: ObjectKey, in table: TableAccess) throws -> SyncValue {
        let target = table.schema.properties[index].objectType.flatMap { session.table(named: $0) }
        return try syncValue(try table.value(key, property: index), linkTarget: target)
    }

    /// The elements of a list or set property.
    func elements(_ index: Int, of key: ObjectKey, in table: TableAccess) throws -> [SyncValue] {
        let target = table.schema.properties[index].objectType.flatMap { session.table(named: $0) }
        return try table.list(key, property: index).map { try syncValue($0, linkTarget: target) }
    }

    /// The entries of a map property.
    func mapValue(_ key: ObjectKey, _ index: Int, in table: TableAccess, target: TableAccess?) throws -> [String: SyncValue] {
        let (keys, values) = try table.mapEntries(key, property: index)
        var entries: [String: SyncValue] = [:]
        for (mapKey, value) in zip(keys, values) { entries[mapKey] = try syncValue(value, linkTarget: target) }
        return entries
    }

    /// A `Decimal128`'s 16 bytes: the low 64 bits of its BID encoding, then the high, each
    /// little-endian.
    static func bytes(of value: Decimal128) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value.bidLow >> (8 * UInt64($0))) }
            + (0..<8).map { UInt8(truncatingIfNeeded: value.bidHigh >> (8 * UInt64($0))) }
    }

    // MARK: Sync → stored

    /// What a sync value is stored as in `property` of `table`. A link whose target is not in
    /// the file is nil and reported to `missingTarget`; an embedded value becomes a new
    /// embedded object.
    func storeValue(_ value: SyncValue, for property: PropertySchema, in table: TableAccess,
                    missingTarget: (ObjectRef) throws -> Void) throws -> StoreValue {
        // Built only for an error message: most values never need it.
        var place: String { "\(table.schema.name).\(property.name)" }
        switch value {
        case .null: return .null
        case .bool(let v): return .bool(v)
        case .int(let v): return .int(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .data(let v): return .data(Data(v))
        case .date(let v): return .date(Date(timeIntervalSince1970: v))
        case .uuid(let v):
            guard v.count == 16 else { throw SyncLedgerError.invalidOperation("a UUID of \(v.count) bytes for \(place)") }
            return .uuid(UUID(uuid: (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], v[14], v[15])))
        case .objectID(let v):
            guard let id = ObjectId(bytes: v) else { throw SyncLedgerError.invalidOperation("an ObjectId of \(v.count) bytes for \(place)") }
            return .objectId(id)
        case .decimal128(let v):
            guard v.count == 16 else { throw SyncLedgerError.invalidOperation("a Decimal128 of \(v.count) bytes for \(place)") }
            let low = v[0..<8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let high = v[8..<16].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return .decimal128(Decimal128(bidHigh: high, bidLow: low))
        case .link(let ref):
            guard let target = session.table(named: ref.className), !target.schema.isEmbedded,
                  let pkIndex = target.primaryKeyIndex else {
                throw SyncLedgerError.invalidOperation("a link to '\(ref.className)', not a synced class, in \(place)")
            }
            let pk = try storeValue(ref.primaryKey, for: target.schema.properties[pkIndex], in: target, missingTarget: missingTarget)
            guard let key = try target.find(primaryKey: pk) else {
                try missingTarget(ref)
                return .null
            }
            return property.kind == .mixed ? .typedLink(table: target.tableID, key: key) : .link(key)
        case .embedded(let embedded):
            guard let name = property.objectType, let target = session.table(named: name), target.schema.isEmbedded else {
                throw SyncLedgerError.invalidOperation("an embedded object for \(place), which holds no embedded objects")
            }
            return .link(try makeEmbedded(embedded, in: target, missingTarget: missingTarget))
        case .mixedList(let elements):
            guard property.kind == .mixed else { throw SyncLedgerError.invalidOperation("a nested list for \(place), which is not a mixed property") }
            return .mixedList(try elements.map { try storeValue($0, for: property, in: table, missingTarget: missingTarget) })
        case .mixedDictionary(let entries):
            guard property.kind == .mixed else { throw SyncLedgerError.invalidOperation("a nested dictionary for \(place), which is not a mixed property") }
            return .mixedDictionary(try entries.mapValues { try storeValue($0, for: property, in: table, missingTarget: missingTarget) })
        }
    }

    /// Creates an embedded object (without a parent yet: the caller's `set` or `setList`
    /// adopts it) with these fields; fields it does not name keep their defaults.
    private func makeEmbedded(_ value: EmbeddedValue, in table: TableAccess, missingTarget: (ObjectRef) throws -> Void) throws -> ObjectKey {
        let properties = table.schema.properties
        var row: [StoreValue] = properties.map { property in
            property.isList || property.isOptional ? .null : StoreValue.initialValue(of: property.kind)
        }
        for (index, property) in properties.enumerated() where !property.isList {
            if case .value(let field)? = value.properties[property.persistedName] {
                row[index] = try storeValue(field, for: property, in: table, missingTarget: missingTarget)
            }
        }
        let key = try table.insert(row)
        for (index, property) in properties.enumerated() where property.isList {
            switch value.properties[property.persistedName] {
            case .list(let elements)?, .set(let elements)?:
                var stored = try elements.map { try storeValue($0, for: property, in: table, missingTarget: missingTarget) }
                // A list of links holds no nil: a missing target is left out (see LedgerMaterializer).
                if property.kind == .link { stored.removeAll { $0.isNull } }
                try table.setList(stored, for: key, property: index)
            case .map(let entries)?:
                let sorted = entries.sorted { $0.key < $1.key }
                try table.setMap(keys: sorted.map(\.key),
                                 values: try sorted.map { try storeValue($0.value, for: property, in: table, missingTarget: missingTarget) },
                                 for: key, property: index)
            default: break
            }
        }
        return key
    }
}
