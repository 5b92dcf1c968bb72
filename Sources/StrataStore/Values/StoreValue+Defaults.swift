// The values a non-optional property takes where no value is given, in one table. There are
// three, for three situations, and they differ only for dates, UUIDs and ObjectIds:
//
//   kind        defaultValue (stored zero)   initialValue (migration)   newObjectValue (new object)
//   date        reference date (2001-01-01)  Unix epoch (1970-01-01)    Unix epoch
//   uuid        all-zero UUID                all-zero UUID              a new random UUID
//   objectId    all-zero ObjectId            all-zero ObjectId          a newly generated ObjectId
//   others      zero, false, "", empty data, decimal 0; null for links and mixed values
//
// - `defaultValue(of:)` is what all-zero bytes decode to: a column a migration added reads so
//   before anything is written to it, and queries and dynamic objects treat a null read from
//   a required property as it. It must stay what the encoding gives, or a query would see a
//   different value than a read of the same row.
// - `initialValue(of:)` is what a migration writes into a property it made required where it
//   holds null (and into a required date it adds), and what a dynamic object created without
//   a date gets: as `defaultValue`, except that a date is the epoch, the object layer's `Date`
//   default and Realm's zero date.
// - `newObjectValue(of:)` is what a migration's `create` gives a property it was not given
//   a value for: what a new object of the model gets from its property's Swift default in the
//   object layer (`_strataZero` in Persistable.swift), so a fresh identifier rather than a
//   shared all-zero one.

import Foundation

extension StoreValue {
    /// What a non-optional property of `kind` reads as where nothing was stored: zero, false,
    /// "", empty data, the reference date, the all-zero UUID and ObjectId (null for links and
    /// mixed values, which are always optional).
    package static func defaultValue(of kind: PropertyKind) -> StoreValue {
        switch kind {
        case .bool: .bool(false)
        case .int: .int(0)
        case .float: .float(0)
        case .double: .double(0)
        case .string: .string("")
        case .data: .data(Data())
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .objectId: .objectId(ObjectId(bytes: [UInt8](repeating: 0, count: 12)) ?? ObjectId.generate())
        case .decimal128: .decimal128(Decimal128(0))
        case .link, .mixed: .null
        }
    }

    /// The value a non-optional property is given where a write gives none (a property a
    /// migration made required, holding null): `defaultValue(of:)`, but for a date the Unix
    /// epoch, as the object layer's `Date` default and Realm's zero date are.
    package static func initialValue(of kind: PropertyKind) -> StoreValue {
        kind == .date ? .date(Date(timeIntervalSince1970: 0)) : defaultValue(of: kind)
    }

    /// The value a new object's non-optional property of `kind` gets when none is given (a
    /// migration's `create`): as the object layer's defaults, the epoch for a date and a new
    /// UUID or ObjectId for each object.
    package static func newObjectValue(of kind: PropertyKind) -> StoreValue {
        switch kind {
        case .date: .date(Date(timeIntervalSince1970: 0))
        case .uuid: .uuid(UUID())
        case .objectId: .objectId(ObjectId.generate())
        default: defaultValue(of: kind)
        }
    }
}
