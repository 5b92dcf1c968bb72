public import StrataStore

/// What ``CustomPersistable`` and ``FailableCustomPersistable`` share: a type stored as another
/// type that Strata stores natively (`PersistedType`). Conform to one of those two, not to this.
public protocol _CustomPersistable: _PersistableScalar {
    /// The stored type: `Bool`, an integer type, `Float`, `Double`, `String`, `Data`, `Date`,
    /// `UUID`, ``ObjectId``, ``Decimal128``, a ``PersistableEnum``, or an ``EmbeddedObject``
    /// subclass (for a type stored as several values).
    associatedtype PersistedType: _PersistableInsideOptional
    /// The value as stored.
    var persistableValue: PersistedType { get }
    /// The value for a stored one; nil when it cannot be converted (only
    /// ``FailableCustomPersistable`` types return nil).
    static func _strataConverted(_ persisted: PersistedType) -> Self?
}

/// A type stored as a type Strata supports, which every stored value converts back to
/// (RealmSwift's protocol of the same name):
///
/// ```swift
/// struct Celsius: CustomPersistable {
///     var degrees: Double
///     init(persistedValue: Double) { degrees = persistedValue }
///     var persistableValue: Double { degrees }
/// }
/// class Reading: Object {
///     @Persisted var temperature: Celsius          // stored as a Double
///     @Persisted var history: List<Celsius>
/// }
/// let warm = db.objects(Reading.self).where { $0.temperature.persistableValue > 25 }
/// ```
///
/// Such a type works as a property (optional or not), in lists, sets and maps, with key-value
/// input (a value of the type or of its `PersistedType`), and in queries: compare it with a
/// value of the type (`$0.temperature == Celsius(degrees: 20)`, compared as stored) or go
/// through ``Query/persistableValue`` for the stored type's operators. A property declared
/// without an initial value starts as `init(persistedValue:)` of the stored type's default.
///
/// A type made of several values maps to an ``EmbeddedObject`` subclass, as in RealmSwift:
///
/// ```swift
/// final class Location: EmbeddedObject {
///     @Persisted var latitude = 0.0
///     @Persisted var longitude = 0.0
/// }
/// extension Coordinate: CustomPersistable {
///     init(persistedValue: Location) { self.init(latitude: persistedValue.latitude, longitude: persistedValue.longitude) }
///     var persistableValue: Location { Location(value: [latitude, longitude]) }
/// }
/// // db.objects(Place.self).where { $0.spot.persistableValue.latitude > 50 }
/// ```
///
/// Each write stores a new embedded object (the one it replaces is deleted); a non-optional
/// property with nothing stored reads as `init(persistedValue:)` of a new embedded object.
/// Such values compare in queries through their properties (`persistableValue.latitude`),
/// not as a whole.
public protocol CustomPersistable: _CustomPersistable {
    /// The value for a stored one.
    init(persistedValue: PersistedType)
}

/// A type stored as a type Strata supports, whose stored values may fail to convert back
/// (RealmSwift's protocol of the same name): a `URL` stored as its string, say.
///
/// ```swift
/// extension URL: FailableCustomPersistable {
///     public typealias PersistedType = String
///     public init?(persistedValue: String) { self.init(string: persistedValue) }
///     public var persistableValue: String { absoluteString }
/// }
/// ```
///
/// A stored value that does not convert reads as nil from an optional property (`URL?`) and
/// stops the program, with a message naming the property, from a non-optional one (as in
/// RealmSwift); declare the property optional when the file may hold such values. In a list,
/// set or map, such a value reads as the type's value for the stored type's default.
/// Where the type is not optional (a property, or an element of a list, set or map),
/// `init(persistedValue:)` must not return nil for the stored type's default value, which a
/// property declared without an initial value starts at; `URL(string: "")` is nil, so declare
/// such a property optional (`URL?`), as in RealmSwift's example.
public protocol FailableCustomPersistable: _CustomPersistable {
    /// The value for a stored one, or nil when it cannot be converted.
    init?(persistedValue: PersistedType)
}

extension CustomPersistable {
    public static func _strataConverted(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension FailableCustomPersistable {
    public static func _strataConverted(_ persisted: PersistedType) -> Self? { Self(persistedValue: persisted) }
}

extension _CustomPersistable {
    public static var _strataKind: PropertyKind { PersistedType._strataKind }
    public static var _strataObjectType: String? { PersistedType._strataObjectType }
    public static var _strataLinkType: Object.Type? { PersistedType._strataLinkType }

    public static var _strataShape: _PropertyShape {
        _PropertyShape(kind: _strataKind, isOptional: _strataKind == .link, objectType: _strataObjectType, linkTarget: _strataLinkType)
    }
    public static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (_strataKind, false, _strataObjectType) }
    public static var _strataMapValueShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (_strataKind, false, _strataObjectType) }

    /// The value for the stored type's default (for an embedded object, a new one).
    public static var _strataZero: Self {
        let persisted = PersistedType._strataNewValue()
        guard let value = _strataConverted(persisted) else {
            fatalError("\(Self.self)(persistedValue:) returned nil for \(PersistedType.self)'s default value (\(persisted)); it must not.")
        }
        return value
    }

    public func _strataStore(_ database: Database?) -> StoreValue {
        // Without a database (a query's argument), an embedded object has no stored form to
        // compare with: it matches nothing (compare through persistableValue's properties).
        if database == nil, Self._strataKind == .link { return .link(ObjectKey(.min)) }
        return persistableValue._strataStore(database)
    }

    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        PersistedType._strataLoad(value, database).flatMap(_strataConverted)
    }

    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        if let value = unwrapAny(value) as? Self { return value }
        return PersistedType._strataConvert(value, database).flatMap(_strataConverted)
    }

    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        let stored = object._storedValue(column)
        if let value = _strataLoad(stored, object._database) { return value }
        // Nothing stored (a column a migration added, or no embedded object): the default.
        if stored.isNull { return _strataZero }
        let name = object._slot.table.map { "'\($0.table.schema.name).\($0.table.schema.properties[column].name)'" } ?? "a property"
        fatalError("The stored value \(stored) of \(name) cannot be converted to \(Self.self) (init(persistedValue:) returned nil); declare the property optional (\(Self.self)?) to read such values as nil.")
    }
}

extension Query where T: _CustomPersistable {
    /// The stored value, with the stored type's operators: `$0.url.persistableValue.starts(with: "https")`.
    public var persistableValue: Query<T.PersistedType> { appending([]) }
}

/// An optional of a custom-persistable type (for ``Query/persistableValue``).
public protocol _OptionalCustomPersistable {
    associatedtype _PersistedWrapped
}

extension Optional: _OptionalCustomPersistable where Wrapped: _CustomPersistable {
    public typealias _PersistedWrapped = Wrapped.PersistedType
}

extension Query where T: _OptionalCustomPersistable {
    /// The stored value of an optional custom-persistable property.
    public var persistableValue: Query<T._PersistedWrapped?> { appending([]) }
}
