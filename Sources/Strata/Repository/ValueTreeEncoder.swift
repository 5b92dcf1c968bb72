import Foundation
import StrataStore

// Encoding a `Codable` value into a tree of loose values the dynamic API takes: a keyed value
// becomes `[String: Any]`, an array `[Any]`, nil `NSNull`, and natively stored types (see
// NativeValues.swift) stay themselves, so that a `Date` is a date column rather than a number.
// At the top level, the keys the schema stores as JSON are encoded with `JSONEncoder` into
// their string instead.

/// One node of the tree being encoded (a reference, so nested containers can fill it later).
final class EncodedNode {
    enum Content {
        case empty
        case null
        case scalar(Any)
        case keyed([String: EncodedNode])
        case unkeyed([EncodedNode])
    }

    var content: Content = .empty

    /// The node as loose values.
    var value: Any {
        switch content {
        case .empty, .null: NSNull()
        case .scalar(let value): value
        case .keyed(let entries): entries.mapValues(\.value)
        case .unkeyed(let elements): elements.map(\.value)
        }
    }
}

/// Encodes into an `EncodedNode`.
struct ValueTreeEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    /// Top-level keys stored as JSON text (empty below the top level).
    let jsonKeys: Set<String>
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// The loose-value tree of `value`.
    static func encode<V: Encodable>(_ value: V, jsonKeys: Set<String>) throws -> Any {
        let node = EncodedNode()
        try value.encode(to: ValueTreeEncoder(node: node, codingPath: [], jsonKeys: jsonKeys))
        return node.value
    }

    /// Encodes one value below `node`: natives as themselves, others through their `encode(to:)`.
    static func encodeNested<V: Encodable>(_ value: V, into node: EncodedNode, codingPath: [any CodingKey]) throws {
        if nativeKind(of: V.self) != nil {
            node.content = .scalar(value)
        } else {
            try value.encode(to: ValueTreeEncoder(node: node, codingPath: codingPath, jsonKeys: []))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .keyed = node.content {} else { node.content = .keyed([:]) }
        return KeyedEncodingContainer(TreeKeyedEncodingContainer<Key>(node: node, codingPath: codingPath, jsonKeys: jsonKeys))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .unkeyed = node.content {} else { node.content = .unkeyed([]) }
        return TreeUnkeyedEncodingContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        TreeSingleValueEncodingContainer(node: node, codingPath: codingPath)
    }
}

struct TreeKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    let jsonKeys: Set<String>

    private func child(_ key: Key) -> EncodedNode {
        let child = EncodedNode()
        guard case .keyed(var entries) = node.content else { return child }
        entries[key.stringValue] = child
        node.content = .keyed(entries)
        return child
    }

    mutating func encodeNil(forKey key: Key) throws { child(key).content = .null }

    mutating func encodeValue<T: Encodable>(_ value: T, forKey key: Key) throws {
        let target = child(key)
        if jsonKeys.contains(key.stringValue) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(value)
            target.content = .scalar(String(decoding: data, as: UTF8.self))
        } else {
            try ValueTreeEncoder.encodeNested(value, into: target, codingPath: codingPath + [key])
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        ValueTreeEncoder(node: child(key), codingPath: codingPath + [key], jsonKeys: []).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueTreeEncoder(node: child(key), codingPath: codingPath + [key], jsonKeys: []).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueTreeEncoder(node: child(Key(stringValue: "super")!), codingPath: codingPath, jsonKeys: [])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueTreeEncoder(node: child(key), codingPath: codingPath + [key], jsonKeys: [])
    }
}

struct TreeUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var count: Int {
        if case .unkeyed(let elements) = node.content { return elements.count }
        return 0
    }

    private func append() -> EncodedNode {
        let child = EncodedNode()
        guard case .unkeyed(var elements) = node.content else { return child }
        elements.append(child)
        node.content = .unkeyed(elements)
        return child
    }

    mutating func encodeNil() throws { append().content = .null }

    mutating func encodeValue<T: Encodable>(_ value: T) throws {
        try ValueTreeEncoder.encodeNested(value, into: append(), codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueTreeEncoder(node: append(), codingPath: codingPath, jsonKeys: []).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueTreeEncoder(node: append(), codingPath: codingPath, jsonKeys: []).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueTreeEncoder(node: append(), codingPath: codingPath, jsonKeys: [])
    }
}

struct TreeSingleValueEncodingContainer: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .null }

    mutating func encodeValue<T: Encodable>(_ value: T) throws {
        try ValueTreeEncoder.encodeNested(value, into: node, codingPath: codingPath)
    }
}
