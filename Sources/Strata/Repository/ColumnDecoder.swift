import Foundation
import StrataStore

/// Where each field of a ``CodableTable`` is in the file's table, and which fields can be read
/// as a plain scalar: resolved once for a pass over many objects of one table (the file's
/// column order need not be the type's). A class, shared by every item's decoder in a pass.
final class ColumnMap {
    /// The type's description.
    let table: CodableTable
    /// For each field (in `CodableTable.fields` order): its column in the file's table, when it
    /// is an Int, String, Double or Bool column the decoder reads directly; nil for the others.
    let scalarColumns: [Int?]

    init(table: CodableTable, scalarColumns: [Int?]) {
        self.table = table
        self.scalarColumns = scalarColumns
    }
}

extension CodableTable {
    /// The column map of `object`'s table.
    func columns(of object: DynamicObject) -> ColumnMap {
        let schema = object._slot.table?.table.schema
        return ColumnMap(table: self, scalarColumns: fields.map { field in
            guard case .column(let kind, isURL: false) = field.storage, !jsonKeys.contains(field.name) else { return nil }
            switch kind {
            case .int, .string, .double, .bool: break
            default: return nil
            }
            guard let schema, let index = schema.propertyIndex(named: field.name), schema.properties[index].kind == kind,
                  !schema.properties[index].isList, !schema.properties[index].isMap else { return nil }
            return index
        })
    }
}

/// Decodes a top-level item straight from its object's columns: `Int`, `String`, `Double` and
/// `Bool` properties are read from their columns as they are, with no intermediate value;
/// every other property (and any other way of decoding) goes through the value-tree decoder
/// with that property's loose value, so both paths decode, and fail, alike. A class holding two
/// references, so that the containers and the standard library's boxes share it instead of
/// copying the table's description for every key.
final class ColumnDecoder: Decoder {
    let object: DynamicObject
    let columns: ColumnMap
    var table: CodableTable { columns.table }

    init(object: DynamicObject, columns: ColumnMap) {
        self.object = object
        self.columns = columns
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ColumnKeyedDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try treeDecoder().unkeyedContainer()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try treeDecoder().singleValueContainer()
    }

    /// The value-tree decoder of the whole object.
    private func treeDecoder() -> ValueTreeDecoder {
        ValueTreeDecoder(value: CodableTable.tree(of: object, fields: table.fields), codingPath: [], jsonKeys: table.jsonKeys)
    }
}

struct ColumnKeyedDecodingContainer<Key: CodingKey>: ForwardingKeyedDecodingContainer {
    let decoder: ColumnDecoder
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        decoder.columns.table.fields.compactMap { field in
            CodableTable.looseValue(of: decoder.object, field) == nil ? nil : Key(stringValue: field.name)
        }
    }

    private func position(_ key: Key) -> Int? { decoder.columns.table.fieldPositions[key.stringValue] }

    /// The stored scalar of `key`, when its column is read directly.
    private func scalar(_ key: Key) -> StoreValue? {
        guard let position = position(key), let column = decoder.columns.scalarColumns[position] else { return nil }
        return decoder.object._storedValue(column)
    }

    /// The value-tree container holding only `key`'s loose value (or nothing).
    private func tree(_ key: Key) -> TreeKeyedDecodingContainer<Key> {
        var entries: [String: Any] = [:]
        if let position = position(key), let value = CodableTable.looseValue(of: decoder.object, decoder.columns.table.fields[position]) {
            entries[key.stringValue] = value
        }
        return TreeKeyedDecodingContainer(entries: entries, codingPath: [], jsonKeys: decoder.columns.table.jsonKeys)
    }

    func contains(_ key: Key) -> Bool {
        if let value = scalar(key) { return !value.isNull }
        return tree(key).contains(key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if case .int(let value)? = scalar(key), let int = Int(exactly: value) { return int }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if case .string(let value)? = scalar(key) { return value }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if case .double(let value)? = scalar(key) { return value }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if case .bool(let value)? = scalar(key) { return value }
        return try decodeValue(type, forKey: key)
    }

    func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try tree(key).decodeValue(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try tree(key).nestedContainer(keyedBy: type, forKey: key)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try tree(key).nestedUnkeyedContainer(forKey: key)
    }

    func superDecoder() throws -> any Decoder {
        try TreeKeyedDecodingContainer<Key>(entries: CodableTable.tree(of: decoder.object, fields: decoder.columns.table.fields), codingPath: [],
                                        jsonKeys: decoder.columns.table.jsonKeys).superDecoder()
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try tree(key).superDecoder(forKey: key)
    }
}
