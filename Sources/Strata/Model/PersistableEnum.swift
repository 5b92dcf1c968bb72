public import StrataStore

/// An enum stored through its raw value. Declare it with a persistable raw type:
///
/// ```swift
/// enum Status: String, PersistableEnum { case open, done }
/// class Task: Object { @Persisted var status: Status }   // defaults to the first case
/// ```
public protocol PersistableEnum: _PersistableScalar, RawRepresentable, CaseIterable, Comparable
    where RawValue: _PersistableScalar & Comparable {}

extension PersistableEnum {
    public static var _strataKind: PropertyKind { RawValue._strataKind }
    /// The first case: the value of a property declared without an initial value.
    public static var _strataZero: Self { allCases.first! }
    public func _strataStore(_ database: Database?) -> StoreValue { rawValue._strataStore(database) }
    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        RawValue._strataLoad(value, database).flatMap(Self.init(rawValue:))
    }
    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        if let value = value as? Self { return value }
        return RawValue._strataConvert(value, database).flatMap(Self.init(rawValue:))
    }
    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        Self(rawValue: RawValue._strataGet(object, column)) ?? _strataZero
    }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
