import Foundation
import StrataStore

// Decoding a `Codable` value from the loose values an object's columns hold (the inverse of
// ValueTreeEncoder.swift): `[String: Any]` for keyed values, `[Any]` for arrays, natively
// stored types as themselves, a missing key or `NSNull` for nil. At the top level, keys the
// schema stores as JSON are decoded from their string with `JSONDecoder`.

/// Decodes from a loose-value tree.
struct ValueTreeDecoder: Decoder {
    let value: Any
    let codingPath: [any CodingKey]
    /// Top-level keys stored as JSON text (empty below the top level).
    let jsonKeys: Set<String>
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Decodes one value: natives directly, others through their `init(from:)`.
    static func decodeNested<T: Decodable>(_ type: T.Type, from value: Any, codingPath: [any CodingKey]) throws -> T {
        if nativeKind(of: type) != nil {
            guard let native = nativeValue(value, as: type) else {
                throw DecodingError.typeMismatch(type, DecodingError.Context(codingPath: codingPath, debugDescription: "stored \(Swift.type(of: value)) \(value) does not fit \(type)"))
            }
            return native
        }
        return try T(from: ValueTreeDecoder(value: value, codingPath: codingPath, jsonKeys: []))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let entries = value as? [String: Any] else {
            throw DecodingError.typeMismatch([String: Any].self, DecodingError.Context(codingPath: codingPath, debugDescription: "expected a keyed value, found \(Swift.type(of: value))"))
        }
        return KeyedDecodingContainer(TreeKeyedDecodingContainer<Key>(entries: entries, codingPath: codingPath, jsonKeys: jsonKeys))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let elements = value as? [Any] else {
            throw DecodingError.typeMismatch([Any].self, DecodingError.Context(codingPath: codingPath, debugDescription: "expected an array, found \(Swift.type(of: value))"))
        }
        return TreeUnkeyedDecodingContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        TreeSingleValueDecodingContainer(value: value, codingPath: codingPath)
    }
}

/// Whether a loose value is nil.
private func isNil(_ value: Any?) -> Bool {
    guard let value else { return true }
    if value is NSNull { return true }
    if case Optional<Any>.none = value { return true }
    return false
}

private struct TreeIndexKey: CodingKey {
    var stringValue: String { "\(index)" }
    var intValue: Int? { index }
    let index: Int
    init(_ index: Int) { self.index = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.index = intValue }
}

struct TreeKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let entries: [String: Any]
    let codingPath: [any CodingKey]
    let jsonKeys: Set<String>

    var allKeys: [Key] { entries.keys.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { !isNil(entries[key.stringValue]) }

    func decodeNil(forKey key: Key) throws -> Bool { isNil(entries[key.stringValue]) }

    private func present(_ key: Key, _ type: Any.Type) throws -> Any {
        guard let value = entries[key.stringValue], !isNil(value) else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: codingPath + [key], debugDescription: "no value stored for '\(key.stringValue)'"))
        }
        return value
    }

    func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let value = try present(key, type)
        if jsonKeys.contains(key.stringValue) {
            guard let text = value as? String else {
                throw DecodingError.typeMismatch(String.self, DecodingError.Context(codingPath: codingPath + [key], debugDescription: "the JSON column holds \(Swift.type(of: value))"))
            }
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        }
        return try ValueTreeDecoder.decodeNested(type, from: value, codingPath: codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueTreeDecoder(value: present(key, [String: Any].self), codingPath: codingPath + [key], jsonKeys: []).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueTreeDecoder(value: present(key, [Any].self), codingPath: codingPath + [key], jsonKeys: []).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueTreeDecoder(value: entries["super"] ?? NSNull(), codingPath: codingPath, jsonKeys: [])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueTreeDecoder(value: entries[key.stringValue] ?? NSNull(), codingPath: codingPath + [key], jsonKeys: [])
    }
}

struct TreeUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let elements: [Any]
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    init(elements: [Any], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    private mutating func next(_ type: Any.Type) throws -> Any {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: codingPath + [TreeIndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return elements[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, isNil(elements[currentIndex]) else { return false }
        currentIndex += 1
        return true
    }

    mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let path = codingPath + [TreeIndexKey(currentIndex)]
        return try ValueTreeDecoder.decodeNested(type, from: next(type), codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let path = codingPath + [TreeIndexKey(currentIndex)]
        return try ValueTreeDecoder(value: next([String: Any].self), codingPath: path, jsonKeys: []).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let path = codingPath + [TreeIndexKey(currentIndex)]
        return try ValueTreeDecoder(value: next([Any].self), codingPath: path, jsonKeys: []).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let path = codingPath + [TreeIndexKey(currentIndex)]
        return try ValueTreeDecoder(value: next(Any.self), codingPath: path, jsonKeys: [])
    }
}

struct TreeSingleValueDecodingContainer: SingleValueDecodingContainer {
    let value: Any
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { isNil(value) }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        guard !isNil(value) else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(codingPath: codingPath, debugDescription: "nil stored where \(type) is expected"))
        }
        if nativeKind(of: type) != nil { return try ValueTreeDecoder.decodeNested(type, from: value, codingPath: codingPath) }
        return try T(from: ValueTreeDecoder(value: value, codingPath: codingPath, jsonKeys: []))
    }
}
