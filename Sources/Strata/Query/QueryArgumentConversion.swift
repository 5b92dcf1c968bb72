import Foundation
import StrataStore

// Converting the Swift values passed to `filter("age > %@", 3)` into the values a string
// predicate reads.

/// Unwraps an `Optional` held in an `Any`.
private protocol OptionalQueryArgument {
    var wrappedQueryArgument: Any? { get }
}

extension Optional: OptionalQueryArgument {
    fileprivate var wrappedQueryArgument: Any? { self.map { $0 as Any } }
}

/// The query value for one argument of a string predicate: a persistable scalar (Bool, the
/// integer types, Float, Double, String, Data, Date, UUID, ObjectId, Decimal128, a
/// `PersistableEnum`'s raw value), nil or `NSNull` (`.null`), a managed `Object` (a link to
/// it), an unmanaged `Object` (a link that no stored link equals), or an array or set of those
/// (`.list`, for `IN %@` and `BETWEEN %@`).
///
/// - Throws: `QueryError.Kind.invalidArgument` naming the Swift type of a value that cannot be
///   an argument, or when the value is a deleted or invalidated object.
func queryArgument(_ value: Any) throws(QueryError) -> QueryArgument {
    if let value = try queryScalar(value) { return .value(value) }
    if let sequence = value as? any Sequence {
        var values: [StoreValue] = []
        for element in sequence {
            guard let converted = try queryScalar(element) else {
                throw QueryError(.invalidArgument,
                                 "an element of type \(typeName(element)) in a \(typeName(value)) argument cannot be compared in a query; use persistable values or objects")
            }
            values.append(converted)
        }
        return .list(values)
    }
    throw QueryError(.invalidArgument,
                     "a value of type \(typeName(value)) cannot be a query argument; use a persistable value, an object, nil, or an array of them")
}

/// The type name shown in messages (the dynamic type, with the wrapped type for optionals).
private func typeName(_ value: Any) -> String {
    String(describing: type(of: value))
}

/// One value converted, or nil when it is not a single value (a collection, or an unknown
/// type).
private func queryScalar(_ value: Any) throws(QueryError) -> StoreValue? {
    if let optional = value as? any OptionalQueryArgument {
        guard let wrapped = optional.wrappedQueryArgument else { return .null }
        return try queryScalar(wrapped)
    }
    if value is NSNull { return .null }
    if let object = value as? Object {
        // An unmanaged object is no object of the database, so it equals no link (as in
        // RealmSwift: `==` matches nothing, `!=` every object). The key stands for it: keys
        // are handed out upwards from 0 and never reach `Int64.max`, and negative keys mean
        // nil in a link column, so no stored link, nil included, equals it.
        guard object.isManaged else { return .link(ObjectKey(Int64.max)) }
        guard !object.isInvalidated else {
            throw QueryError(.invalidArgument,
                             "a deleted or invalidated \(typeName(object)) cannot be a query argument")
        }
        return .link(ObjectKey(object._slot.key))
    }
    if let scalar = value as? any _PersistableScalar { return scalar._strataStore(nil) }
    if let key = value as? ObjectKey { return .link(key) }
    return nil
}
