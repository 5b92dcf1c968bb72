public import Foundation
public import StrataStore

/// A value of any persistable kind, or none: a property, list element or map value whose type
/// is decided per object. RealmSwift calls it `AnyRealmValue` (StrataRealmCompat has that
/// name).
///
/// ```swift
/// class Setting: Object {
///     @Persisted var name = ""
///     @Persisted var value: MixedValue      // .none until set
///     @Persisted var history: List<MixedValue>
/// }
///
/// try db.write {
///     setting.value = .int(42)
///     setting.value = .string("dark")
///     setting.value = .object(profile)      // an unmanaged object is added, as with links
/// }
/// if case .string(let theme) = setting.value { print(theme) }
/// let numbers = db.objects(Setting.self).where { $0.value > 10 }
/// ```
///
/// - **Storage:** a tag for the kind and then the value, so a mixed property costs a variable-
///   width column. An `.object` is stored as its type and key and is cleared to `.none` when
///   the object is deleted (a list's element becomes `.none`, a set drops it), as in RealmSwift.
/// - **Queries** compare values of the same kind, and numbers (`.int`, `.float`, `.double`,
///   `.decimal128`) by value across kinds; a value of another kind is simply not equal
///   (`$0.value == 1` does not match `.string("1")`). To compare with an object, pass
///   `.object(obj)` (`$0.value == .object(dog)`, or `%@` with a `MixedValue`).
/// - **Sorting** orders kinds as: none, booleans, numbers, strings, data, dates, object ids,
///   UUIDs, objects; within a kind by value. `min`/`max` follow the same order (objects
///   aside); `sum` and `average` count the numbers only.
/// - **Maps:** `map["k"] = .none` is Swift's `Optional.none` and removes the key; write
///   `map["k"] = MixedValue.none` to keep the key with no value (as with RealmSwift).
/// - **Notifications:** a change to a mixed property is reported like any other; collection
///   observers do not watch the objects mixed values hold (they watch links, lists and maps of
///   objects).
/// - **Indexing:** `@Persisted(indexed: true) var value: MixedValue` answers equalities with
///   strings, Booleans, data, object ids, UUIDs and objects from the index; numbers and dates
///   (equal across kinds, and as -0 and 0) are compared object by object.
/// - **Nested collections:** `.list` and `.dictionary` hold mixed values, which may be lists
///   and dictionaries again (up to 50 levels): `.fromArray([.int(1), .fromDictionary(["a":
///   .string("x")])])`. Read from a managed object, they are `List`s and `Map`s that are live
///   views of their place in the property (see ``listValue``): observable and freezable on
///   their own; a `MutableSet` refuses them, as in RealmSwift. Two nested
///   collections are equal when their contents are. Queries read into them by path:
///   `"value[0] == 1"`, `"value['k'] == 'x'"`, `"value[*] == 'x'"`, `"value.@size > 2"`,
///   `"value.@type == 'list'"`, or `$0.value[0]`, `$0.value["k"]`, `$0.value.any`.
/// - Reading an `.object` needs its class to be known to the process: a class in
///   `Configuration.objectTypes`, or one the process has used.
///
/// Like objects, a `MixedValue` holding an `.object` is confined to its database's thread or
/// actor, so the type is not `Sendable`; freeze the owner to carry it across.
public enum MixedValue {
    /// No value (nil). The value of a mixed property that was never set.
    case none
    /// An integer (stored in 64 bits).
    case int(Int)
    /// A Boolean.
    case bool(Bool)
    /// A 32-bit floating-point number.
    case float(Float)
    /// A 64-bit floating-point number.
    case double(Double)
    /// A string (compared in queries by its UTF-8 bytes).
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date.
    case date(Date)
    /// An object of any non-embedded model class.
    case object(Object)
    /// An ``ObjectId``.
    case objectId(ObjectId)
    /// A ``Decimal128``.
    case decimal128(Decimal128)
    /// A UUID.
    case uuid(UUID)
    /// A dictionary of mixed values by string keys (RealmSwift 10.51's nested dictionary).
    /// Keys follow `Map`'s rules: no `.` and no leading `$`.
    case dictionary(Map<String, MixedValue>)
    /// A list of mixed values (RealmSwift 10.51's nested list).
    case list(List<MixedValue>)

