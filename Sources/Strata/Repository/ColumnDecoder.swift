import Foundation
import StrataStore

/// Where each field of a ``CodableTable`` is in the file's table, and which fields can be read
/// as a plain scalar: resolved once per table context (the file's column order need not be the
/// type's) and shared by every item's decoder. A class, so that decoders hold one reference.
final class ColumnMap {
    /// The type's description.
    let table: CodableTable
    /// The table context the positions are those of.
    let context: TableContext
    /// The fields' names, in `CodableTable.fields` order (the order synthesized `init(from:)`
    /// asks for them, `id` aside).
    let names: [String]
    /// For each field (in `CodableTable.fields` order): its column in the file's table, when it
    /// is an Int, String, Double, Bool or Date column the decoder reads directly; nil for the
    /// others.
    let scalarColumns: [Int?]
    /// The kind of each scalar column (`.bool` where `scalarColumns` is nil; unused there).
    let scalarKinds: [PropertyKind]
    /// For each field: its column in the file's table, whatever its kind (nil when the file
    /// has none, which the schema check at open rules out).
    let fieldColumns: [Int?]

    init(table: CodableTable, context: TableContext) {
        self.table = table
        self.context = context
        names = table.fields.map(\.name)
        let schema = context.table.schema
        var columns: [Int?] = []
        var kinds: [PropertyKind] = []
        for field in table.fields {
            kinds.append(.bool)
            columns.append(nil)
            guard case .column(let kind, isURL: false) = field.storage, !table.jsonKeys.contains(field.name) else { continue }
            switch kind {
            case .int, .string, .double, .bool, .date: break
            default: continue
            }
            guard let index = schema.propertyIndex(named: field.name), schema.properties[index].kind == kind,
                  !schema.properties[index].isList, !schema.properties[index].isMap else { continue }
            columns[columns.count - 1] = index
            kinds[kinds.count - 1] = kind
        }
        scalarColumns = columns
        scalarKinds = kinds
        fieldColumns = table.fields.map { schema.propertyIndex(named: $0.name) }
    }

    /// The item a row of the map's table holds, decoded straight from its columns. A method
    /// of the class, so that a lookup does not copy the table's description.
    func item<T: Decodable>(_ type: T.Type, cluster: ClusterView, row: Int, key: ObjectKey) throws(RepositoryError) -> T {
        do {
            return try T(from: ColumnDecoder(columns: self, cluster: cluster, row: row, key: key))
        } catch {
            throw table.decodingFailure(error)
        }
    }

    /// Whether the map still describes its context's table: the context was not released
    /// (`invalidate()`) and its table not dropped (a rolled-back type) since.
    var isCurrent: Bool { !context.isReleased && !context.table.isDropped }
}

/// Decodes a top-level item straight from its row in a cluster: `Int`, `String`, `Double`,
/// `Bool` and `Date` properties are read from their column chunks as they are, with no
/// intermediate value and no object; every other property (and any other way of decoding)
/// goes through the value-tree decoder with that property's loose value, read from the row's
/// object (made only then), so both paths decode, and fail, alike.
///
/// Valid while the cluster view is: for one synchronous decode, in the instance's context,
/// with no write in between.
final class ColumnDecoder: Decoder {
    let columns: ColumnMap
    let cluster: ClusterView
    let row: Int
    let key: ObjectKey
    /// The position after the field the last key named: synthesized decoders ask for the
    /// fields in declaration order, so the next key is usually the next field.
    private var cursor = 0
    private var madeObject: DynamicObject?

    var table: CodableTable { columns.table }

    init(columns: ColumnMap, cluster: ClusterView, row: Int, key: ObjectKey) {
        self.columns = columns
        self.cluster = cluster
        self.row = row
        self.key = key
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The row's object, for the properties the loose-value path reads.
    var object: DynamicObject {
        if let madeObject { return madeObject }
        let made = unsafeDowncast(columns.context.materialize(dynamicKey: key, cluster: cluster, row: row), to: DynamicObject.self)
        madeObject = made
        return made
    }

    /// The field position of the key named `name`, or nil when the type has no such field.
    func position(_ name: String) -> Int? {
        let names = columns.names
        let next = cursor
        if next < names.count, names[next] == name {
            cursor = next &+ 1
            return next
        }
        // `contains` then `decode` of the same key (an optional's `decodeIfPresent`).
        if next > 0, names[next &- 1] == name { return next &- 1 }
        guard let found = table.fieldPositions[name] else { return nil }
        cursor = found &+ 1
        return found
    }

    /// The chunk of column `column` holding the row.
    @inline(__always)
    func chunk(_ column: Int) -> ChunkView { cluster.columns[column] }

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

    /// The column of `key` and its chunk, when the column is read directly and holds a value
    /// of `kind` (not null) in the row.
    @inline(__always)
    private func scalar(_ key: Key, _ kind: PropertyKind) -> ChunkView? {
        guard let position = decoder.position(key.stringValue), let column = decoder.columns.scalarColumns[position],
              decoder.columns.scalarKinds[position] == kind else { return nil }
        let chunk = decoder.chunk(column)
        return chunk.isNull(decoder.row) ? nil : chunk
    }

    /// The value-tree container holding only `key`'s loose value (or nothing).
    private func tree(_ key: Key) -> TreeKeyedDecodingContainer<Key> {
        var entries: [String: Any] = [:]
        if let position = decoder.table.fieldPositions[key.stringValue],
           let value = CodableTable.looseValue(of: decoder.object, decoder.table.fields[position]) {
            entries[key.stringValue] = value
        }
        return TreeKeyedDecodingContainer(entries: entries, codingPath: [], jsonKeys: decoder.table.jsonKeys)
    }

    func contains(_ key: Key) -> Bool {
        if let position = decoder.position(key.stringValue), let column = decoder.columns.scalarColumns[position] {
            return !decoder.chunk(column).isNull(decoder.row)
        }
        return tree(key).contains(key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        if let chunk = scalar(key, .int), let int = Int(exactly: chunk.int(decoder.row)) { return int }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        if let chunk = scalar(key, .string) { return chunk.string(decoder.row) }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        if let chunk = scalar(key, .double) { return chunk.double(decoder.row) }
        return try decodeValue(type, forKey: key)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        if let chunk = scalar(key, .bool) { return chunk.bool(decoder.row) }
        return try decodeValue(type, forKey: key)
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if T.self == Date.self, let chunk = scalar(key, .date),
           let date = Date(timeIntervalSinceReferenceDate: chunk.double(decoder.row)) as? T {
            return date
        }
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
        try TreeKeyedDecodingContainer<Key>(entries: CodableTable.tree(of: decoder.object, fields: decoder.table.fields), codingPath: [],
                                        jsonKeys: decoder.table.jsonKeys).superDecoder()
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try tree(key).superDecoder(forKey: key)
    }
}
