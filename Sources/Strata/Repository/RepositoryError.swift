/// Why a ``Repository`` or ``LocalRepository`` could not do what it was asked.
public enum RepositoryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The schema of `type` could not be derived from the type alone: decoding it from
    /// placeholder values failed at `property` (a `RawRepresentable` enum that is not
    /// `CaseIterable`, or an `init(from:)` that rejects the placeholders).
    case cannotDeriveSchema(type: String, property: String, reason: String)
    /// `type` has no property named `id`, or its `id` is not a String, Int, UUID or ObjectId.
    case unsupportedIdentifier(type: String, reason: String)
    /// The file stores `type` (the repository's type, or the embedded type of one of its nested
    /// structs) in a way the Swift type's `property` cannot follow without losing or inventing
    /// values: its stored values are of another kind, it is new and required while stored items
    /// have no value for it, or it was optional and is now required. The file is left as it is.
    /// Changes that can be followed (new optional or defaulted properties, removed ones,
    /// declared renames) are made on open; see "When the type changes" in <doc:Repositories>.
    case schemaMismatch(type: String, property: String, reason: String)
    /// A property named in `indexes:` is not a column that can be indexed.
    case cannotIndex(type: String, property: String, reason: String)
    /// A value could not be encoded into, or decoded from, its columns.
    case valueConversion(type: String, property: String, reason: String)
    /// A query's predicate or sort key is not valid for `type`.
    case invalidQuery(type: String, reason: String)
    /// The JSON file a ``LocalRepository`` imports could not be read or decoded. The file is
    /// left as it is.
    case damagedJSONFile(path: String, reason: String)
    /// The database under the repository failed (opening, writing).
    case database(reason: String)

    /// The error in words, naming the type and property concerned.
    public var description: String {
        switch self {
        case .cannotDeriveSchema(let type, let property, let reason):
            "Cannot derive the columns of \(type) (at '\(property)'): \(reason)"
        case .unsupportedIdentifier(let type, let reason):
            "\(type) cannot be stored in a repository: \(reason)"
        case .schemaMismatch(let type, let property, let reason):
            "The file's \(type).\(property) does not match the Swift type: \(reason)"
        case .cannotIndex(let type, let property, let reason):
            "Cannot index \(type).\(property): \(reason)"
        case .valueConversion(let type, let property, let reason):
            "Cannot convert \(type).\(property): \(reason)"
        case .invalidQuery(let type, let reason):
            "Invalid query on \(type): \(reason)"
        case .damagedJSONFile(let path, let reason):
            "The JSON file \(path) cannot be imported (it is left untouched): \(reason)"
        case .database(let reason):
            "The repository's database failed: \(reason)"
        }
    }
}
