// The types a @Persisted property can have, and how each is read from and written to the
// store. The underscored protocols are implementation details that must be public for the
// property wrapper's inlinable accessor; use the types, not the protocols.

public import Foundation
public import StrataStore

/// How a property type is stored (a schema fragment).
public struct _PropertyShape: Sendable {
    public var kind: PropertyKind
    public var isOptional: Bool
    public var isList: Bool
    public var isSet: Bool
    public var isMap: Bool
    public var objectType: String?
    /// The class `objectType` names, when the type knows it (a custom-persistable type stored
    /// as an embedded object), for finding the classes a model links to.
    public var linkTarget: Object.Type?

    public init(kind: PropertyKind, isOptional: Bool = false, isList: Bool = false, isSet: Bool = false, isMap: Bool = false,
                objectType: String? = nil, linkTarget: Object.Type? = nil) {
        self.kind = kind
        self.isOptional = isOptional
        self.isList = isList || isSet || isMap
        self.isSet = isSet
        self.isMap = isMap
        self.objectType = objectType
        self.linkTarget = linkTarget
    }
}

/// Types that may be stored as a link: they name the class (nil for values).
public protocol _StrataLinkTyped {
    /// The class a value of this type is stored as a link to; nil for values.
    static var _strataLinkType: Object.Type? { get }
    /// A new value: the default of a value type, a new unmanaged object for a model class.
    static func _strataNewValue() -> Self
}

extension _StrataLinkTyped {
    public static var _strataLinkType: Object.Type? { nil }
}

/// A property's stored form: one value, a list's elements, or a map's keys (in order) and
/// values.
public enum _StoredProperty {
    case value(StoreValue)
    case list([StoreValue])
    case map(keys: [String], values: [StoreValue])
}

/// A type a `@Persisted` property can have: Bool, the integer types, Float, Double, String,
/// Data, Date, UUID, ObjectId, Decimal128, `PersistableEnum` enums, optionals of these,
/// optional links to objects (`Person?`) and `List<T>`.
public protocol _Persistable {
    /// How the property is stored.
    static var _strataShape: _PropertyShape { get }
    /// The value of a property declared without an initial value.
    static func _strataDefault() -> Self
    /// Reads a managed object's property.
    static func _strataGet(_ object: Object, _ column: Int) -> Self
    /// Writes a managed object's property (inside a write transaction).
    static func _strataSet(_ object: Object, _ column: Int, _ value: Self)
    /// The stored form of an unmanaged value; objects it links to are added to `database`.
    func _strataStored(_ database: Database?) -> _StoredProperty
    /// The stored form of the unmanaged value in the `Persisted<Self>` wrapper at `wrapper`,
    /// which first takes the default value if it has none (used when an object is added).
    static func _strataUnmanagedStored(at wrapper: UnsafeMutableRawPointer, _ database: Database?) -> _StoredProperty
    /// A value from the loosely typed input of `create(_:value:)`, `init(value:)` and
    /// `setValue(_:forKey:)`; nil when `value` does not fit.
    static func _strataFrom(any value: Any, _ database: Database?) -> Self?
    /// The value as `Any`, for key-value access.
    var _strataAny: Any { get }
    /// What a key-path recorder returns for this property.
    static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> Self
}

extension _Persistable {
    // Each conformance gets its own copy of this, specialised for its concrete type.
    public static func _strataUnmanagedStored(at wrapper: UnsafeMutableRawPointer, _ database: Database?) -> _StoredProperty {
        let pointer = wrapper.assumingMemoryBound(to: Persisted<Self>.self)
        switch pointer.pointee.storage {
        case .unmanaged(let value):
            return value._strataStored(database)
        case .lazyDefault, .recording:
            let value = _strataDefault()
            pointer.pointee.storage = .unmanaged(value)
            return value._strataStored(database)
        }
    }
}

/// A type that can be wrapped in an optional property or be a list element.
public protocol _PersistableInsideOptional: _StrataLinkTyped {
    /// How the value is stored.
    static var _strataKind: PropertyKind { get }
    /// For links: the target type's name.
    static var _strataObjectType: String? { get }
    /// The stored form (nil is handled by the caller).
    func _strataStore(_ database: Database?) -> StoreValue
    /// The value from its stored form; nil for `.null`.
    static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self?
    /// Loosely typed input; nil when it does not fit.
    static func _strataConvert(_ value: Any, _ database: Database?) -> Self?
    /// A value a key-path recorder can return.
    static func _strataRecordingInside(_ recorder: KeyPathRecorder) -> Self
}

extension _PersistableInsideOptional {
    public static var _strataObjectType: String? { nil }
}

/// Plain values (not links): stored directly in columns.
public protocol _PersistableScalar: _Persistable, _PersistableInsideOptional, CollectionValue, MapValue {
    /// The value for a non-optional property declared without an initial value.
    static var _strataZero: Self { get }
}

