// The dynamic API's entry points on `Database` (see DynamicObject.swift).

import Foundation
import StrataStore

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
        // Keys the type has no property for are ignored, as by create(_:value:) and in RealmSwift.
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
                // The primary key's index entry and its column are both written here: the
                // loop below skips the key.
                key = try context.table.insert(primaryKey: primaryKey) { row in
                    if let pk = schema.primaryKeyIndex { row.set(primaryKey, pk) }
                }
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
        // A mixed property reads as the value it holds; the input may give it either way.
        func plain(_ value: Any?) -> Any? {
            let value = value.flatMap(unwrapAny)
            if let mixed = value as? MixedValue { return mixed.heldValue }
            return value
        }
        switch (plain(current), plain(new)) {
        case (nil, nil): return true
        case (let a as Object, let b as Object): return a.isSameObject(as: b)
        case (let a as any Hashable, let b as any Hashable): return AnyHashable(a) == AnyHashable(b)
        default: return false
        }
    }
}
