// What can be handed to another thread or actor through a `ThreadSafeReference`: managed
// objects, results, lists and linking objects. The hand-over captures only Sendable facts (the
// file, the object keys, the query) in the source context; the destination instance turns them
// back into live values of its own.

import StrataStore

/// A value confined to one database instance's context that can cross to another context
/// through `ThreadSafeReference` or `@ThreadSafe`: `Object`, `Results`, `List` and
/// `LinkingObjects`.
///
/// You do not conform your own types to this protocol; its requirements are Strata's.
public protocol ThreadConfined {
    /// The database instance the value belongs to; nil while unmanaged.
    var _confinedDatabase: Database? { get }
    /// Captures what is needed to find the value again elsewhere. Strata calls it in the
    /// value's own context.
    var _handover: Handover { get }
    /// Finds the value described by `handover` in `database`; nil when it no longer exists.
    static func _resolve(_ handover: Handover, in database: Database) -> Self?
}

/// What a `ThreadSafeReference` carries: which file, which version, and how to find the value
/// again (an object's key, a list's owner and property, or a query). Immutable and `Sendable`.
/// Created by Strata; you never make one yourself.
public struct Handover: Sendable {
    enum Target: @unchecked Sendable {
        // @unchecked: the metatypes are immutable and the query is an immutable value (the
        // Results' own predicate, kept opaque so that this type need not know its shape).
        case object(type: Object.Type, typeName: String, key: Int64)
        case list(ownerType: Object.Type, ownerKey: Int64, column: Int)
        case linkingObjects(targetType: Object.Type, targetKey: Int64, property: String)
        case results(query: Any?)
    }

    /// The identity of the file (its path or in-memory identifier).
    let fileIdentity: String
    /// The version the source instance read when the reference was made.
    let version: UInt64
    let target: Target
    /// A description of the source value, for messages.
    let summary: String

    /// Whether the value is found again by object keys (an object, a list, linking objects or
    /// results of a list), rather than by a query alone.
    var namesObjectKeys: Bool {
        switch target {
        case .object, .list, .linkingObjects: true
        case .results(let query): (query as? HandedOverQuery)?.listOrigin != nil
        }
    }
}

extension Object: ThreadConfined {
    /// The object's instance (`database`).
    public var _confinedDatabase: Database? { database }

    /// The object's hand-over: its class and key.
    public var _handover: Handover {
        guard let table = _slot.table else {
            fatalError("Cannot make a ThreadSafeReference to an unmanaged object: it is not confined to any thread, so pass it directly (or add it to a database first).")
        }
        require(!isInvalidated, "Cannot make a ThreadSafeReference to a deleted or invalidated object; check isInvalidated first.")
        let database = table.database
        return Handover(fileIdentity: database.configuration.identity, version: database.version,
                        target: .object(type: type(of: self), typeName: table.info.schema.name, key: _slot.key),
                        summary: "a '\(table.table.schema.name)' object")
    }

    /// The object with the hand-over's key in `database`, or nil if it was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> Self? {
        guard case .object(let type, let typeName, let key) = handover.target else { return nil }
        return database.materialize(type, typeName: typeName, key: ObjectKey(key)) as? Self
    }
}

extension Results: ThreadConfined {
    /// The results' instance.
    public var _confinedDatabase: Database? { database }

    /// The results' hand-over: their query (and, for results made from a list, which list).
    public var _handover: Handover {
        Handover(fileIdentity: database.configuration.identity, version: database.version,
                 target: .results(query: HandedOverQuery(predicate: predicate, orderings: orderings, listOrigin: listOrigin,
                                                         typeName: context?.info.schema.name)),
                 summary: listOrigin == nil ? "results of '\(Element.className())'" : "results of a list of '\(Element.className())'")
    }

    /// The same query, live in `database`; for results made from a list, over the same
    /// object's list, or nil when that object no longer exists.
    public static func _resolve(_ handover: Handover, in database: Database) -> Results<Element>? {
        guard case .results(let query) = handover.target else { return nil }
        let handed = Results(database: database, handingOver: query)
        if handed.listOrigin != nil { return handed.rebuiltFromList(in: database) }
        return handed
    }
}

