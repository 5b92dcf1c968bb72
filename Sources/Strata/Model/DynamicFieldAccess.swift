import Foundation
import StrataStore

/// What a property of a dynamic object reads and writes: the store's values by property
/// index, converted to and from loose Swift values.
struct DynamicFieldAccess: FieldAccess {
    let property: PropertySchema

    func managedAny(_ object: Object, column: Int) -> Any {
        guard let context = object._slot.table else { fatalError("internal error: a dynamic read of an unmanaged object") }
        context.database.verify("reading an object's property")
        context.requireCurrent()
        if property.kind == .link && property.isList && !property.isMap {
            // A collection of objects is live, as RealmSwift's dynamic lists are.
            let list = List<DynamicObject>(owner: object, column: column)
            return property.isSet ? MutableSet(list: list) : list
        }
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
            // Any collection's members are copied (`looseCollectionMembers`); nil or NSNull empties it.
            guard let items = input.map({ $0 is NSNull ? [] : looseCollectionMembers($0)?.map { Optional($0) } }) ?? [] else { return false }
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

    /// A stored value as a loose Swift value: a link as the linked object (of its model class
    /// when the instance knows one, else dynamic: `DatabaseCore.linkTargetContext`), a mixed
    /// value as a `MixedValue`.
    private func loose(_ value: StoreValue, _ context: TableContext) -> Any? {
        switch property.kind {
        case .link:
            guard case .link(let key) = value else { return nil }
            guard let target = property.objectType, let targetContext = context.core.linkTargetContext(named: target) else {
                // The stored schema names every link's target; one it names but lacks is damage.
                DatabaseLogger.report(.error, "'\(context.table.schema.name).\(property.name)' links to '\(property.objectType ?? "?")', which \(context.database.configuration.path) does not store; the link reads as nil.")
                return nil
            }
            guard targetContext.containsOrStops(key) else { return nil }
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
        guard let input = input.flatMap(unwrapAny), !(input is NSNull) else { return property.isOptional ? .null : nil }
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