extension _PersistableScalar {
    public static var _strataShape: _PropertyShape { _PropertyShape(kind: _strataKind) }
    public static func _strataDefault() -> Self { _strataZero }
    public static func _strataNewValue() -> Self { _strataZero }
    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        _strataLoad(object._storedValue(column), object._database) ?? _strataZero
    }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: Self) {
        object._setStored(.value(value._strataStore(object._database)), column)
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty { .value(_strataStore(database)) }
    public static func _strataFrom(any value: Any, _ database: Database?) -> Self? { _strataConvert(value, database) }
    public var _strataAny: Any { self }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> Self { _strataZero }
    public static func _strataRecordingInside(_ recorder: KeyPathRecorder) -> Self { _strataZero }
    public static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (_strataKind, false, nil) }
    public func _strataElement(_ database: Database?) -> StoreValue { _strataStore(database) }
    public static func _strataElement(from value: StoreValue, _ database: Database?) -> Self { _strataLoad(value, database) ?? _strataZero }
    public static func _strataElement(any value: Any, _ database: Database?) -> Self? { _strataConvert(value, database) }
}

// MARK: Optional

extension Optional: _Persistable where Wrapped: _PersistableInsideOptional {
    public static var _strataShape: _PropertyShape {
        _PropertyShape(kind: Wrapped._strataKind, isOptional: true, objectType: Wrapped._strataObjectType, linkTarget: Wrapped._strataLinkType)
    }
    public static func _strataDefault() -> Self { nil }
    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        Wrapped._strataLoad(object._storedValue(column), object._database)
    }
    public static func _strataSet(_ object: Object, _ column: Int, _ value: Self) {
        object._setStored(.value(value.map { $0._strataStore(object._database) } ?? .null), column)
    }
    public func _strataStored(_ database: Database?) -> _StoredProperty { .value(self.map { $0._strataStore(database) } ?? .null) }
    public static func _strataFrom(any value: Any, _ database: Database?) -> Self? {
        if isNil(value) { return .some(nil) }
        return Wrapped._strataConvert(value, database).map { .some($0) }
    }
    public var _strataAny: Any { self as Any }
    public static func _strataRecordingValue(_ recorder: KeyPathRecorder) -> Self {
        // A link records through a probe object; a value's key path ends here, and nil needs
        // no conversion (a failable custom type may have none for its stored default).
        Wrapped.self is Object.Type ? Wrapped._strataRecordingInside(recorder) : nil
    }
}

extension Optional: _StrataLinkTyped where Wrapped: _StrataLinkTyped {
    public static var _strataLinkType: Object.Type? { Wrapped._strataLinkType }
    public static func _strataNewValue() -> Self { nil }
}

extension Optional: _PersistableInsideOptional where Wrapped: _PersistableScalar {
    public static var _strataKind: PropertyKind { Wrapped._strataKind }
    public static var _strataObjectType: String? { Wrapped._strataObjectType }
    public func _strataStore(_ database: Database?) -> StoreValue { self.map { $0._strataStore(database) } ?? .null }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        value.isNull ? .some(nil) : Wrapped._strataLoad(value, database).map { .some($0) }
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        if isNil(value) { return .some(nil) }
        return Wrapped._strataConvert(value, database).map { .some($0) }
    }
    public static func _strataRecordingInside(_ recorder: KeyPathRecorder) -> Self { nil }
}

extension Optional: CollectionValue where Wrapped: _PersistableScalar {
    public static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (Wrapped._strataKind, true, nil) }
    public func _strataElement(_ database: Database?) -> StoreValue { self.map { $0._strataStore(database) } ?? .null }
    public static func _strataElement(from value: StoreValue, _ database: Database?) -> Self { Wrapped._strataLoad(value, database) }
    public static func _strataElement(any value: Any, _ database: Database?) -> Self? {
        if isNil(value) { return .some(nil) }
        return Wrapped._strataConvert(value, database).map { .some($0) }
    }
}

/// Optionals of any type, seen through `Any`.
protocol AnyOptional {
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    var wrappedAny: Any? { map { $0 as Any } }
}

/// Whether `value` is nil (wrapped in `Any`) or NSNull.
func isNil(_ value: Any) -> Bool {
    if value is NSNull { return true }
    return unwrapAny(value) == nil
}

/// Unwraps a value that may be an optional inside `Any`.
func unwrapAny(_ value: Any) -> Any? {
    guard let optional = value as? any AnyOptional else { return value }
    return optional.wrappedAny.flatMap(unwrapAny)
}

// MARK: Scalars