    /// The integer, or nil for any other kind.
    public var intValue: Int? { if case .int(let v) = self { v } else { nil } }
    /// The Boolean, or nil for any other kind.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The float, or nil for any other kind.
    public var floatValue: Float? { if case .float(let v) = self { v } else { nil } }
    /// The double, or nil for any other kind.
    public var doubleValue: Double? { if case .double(let v) = self { v } else { nil } }
    /// The string, or nil for any other kind.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The data, or nil for any other kind.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The date, or nil for any other kind.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The object id, or nil for any other kind.
    public var objectIdValue: ObjectId? { if case .objectId(let v) = self { v } else { nil } }
    /// The decimal, or nil for any other kind.
    public var decimal128Value: Decimal128? { if case .decimal128(let v) = self { v } else { nil } }
    /// The UUID, or nil for any other kind.
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }
    /// The nested dictionary, or nil for any other kind. Read from a managed object (a mixed
    /// property, or an element of a list or map of mixed values), it is a live view of its
    /// place: it reads the stored value at each access, a change inside a write transaction is
    /// stored there, and it is invalidated when the place no longer holds a dictionary. Read
    /// from a frozen object, it is frozen.
    public var dictionaryValue: Map<String, MixedValue>? { if case .dictionary(let v) = self { v } else { nil } }
    /// The nested list, or nil for any other kind. Read from a managed object (a mixed
    /// property, or an element of a list or map of mixed values), it is a live view of its
    /// place: it reads the stored value at each access, a change inside a write transaction is
    /// stored there, and it is invalidated when the place no longer holds a list. Read from a
    /// frozen object, it is frozen.
    public var listValue: List<MixedValue>? { if case .list(let v) = self { v } else { nil } }

    /// A value holding a new dictionary with `dictionary`'s entries.
    public static func fromDictionary(_ dictionary: [String: MixedValue]) -> MixedValue {
        .dictionary(Map(nestedEntries: dictionary.map { ($0.key, $0.value) }, in: nil))
    }

    /// A value holding a new list with `array`'s elements.
    public static func fromArray(_ array: [MixedValue]) -> MixedValue {
        .list(List(nestedElements: array, in: nil))
    }

    /// A value of no kind (`.none`), as RealmSwift's `AnyRealmValue()`.
    public init() { self = .none }

    /// The object, whatever its class, or nil for any other kind. (RealmSwift's
    /// `dynamicObject`; Strata gives the object as its own class.)
    public var dynamicObject: Object? { if case .object(let v) = self { v } else { nil } }

    /// The value held, without the wrapper: an `Int`, a `String`, an object, …; nil for
    /// `.none`. (What key-value coding reads; `MixedValue(any:)` takes it back.)
    var heldValue: Any? {
        switch self {
        case .none: nil
        case .int(let v): v
        case .bool(let v): v
        case .float(let v): v
        case .double(let v): v
        case .string(let v): v
        case .data(let v): v
        case .date(let v): v
        case .object(let v): v
        case .objectId(let v): v
        case .decimal128(let v): v
        case .uuid(let v): v
        case .dictionary(let v): v
        case .list(let v): v
        }
    }

    /// The object as `objectType`, or nil when the value is not an object of that class.
    public func object<T: Object>(_ objectType: T.Type) -> T? { dynamicObject as? T }

    /// The value for a loosely typed input: a `MixedValue`, nil or `NSNull` (`.none`), an
    /// object, or a value of a persistable Swift type (`Int` and the other integer types,
    /// `Bool`, `Float`, `Double`, `String`, `Data`, `Date`, `ObjectId`, `Decimal128`, `UUID`).
    init?(any input: Any) {
        guard let input = unwrapAny(input), !(input is NSNull) else {
            self = .none
            return
        }
        switch input {
        case let v as MixedValue: self = v
        case let v as Object: self = .object(v)
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .int(v)
        case let v as any BinaryInteger:
            guard let exact = Int(exactly: v) else { return nil }
            self = .int(exact)
        case let v as Float: self = .float(v)
        case let v as Double: self = .double(v)
        case let v as String: self = .string(v)
        case let v as Substring: self = .string(String(v))
        case let v as Data: self = .data(v)
        case let v as Date: self = .date(v)
        case let v as ObjectId: self = .objectId(v)
        case let v as Decimal128: self = .decimal128(v)
        case let v as UUID: self = .uuid(v)
        case let v as List<MixedValue>: self = .list(v)
        case let v as Map<String, MixedValue>: self = .dictionary(v)
        case let v as [MixedValue]: self = .fromArray(v)
        case let v as [String: MixedValue]: self = .fromDictionary(v)
        default: return nil
        }
    }

    /// The stored form a migration writes; nil for objects (a migration block writes
    /// `MigrationObject`s, not objects).
    var storedForMigration: StoreValue? {
        if case .object = self { return nil }
        return _strataStore(nil)
    }
}