extension List: ThreadConfined {
    /// The list's instance (`database`).
    public var _confinedDatabase: Database? { database }

    /// The list's hand-over: its owner and property.
    public var _handover: Handover {
        guard let (ownerType, ownerKey, column, database) = handoverSource else {
            fatalError("Cannot make a ThreadSafeReference to an unmanaged list: it is not confined to any thread, so pass it directly.")
        }
        return Handover(fileIdentity: database.configuration.identity, version: database.version,
                        target: .list(ownerType: ownerType, ownerKey: ownerKey, column: column), summary: "a list")
    }

    /// The same list of the same object in `database`, or nil if the object was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> List<Element>? {
        guard case .list(let ownerType, let ownerKey, let column) = handover.target,
              let owner = database.materialize(dynamic: ownerType, key: ObjectKey(ownerKey)) else { return nil }
        return List(owner: owner, column: column)
    }
}

extension List {
    /// The owner's class and key, the property and the owner's instance; nil while unmanaged.
    fileprivate var handoverSource: (Object.Type, Int64, Int, Database)? {
        guard let owner, let table = owner._slot.table else { return nil }
        return (type(of: owner), owner._slot.key, column, table.database)
    }
}

/// A Results' query as handed over: its condition and its sort order (immutable values).
struct HandedOverQuery: Sendable {
    let predicate: QueryPredicate?
    let orderings: [QueryOrdering]
    let listOrigin: ListOrigin?
    /// The stored type's name (what `Results<DynamicObject>` needs to find its table again).
    let typeName: String?
}

extension Results {
    /// Rebuilds results from a hand-over's query (the value `_handover` stored opaquely).
    init(database: Database, handingOver query: Any?) {
        let query = query as? HandedOverQuery
        let context = database.core.existingContext(for: Element.self, typeName: query?.typeName)
        self.init(database: database, context: context, predicate: query?.predicate, orderings: query?.orderings ?? [],
                  listOrigin: query?.listOrigin)
    }
}

extension Database {
    /// The managed object of class `type` (as stored, a subclass included) for `key`, or nil.
    func materialize(dynamic type: Object.Type, key: ObjectKey) -> Object? {
        guard let context = try? core.context(for: type), context.containsOrStops(key) else { return nil }
        return context.materialize(dynamicKey: key)
    }

    /// The managed object for `key` of class `type` stored as `typeName` (a `DynamicObject`
    /// needs the name), or nil.
    func materialize(_ type: Object.Type, typeName: String, key: ObjectKey) -> Object? {
        core.withReadLock {
            guard let context = core.existingContext(for: type, typeName: typeName), context.containsOrStops(key) else { return nil }
            return context.materialize(dynamicKey: key)
        }
    }
}

extension LinkingObjects: ThreadConfined {
    /// The instance the linking objects are read from (`database`).
    public var _confinedDatabase: Database? { database }

    /// The hand-over: the linked-to object's class and key, and the origin property.
    public var _handover: Handover {
        guard let target = linkedObject, let table = target._slot.table else {
            fatalError("Cannot make a ThreadSafeReference to the LinkingObjects of an unmanaged object: they are always empty, so pass them directly.")
        }
        require(!target.isInvalidated, "Cannot make a ThreadSafeReference to the LinkingObjects of a deleted or invalidated object; check isInvalidated first.")
        let database = table.database
        return Handover(fileIdentity: database.configuration.identity, version: database.version,
                        target: .linkingObjects(targetType: type(of: target), targetKey: target._slot.key, property: propertyName),
                        summary: "the linking objects of a '\(table.table.schema.name)' object")
    }

    /// The same object's linking objects in `database`, or nil if the object was deleted.
    public static func _resolve(_ handover: Handover, in database: Database) -> LinkingObjects<Element>? {
        guard case .linkingObjects(let targetType, let targetKey, let property) = handover.target,
              let target = database.materialize(dynamic: targetType, key: ObjectKey(targetKey)),
              let info = target._slot.table?.info,
              let linking = info.linkingProperties.first(where: { $0.originProperty == property && $0.originType == Element.self })
        else { return nil }
        return LinkingObjects.of(target, through: property, linksHere: linking.linksHere)
    }
}