extension Bool: _PersistableScalar {
    public static var _strataKind: PropertyKind { .bool }
    public static var _strataZero: Bool { false }
    public static func _strataGet(_ object: Object, _ column: Int) -> Bool {
        let (chunk, row) = object._chunk(column)
        return chunk.bool(row)
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .bool(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Bool? {
        if case .bool(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Bool? {
        switch unwrapAny(value) {
        case let v as Bool: v
        case let v as Int where v == 0 || v == 1: v == 1
        default: nil
        }
    }
}

/// The integer types share one storage: a 64-bit column.
public protocol _PersistableInteger: _PersistableScalar, FixedWidthInteger {}

extension _PersistableInteger {
    public static var _strataKind: PropertyKind { .int }
    public static var _strataZero: Self { 0 }
    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        let (chunk, row) = object._chunk(column)
        return Self(truncatingIfNeeded: chunk.int(row))
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .int(Int64(self)) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        if case .int(let v) = value { return Self(truncatingIfNeeded: v) }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        if let v = value as? Self { return v }
        return switch unwrapAny(value) {
        case let v as Int: Self(exactly: v)
        case let v as Int64: Self(exactly: v)
        case let v as Int32: Self(exactly: v)
        case let v as Int16: Self(exactly: v)
        case let v as Int8: Self(exactly: v)
        case let v as UInt: Self(exactly: v)
        case let v as Double: Self(exactly: v)
        default: nil
        }
    }
}

extension Int: _PersistableInteger {}
extension Int8: _PersistableInteger {}
extension Int16: _PersistableInteger {}
extension Int32: _PersistableInteger {}
extension Int64: _PersistableInteger {}

extension Float: _PersistableScalar {
    public static var _strataKind: PropertyKind { .float }
    public static var _strataZero: Float { 0 }
    public static func _strataGet(_ object: Object, _ column: Int) -> Float {
        let (chunk, row) = object._chunk(column)
        return chunk.float(row)
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .float(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Float? {
        if case .float(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Float? {
        switch unwrapAny(value) {
        case let v as Float: v
        case let v as Double: Float(v)
        case let v as Int: Float(v)
        default: nil
        }
    }
}

extension Double: _PersistableScalar {
    public static var _strataKind: PropertyKind { .double }
    public static var _strataZero: Double { 0 }
    public static func _strataGet(_ object: Object, _ column: Int) -> Double {
        let (chunk, row) = object._chunk(column)
        return chunk.double(row)
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .double(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Double? {
        if case .double(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Double? {
        switch unwrapAny(value) {
        case let v as Double: v
        case let v as Float: Double(v)
        case let v as Int: Double(v)
        default: nil
        }
    }
}

extension String: _PersistableScalar {
    public static var _strataKind: PropertyKind { .string }
    public static var _strataZero: String { "" }
    public static func _strataGet(_ object: Object, _ column: Int) -> String {
        let (chunk, row) = object._chunk(column)
        return chunk.string(row)
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .string(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> String? {
        if case .string(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> String? {
        if let v = value as? String { return v }
        return switch unwrapAny(value) {
        case let v as String: v
        case let v as Substring: String(v)
        default: nil
        }
    }
}

extension Data: _PersistableScalar {
    public static var _strataKind: PropertyKind { .data }
    public static var _strataZero: Data { Data() }
    public func _strataStore(_ database: Database?) -> StoreValue { .data(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Data? {
        if case .data(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Data? {
        switch unwrapAny(value) {
        case let v as Data: v
        case let v as [UInt8]: Data(v)
        default: nil
        }
    }
}

extension Date: _PersistableScalar {
    public static var _strataKind: PropertyKind { .date }
    public static var _strataZero: Date { Date(timeIntervalSince1970: 0) }
    public static func _strataGet(_ object: Object, _ column: Int) -> Date {
        let (chunk, row) = object._chunk(column)
        return Date(timeIntervalSinceReferenceDate: chunk.double(row))
    }
    public func _strataStore(_ database: Database?) -> StoreValue { .date(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Date? {
        if case .date(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Date? { unwrapAny(value) as? Date }
}

extension UUID: _PersistableScalar {
    public static var _strataKind: PropertyKind { .uuid }
    /// A new random UUID, as RealmSwift does for UUID properties without an initial value.
    public static var _strataZero: UUID { UUID() }
    public func _strataStore(_ database: Database?) -> StoreValue { .uuid(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> UUID? {
        if case .uuid(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> UUID? {
        switch unwrapAny(value) {
        case let v as UUID: v
        case let v as String: UUID(uuidString: v)
        default: nil
        }
    }
}

extension ObjectId: _PersistableScalar {
    public static var _strataKind: PropertyKind { .objectId }
    /// A newly generated id, as RealmSwift does for ObjectId properties without an initial value.
    public static var _strataZero: ObjectId { ObjectId.generate() }
    public func _strataStore(_ database: Database?) -> StoreValue { .objectId(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> ObjectId? {
        if case .objectId(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> ObjectId? {
        if let v = value as? ObjectId { return v }
        return switch unwrapAny(value) {
        case let v as ObjectId: v
        case let v as String: try? ObjectId(string: v)
        default: nil
        }
    }
}

extension Decimal128: _PersistableScalar {
    public static var _strataKind: PropertyKind { .decimal128 }
    public static var _strataZero: Decimal128 { Decimal128() }
    public func _strataStore(_ database: Database?) -> StoreValue { .decimal128(self) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Decimal128? {
        if case .decimal128(let v) = value { return v }
        return nil
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Decimal128? {
        switch unwrapAny(value) {
        case let v as Decimal128: v
        case let v as Int: Decimal128(v)
        case let v as Double: Decimal128(v)
        case let v as String: try? Decimal128(string: v)
        default: nil
        }
    }
}