extension MixedValue: _PersistableScalar {
    public static var _strataKind: PropertyKind { .mixed }
    public static var _strataZero: MixedValue { .none }

    public func _strataStore(_ database: Database?) -> StoreValue {
        switch self {
        case .none: return .null
        case .int(let v): return .int(Int64(v))
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .data(let v): return .data(v)
        case .date(let v): return .date(v)
        case .objectId(let v): return .objectId(v)
        case .decimal128(let v): return .decimal128(v)
        case .uuid(let v): return .uuid(v)
        case .list(let list): return .mixedList(list.map { $0._strataStore(database) })
        case .dictionary(let map): return .mixedDictionary(Dictionary(uniqueKeysWithValues: map.asKeyValueSequence().map { ($0.key, $0.value._strataStore(database)) }))
        case .object(let object):
            if object is EmbeddedObject {
                fatalError("A MixedValue cannot hold an embedded '\(type(of: object).className())' object: embedded objects belong to one parent's link or list.")
            }
            guard let database else {
                // A query's argument: a managed object compares by table and key; an unmanaged
                // one matches nothing.
                guard let table = object._slot.table else { return .typedLink(table: .max, key: ObjectKey(.max)) }
                return .typedLink(table: table.table.tableID, key: ObjectKey(object._slot.key))
            }
            let key = database.ensureManaged(object)
            guard let table = object._slot.table else { fatalError("internal error: an added object has no table") }
            return .typedLink(table: table.table.tableID, key: key)
        }
    }

    public static func _strataLoad(_ value: StoreValue, _ database: Database?) -> MixedValue? {
        load(value, database, in: nil)
    }

    /// The value of a mixed property; a nested collection it holds is a live view there.
    public static func _strataGet(_ object: Object, _ column: Int) -> MixedValue {
        let stored = object._storedValue(column)
        guard stored.isNestedCollection else { return _strataLoad(stored, object._database) ?? .none }
        return load(stored, object._database, in: MixedNesting(owner: object, column: column)) ?? .none
    }

    /// An element of a managed `List<MixedValue>` (`step` its position) or a value of a managed
    /// `Map<String, MixedValue>` (`step` its key); a nested collection is a live view there.
    static func load(_ value: StoreValue, of owner: Object, column: Int, at step: MixedNesting.Step) -> MixedValue {
        guard value.isNestedCollection else { return _strataLoad(value, owner._database) ?? .none }
        return load(value, owner._database, in: MixedNesting(owner: owner, column: column, collectionStep: step)) ?? .none
    }

    /// The value of a stored one; its nested collections, if any, are live views at
    /// `nesting` (copies holding their contents when `nesting` is nil).
    static func load(_ value: StoreValue, _ database: Database?, in nesting: MixedNesting?) -> MixedValue? {
        switch value {
        case .mixedList(let elements):
            let loaded = nesting?.load(elements: elements) ?? elements.map { load($0, database, in: nil) ?? .none }
            return .list(List(nestedElements: loaded, in: nesting))
        case .mixedDictionary(let entries):
            let loaded = nesting?.load(entries: entries) ?? entries.map { ($0.key, load($0.value, database, in: nil) ?? .none) }
            return .dictionary(Map<String, MixedValue>(nestedEntries: loaded, in: nesting))
        case .null: return MixedValue.none
        case .int(let v): return .int(Int(truncatingIfNeeded: v))
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .data(let v): return .data(v)
        case .date(let v): return .date(v)
        case .objectId(let v): return .objectId(v)
        case .decimal128(let v): return .decimal128(v)
        case .uuid(let v): return .uuid(v)
        case .link: return MixedValue.none
        case .typedLink(let table, let key):
            guard let database else { return MixedValue.none }
            return database.mixedObject(table: table, key: key).map { .object($0) } ?? MixedValue.none
        }
    }

    public static func _strataConvert(_ value: Any, _ database: Database?) -> MixedValue? { MixedValue(any: value) }

