package import Foundation

// Writing values and key paths back in the string-predicate syntax, so that a predicate's
// `description` parses back (with `PredicateParser`) to an equal predicate.

/// The predicate-format spelling of key paths and values.
package enum PredicateFormat {
    /// One key path component: as is when it is a plain name, `#name` when it spells a keyword.
    /// A name that is not an identifier at all (spaces, dots) is written as is and does not
    /// parse back: pass such names with `%K`.
    package static func name(_ component: String) -> String {
        if predicateKeywords.contains(component.lowercased()) { return "#" + component }
        return component
    }

    /// A key path's components joined with dots (a map's `[key]` follows its map directly).
    package static func keyPath(_ components: [String]) -> String {
        keyPath(components, after: "")
    }

    /// The components as they continue a path already written as `start`: each after a dot,
    /// but a map's `[key]` directly. Returns only the continuation.
    package static func keyPath(_ components: [String], after start: String) -> String {
        var text = ""
        var empty = start.isEmpty
        for component in components {
            if MixedPathComponent.isMixedOnly(component) {
                text += MixedPathComponent(component).spelling
            } else if let access = MapPathComponent(component), case .key = access {
                text += access.spelling
            } else {
                if !empty { text += "." }
                text += MapPathComponent(component) == nil ? name(component) : component
            }
            empty = false
        }
        return text
    }

    /// A string literal in double quotes, with `\\`, `\"` and control characters escaped.
    package static func string(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// A date as `Tseconds:nanoseconds` since 1970 (both with the same sign).
    package static func date(_ value: Date) -> String {
        guard var (seconds, nanos) = PredicateDates.components(value) else {
            return "T<out of range: \(value.timeIntervalSinceReferenceDate)>"
        }
        if seconds < 0 && nanos > 0 {
            seconds += 1
            nanos -= 1_000_000_000
        }
        return "T\(seconds):\(nanos)"
    }

    /// A value as a literal. Floats are written as doubles and Decimal128s as numbers, so they
    /// parse back as `.double` (or `.int`); links have no literal (`link#3` does not parse).
    package static func literal(_ value: StoreValue) -> String {
        switch value {
        case .null: "nil"
        case .bool(let v): v ? "true" : "false"
        case .int(let v): "\(v)"
        case .float(let v): "\(Double(v))"
        case .double(let v): "\(v)"
        case .string(let v): string(v)
        case .data(let v): "B64\"" + v.base64EncodedString() + "\""
        case .date(let v): date(v)
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .objectId(let v): "oid(\(v.stringValue))"
        case .decimal128(let v): "\(v)"
        case .link(let v): "link\(v)"
        case .typedLink(let table, let key): "link(table \(table))\(key)"
        case .mixedList(let elements): "{" + elements.map(literal).joined(separator: ", ") + "}"
        case .mixedDictionary: value.description
        }
    }
}
