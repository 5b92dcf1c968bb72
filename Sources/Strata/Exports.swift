// Value types that live in the object store and are part of Strata's public API.
public import StrataStore

/// A 12-byte, BSON-compatible object identifier: a timestamp, a per-process random value and
/// a counter. `ObjectId.generate()` makes a new one.
public typealias ObjectId = StrataStore.ObjectId

/// A 128-bit IEEE 754 decimal floating-point number (BID encoding, as BSON stores it).
public typealias Decimal128 = StrataStore.Decimal128

/// The schema of a database: its object types. Read it from `Database.schema`.
public typealias Schema = StrataStore.Schema
/// One object type of a schema.
public typealias ObjectSchema = StrataStore.ObjectSchema
/// One property of an object type.
public typealias Property = StrataStore.PropertySchema
/// The ways property values are stored.
public typealias PropertyType = StrataStore.PropertyKind

/// Why a query could not be built: a malformed string predicate, an unknown property, a value
/// of the wrong type. Thrown by `FilterPredicate` and `Results.filter(_:)`.
public typealias QueryError = StrataStore.QueryError
