import Foundation
import StrataStore

/// How one `Codable` type is stored: its object type's name, its fields (one column each) and
/// the stored schema they make. Derived once per repository from the type (``SchemaProbe``).
struct CodableTable: Sendable {
    /// The object type's name in the file.
    let typeName: String
    /// The fields, the primary key `id` first.
    let fields: [CodableField]
    /// Top-level keys stored as JSON text.
    let jsonKeys: Set<String>
    /// Each field's position in `fields`, by name.
    let fieldPositions: [String: Int]
    /// The object type the fields make.
    let schema: ObjectSchema
    /// That type and the embedded types of its nested structs.
    let schemas: [ObjectSchema]

    init<T: Codable & Identifiable>(_ type: T.Type, typeName: String, indexes: [String]) throws(RepositoryError) where T.ID: RepositoryIdentifier {
        var fields = try SchemaProbe.fields(of: type, typeName: typeName)
        guard let idIndex = fields.firstIndex(where: { $0.name == "id" }) else {
            throw .unsupportedIdentifier(type: typeName, reason: "its `id` is not encoded under the key \"id\"")
        }
        let id = fields.remove(at: idIndex)
        guard case .column(let kind, isURL: false) = id.storage, kind == T.ID._repositoryKind, !id.isOptional else {
            throw .unsupportedIdentifier(type: typeName, reason: "its `id` must be a non-optional String, Int, UUID or ObjectId stored as itself")
        }
        fields.insert(id, at: 0)
        for name in indexes {
            guard let field = fields.first(where: { $0.name == name }) else {
                throw .cannotIndex(type: typeName, property: name, reason: "the type has no stored property of that name (its properties: \(fields.map(\.name).joined(separator: ", ")))")
            }
            guard field.canBeIndexed else {
                throw .cannotIndex(type: typeName, property: name, reason: "only Int, String, Bool, Date, ObjectId and UUID properties (and enums with such raw values) can be indexed")
            }
        }
        self.typeName = typeName
        self.fields = fields
        self.fieldPositions = Dictionary(fields.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.jsonKeys = Set(fields.filter { $0.storage == .json }.map(\.name))
        self.schema = ObjectSchema(name: typeName, properties: fields.enumerated().map { index, field in
            field.propertySchema(isPrimaryKey: index == 0, isIndexed: indexes.contains(field.name))
        })
        var schemas = [schema]
        for embedded in fields.flatMap(\.embeddedSchemas) where !schemas.contains(where: { $0.name == embedded.name }) {
            schemas.append(embedded)
        }
        self.schemas = schemas
    }

    /// Checks the file's schema against every object type the fields make.
    func check(stored: Schema) throws(RepositoryError) {
        for expected in schemas {
            guard let existing = stored[expected.name] else {
                throw .schemaMismatch(type: expected.name, property: "(type)", reason: "the file has no such type")
            }
            try check(existing, against: expected)
        }
    }

    /// Checks a stored object type against the fields: every field needs a column that stores
    /// it the same way, and the file may have no column the type does not know.
    private func check(_ stored: ObjectSchema, against schema: ObjectSchema) throws(RepositoryError) {
        let typeName = schema.name
        guard stored.isEmbedded == schema.isEmbedded else {
            throw .schemaMismatch(type: typeName, property: "(type)", reason: schema.isEmbedded ? "the file stores it as a top-level type" : "the file stores it as an embedded type")
        }
        for property in schema.properties {
            guard let existing = stored.properties.first(where: { $0.name == property.name }) else {
                throw .schemaMismatch(type: typeName, property: property.name, reason: "the file has no such column")
            }
            guard existing.hasSameStorage(as: property), existing.isIndexed == property.isIndexed else {
                throw .schemaMismatch(type: typeName, property: property.name, reason: "the file stores it as \(existing.description), the type maps it to \(property.description)")
            }
        }
        if let extra = stored.properties.first(where: { stored in !schema.properties.contains { $0.name == stored.name } }) {
            throw .schemaMismatch(type: typeName, property: extra.name, reason: "the file has this column but the type no longer has the property")
        }
    }

    /// The column values of `item` (in their stored form, by property name), and the loose
    /// values of its lists, maps and embedded objects: the value-tree form of an item, which
    /// schema evolution reads defaults from (saves go through `write(_:columns:)`).
    func storedValues<T: Encodable>(of item: T) throws(RepositoryError) -> StoredRow {
        let tree: Any
        do {
            tree = try ValueTreeEncoder.encode(item, jsonKeys: jsonKeys)
        } catch {
            throw .valueConversion(type: typeName, property: "(value)", reason: "encoding failed: \(error)")
        }
        guard let entries = tree as? [String: Any] else {
            throw .valueConversion(type: typeName, property: "(value)", reason: "the value did not encode as a keyed container")
        }
        var values: [String: Any] = [:]
        var embedded: [(CodableField, Any)] = []
        for field in fields {
            let value = entries[field.name] ?? NSNull()
            switch field.storage {
            case .embedded, .embeddedList, .list, .map:
                embedded.append((field, value))
            case .column, .json:
                if isNull(value) {
                    guard field.isOptional else {
                        throw .valueConversion(type: typeName, property: field.name, reason: "no value was encoded for a property that is not optional")
                    }
                    values[field.name] = NSNull()
                } else {
                    values[field.name] = try stored(value, field)
                }
            }
        }
        return StoredRow(values: values, embedded: embedded)
    }

    /// Stores `item` as the item with its id in the column map's table: a new object, or every
    /// property of the existing one replaced. Inside a write transaction. Scalar properties go
    /// straight into the row (``ColumnEncoder``); the others through the value tree, as
    /// `storedValues(of:)` converts them.
    func write<T: Encodable>(_ item: T, columns: ColumnMap) throws(RepositoryError) {
        let encoder = ColumnEncoder(columns: columns)
        do {
            try item.encode(to: encoder)
        } catch {
            throw .valueConversion(type: typeName, property: "(value)", reason: "encoding failed: \(error)")
        }
        guard case .keyed(let nodes) = encoder.rest.content else {
            throw .valueConversion(type: typeName, property: "(value)", reason: "the value did not encode as a keyed container")
        }
        let schema = columns.context.table.schema
        var values = encoder.values
        var embedded: [(CodableField, Any)] = []
        for (position, field) in fields.enumerated() where !encoder.direct[position] {
            let value = nodes[field.name]?.value ?? NSNull()
            switch field.storage {
            case .embedded, .embeddedList, .list, .map:
                embedded.append((field, value))
            case .column, .json:
                guard let index = columns.fieldColumns[position] else {
                    throw .schemaMismatch(type: typeName, property: field.name, reason: "the file has no such column")
                }
                if isNull(value) {
                    guard field.isOptional else {
                        throw .valueConversion(type: typeName, property: field.name, reason: "no value was encoded for a property that is not optional")
                    }
                    continue
                }
                let stored = try stored(value, field)
                let kind = schema.properties[index].kind
                guard let converted = StoreValue.from(any: stored, kind: kind), !converted.isNull else {
                    throw .valueConversion(type: typeName, property: field.name, reason: "\(stored) does not fit a \(kind) column")
                }
                values[index] = converted
            }
        }
        try write(values, embedded: embedded, columns: columns)
    }

    /// Stores a row of column values (by the file's column index) and then its lists, maps
    /// and embedded objects: inserted under a new key, or every column and field of the object
    /// with the same primary key replaced.
    private func write(_ values: [StoreValue], embedded: [(CodableField, Any)], columns: ColumnMap) throws(RepositoryError) {
        let access = columns.context.table
        let schema = access.schema
        guard let pk = schema.primaryKeyIndex else {
            throw .schemaMismatch(type: typeName, property: "id", reason: "the file's type has no primary key")
        }
        let key: ObjectKey
        do {
            if let existing = try access.locate(primaryKey: values[pk]) {
                key = existing.key
                for (position, field) in fields.enumerated() {
                    switch field.storage {
                    case .column, .json: break
                    default: continue
                    }
                    guard let index = columns.fieldColumns[position] else {
                        throw RepositoryError.schemaMismatch(type: typeName, property: field.name, reason: "the file has no such column")
                    }
                    if index != pk { try access.set(values[index], for: key, property: index) }
                }
            } else {
                key = try access.insert(values)
            }
        } catch let error as RepositoryError {
            throw error
        } catch {
            throw .database(reason: "writing a '\(typeName)' item failed: \(error)")
        }
        for (field, value) in embedded { try store(value, field, in: access, key: key) }
    }

    /// Stores a value that is not a plain column (a list, a map, an embedded object or a list
    /// of them) in `key`'s property of `table`.
    func store(_ value: Any, _ field: CodableField, in table: TableAccess, key: ObjectKey) throws(RepositoryError) {
        guard let index = table.schema.propertyIndex(named: field.name) else {
            throw .schemaMismatch(type: table.schema.name, property: field.name, reason: "the file has no such column")
        }
        do {
            switch field.storage {
            case .embedded(let layout):
                if isNull(value) {
                    guard field.isOptional else { throw RepositoryError.valueConversion(type: table.schema.name, property: field.name, reason: "no value was encoded for a property that is not optional") }
                    try table.set(.null, for: key, property: index)
                } else {
                    try table.set(.link(insertEmbedded(value, layout, field, from: table)), for: key, property: index)
                }
            case .embeddedList(let layout):
                guard let elements = value as? [Any] else { throw RepositoryError.valueConversion(type: table.schema.name, property: field.name, reason: "expected an array") }
                var children: [StoreValue] = []
                for element in elements { children.append(.link(try insertEmbedded(element, layout, field, from: table))) }
                try table.setList(children, for: key, property: index)
            case .list(let kind, _, _):
                guard let elements = value as? [Any] else { throw RepositoryError.valueConversion(type: table.schema.name, property: field.name, reason: "expected an array") }
                var list: [StoreValue] = []
                for element in elements { list.append(try storeValue(element, kind: kind, optional: true, field, table.schema.name)) }
                try table.setList(list, for: key, property: index)
            case .map(let kind, _, _):
                guard let entries = value as? [String: Any] else { throw RepositoryError.valueConversion(type: table.schema.name, property: field.name, reason: "expected a dictionary") }
                let keys = entries.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
                var values: [StoreValue] = []
                for mapKey in keys { values.append(try storeValue(entries[mapKey] ?? NSNull(), kind: kind, optional: true, field, table.schema.name)) }
                try table.setMap(keys: keys, values: values, for: key, property: index)
            case .column, .json:
                break
            }
        } catch let error as RepositoryError {
            throw error
        } catch {
            throw .database(reason: "writing \(table.schema.name).\(field.name) failed: \(error)")
        }
    }

    /// Inserts one embedded object (not yet adopted: the caller links it) and returns its key.
    private func insertEmbedded(_ value: Any, _ layout: EmbeddedLayout, _ owner: CodableField, from parent: TableAccess) throws -> ObjectKey {
        guard let entries = value as? [String: Any] else {
            throw RepositoryError.valueConversion(type: layout.typeName, property: owner.name, reason: "the nested value did not encode as a keyed container")
        }
        guard let table = parent.sessionTable(named: layout.typeName) else {
            throw RepositoryError.schemaMismatch(type: layout.typeName, property: "(type)", reason: "the file has no such type")
        }
        var values = [StoreValue](repeating: .null, count: table.schema.properties.count)
        var later: [(CodableField, Any)] = []
        for field in layout.fields {
            let value = entries[field.name] ?? NSNull()
            guard let index = table.schema.propertyIndex(named: field.name) else {
                throw RepositoryError.schemaMismatch(type: layout.typeName, property: field.name, reason: "the file has no such column")
            }
            if case .column(let kind, _) = field.storage {
                values[index] = try storeValue(value, kind: kind, optional: field.isOptional, field, layout.typeName)
            } else {
                later.append((field, value))
            }
        }
        let child = try table.insert(values)
        for (field, value) in later { try store(value, field, in: table, key: child) }
        return child
    }

    /// One value of a column, list element or map value.
    private func storeValue(_ value: Any, kind: PropertyKind, optional: Bool, _ field: CodableField, _ typeName: String) throws(RepositoryError) -> StoreValue {
        if isNull(value) {
            guard optional else { throw .valueConversion(type: typeName, property: field.name, reason: "no value was encoded for a property that is not optional") }
            return .null
        }
        guard let converted = StoreValue.from(any: try stored(value, field), kind: kind), !converted.isNull else {
            throw .valueConversion(type: typeName, property: field.name, reason: "\(value) does not fit a \(kind) column")
        }
        return converted
    }

    /// A non-nil value in the form the store takes, checked against the field's column kind:
    /// a value of another kind than the probe saw (an `encode(to:)` that writes something
    /// else than its `init(from:)` reads) is an error here rather than a stop in the store.
    private func stored(_ value: Any, _ field: CodableField) throws(RepositoryError) -> Any {
        guard let stored = storedForm(of: value) else {
            throw .valueConversion(type: typeName, property: field.name, reason: "\(value) does not fit its column (an unsigned integer above Int.max, or a Decimal out of Decimal128's range)")
        }
        let kind: PropertyKind
        switch field.storage {
        case .column(let columnKind, _), .list(let columnKind, _, _), .map(let columnKind, _, _): kind = columnKind
        case .json: kind = .string
        case .embedded, .embeddedList: return stored
        }
        guard let converted = StoreValue.from(any: stored, kind: kind), !converted.isNull, converted.kind == kind else {
            throw .valueConversion(type: typeName, property: field.name, reason: "the value encoded \(Swift.type(of: value)) \(value), which does not fit the \(kind) column derived from decoding the type")
        }
        return stored
    }

    /// The item a managed object's row holds (its table's column map is made for the call;
    /// decoding many, keep one ``ColumnMap`` and use its `item(_:cluster:row:key:)`).
    func item<T: Decodable>(_ type: T.Type, from object: DynamicObject) throws(RepositoryError) -> T {
        guard let context = object._slot.table else {
            throw .valueConversion(type: typeName, property: "(value)", reason: "the object is not stored in a database")
        }
        return try item(type, columns: ColumnMap(table: self, context: context), key: ObjectKey(object._slot.key))
    }

    /// The item stored under `key` in the column map's table.
    func item<T: Decodable>(_ type: T.Type, columns: ColumnMap, key: ObjectKey) throws(RepositoryError) -> T {
        let located: (cluster: ClusterView, row: Int)?
        do {
            located = try columns.context.table.locate(key)
        } catch {
            throw .database(reason: "reading a '\(typeName)' item failed: \(error)")
        }
        guard let (cluster, row) = located else {
            throw .database(reason: "a '\(typeName)' item was deleted while it was read")
        }
        return try columns.item(type, cluster: cluster, row: row, key: key)
    }

    /// The repository error for a decoding error, naming the property it concerns.
    func decodingFailure(_ error: any Error) -> RepositoryError {
        var property = "(value)"
        if let error = error as? DecodingError {
            switch error {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                property = context.codingPath.map(\.stringValue).joined(separator: ".")
            @unknown default:
                break
            }
        }
        return .valueConversion(type: typeName, property: property, reason: "decoding the stored columns failed: \(error)")
    }

    /// The loose-value tree of an object's fields.
    static func tree(of object: DynamicObject, fields: [CodableField]) -> [String: Any] {
        var entries: [String: Any] = [:]
        for field in fields {
            if let value = looseValue(of: object, field) { entries[field.name] = value }
        }
        return entries
    }

    /// One field's loose value (nil when the object stores none): what the value-tree decoder
    /// reads for it.
    static func looseValue(of object: DynamicObject, _ field: CodableField) -> Any? {
        guard let value = object.value(forKey: field.name) else { return nil }
        switch field.storage {
        case .column, .json:
            return value
        case .list:
            if let elements = value as? [Any?] { return elements.map { $0 ?? NSNull() } }
            return value
        case .map:
            if let map = value as? [String: Any?] { return map.mapValues { $0 ?? NSNull() } }
            return value
        case .embedded(let layout):
            if let child = value as? DynamicObject { return tree(of: child, fields: layout.fields) }
            return nil
        case .embeddedList(let layout):
            if let children = value as? List<DynamicObject> { return children.map { tree(of: $0, fields: layout.fields) } }
            return nil
        }
    }
}

/// Whether a loose value is nil.
private func isNull(_ value: Any) -> Bool {
    if value is NSNull { return true }
    if case Optional<Any>.none = value { return true }
    return false
}

/// One item's values: its columns' (stored form, by property name), and the loose values of
/// its lists, maps and embedded objects (what schema evolution reads defaults from).
struct StoredRow {
    let values: [String: Any]
    let embedded: [(CodableField, Any)]
}
