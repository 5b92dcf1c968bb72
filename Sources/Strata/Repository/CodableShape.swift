import Foundation
import StrataStore

/// What a `Codable` value looks like to the repository, as learned by decoding its type from
/// placeholders (``SchemaProbe``): the scalar it stores natively, or how it nests.
indirect enum CodableShape: Sendable, Equatable {
    /// A value Strata stores natively. `isURL` marks a `URL`, stored as its string.
    case scalar(PropertyKind, isURL: Bool)
    /// An `Optional` of the shape.
    case optional(CodableShape)
    /// An array of the shape.
    case array(CodableShape)
    /// A dictionary with `String` keys.
    case map(CodableShape)
    /// A keyed value (a nested struct) of the named type, with its fields in decoding order.
    case object(typeName: String, fields: [ProbedField])
    /// Anything else (a value whose decoding the probe could not follow).
    case other
}

/// One key of a nested struct and its shape.
struct ProbedField: Sendable, Equatable {
    let name: String
    let shape: CodableShape
}

/// A nested struct stored as an embedded object: its object type and its fields.
struct EmbeddedLayout: Sendable, Equatable {
    /// The embedded object type's name: the owner's name, `_`, the struct's name.
    let typeName: String
    let fields: [CodableField]

    /// The layout of a nested struct, or nil when one of its properties would need JSON (the
    /// struct is then stored whole as JSON) or it has no properties.
    init?(owner: String, structName: String, fields probed: [ProbedField]) {
        let typeName = owner + "_" + String(structName.map { $0.isLetter || $0.isNumber ? $0 : "_" })
        let fields = probed.map { CodableField(name: $0.name, shape: $0.shape, owner: typeName) }
        guard !fields.isEmpty, !fields.contains(where: { $0.storage == .json }) else { return nil }
        self.typeName = typeName
        self.fields = fields
    }

    /// The embedded object type and those of the structs nested in it.
    var schemas: [ObjectSchema] {
        [ObjectSchema(name: typeName, properties: fields.map { $0.propertySchema(isPrimaryKey: false, isIndexed: false) }, isEmbedded: true)]
            + fields.flatMap(\.embeddedSchemas)
    }
}

/// How one stored property of a `Codable` type maps to one column.
struct CodableField: Sendable, Equatable {
    /// The coding key, which is also the column's name.
    let name: String
    /// How the column stores it.
    let storage: Storage
    /// Whether nil is allowed (the property is an `Optional`).
    let isOptional: Bool

    enum Storage: Sendable, Equatable {
        /// One value of a native kind (`isURL`: a `URL` as its string).
        case column(PropertyKind, isURL: Bool)
        /// A list of values of a native kind, each element optional or not.
        case list(PropertyKind, isURL: Bool, optionalElements: Bool)
        /// A map from strings to values of a native kind.
        case map(PropertyKind, isURL: Bool, optionalElements: Bool)
        /// A nested struct whose properties all have columns: an embedded object.
        case embedded(EmbeddedLayout)
        /// An array of such structs: a list of embedded objects.
        case embeddedList(EmbeddedLayout)
        /// Anything without a column of its own (nested structs with a property that has
        /// none, optional arrays and dictionaries, dictionaries of structs, enums with
        /// associated values, nested collections): its JSON text in one string column.
        case json
    }

    /// The field for a probed shape: natives get their own columns, collections of natives
    /// become lists and maps, everything else is JSON.
    init(name: String, shape: CodableShape, owner: String) {
        self.name = name
        var shape = shape
        var optional = false
        if case .optional(let wrapped) = shape {
            optional = true
            shape = wrapped
        }
        func element(_ shape: CodableShape) -> (PropertyKind, Bool, Bool)? {
            switch shape {
            case .scalar(let kind, let isURL): (kind, isURL, false)
            case .optional(.scalar(let kind, let isURL)): (kind, isURL, true)
            default: nil
            }
        }
        var storage: Storage
        switch shape {
        case .scalar(let kind, let isURL):
            storage = .column(kind, isURL: isURL)
        case .object(let structName, let fields):
            storage = EmbeddedLayout(owner: owner, structName: structName, fields: fields).map { .embedded($0) } ?? .json
        case .array(.object(let structName, let fields)):
            storage = EmbeddedLayout(owner: owner, structName: structName, fields: fields).map { .embeddedList($0) } ?? .json
        case .array(let inner):
            if let (kind, isURL, optionalElements) = element(inner) {
                storage = .list(kind, isURL: isURL, optionalElements: optionalElements)
            } else {
                storage = .json
            }
        case .map(let inner):
            if let (kind, isURL, optionalElements) = element(inner) {
                storage = .map(kind, isURL: isURL, optionalElements: optionalElements)
            } else {
                storage = .json
            }
        default:
            storage = .json
        }
        // Lists and maps are never nil in the store: an optional collection is stored as JSON
        // so that nil and empty stay apart.
        if optional {
            switch storage {
            case .list, .map, .embeddedList: storage = .json
            default: break
            }
        }
        self.storage = storage
        isOptional = optional
    }

    /// The column this field is stored in.
    func propertySchema(isPrimaryKey: Bool, isIndexed: Bool) -> PropertySchema {
        switch storage {
        case .column(let kind, _):
            PropertySchema(name: name, kind: kind, isOptional: isOptional, isPrimaryKey: isPrimaryKey, isIndexed: isIndexed)
        case .list(let kind, _, let optionalElements):
            PropertySchema(name: name, kind: kind, isOptional: optionalElements, isList: true)
        case .map(let kind, _, let optionalElements):
            PropertySchema(name: name, kind: kind, isOptional: optionalElements, isMap: true)
        case .embedded(let layout):
            PropertySchema(name: name, kind: .link, isOptional: true, objectType: layout.typeName)
        case .embeddedList(let layout):
            PropertySchema(name: name, kind: .link, isList: true, objectType: layout.typeName)
        case .json:
            PropertySchema(name: name, kind: .string, isOptional: isOptional)
        }
    }

    /// The embedded object types this field's values are stored in.
    var embeddedSchemas: [ObjectSchema] {
        switch storage {
        case .embedded(let layout), .embeddedList(let layout): layout.schemas
        default: []
        }
    }

    /// Whether the field can take a secondary index.
    var canBeIndexed: Bool {
        if case .column(let kind, _) = storage { return kind.canBeIndexed }
        return false
    }
}