    public static func _strataElement(any value: Any, _ database: Database?) -> MixedValue? { MixedValue(any: value) }
    public static func _strataMapConvert(_ value: Any, _ database: Database?) -> MixedValue? { MixedValue(any: value) }
    public static func _strataFrom(any value: Any, _ database: Database?) -> MixedValue? { MixedValue(any: value) }
    public static var _strataElementShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (.mixed, true, nil) }
    public static var _strataMapValueShape: (kind: PropertyKind, optional: Bool, objectType: String?) { (.mixed, true, nil) }
}

extension MixedValue: AddableType, SortableType {
    /// The value of an aggregate's stored result; nil for null.
    public static func _strataAggregateResult(_ value: StoreValue) -> MixedValue? {
        value.isNull ? nil : _strataLoad(value, nil)
    }
}

extension MixedValue: CustomStringConvertible {
    /// The kind and the value, e.g. `int(3)`, `string("a")`, `object(Dog)`.
    public var description: String {
        switch self {
        case .none: "none"
        case .int(let v): "int(\(v))"
        case .bool(let v): "bool(\(v))"
        case .float(let v): "float(\(v))"
        case .double(let v): "double(\(v))"
        case .string(let v): "string(\"\(v)\")"
        case .data(let v): "data(\(v.count) bytes)"
        case .date(let v): "date(\(v))"
        case .object(let v): "object(\(type(of: v).className()))"
        case .objectId(let v): "objectId(\(v))"
        case .decimal128(let v): "decimal128(\(v))"
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .list(let v): "list([" + v.map(\.description).joined(separator: ", ") + "])"
        case .dictionary(let v): "dictionary([" + v.asKeyValueSequence().map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "])"
        }
    }
}

extension MixedValue: Hashable {
    /// Values of the same kind with equal contents: nested lists element by element, nested
    /// dictionaries entry by entry; objects when they are the same object.
    public static func == (lhs: MixedValue, rhs: MixedValue) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none): true
        case let (.int(a), .int(b)): a == b
        case let (.bool(a), .bool(b)): a == b
        case let (.float(a), .float(b)): a == b
        case let (.double(a), .double(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.data(a), .data(b)): a == b
        case let (.date(a), .date(b)): a == b
        case let (.object(a), .object(b)): a == b
        case let (.objectId(a), .objectId(b)): a == b
        case let (.decimal128(a), .decimal128(b)): a == b
        case let (.uuid(a), .uuid(b)): a == b
        case let (.list(a), .list(b)): a === b || a.elementsEqual(b)
        case let (.dictionary(a), .dictionary(b)):
            a === b || a.asKeyValueSequence().elementsEqual(b.asKeyValueSequence()) { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// Hashes the kind and value; a nested collection by its kind and size (equal ones have
    /// equal sizes).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .none: hasher.combine(0)
        case .int(let v): hasher.combine(1); hasher.combine(v)
        case .bool(let v): hasher.combine(2); hasher.combine(v)
        case .float(let v): hasher.combine(3); hasher.combine(v)
        case .double(let v): hasher.combine(4); hasher.combine(v)
        case .string(let v): hasher.combine(5); hasher.combine(v)
        case .data(let v): hasher.combine(6); hasher.combine(v)
        case .date(let v): hasher.combine(7); hasher.combine(v)
        case .object(let v): hasher.combine(8); hasher.combine(v)
        case .objectId(let v): hasher.combine(9); hasher.combine(v)
        case .decimal128(let v): hasher.combine(10); hasher.combine(v)
        case .uuid(let v): hasher.combine(11); hasher.combine(v)
        case .dictionary(let v): hasher.combine(12); hasher.combine(v.count)
        case .list(let v): hasher.combine(13); hasher.combine(v.count)
        }
    }
}

extension Database {
    /// The object a mixed value links to: its class found by the table's name among the
    /// classes this process knows, or a `DynamicObject` when it knows none that fits the file
    /// (none of that name, or one whose properties differ). Nil when the object no longer
    /// exists.
    func mixedObject(table id: UInt32, key: ObjectKey) -> Object? {
        core.withReadLock {
            guard let table = core.session.table(id: id) else { return nil }
            let name = table.schema.name
            let context = core.modelClass(named: name).flatMap { try? core.context(for: $0) } ?? (try? core.dynamicContext(named: name))
            guard let context, context.containsOrStops(key) else { return nil }
            return context.materialize(dynamicKey: key)
        }
    }
}
