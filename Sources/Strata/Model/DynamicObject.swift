import Foundation
import StrataStore

// The dynamic API: objects of a type named at run time, read and written by property name,
// whatever classes the process has — RealmSwift's `DynamicObject`, `dynamicObjects(_:)`,
// `dynamicObject(ofType:forPrimaryKey:)` and `dynamicCreate(_:value:update:)`. Tools that open
// any file, and code that reads types it has no class for (a mixed value's object of a class
// this process never declared), use it.
//
// A `DynamicObject` is an `Object` whose class info is made from the file's stored schema
// (one per type name, `ClassInfo.dynamic`), with a field access per property that reads and
// writes the store by value (`DynamicFieldAccess`): the typed accessors' wrappers and offsets
// are not there, so nothing reads a field of the instance. Its contexts are kept by type name
// (`DatabaseCore.dynamicContext(named:)`).

/// An object of a type named at run time, read and written by property name:
/// `dog["name"]`, or as a member, `dog.name`. Values come as their Swift types (`Int`,
/// `String`, `Date`, …, `MixedValue`, nil for nil); a link as the linked `DynamicObject`; a
/// list or set as an array of its elements, a map as a `[String: Any?]` dictionary. Write them
/// back the same way, inside a write transaction (a link takes a `DynamicObject` or any
/// managed object of the linked type in the same database).
///
/// Get dynamic objects from a database: ``Database/dynamicObjects(_:)``,
/// ``Database/dynamicObject(ofType:forPrimaryKey:)`` and
/// ``Database/dynamicCreate(_:value:update:)``. Queries on them take string predicates
/// (`filter("age > 3")`) and sort by key path names.
///
/// Where RealmSwift's dynamic lists are live `List<DynamicObject>`s, a list or set property
/// reads here as an array of what it holds now (`dynamicList(_:)` is not provided); assign an
/// array to change it. Embedded objects read like linked ones, but are changed through their
/// typed class: a dynamic write cannot give an embedded object a parent. A property whose
/// name is also a member of `Object` (`value`, `description`) reads through the subscript,
/// `object["value"]`.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// A property's value as a member: `dog.name`, `dog.owner`.
    public subscript(dynamicMember name: String) -> Any? {
        get { value(forKey: name) }
        set { setValue(newValue, forKey: name) }
    }

    /// The name of the object's type, as stored.
    public var typeName: String {
        guard let table = _slot.table else { fatalError("A DynamicObject is made by a database: use dynamicObjects(_:), dynamicObject(ofType:forPrimaryKey:) or dynamicCreate(_:value:update:).") }
        return table.info.schema.name
    }
}

extension Database {
    /// Every object of the type named `typeName`, as dynamic objects. Stops with a message
    /// when the file has no such type.
    public func dynamicObjects(_ typeName: String) -> Results<DynamicObject> {
        core.verify("dynamicObjects(_:)")
        let context = core.withReadLock { dynamicContext(typeName) }
        return Results(database: self, context: context, predicate: nil)
    }

