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
    /// The object type the fields make.
    let schema: ObjectSchema

    init<T: Codable & Identifiable>(_ type: T.Type, typeName: String, indexes: [String]) throws(RepositoryError) where T.ID: RepositoryIdentifier {
        var fields = try SchemaProbe.fields(of: type)
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
        self.jsonKeys = Set(fields.filter { $0.storage == .json }.map(\.name))
        self.schema = ObjectSchema(name: typeName, properties: fields.enumerated().map { index, field in
            field.propertySchema(isPrimaryKey: index == 0, isIndexed: indexes.contains(field.name))
        })
    }

    /// Checks a stored object type against the fields: every field needs a column that stores
    /// it the same way, and the file may have no column the type does not know.
    func check(stored: ObjectSchema) throws(RepositoryError) {
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

    /// The property values `dynamicCreate` takes for `item`.
    func storedValues<T: Encodable>(of item: T) throws(RepositoryError) -> [String: Any] {
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
        for field in fields {
            let value = entries[field.name] ?? NSNull()
            if isNull(value) {
                guard field.isOptional else {
                    throw .valueConversion(type: typeName, property: field.name, reason: "no value was encoded for a property that is not optional")
                }
                values[field.name] = NSNull()
                continue
            }
            switch field.storage {
            case .column, .json:
                values[field.name] = try stored(value, field)
            case .list:
                guard let elements = value as? [Any] else {
                    throw .valueConversion(type: typeName, property: field.name, reason: "expected an array, the value encoded \(Swift.type(of: value))")
                }
                var list: [Any] = []
                list.reserveCapacity(elements.count)
                for element in elements { list.append(isNull(element) ? NSNull() : try stored(element, field)) }
                values[field.name] = list
            case .map:
                guard let entries = value as? [String: Any] else {
                    throw .valueConversion(type: typeName, property: field.name, reason: "expected a dictionary, the value encoded \(Swift.type(of: value))")
                }
                var map: [String: Any?] = [:]
                for (key, element) in entries {
                    if isNull(element) {
                        map[key] = .some(nil)
                    } else {
                        map[key] = .some(try stored(element, field))
                    }
                }
                values[field.name] = map
            }
        }
        return values
    }

    private func stored(_ value: Any, _ field: CodableField) throws(RepositoryError) -> Any {
        guard let stored = storedForm(of: value) else {
            throw .valueConversion(type: typeName, property: field.name, reason: "\(value) does not fit its column (an unsigned integer above Int.max, or a Decimal out of Decimal128's range)")
        }
        return stored
    }

    /// The item an object's columns hold.
    func item<T: Decodable>(_ type: T.Type, from object: DynamicObject) throws(RepositoryError) -> T {
        var entries: [String: Any] = [:]
        for field in fields {
            guard let value = object.value(forKey: field.name) else { continue }
            switch field.storage {
            case .column, .json:
                entries[field.name] = value
            case .list:
                if let elements = value as? [Any?] {
                    entries[field.name] = elements.map { $0 ?? NSNull() }
                } else {
                    entries[field.name] = value
                }
            case .map:
                if let map = value as? [String: Any?] {
                    entries[field.name] = map.mapValues { $0 ?? NSNull() }
                } else {
                    entries[field.name] = value
                }
            }
        }
        do {
            return try T(from: ValueTreeDecoder(value: entries, codingPath: [], jsonKeys: jsonKeys))
        } catch {
            var property = "(value)"
            if let error = error as? DecodingError {
                switch error {
                case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                    property = context.codingPath.map(\.stringValue).joined(separator: ".")
                @unknown default:
                    break
                }
            }
            throw .valueConversion(type: typeName, property: property, reason: "decoding the stored columns failed: \(error)")
        }
    }
}

/// Whether a loose value is nil.
private func isNull(_ value: Any) -> Bool {
    if value is NSNull { return true }
    if case Optional<Any>.none = value { return true }
    return false
}
