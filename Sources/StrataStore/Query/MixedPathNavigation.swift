/// Reads into a list or dictionary nested in a mixed value along a `MixedPathComponent` path:
/// what a query's `value[0]`, `value['k']`, `value[*]`, `value.@size` and `value.@type` read.
///
/// A step that does not apply (a position past the end, a key the dictionary lacks, a position
/// into a dictionary, a key into a list or a plain value) reads nothing, as RealmSwift's
/// queries find no value there: the comparison then sees null (or, through `[*]`, no element).
enum MixedPathNavigation {
    /// The values at the end of `path` from `value`.
    static func values(at path: ArraySlice<MixedPathComponent>, in value: StoreValue) -> [StoreValue] {
        guard let first = path.first else { return [value] }
        let rest = path.dropFirst()
        switch (first, value) {
        case (.index(let index), .mixedList(let elements)):
            let position = index < 0 ? elements.count + index : index
            guard elements.indices.contains(position) else { return [] }
            return values(at: rest, in: elements[position])
        case (.key(let key), .mixedDictionary(let entries)):
            guard let found = entries[key] else { return [] }
            return values(at: rest, in: found)
        case (.all, .mixedList(let elements)):
            return elements.flatMap { values(at: rest, in: $0) }
        case (.all, .mixedDictionary(let entries)):
            return entries.values.flatMap { values(at: rest, in: $0) }
        case (.size, .mixedList(let elements)):
            return [.int(Int64(elements.count))]
        case (.size, .mixedDictionary(let entries)):
            return [.int(Int64(entries.count))]
        case (.type, _):
            return [.string(typeName(value))]
        default:
            return []
        }
    }

    /// The name `@type` gives a value's kind, as Realm's query language spells it.
    static func typeName(_ value: StoreValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "binary"
        case .date: "date"
        case .objectId: "objectId"
        case .decimal128: "decimal128"
        case .uuid: "uuid"
        case .link, .typedLink: "object"
        case .mixedList: "list"
        case .mixedDictionary: "dictionary"
        }
    }
}
