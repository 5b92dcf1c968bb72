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
// - a property renamed through the repository's `renamed:` mapping (values carried over), at
//   the top level (`"zip": "postalCode"`) or in a nested struct, named by its path
//   (`"address.zip": "address.postalCode"`: the struct's embedded type renames its column);
// - a nested struct added whose `init(from:)` decodes it with `decodeIfPresent ?? default`:
//   existing items get an embedded object holding that default, so queries on its properties
//   see the default rather than nil;
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
    ///   - renames: object type → old property name → new (``typeRenames(_:)``).
    ///   - objectCount: how many objects the file has of a type.
    func checkEvolution(from stored: Schema, renames: [String: [String: String]], objectCount: (String) throws -> Int) throws {
        for expected in schemas {
            guard let old = stored[expected.name] else { continue }
            let typeName = expected.name
            guard old.isEmbedded == expected.isEmbedded else {
                throw RepositoryError.schemaMismatch(type: typeName, property: "(type)", reason: expected.isEmbedded ? "the file stores it as a top-level type" : "the file stores it as an embedded type")
            }
            // Nothing stored, nothing to lose.
            if try objectCount(typeName) == 0 { continue }
            let typeRenames = renames[typeName] ?? [:]
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

    /// The renames of `renamed:` (old path → new path) by the object type whose column each
    /// renames: a top-level property's is the type's own, `"address.zip": "address.postalCode"`
    /// is the rename of `zip` to `postalCode` in the embedded type of the `address` struct (a
    /// single struct or an array of them, at any depth). A pair whose new path names no stored
    /// property, whose old path still names one, or whose two paths lead to different structs
    /// is a `schemaMismatch`.
    func typeRenames(_ renamed: [String: String]) throws(RepositoryError) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for (old, new) in renamed.sorted(by: { $0.key < $1.key }) {
            let oldPath = old.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            let newPath = new.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            func mismatch(_ reason: String) -> RepositoryError {
                .schemaMismatch(type: typeName, property: new, reason: "renamed: [\"\(old)\": \"\(new)\"] \(reason)")
            }
            guard oldPath.count == newPath.count, oldPath.dropLast() == newPath.dropLast(),
                  let oldName = oldPath.last, let newName = newPath.last, !oldName.isEmpty, !newName.isEmpty else {
                throw mismatch("must rename a property within the same struct: the two paths must differ only in their last name (\"address.zip\": \"address.postalCode\")")
            }
            var owner = typeName
            var fields = self.fields
            for component in newPath.dropLast() {
                guard let field = fields.first(where: { $0.name == component }) else {
                    throw mismatch("names '\(component)', which is not a property of \(owner) (its properties: \(fields.map(\.name).joined(separator: ", ")))")
                }
                switch field.storage {
                case .embedded(let layout), .embeddedList(let layout):
                    owner = layout.typeName
                    fields = layout.fields
                default:
                    throw mismatch("goes through '\(component)', which is not a nested struct stored as an embedded object (structs stored as JSON text keep their keys in the text)")
                }
            }
            guard fields.contains(where: { $0.name == newName }), !fields.contains(where: { $0.name == oldName }) else {
                throw mismatch("needs a property named '\(newName)' and none named '\(oldName)' in \(owner) (its properties: \(fields.map(\.name).joined(separator: ", ")))")
            }
            result[owner, default: [:]][oldName] = newName
        }
        return result
    }

    /// For each nested struct stored as an embedded object that may be nil, the value tree of
    /// the struct existing items get when the file gains the property: what `T.init(from:)`
    /// makes of a missing key (`decodeIfPresent(_:forKey:) ?? default`); none where that is nil.
    func nestedDefaultsForMissingKeys<T: Codable>(_ type: T.Type) -> [(field: CodableField, value: Any)] {
        var defaults: [(field: CodableField, value: Any)] = []
        for field in fields where field.isOptional {
            guard case .embedded = field.storage,
                  let value = SchemaProbe.valueMissing(key: field.name, of: type),
                  let row = try? storedValues(of: value),
                  let tree = row.embedded.first(where: { $0.0.name == field.name })?.1,
                  tree is [String: Any] else { continue }
            defaults.append((field, tree))
        }
        return defaults
    }

    /// Gives each existing item a nested struct's default (``nestedDefaultsForMissingKeys(_:)``)
    /// where the file had no column for it before: a new embedded object linked from the item.
    func fillNestedDefaults(_ defaults: [(field: CodableField, value: Any)], addedTo stored: Schema,
                            renames: [String: String], in session: StoreSession,
                            existingKeys: (String) throws -> [ObjectKey]) throws {
        guard !defaults.isEmpty, let old = stored[typeName], let parent = session.table(named: typeName) else { return }
        let keys = try existingKeys(typeName)
        guard !keys.isEmpty else { return }
        for (field, value) in defaults {
            let source = renames.first { $0.value == field.name }?.key ?? field.name
            guard old.propertyIndex(persistedAs: source) == nil else { continue }
            for key in keys { try store(value, field, in: parent, key: key) }
        }
    }

    /// The object types as this session reads them (its tables, which may be older than the
    /// store's schema when another instance changed the file).
    static func sessionSchema(_ session: StoreSession) -> Schema {
        Schema(session.tables.map(\.schema))
    }
}
