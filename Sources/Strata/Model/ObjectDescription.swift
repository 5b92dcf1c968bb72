// How objects and the values of their properties print (`description`), in the shape
// RealmSwift prints them, so that logs and tests written against RealmSwift's output read the
// same: `Type {` then one `\tname = value;` line per property, then `}`; nested objects and
// collections in full, indented one tab per level; values as Objective-C prints them (`0`/`1`
// for booleans, strings unquoted, `(null)` for nil, data as `<hex>`, enums as their raw
// values). Objects and collections more than `maxDepth` levels down print as
// `<Maximum depth exceeded>`, which bounds the text even when objects link to each other in
// a cycle.

import Foundation
import StrataStore

/// Writes the `description` of objects and of the values inside them.
enum ObjectDescription {
    /// How many levels of objects and collections a description shows.
    static let maxDepth = 5

    /// What an object or collection prints instead of itself below `maxDepth` levels.
    static let depthExceeded = "<Maximum depth exceeded>"

    /// The levels still available to the object or collection being described in this task or
    /// thread; `maxDepth` outside any description.
    @TaskLocal static var remainingDepth = maxDepth

    /// Runs `body` (which describes one object or collection) one level down: the values it
    /// describes get one level less.
    static func oneLevelDown<T>(_ body: () -> T) -> T {
        $remainingDepth.withValue(remainingDepth - 1, operation: body)
    }

    /// `text` with every line after the first indented by one tab, to nest it in an entry.
    static func indented(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n\t")
    }

    /// An identity for a collection's header, `0x…`, as RealmSwift prints the address.
    static func address(_ object: AnyObject?) -> String {
        guard let object else { return "0x0" }
        return "0x" + String(UInt(bitPattern: ObjectIdentifier(object).hashValue), radix: 16)
    }

    /// A property's or element's value as RealmSwift prints it. Objects and collections
    /// describe themselves at the current depth (a container calls this inside
    /// `oneLevelDown`), each printing `depthExceeded` when no level is left.
    static func value(_ value: Any) -> String {
        guard let value = unwrapAny(value), !(value is NSNull) else { return "(null)" }
        switch value {
        case let mixed as MixedValue: return mixedValue(mixed)
        case let bool as Bool: return bool ? "1" : "0"
        case let string as String: return string
        case let data as Data: return hexBytes(data)
        case let decimal as Decimal128:
            // RealmSwift's decimal form has no plus sign in the exponent (`1.23E6`).
            return decimal.description.replacingOccurrences(of: "E+", with: "E")
        case let object as Object: return object.description
        case let raw as any RawRepresentable: return "\(raw.rawValue)"
        default: return "\(value)"
        }
    }

    /// A mixed value prints as the value it holds.
    private static func mixedValue(_ mixed: MixedValue) -> String {
        switch mixed {
        case .none: "(null)"
        case .int(let v): "\(v)"
        case .bool(let v): v ? "1" : "0"
        case .float(let v): "\(v)"
        case .double(let v): "\(v)"
        case .string(let v): v
        case .data(let v): hexBytes(v)
        case .date(let v): "\(v)"
        case .object(let v): value(v)
        case .objectId(let v): "\(v)"
        case .decimal128(let v): value(v)
        case .uuid(let v): v.uuidString
        case .list(let v): v.description
        case .dictionary(let v): v.description
        }
    }

    /// Bytes as Foundation's Objective-C data prints them: hex in groups of four, `<6162 …>`.
    private static func hexBytes(_ data: Data) -> String {
        var groups: [String] = []
        var group = ""
        for (index, byte) in data.enumerated() {
            let hex = String(byte, radix: 16)
            group += hex.count == 1 ? "0" + hex : hex
            if index % 4 == 3 { groups.append(group); group = "" }
        }
        if !group.isEmpty { groups.append(group) }
        return "<" + groups.joined(separator: " ") + ">"
    }

    /// How a stored kind is named in a collection's header (`List<string>`): a class name
    /// for objects, else the kind as RealmSwift names it.
    static func typeName(kind: PropertyKind, objectType: String?) -> String {
        if let objectType { return objectType }
        switch kind {
        case .bool: return "bool"
        case .int: return "int"
        case .float: return "float"
        case .double: return "double"
        case .string: return "string"
        case .data: return "data"
        case .date: return "date"
        case .uuid: return "uuid"
        case .objectId: return "object id"
        case .decimal128: return "decimal128"
        case .link: return "object"
        case .mixed: return "mixed"
        }
    }
}
