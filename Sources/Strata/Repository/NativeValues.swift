import Foundation
import StrataStore

// The Swift types the repository stores natively (one column each), and how their values go
// into and come out of the store's loose values (`dynamicCreate` and `value(forKey:)`).

/// The column kind of a natively stored type, or nil for any other type.
func nativeKind(of type: Any.Type) -> (kind: PropertyKind, isURL: Bool)? {
    switch type {
    case is Bool.Type: (.bool, false)
    case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
         is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type: (.int, false)
    case is Float.Type: (.float, false)
    case is Double.Type: (.double, false)
    case is String.Type: (.string, false)
    case is Date.Type: (.date, false)
    case is Data.Type: (.data, false)
    case is UUID.Type: (.uuid, false)
    case is ObjectId.Type: (.objectId, false)
    case is Decimal.Type, is Decimal128.Type: (.decimal128, false)
    case is URL.Type: (.string, true)
    default: nil
    }
}

/// A placeholder value of a natively stored type (for the schema probe).
func nativePlaceholder<V>(_ type: V.Type) -> V? {
    let value: Any? = switch type {
    case is Bool.Type: false
    case is Int.Type: 0 as Int
    case is Int8.Type: 0 as Int8
    case is Int16.Type: 0 as Int16
    case is Int32.Type: 0 as Int32
    case is Int64.Type: 0 as Int64
    case is UInt.Type: 0 as UInt
    case is UInt8.Type: 0 as UInt8
    case is UInt16.Type: 0 as UInt16
    case is UInt32.Type: 0 as UInt32
    case is UInt64.Type: 0 as UInt64
    case is Float.Type: 0 as Float
    case is Double.Type: 0 as Double
    case is String.Type: ""
    case is Date.Type: Date(timeIntervalSinceReferenceDate: 0)
    case is Data.Type: Data()
    case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    case is ObjectId.Type: ObjectId(timestamp: Date(timeIntervalSince1970: 0), machineId: 0, processId: 0)
    case is Decimal.Type: Decimal(0)
    case is Decimal128.Type: Decimal128()
    case is URL.Type: URL(string: "about:blank")
    default: nil
    }
    return value as? V
}

/// A natively stored value as the store takes it: integers as `Int`, URLs as their string,
/// `Decimal` as `Decimal128`. Nil when the value does not fit (an unsigned integer above
/// `Int.max`, a `Decimal` Decimal128 cannot hold).
func storedForm(of value: Any) -> Any? {
    switch value {
    case let v as Int: v
    case let v as Int8: Int(v)
    case let v as Int16: Int(v)
    case let v as Int32: Int(v)
    case let v as Int64: Int(v)
    case let v as UInt: Int(exactly: v)
    case let v as UInt8: Int(v)
    case let v as UInt16: Int(v)
    case let v as UInt32: Int(v)
    case let v as UInt64: Int(exactly: v)
    case let v as URL: v.absoluteString
    case let v as Decimal: try? Decimal128(string: v.description)
    default: value
    }
}

/// A stored value read back as `type` (the inverse of `storedForm(of:)`), or nil when it does
/// not fit.
func nativeValue<V>(_ stored: Any, as type: V.Type) -> V? {
    if let same = stored as? V { return same }
    let converted: Any? = switch type {
    case is Int8.Type: (stored as? Int).flatMap { Int8(exactly: $0) }
    case is Int16.Type: (stored as? Int).flatMap { Int16(exactly: $0) }
    case is Int32.Type: (stored as? Int).flatMap { Int32(exactly: $0) }
    case is Int64.Type: (stored as? Int).map { Int64($0) }
    case is UInt.Type: (stored as? Int).flatMap { UInt(exactly: $0) }
    case is UInt8.Type: (stored as? Int).flatMap { UInt8(exactly: $0) }
    case is UInt16.Type: (stored as? Int).flatMap { UInt16(exactly: $0) }
    case is UInt32.Type: (stored as? Int).flatMap { UInt32(exactly: $0) }
    case is UInt64.Type: (stored as? Int).flatMap { UInt64(exactly: $0) }
    case is URL.Type: (stored as? String).flatMap { URL(string: $0) }
    case is Decimal.Type: (stored as? Decimal128).flatMap { Decimal(string: $0.description) }
    default: nil
    }
    return converted as? V
}

extension RawRepresentable {
    /// The type of the raw value (for the schema probe, from an existential metatype).
    static var _repositoryRawValueType: Any.Type { RawValue.self }
}

extension CaseIterable {
    /// The first case, if any (the schema probe's placeholder for an enum).
    static var _repositoryFirstCase: Any? { allCases.first }
}
