public import StrataStore

/// What ``CustomPersistable`` and ``FailableCustomPersistable`` share: a type stored as another
/// type that Strata stores natively (`PersistedType`). Conform to one of those two, not to this.
public protocol _CustomPersistable: _PersistableScalar {
    /// The stored type: `Bool`, an integer type, `Float`, `Double`, `String`, `Data`, `Date`,
    /// `UUID`, ``ObjectId``, ``Decimal128`` or a ``PersistableEnum``.
    associatedtype PersistedType: _PersistableScalar
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
/// RealmSwift also maps to embedded objects (`PersistedType` an `EmbeddedObject`); Strata maps
/// to values only.
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
/// `init(persistedValue:)` must not return nil for the stored type's default value.
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

    /// The value for the stored type's default.
    public static var _strataZero: Self {
        guard let value = _strataConverted(PersistedType._strataZero) else {
            fatalError("\(Self.self)(persistedValue:) returned nil for \(PersistedType.self)'s default value (\(PersistedType._strataZero)); it must not.")
        }
        return value
    }

    public func _strataStore(_ database: Database?) -> StoreValue { persistableValue._strataStore(database) }

    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> Self? {
        PersistedType._strataLoad(value, database).flatMap(_strataConverted)
    }

    public static func _strataConvert(_ value: Any, _ database: Database?) -> Self? {
        if let value = value as? Self { return value }
        if let value = unwrapAny(value) as? Self { return value }
        return PersistedType._strataConvert(value, database).flatMap(_strataConverted)
    }

    public static func _strataGet(_ object: Object, _ column: Int) -> Self {
        let persisted = PersistedType._strataGet(object, column)
        guard let value = _strataConverted(persisted) else {
            let name = object._slot.table.map { "'\($0.table.schema.name).\($0.table.schema.properties[column].name)'" } ?? "a property"
            fatalError("The stored value \(persisted) of \(name) cannot be converted to \(Self.self) (init(persistedValue:) returned nil); declare the property optional (\(Self.self)?) to read such values as nil.")
        }
        return value
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