    /// The object of type `typeName` whose primary key is `key`, or nil. Stops with a message
    /// when the type does not exist or has no primary key, or `key` does not fit it.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) -> DynamicObject? {
        core.verify("dynamicObject(ofType:forPrimaryKey:)")
        return core.withReadLock {
            let context = dynamicContext(typeName)
            guard let found = context.locate(primaryKey: context.primaryKeyValue(key, "dynamicObject(ofType:forPrimaryKey:)")) else { return nil }
            return unsafeDowncast(context.materialize(dynamicKey: found.key, cluster: found.cluster, row: found.row), to: DynamicObject.self)
        }
    }

    /// Creates an object of the type named `typeName` from a dictionary of property values
    /// (or an array of them in property order), inside a write transaction; properties not
    /// given take their defaults. With a primary key and `update` other than `.error`, an
    /// existing object with that key is updated instead (`.modified` writes only the values
    /// that differ). A link takes a `DynamicObject` or any managed object of the linked type.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        core.verifyWrite("dynamicCreate(_:value:update:)")
        let context = dynamicContext(typeName)
        let schema = context.info.schema
        require(!schema.isEmbedded, "dynamicCreate: '\(typeName)' is an embedded type; its objects are made with their parent (create the parent with the embedded object's values).")
        let given: [String: Any?]
        if let dictionary = value as? [String: Any?] {
            given = dictionary
        } else if let dictionary = value as? [String: Any] {
            given = dictionary.mapValues { Optional($0) }
        } else if let array = value as? [Any] {
            require(array.count == schema.properties.count, "dynamicCreate: '\(typeName)' has \(schema.properties.count) properties; the array gives \(array.count) values. An array must give one value per property, in order (use a dictionary to give only some).")
            given = Dictionary(uniqueKeysWithValues: zip(schema.properties.map(\.name), array.map { Optional($0) }))
        } else {
            fatalError("dynamicCreate: give '\(typeName)' its values as a [String: Any] dictionary or an array in property order, not \(type(of: value)).")
        }
        for name in given.keys where schema.propertyIndex(named: name) == nil {
            fatalError("dynamicCreate: '\(typeName)' has no property named '\(name)'.")
        }
        var existing: ObjectKey?
        var primaryKey = StoreValue.null
        if let pk = schema.primaryKeyIndex {
            let property = schema.properties[pk]
            guard let value = given[property.name].flatMap({ $0 }).map({ StoreValue.from(any: $0, kind: property.kind) }) ?? (property.isOptional ? .null : StoreValue.defaultValue(of: property.kind)),
                  value.isNull ? property.isOptional : true else {
                fatalError("dynamicCreate: '\(given[property.name].flatMap { $0 }.map { "\($0)" } ?? "nil")' is not a primary key of '\(typeName)', which is \(property.typeDescription).")
            }
            primaryKey = value
            existing = context.locate(primaryKey: value)?.key
            if existing != nil && update == .error {
                fatalError("An object of type '\(typeName)' with primary key \(value) already exists. Use update: .modified or .all to update it.")
            }
        }
        let key: ObjectKey
        if let existing {
            key = existing
        } else {
            do {
                key = try context.table.insert(primaryKey: primaryKey) { _ in }
            } catch {
                context.fail(error)
            }
        }
        let object = unsafeDowncast(context.materialize(dynamicKey: key), to: DynamicObject.self)
        for (index, property) in schema.properties.enumerated() where index != schema.primaryKeyIndex {
            guard let entry = given[property.name] else {
                // A new object's date not given is the epoch, as a model class's default.
                if existing == nil && property.kind == .date && !property.isOptional && !property.isList {
                    object.setValue(StoreValue.initialValue(of: .date).anyValue, forKey: property.name)
                }
                continue
            }
            if existing != nil && update == .modified, valuesEqual(object.value(forKey: property.name), entry) { continue }
            object.setValue(entry, forKey: property.name)
        }
        return object
    }

    /// The dynamic context of `typeName`, stopping with a message when the file has no such
    /// type.
    func dynamicContext(_ typeName: String) -> TableContext {
        do {
            return try core.dynamicContext(named: typeName)
        } catch {
            fatalError(error.message)
        }
    }

    /// Whether a stored value read back equals what is about to be written (for `.modified`).
    private func valuesEqual(_ current: Any?, _ new: Any?) -> Bool {
        switch (current.flatMap(unwrapAny), new.flatMap(unwrapAny)) {
        case (nil, nil): return true
        case (let a as Object, let b as Object): return a.isSameObject(as: b)
        case (let a as any Hashable, let b as any Hashable): return AnyHashable(a) == AnyHashable(b)
        default: return false
        }
    }
}

/// What a property of a dynamic object reads and writes: the store's values by property
/// index, converted to and from loose Swift values.
struct DynamicFieldAccess: FieldAccess {
    let property: PropertySchema

    func managedAny(_ object: Object, column: Int) -> Any {
        guard let context = object._slot.table else { fatalError("internal error: a dynamic read of an unmanaged object") }
        context.database.verify("reading an object's property")
        return context.core.withReadLock { () -> Any? in
            let table = context.table
            let key = ObjectKey(object._slot.key)
            do {
                if property.isMap {
                    let (keys, values) = try table.mapEntries(key, property: column)
                    var dictionary: [String: Any?] = [:]
                    for (entry, value) in zip(keys, values) { dictionary[entry] = loose(value, context) }
                    return dictionary
                }
                if property.isList { return try table.list(key, property: column).map { loose($0, context) } }
                return loose(try table.value(key, property: column), context)
            } catch StoreError.objectNotFound {
                fatalError("Object of type '\(table.schema.name)' has been deleted or invalidated; check isInvalidated before using it.")
            } catch {
                context.fail(error)
            }
        } as Any
    }

