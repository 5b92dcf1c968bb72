/// A property value as it travels between devices and the server: every kind of value a Strata
/// property can hold, each tagged with its kind, so a `MixedValue` property needs no separate
/// encoding. Collection properties are not values: lists, sets and maps change through their
/// own operations (see ``SyncOperation``). A list or dictionary nested in a mixed value is
/// one (``mixedList(_:)``, ``mixedDictionary(_:)``): it travels, and merges, whole, so the
/// last writer of the property wins.
///
/// Equality is exact, as replication needs it: floats, doubles and dates compare by bit pattern
/// (so a NaN equals itself and `-0.0` differs from `0.0`), strings by their UTF-8 bytes (so two
/// spellings of one canonically equivalent text stay two values). Two equal values encode to
/// the same bytes (embedded values too: their property names and map keys compare by UTF-8
/// bytes as well). See `SyncValue+Order.swift` for equality, hashing and the total order.
public indirect enum SyncValue: Sendable {
    /// No value (an optional property that is nil).
    case null
    /// A boolean.
    case bool(Bool)
    /// A 64-bit signed integer (every integer width travels as this).
    case int(Int64)
    /// A 32-bit float (its exact bits travel).
    case float(Float)
    /// A 64-bit double (its exact bits travel).
    case double(Double)
    /// A string (UTF-8 on the wire).
    case string(String)
    /// Raw bytes.
    case data([UInt8])
    /// A date as seconds since 1970 (the `Double`'s exact bits travel).
    case date(Double)
    /// An `ObjectId`'s 12 bytes.
    case objectID([UInt8])
    /// A `UUID`'s 16 bytes.
    case uuid([UInt8])
    /// A `Decimal128`'s 16 bytes, in Strata's stored form.
    case decimal128([UInt8])
    /// A link to an object of a synced class, by its class and primary key.
    case link(ObjectRef)
    /// An embedded object, as its properties' values (a whole value: see the conflict rules).
    case embedded(EmbeddedValue)
    /// A list nested in a mixed value: its elements, which may nest again (protocol version 2).
    case mixedList([SyncValue])
    /// A dictionary nested in a mixed value, by string key (protocol version 2).
    case mixedDictionary([String: SyncValue])
}

/// An embedded object's properties, by name. Lists of values or of embedded objects inside an
/// embedded object travel as `.list` entries of this dictionary.
public struct EmbeddedValue: Sendable, Hashable {
    /// The embedded object's properties, by persisted name.
    public var properties: [String: EmbeddedField]
    /// Makes an embedded value from its properties.
    public init(properties: [String: EmbeddedField]) { self.properties = properties }
}

/// One property of an embedded object: a value, or a collection of values.
public enum EmbeddedField: Sendable, Hashable {
    /// A single value.
    case value(SyncValue)
    /// A list of values, in order.
    case list([SyncValue])
    /// A set of values (travels in the order given).
    case set([SyncValue])
    /// A map from string keys to values.
    case map([String: SyncValue])
}
