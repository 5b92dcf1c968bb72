import Foundation
import StrataStore

// Deriving a `Codable` type's columns without an instance: the type is decoded from
// placeholder values (0, "", false, the reference date, an empty Data, the zero UUID, one
// array element, one dictionary entry) by a decoder that records, for each key, what the type
// asked for. A `RawRepresentable` enum is decoded as its first case when it is `CaseIterable`
// (its placeholder raw value is rarely a case); a type whose `init(from:)` still rejects the
// placeholders makes the probe throw `RepositoryError.cannotDeriveSchema` naming the type and
// the property.

/// Learns the shape of a `Decodable` type by decoding it from placeholders.
enum SchemaProbe {
    /// The top-level fields of `type`, in the order its `init(from:)` decodes them.
    static func fields<V: Decodable>(of type: V.Type, typeName: String) throws(RepositoryError) -> [CodableField] {
        let recorder = ProbeRecorder(context: ProbeContext())
        recorder.context.path.append(ObjectIdentifier(type))
        do {
            _ = try V(from: ProbeDecoder(recorder: recorder, codingPath: []))
        } catch {
            throw failure(type, error)
        }
        guard !recorder.sawAllKeys, !recorder.fields.isEmpty else {
            throw .cannotDeriveSchema(type: "\(type)", property: "(type)", reason: "a repository stores structs with named properties; \(type) does not decode from a keyed container of fixed keys")
        }
        return recorder.fields.map { CodableField(name: $0.name, shape: $0.shape, owner: typeName) }
    }

    /// The shape of a value of `type` and a placeholder of it.
    static func shape<V: Decodable>(of type: V.Type, codingPath: [any CodingKey], context: ProbeContext) throws -> (CodableShape, V) {
        if let native = nativeKind(of: type), let placeholder = nativePlaceholder(type) {
            return (.scalar(native.kind, isURL: native.isURL), placeholder)
        }
        if let raw = type as? any RawRepresentable.Type, let native = nativeKind(of: raw._repositoryRawValueType),
           let first = (type as? any CaseIterable.Type)?._repositoryFirstCase as? V {
            return (.scalar(native.kind, isURL: native.isURL), first)
        }
        // A type that contains itself (through an array or an optional) would be probed
        // forever: its second appearance on the path stops the probe of that property.
        let id = ObjectIdentifier(type)
        if context.path.contains(id) && !context.isEmptying { throw ProbeRecursion() }
        context.path.append(id)
        defer { context.path.removeLast() }
        let recorder = ProbeRecorder(context: context)
        let value = try V(from: ProbeDecoder(recorder: recorder, codingPath: codingPath))
        if case .object(_, let fields) = recorder.shape { return (.object(typeName: String(describing: type), fields: fields), value) }
        return (recorder.shape, value)
    }

    /// A placeholder of `type` made with empty arrays and dictionaries and nil optionals, for a
    /// property whose type contains itself: what is recorded of it is thrown away.
    static func emptyPlaceholder<V: Decodable>(of type: V.Type, codingPath: [any CodingKey], context: ProbeContext) throws -> V {
        let wasEmptying = context.isEmptying
        context.isEmptying = true
        defer { context.isEmptying = wasEmptying }
        if let placeholder = nativePlaceholder(type) { return placeholder }
        if let first = (type as? any CaseIterable.Type)?._repositoryFirstCase as? V { return first }
        return try V(from: ProbeDecoder(recorder: ProbeRecorder(context: context), codingPath: codingPath))
    }

    /// A value of `type` decoded from placeholders with the top-level key `key` missing, as an
    /// item stored before the property existed would be: what `init(from:)` makes of a
    /// missing key (`decodeIfPresent(_:forKey:) ?? default`), or nil when it rejects one.
    static func valueMissing<V: Decodable>(key: String, of type: V.Type) -> V? {
        let context = ProbeContext()
        context.missingKey = key
        let recorder = ProbeRecorder(context: context)
        context.path.append(ObjectIdentifier(type))
        return try? V(from: ProbeDecoder(recorder: recorder, codingPath: []))
    }

    private static func failure(_ type: Any.Type, _ error: any Error) -> RepositoryError {
        if let error = error as? RepositoryError { return error }
        var path: [any CodingKey] = []
        var reason = "\(error)"
        if let error = error as? DecodingError {
            switch error {
            case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
                path = context.codingPath
                reason = context.debugDescription
            @unknown default:
                break
            }
        }
        return .cannotDeriveSchema(type: "\(type)", property: path.map(\.stringValue).joined(separator: "."),
                                   reason: "its init(from:) rejects placeholder values (\(reason)); make a RawRepresentable enum CaseIterable, or let init(from:) accept zero and empty values")
    }
}

/// What a whole probe shares: the types being decoded, outermost first.
final class ProbeContext {
    var path: [ObjectIdentifier] = []
    /// Whether arrays and dictionaries are empty and optionals nil (see
    /// `SchemaProbe.emptyPlaceholder`).
    var isEmptying = false
    /// A top-level key the probe answers as missing (see `SchemaProbe.valueMissing`).
    var missingKey: String?
}

/// Thrown when a type turns up inside itself.
struct ProbeRecursion: Error {}

/// What one probe decoder saw.
final class ProbeRecorder {
    let context: ProbeContext

