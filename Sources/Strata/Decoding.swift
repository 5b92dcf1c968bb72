// Decoding models with Swift's Codable: `final class Dog: Object, Decodable` decodes from JSON
// (or any decoder) into an unmanaged object, ready to `add`.
//
// Models are not `Encodable` (RealmSwift's are, through `Persisted`): a managed object's
// `@Persisted` wrapper holds its column, not its value, and the compiler's `encode(to:)` hands
// the wrapper alone to the encoder, so it cannot read the value. Encode a struct made from the
// object instead.

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
    /// number or a string. (Other kinds have no unambiguous JSON form; decode them as their
    /// own types.)
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
        } else {
            throw DecodingError.typeMismatch(MixedValue.self, DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "A MixedValue decodes from null, a Boolean, a number or a string."))
        }
    }
}
