// A fast reader for the stored schema's JSON (the form `JSONEncoder` writes for `Schema`), so
// that opening a file does not pay for `JSONDecoder`'s generic machinery. It accepts only the
// plain shapes that encoding produces — objects, arrays, integers, booleans, null and strings
// without escapes — and answers nil for anything else; the caller then decodes with
// `JSONDecoder`, which also reports errors.

enum SchemaJSON {
    /// The schema `bytes` encode, or nil when they are not in the plain form this reader knows.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Schema? {
        var parser = Parser(bytes: bytes)
        guard let value = parser.parseDocument() else { return nil }
        return schema(value)
    }

    indirect enum Value {
        case object([(String, Value)])
        case array([Value])
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null

        subscript(key: String) -> Value? {
            guard case .object(let members) = self else { return nil }
            return members.first { $0.0 == key }?.1
        }

        var string: String? { if case .string(let v) = self { v } else { nil } }
        var integer: Int64? { if case .integer(let v) = self { v } else { nil } }
        var bool: Bool? { if case .bool(let v) = self { v } else { nil } }
        var array: [Value]? { if case .array(let v) = self { v } else { nil } }
        var isObject: Bool { if case .object = self { true } else { false } }
    }

    private static let schemaKeys: Set<String> = ["objectSchemas"]
    private static let objectKeys: Set<String> = ["name", "properties", "tableID", "isEmbedded"]
    private static let propertyKeys: Set<String> = ["name", "kind", "isOptional", "isList", "isSet", "isMap", "isPrimaryKey", "isIndexed", "objectType", "columnID"]

    /// Whether `value` is an object with only keys from `allowed` and no key twice.
    private static func hasOnly(_ value: Value, _ allowed: Set<String>) -> Bool {
        guard case .object(let members) = value else { return false }
        var seen: Set<String> = []
        for (key, _) in members {
            guard allowed.contains(key), seen.insert(key).inserted else { return false }
        }
        return true
    }

    private static func schema(_ value: Value) -> Schema? {
        guard hasOnly(value, schemaKeys), let objects = value["objectSchemas"]?.array else { return nil }
        var result: [ObjectSchema] = []
        result.reserveCapacity(objects.count)
        for object in objects {
            guard hasOnly(object, objectKeys), let name = object["name"]?.string,
                  let properties = object["properties"]?.array,
                  let tableID = object["tableID"]?.integer, let table = UInt32(exactly: tableID) else { return nil }
            let isEmbedded: Bool
            switch object["isEmbedded"] {
            case nil: isEmbedded = false
            case .bool(let value)?: isEmbedded = value
            default: return nil
            }
            var decoded: [PropertySchema] = []
            decoded.reserveCapacity(properties.count)
            for property in properties {
                guard hasOnly(property, propertyKeys), let name = property["name"]?.string,
                      let rawKind = property["kind"]?.integer, let kindByte = UInt8(exactly: rawKind),
                      let kind = PropertyKind(rawValue: kindByte),
                      let isOptional = property["isOptional"]?.bool, let isList = property["isList"]?.bool,
                      let isPrimaryKey = property["isPrimaryKey"]?.bool, let isIndexed = property["isIndexed"]?.bool,
                      let rawColumn = property["columnID"]?.integer, let column = UInt16(exactly: rawColumn) else { return nil }
                let isSet: Bool
                switch property["isSet"] {
                case nil: isSet = false
                case .bool(let value)?: isSet = value
                default: return nil
                }
                let isMap: Bool
                switch property["isMap"] {
                case nil: isMap = false
                case .bool(let value)?: isMap = value
                default: return nil
                }
                guard !isSet || isList, !isMap || isList else { return nil }
                let objectType: String?
                switch property["objectType"] {
                case nil, .null?: objectType = nil
                case .string(let target)?: objectType = target
                default: return nil
                }
                decoded.append(PropertySchema(name: name, kind: kind, isOptional: isOptional, isList: isList, isSet: isSet,
                                              isMap: isMap, isPrimaryKey: isPrimaryKey, isIndexed: isIndexed, objectType: objectType,
                                              columnID: column))
            }
            result.append(ObjectSchema(name: name, properties: decoded, tableID: table, isEmbedded: isEmbedded))
        }
        return Schema(result)
    }

    struct Parser {
        let bytes: UnsafeRawBufferPointer
        var position = 0
        /// Nesting limit: the schema's JSON is three levels deep; anything much deeper is not one.
        var depth = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        mutating func parseDocument() -> Value? {
            guard let value = parseValue() else { return nil }
            skipSpace()
            return position == bytes.count ? value : nil
        }

        private mutating func skipSpace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        private mutating func consume(_ byte: UInt8) -> Bool {
            skipSpace()
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - position >= count else { return false }
            for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
            position += count
            return true
        }

        mutating func parseValue() -> Value? {
            skipSpace()
            guard position < bytes.count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                guard depth < 16 else { return nil }
                depth += 1
                defer { depth -= 1 }
                position += 1
                var members: [(String, Value)] = []
                if consume(UInt8(ascii: "}")) { return .object(members) }
                repeat {
                    skipSpace()
                    guard let key = parseString(), consume(UInt8(ascii: ":")), let value = parseValue() else { return nil }
                    members.append((key, value))
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "}")) ? .object(members) : nil
            case UInt8(ascii: "["):
                guard depth < 16 else { return nil }
                depth += 1
                defer { depth -= 1 }
                position += 1
                var elements: [Value] = []
                if consume(UInt8(ascii: "]")) { return .array(elements) }
                repeat {
                    guard let value = parseValue() else { return nil }
                    elements.append(value)
                } while consume(UInt8(ascii: ","))
                return consume(UInt8(ascii: "]")) ? .array(elements) : nil
            case UInt8(ascii: "\""):
                return parseString().map { .string($0) }
            case UInt8(ascii: "t"):
                return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"):
                return literal("false") ? .bool(false) : nil
            case UInt8(ascii: "n"):
                return literal("null") ? .null : nil
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return parseInteger().map { .integer($0) }
            default:
                return nil
            }
        }

        /// A string without escapes (nil for one with any: the caller falls back).
        private mutating func parseString() -> String? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
            let start = position + 1
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") { break }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            position = end + 1
            // Invalid UTF-8 is not repaired here: the fallback reports it.
            return String(validating: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }

        /// An integer without fraction or exponent, as `JSONEncoder` writes integers.
        private mutating func parseInteger() -> Int64? {
            var negative = false
            if bytes[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            var value: Int64 = 0
            var digits = 0
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                let digit = Int64(bytes[position] - UInt8(ascii: "0"))
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(digit)
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                digits += 1
                position += 1
            }
            guard digits > 0 else { return nil }
            if position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
            }
            return negative ? -value : value
        }
    }
}
