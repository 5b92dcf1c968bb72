import Foundation
import StrataStore

// The schema follows the type: when the file's definition of a repository's type (and of the
// embedded types of its nested structs) differs from the one the Swift type makes, the
// repository changes the file to match as it opens it, in one write transaction
// (`StoreSession.evolveTables`). What can change without losing or inventing values:
//
// - a property added that is optional (existing items: nil), a list, a map or a nested struct
//   that may be nil; or one whose `init(from:)` decodes it with
//   `decodeIfPresent(_:forKey:) ?? default` (it is stored as an optional column; existing items
//   get the value `init(from:)` makes when the key is missing, as they would decoding JSON
//   written before the property existed);
// - a property removed (its column and values are dropped);
// - a property renamed through the repository's `renamed:` mapping (values carried over);
// - a required property made optional; indexes added or removed.
//
// Anything else — a property whose stored values are of another kind, a new required property
// the existing items have no value for, an optional property made required — is a
// `RepositoryError.schemaMismatch` naming the type and property, and the file is not changed.
// A type with no stored objects takes any change: nothing can be lost.

extension CodableTable {
    /// Checks that the file's definitions in `stored` can become the type's without losing or
    /// inventing values (see above); throws a `schemaMismatch` naming the first property that
    /// cannot.
    ///
    /// - Parameters:
    ///   - renames: old property name → new, for the top-level type.
    ///   - objectCount: how many objects the file has of a type.
    func checkEvolution(from stored: Schema, renames: [String: String], objectCount: (String) throws -> Int) throws {
        for expected in schemas {
            guard let old = stored[expected.name] else { continue }
            let typeName = expected.name
            guard old.isEmbedded == expected.isEmbedded else {
                throw RepositoryError.schemaMismatch(type: typeName, property: "(type)", reason: expected.isEmbedded ? "the file stores it as a top-level type" : "the file stores it as an embedded type")
            }
            // Nothing stored, nothing to lose.
            if try objectCount(typeName) == 0 { continue }
            let typeRenames = typeName == self.typeName ? renames : [:]
            for property in expected.properties {
                let source = typeRenames.first { $0.value == property.name && old.propertyIndex(persistedAs: $0.key) != nil }?.key ?? property.name
                guard let previous = old.properties.first(where: { $0.persistedName == source }) else {
                    // Optional (a nested struct's link included), or a list or map (empty).
                    if property.isOptional || property.isList { continue }
                    throw RepositoryError.schemaMismatch(type: typeName, property: property.name, reason: "the property is new and not optional, so the \(try objectCount(typeName)) stored items have no value for it; make it optional, or decode it with `decodeIfPresent(_:forKey:) ?? default` in init(from:)")
                }
                guard previous.holdsValuesLike(property) else {
                    let from = source == property.name ? "" : " (renamed from '\(source)')"
                    throw RepositoryError.schemaMismatch(type: typeName, property: property.name, reason: "the file stores it\(from) as \(previous.typeDescription) and the type now maps it to \(property.typeDescription); the stored values cannot be carried over. Give the property a new name (the old one's values are then dropped), or read the old values with a type that still has it and save them converted")
                }
                if previous.isOptional && !property.isOptional {
                    throw RepositoryError.schemaMismatch(type: typeName, property: property.name, reason: "it was optional and is now required, and stored items may hold nil; keep it optional, or decode it with `decodeIfPresent(_:forKey:) ?? default` in init(from:)")
                }
            }
        }
    }

    /// For each top-level property stored in a nullable column, the value existing items get
    /// when the file gains that column: what `T.init(from:)` makes of a missing key, encoded;
    /// none where that is nil or `init(from:)` rejects the missing key.
    func defaultsForMissingKeys<T: Codable>(_ type: T.Type) -> [String: StoreValue] {
        var defaults: [String: StoreValue] = [:]
        for field in fields where field.isOptional {
            switch field.storage {
            case .column, .json: break
            default: continue
            }
            guard let value = SchemaProbe.valueMissing(key: field.name, of: type),
                  let row = try? storedValues(of: value), let stored = row.values[field.name] else { continue }
            let kind = schema.properties.first { $0.name == field.name }?.kind ?? .string
            if let converted = StoreValue.from(any: stored, kind: kind), !converted.isNull {
                defaults[field.name] = converted
            }
        }
        return defaults
    }

    /// The object types as this session reads them (its tables, which may be older than the
    /// store's schema when another instance changed the file).
    static func sessionSchema(_ session: StoreSession) -> Schema {
        Schema(session.tables.map(\.schema))
    }
}
