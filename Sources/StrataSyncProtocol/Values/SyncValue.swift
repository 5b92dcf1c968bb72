/// A property value as it travels between devices and the server: every kind of value a Strata
/// property can hold, each tagged with its kind, so a `MixedValue` property needs no separate
/// encoding. Collections are not values: lists, sets and maps change through their own
/// operations (see ``SyncOperation``).
public indirect enum SyncValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case float(Float)
    case double(Double)
    case string(String)
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
}

/// An embedded object's properties, by name. Lists of values or of embedded objects inside an
/// embedded object travel as `.list` entries of this dictionary.
public struct EmbeddedValue: Sendable, Hashable {
    public var properties: [String: EmbeddedField]
    public init(properties: [String: EmbeddedField]) { self.properties = properties }
}

/// One property of an embedded object: a value, or a collection of values.
public enum EmbeddedField: Sendable, Hashable {
    case value(SyncValue)
    case list([SyncValue])
    case set([SyncValue])
    case map([String: SyncValue])
}