    init(context: ProbeContext) { self.context = context }
    convenience init(sharing other: ProbeRecorder) { self.init(context: other.context) }

    /// The keyed fields decoded, in order.
    var fields: [(name: String, shape: CodableShape)] = []
    /// Whether the value asked for the container's keys (a dictionary does).
    var sawAllKeys = false
    /// Whether the value asked for a keyed container.
    var sawKeyed = false
    /// The element shape an unkeyed container saw (nil: not an array).
    var arrayElement: CodableShape?
    /// Whether the value asked for an unkeyed container.
    var sawUnkeyed = false
    /// What a single-value container saw.
    var single: CodableShape?
    /// Whether a single-value container asked whether the value is nil (an Optional does).
    var sawNil = false

    func record(_ name: String, _ shape: CodableShape) {
        if let index = fields.firstIndex(where: { $0.name == name }) {
            fields[index].shape = shape
        } else {
            fields.append((name, shape))
        }
    }

    /// The shape of the value the recorder watched.
    var shape: CodableShape {
        if sawKeyed {
            if sawAllKeys { return .map(fields.first?.shape ?? .other) }
            return .object(typeName: "", fields: fields.map { ProbedField(name: $0.name, shape: $0.shape) })
        }
        if sawUnkeyed { return .array(arrayElement ?? .other) }
        if let single { return sawNil ? .optional(single) : single }
        return .other
    }
}

/// A decoder that answers every question with a placeholder and records the question.
struct ProbeDecoder: Decoder {
    let recorder: ProbeRecorder
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        recorder.sawKeyed = true
        return KeyedDecodingContainer(ProbeKeyedContainer<Key>(recorder: recorder, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        recorder.sawUnkeyed = true
        return ProbeUnkeyedContainer(recorder: recorder, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValueContainer(recorder: recorder, codingPath: codingPath)
    }
}

/// The key a dictionary's probe sees, and the index key of an array's one element.
struct ProbeKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        self.stringValue = "\(intValue)"
        self.intValue = intValue
    }
}

struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: ProbeRecorder
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        recorder.sawAllKeys = true
        if recorder.context.isEmptying { return [] }
        return Key(stringValue: "key").map { [$0] } ?? []
    }

    /// Whether `key` is the top-level key the probe answers as missing.
    private func isMissing(_ key: Key) -> Bool {
        codingPath.isEmpty && recorder.context.missingKey == key.stringValue
    }

    func contains(_ key: Key) -> Bool { !isMissing(key) }
    func decodeNil(forKey key: Key) throws -> Bool { isMissing(key) }

    func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if isMissing(key) {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "the stored item has no value for this key"))
        }
        do {
            let (shape, value) = try SchemaProbe.shape(of: type, codingPath: codingPath + [key], context: recorder.context)
            recorder.record(key.stringValue, shape)
            return value
        } catch is ProbeRecursion {
            // A property whose type contains the type being probed: stored as JSON.
            recorder.record(key.stringValue, .other)
            return try SchemaProbe.emptyPlaceholder(of: type, codingPath: codingPath + [key], context: recorder.context)
        }
    }

    func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if recorder.context.isEmptying || isMissing(key) { return nil }
        do {
            let (shape, value) = try SchemaProbe.shape(of: type, codingPath: codingPath + [key], context: recorder.context)
            recorder.record(key.stringValue, .optional(shape))
            return value
        } catch is ProbeRecursion {
            recorder.record(key.stringValue, .optional(.other))
            return nil
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        recorder.record(key.stringValue, .other)
        return KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        recorder.record(key.stringValue, .other)
        return ProbeUnkeyedContainer(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath) }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        recorder.record(key.stringValue, .other)
        return ProbeDecoder(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath + [key])
    }
}

/// An array of one placeholder element.
struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
    let recorder: ProbeRecorder
    let codingPath: [any CodingKey]
    var count: Int? { recorder.context.isEmptying ? 0 : 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex >= (count ?? 0) }

    init(recorder: ProbeRecorder, codingPath: [any CodingKey]) {
        self.recorder = recorder
        self.codingPath = codingPath
    }

    mutating func decodeNil() throws -> Bool {
        if case .optional = recorder.arrayElement {} else { recorder.arrayElement = .optional(recorder.arrayElement ?? .other) }
        return false
    }

    mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let (shape, value) = try SchemaProbe.shape(of: type, codingPath: codingPath + [ProbeKey(intValue: currentIndex)], context: recorder.context)
        if case .optional = recorder.arrayElement { recorder.arrayElement = .optional(shape) } else { recorder.arrayElement = shape }
        currentIndex += 1
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        recorder.arrayElement = .other
        currentIndex += 1
        return KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        recorder.arrayElement = .other
        currentIndex += 1
        return ProbeUnkeyedContainer(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath)
    }

    mutating func superDecoder() throws -> any Decoder {
        recorder.arrayElement = .other
        currentIndex += 1
        return ProbeDecoder(recorder: ProbeRecorder(sharing: recorder), codingPath: codingPath)
    }
}

struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    let recorder: ProbeRecorder
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool {
        recorder.sawNil = true
        return recorder.context.isEmptying
    }

    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        let (shape, value) = try SchemaProbe.shape(of: type, codingPath: codingPath, context: recorder.context)
        recorder.single = shape
        return value
    }
}
