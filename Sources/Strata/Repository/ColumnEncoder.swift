import Foundation
import StrataStore

/// Encodes a top-level item straight into the row of stored values its table takes: `Int`,
/// `String`, `Double`, `Bool` and `Date` properties whose columns the ``ColumnMap`` reads
/// directly are written into the row as they are, with no intermediate loose value; every
/// other key (and any other way of encoding) goes to a value-tree node, which
/// `CodableTable.write(_:columns:)` converts as before, so both paths store, and fail, alike.
///
/// One encoder per item; not reused.
final class ColumnEncoder: Encoder {
    let columns: ColumnMap
    /// The row, by the file's column index: the directly written fields' values, `.null`
    /// elsewhere.
    var values: [StoreValue]
    /// For each field (in `CodableTable.fields` order): whether `values` holds it from the
    /// direct path. A key encoded again through the tree clears it.
    var direct: [Bool]
    /// The keys encoded through the value tree (a keyed node once `container(keyedBy:)` ran).
    let rest = EncodedNode()
    /// The position after the field the last key named: synthesized encoders write the fields
    /// in declaration order, so the next key is usually the next field.
    private var cursor = 0

    init(columns: ColumnMap) {
        self.columns = columns
        values = [StoreValue](repeating: .null, count: columns.context.table.schema.properties.count)
        direct = [Bool](repeating: false, count: columns.names.count)
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The field position of the key named `name`, or nil when the type has no such field.
    func position(_ name: String) -> Int? {
        let names = columns.names
        let next = cursor
        if next < names.count, names[next] == name {
            cursor = next &+ 1
            return next
        }
        guard let found = columns.table.fieldPositions[name] else { return nil }
        cursor = found &+ 1
        return found
    }

    /// Notes that `name` is being encoded through the tree: a direct value written for it
    /// earlier no longer counts.
    func encodingThroughTree(_ name: String) {
        guard let position = columns.table.fieldPositions[name], direct[position] else { return }
        direct[position] = false
        if let column = columns.scalarColumns[position] { values[column] = .null }
    }

    /// Writes a field's value directly, replacing whatever the tree holds for the key.
    func setDirect(_ value: StoreValue, position: Int, column: Int, name: String) {
        values[column] = value
        direct[position] = true
        if case .keyed(var entries) = rest.content, entries[name] != nil {
            entries[name] = nil
            rest.content = .keyed(entries)
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = rest.content {} else { rest.content = .keyed([:]) }
        return KeyedEncodingContainer(ColumnKeyedEncodingContainer<Key>(
            encoder: self, tree: TreeKeyedEncodingContainer<Key>(node: rest, codingPath: [], jsonKeys: columns.table.jsonKeys)))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueTreeEncoder(node: rest, codingPath: [], jsonKeys: columns.table.jsonKeys).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        ValueTreeEncoder(node: rest, codingPath: [], jsonKeys: columns.table.jsonKeys).singleValueContainer()
    }
}

struct ColumnKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: ColumnEncoder
    var tree: TreeKeyedEncodingContainer<Key>
    var codingPath: [any CodingKey] { [] }

    /// The field position and column of `key` when its column is written directly and is of
    /// `kind`.
    @inline(__always)
    private func column(_ key: Key, _ kind: PropertyKind) -> (position: Int, column: Int)? {
        guard let position = encoder.position(key.stringValue), let column = encoder.columns.scalarColumns[position],
              encoder.columns.scalarKinds[position] == kind else { return nil }
        return (position, column)
    }

    /// The tree container, after noting that `key` goes through it.
    private mutating func viaTree(_ key: Key) -> TreeKeyedEncodingContainer<Key> {
        encoder.encodingThroughTree(key.stringValue)
        return tree
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        if let (position, column) = column(key, .int) {
            encoder.setDirect(.int(Int64(value)), position: position, column: column, name: key.stringValue)
        } else {
            var tree = viaTree(key)
            try tree.encode(value, forKey: key)
        }
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        if let (position, column) = column(key, .string) {
            encoder.setDirect(.string(value), position: position, column: column, name: key.stringValue)
        } else {
            var tree = viaTree(key)
            try tree.encode(value, forKey: key)
        }
    }

    mutating func encode(_ value: Double, forKey key: Key) throws {
        if let (position, column) = column(key, .double) {
            encoder.setDirect(.double(value), position: position, column: column, name: key.stringValue)
        } else {
            var tree = viaTree(key)
            try tree.encode(value, forKey: key)
        }
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        if let (position, column) = column(key, .bool) {
            encoder.setDirect(.bool(value), position: position, column: column, name: key.stringValue)
        } else {
            var tree = viaTree(key)
            try tree.encode(value, forKey: key)
        }
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let date = value as? Date, T.self == Date.self, let (position, column) = column(key, .date) {
            encoder.setDirect(.date(date), position: position, column: column, name: key.stringValue)
        } else {
            var tree = viaTree(key)
            try tree.encode(value, forKey: key)
        }
    }

    mutating func encodeNil(forKey key: Key) throws {
        var tree = viaTree(key)
        try tree.encodeNil(forKey: key)
    }

    mutating func encode(_ value: Float, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { var tree = viaTree(key); try tree.encode(value, forKey: key) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        var tree = viaTree(key)
        return tree.nestedContainer(keyedBy: keyType, forKey: key)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        var tree = viaTree(key)
        return tree.nestedUnkeyedContainer(forKey: key)
    }

    mutating func superEncoder() -> any Encoder {
        encoder.encodingThroughTree("super")
        return tree.superEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        var tree = viaTree(key)
        return tree.superEncoder(forKey: key)
    }
}