    func setManaged(_ object: Object, column: Int, any: Any) -> Bool {
        guard let context = object._slot.table else { fatalError("internal error: a dynamic write to an unmanaged object") }
        let input = unwrapAny(any)
        let stored: _StoredProperty
        if property.isMap {
            guard let dictionary = input.map({ $0 as? [String: Any?] ?? ($0 as? [String: Any])?.mapValues { Optional($0) } }) ?? [:] else { return false }
            var entries: [(String, StoreValue)] = []
            for (entry, item) in dictionary {
                guard MapKeyRule.problem(entry) == nil, let value = storable(item, context) else { return false }
                entries.append((entry, value))
            }
            entries.sort { MapKeyOrder.precedes($0.0, $1.0) }
            stored = .map(keys: entries.map(\.0), values: entries.map(\.1))
        } else if property.isList {
            guard let items = input.map({ $0 as? [Any?] ?? ($0 as? [Any])?.map { Optional($0) } }) ?? [] else { return false }
            var values: [StoreValue] = []
            for item in items {
                guard let value = storable(item, context) else { return false }
                values.append(value)
            }
            stored = .list(property.isSet ? values.distinctMembers() : values)
        } else {
            guard let value = storable(input, context) else { return false }
            stored = .value(value)
        }
        object._setStored(stored, column)
        return true
    }

    /// A stored value as a loose Swift value: a link as the linked dynamic object, a mixed
    /// value as a `MixedValue`.
    private func loose(_ value: StoreValue, _ context: TableContext) -> Any? {
        switch property.kind {
        case .link:
            guard case .link(let key) = value, let target = property.objectType,
                  let targetContext = try? context.core.dynamicContext(named: target),
                  targetContext.containsOrStops(key) else { return nil }
            return targetContext.materialize(dynamicKey: key)
        case .mixed:
            return MixedValue._strataLoad(value, context.database)
        default:
            // A required property reads as its type's default where nothing was stored, as
            // the typed accessors read it.
            if value.isNull && !property.isOptional { return StoreValue.defaultValue(of: property.kind).anyValue }
            return value.anyValue
        }
    }

    /// A loose value in the property's stored form; nil when it does not fit (nil itself
    /// fits an optional property, or a list of optionals).
    private func storable(_ input: Any?, _ context: TableContext) -> StoreValue? {
        guard let input = input.flatMap(unwrapAny) else { return property.isOptional ? .null : nil }
        switch property.kind {
        case .link:
            // An embedded object has one parent: a dynamic write cannot give it another.
            guard let object = input as? Object, let table = object._slot.table, table.core === context.core,
                  table.info.schema.name == property.objectType, !table.info.schema.isEmbedded else { return nil }
            return .link(ObjectKey(object._slot.key))
        case .mixed:
            guard let mixed = MixedValue(any: input) else { return nil }
            return mixed._strataStore(context.database)
        default:
            guard let value = StoreValue.from(any: input, kind: property.kind), !value.isNull else { return nil }
            return value
        }
    }

    // A dynamic object is always managed: these serve unmanaged objects only.
    func stored(_ object: Object, _ database: Database?) -> _StoredProperty { unmanagedDynamicObject() }
    func setUnmanaged(_ object: Object, any: Any, _ database: Database?) -> Bool { unmanagedDynamicObject() }
    func unmanagedAny(_ object: Object) -> Any { unmanagedDynamicObject() }
    func takeRecordingMark(_ object: Object) -> Bool { false }

    private func unmanagedDynamicObject() -> Never {
        fatalError("A DynamicObject is made by a database: use dynamicObjects(_:), dynamicObject(ofType:forPrimaryKey:) or dynamicCreate(_:value:update:).")
    }
}
