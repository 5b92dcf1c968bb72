// Models with Swift's Codable: `final class Dog: Object, Codable` decodes from JSON (or any
// decoder) into an unmanaged object, ready to `add`, and encodes managed, unmanaged and frozen
// objects alike, with the compiler's code (so `CodingKeys` rename and leave out properties as
// for any Swift type).
//
// Encoding a managed object reads each property through the object: the compiler's
// `encode(to:)` hands each `@Persisted` wrapper alone to the encoder, and a managed wrapper
// holds its column, not a value, so it also holds a pointer to the object that holds it
// (`Persisted.owner`, written when the object becomes managed).

import Foundation

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value (as a single value).
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try Value(from: decoder))
    }
}

extension KeyedDecodingContainer {
    /// A `@Persisted` property whose key is missing (or null, for an optional) takes its
    /// default value, as a property declared without an initial value does: `nil`, `0`, `""`,
    /// an empty list, and so on. (The compiler's `Decodable` code calls this for each
    /// `@Persisted` property.)
    public func decode<T: Decodable>(_ type: Persisted<T>.Type, forKey key: Key) throws -> Persisted<T> {
        guard contains(key) else { return Persisted<T>() }
        if try decodeNil(forKey: key), T.self is any AnyOptional.Type { return Persisted<T>() }
        return Persisted<T>(wrappedValue: try decode(T.self, forKey: key))
    }
}

extension List: Decodable where Element: Decodable {
    /// Decodes the elements from an array.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        var elements: [Element] = []
        if let count = container.count { elements.reserveCapacity(count) }
        while !container.isAtEnd { elements.append(try container.decode(Element.self)) }
        append(objectsIn: elements)
    }
}

extension MutableSet: Decodable where Element: Decodable {
    /// Decodes the members from an array (a repeated member is kept once).
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { insert(try container.decode(Element.self)) }
    }
}

extension Map: Decodable where Key == String, Value: Decodable {
    /// Decodes the entries from a dictionary (a JSON object).
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let entries = try [String: Value](from: decoder)
        for key in entries.keys.sorted() { self[key] = entries[key] }
    }
}

extension MixedValue: Decodable {
    /// Decodes a JSON-style value: null (`.none`), a Boolean, an integer, a floating-point
    /// number, a string, an array (a nested `.list`) or an object with string keys (a nested
    /// `.dictionary`). (Other kinds have no unambiguous JSON form; decode them as their own
    /// types.)
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .none
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([MixedValue].self) {
            self = .fromArray(value)
        } else if let value = try? container.decode([String: MixedValue].self) {
            self = .fromDictionary(value)
        } else {
            throw DecodingError.typeMismatch(MixedValue.self, DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "A MixedValue decodes from null, a Boolean, a number, a string, an array or an object."))
        }
    }
}

extension Persisted: Encodable where Value: Encodable {
    /// Encodes the property's value (as a single value): the stored value of a managed or
    /// frozen object, read like the property itself (on the object's thread or actor), or
    /// the value an unmanaged object holds.
    public func encode(to encoder: any Encoder) throws {
        // Through a single-value container, not `value.encode(to:)`: an encoder's own forms
        // for dates and data (JSONEncoder's strategies) apply only to values handed to it.
        var container = encoder.singleValueContainer()
        if column >= 0, let owner {
            // The object holding this wrapper: the caller is its own `encode(to:)`.
            let object = Unmanaged<Object>.fromOpaque(owner).takeUnretainedValue()
            try container.encode(Value._strataGet(object, Int(column)))
            return
        }
        switch storage {
        case .unmanaged(let value): try container.encode(value)
        case .lazyDefault, .recording: try container.encode(Value._strataDefault())
        }
    }
}

extension List: Encodable where Element: Encodable {
    /// Encodes the elements as an array.
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension MutableSet: Encodable where Element: Encodable {
    /// Encodes the members as an array.
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension Map: Encodable where Key == String, Value: Encodable {
    /// Encodes the entries as a dictionary (a JSON object), in the map's key order.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MapCodingKey.self)
        for entry in self { try container.encode(entry.value, forKey: MapCodingKey(entry.key)) }
    }
}

/// Encodes a collection's elements as an array.
private func encodeElements<S: Sequence>(_ elements: S, to encoder: any Encoder) throws where S.Element: Encodable {
    var container = encoder.unkeyedContainer()
    for element in elements { try container.encode(element) }
}

/// A map's key as a coding key.
private struct MapCodingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ key: String) { stringValue = key }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension LinkingObjects: Encodable where Element: Encodable {
    /// Encodes the linking objects as an array.
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension Results: Encodable where Element: Encodable {
    /// Encodes the results as an array, in their order.
    public func encode(to encoder: any Encoder) throws {
        try encodeElements(self, to: encoder)
    }
}

extension MixedValue: Encodable {
    /// Encodes the value as its own type does: `.none` as null, numbers, Booleans and strings
    /// as themselves (what `init(from:)` reads back), data, dates, ids and decimals as those
    /// types encode, and an object as the object, when its class is `Encodable` (otherwise
    /// this throws `EncodingError.invalidValue`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none: try container.encodeNil()
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .float(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .data(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .objectId(let value): try container.encode(value)
        case .decimal128(let value): try container.encode(value)
        case .uuid(let value): try container.encode(value)
        case .object(let object):
            guard let encodable = object as? any Encodable else {
                throw EncodingError.invalidValue(object, EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription: "A MixedValue holds a '\(type(of: object).className())', which is not Encodable; declare the class Encodable (or Codable)."))
            }
            try container.encode(encodable)
        case .list(let list):
            try container.encode(Array(list))
        case .dictionary(let map):
            try container.encode(Dictionary(uniqueKeysWithValues: map.asKeyValueSequence().map { ($0.key, $0.value) }))
        }
    }
}
