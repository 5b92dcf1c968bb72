// How `strata dump` writes stored values: readably for people, or as JSON that any parser
// accepts (which has no NaN, no infinities and no bytes, so those become strings).

import Foundation
import StrataStore

enum DumpFormat {
    case text
    case json

    /// `value` of `property` of an object of `table` (which names a mixed value's linked type).
    func render(_ value: StoreValue, of property: PropertySchema, in table: TableAccess) -> String {
        switch (value, self) {
        case (.null, .text): "nil"
        case (.null, .json): "null"
        case (.bool(let v), _): "\(v)"
        case (.int(let v), _): "\(v)"
        case (.float(let v), _): number(v)
        case (.double(let v), _): number(v)
        case (.string(let v), _): Self.quoted(v)
        case (.data(let v), .text): "<\(v.count) byte\(plural(v.count))>"
        case (.data(let v), .json): Self.quoted(v.base64EncodedString())
        case (.date(let v), .text): Self.dateText(v)
        case (.date(let v), .json): Self.quoted(Self.dateText(v))
        case (.uuid(let v), .text): "UUID(\(v.uuidString))"
        case (.uuid(let v), .json): Self.quoted(v.uuidString)
        case (.objectId(let v), .text): "ObjectId(\(v))"
        case (.objectId(let v), .json): Self.quoted(v.description)
        case (.decimal128(let v), .text): "\(v)"
        case (.decimal128(let v), .json): Self.quoted(v.description)
        case (.link(let key), .text): "\(property.objectType ?? "?")#\(key.rawValue)"
        case (.link(let key), .json): Self.quoted("\(property.objectType ?? "?")#\(key.rawValue)")
        case (.typedLink(let id, let key), .text): "\(table.sessionTable(id: id)?.schema.name ?? "table \(id)")#\(key.rawValue)"
        case (.typedLink(let id, let key), .json): Self.quoted("\(table.sessionTable(id: id)?.schema.name ?? "table \(id)")#\(key.rawValue)")
        case (.mixedList(let elements), _): render(list: elements, of: property, in: table)
        case (.mixedDictionary(let entries), _): render(nested: entries, of: property, in: table)
        }
    }

    func render(list: [StoreValue], of property: PropertySchema, in table: TableAccess) -> String {
        "[" + list.map { render($0, of: property, in: table) }.joined(separator: ", ") + "]"
    }

    /// A map as `{"key": value, …}`, in key order (JSON and text alike).
    func render(map: (keys: [String], values: [StoreValue]), of property: PropertySchema, in table: TableAccess) -> String {
        "{" + zip(map.keys, map.values).map { Self.quoted($0) + ": " + render($1, of: property, in: table) }.joined(separator: ", ") + "}"
    }

    /// A dictionary nested in a mixed value, as a map (in key order).
    private func render(nested entries: [String: StoreValue], of property: PropertySchema, in table: TableAccess) -> String {
        let sorted = entries.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        return render(map: (sorted.map(\.key), sorted.map(\.value)), of: property, in: table)
    }

    private func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F) -> String {
        guard self == .json, !value.isFinite else { return value.description }
        return value.isNaN ? "\"NaN\"" : value < 0 ? "\"-Infinity\"" : "\"Infinity\""
    }

    /// A string in double quotes with JSON's escapes, so that every object stays on one line.
    static func quoted(_ string: String) -> String {
        var result = "\""
        result.reserveCapacity(string.utf8.count + 2)
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// ISO 8601 in UTC, with fractions of a second only when there are some. ISO 8601 has four
    /// digits for the year; dates outside years 0…9999 (and NaN) are written as the stored
    /// number: seconds since 2001-01-01.
    static func dateText(_ date: Date) -> String {
        let seconds = date.timeIntervalSinceReferenceDate
        guard seconds.isFinite, seconds >= -63_145_526_400, seconds < 252_423_993_600 else {
            return "Date(timeIntervalSinceReferenceDate: \(seconds))"
        }
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: seconds != seconds.rounded(.down)))
    }
}
