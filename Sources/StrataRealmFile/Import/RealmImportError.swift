/// Why importing a Realm file into a Strata file stopped. Whatever the error, the destination
/// does not exist afterwards (the import writes a temporary file beside it and renames it at
/// the end), and the source is never written.
///
/// Problems reading the source are ``RealmFileError``s; these are the import's own.
public enum RealmImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The destination already exists; the import never replaces a file.
    case destinationExists(path: String)
    /// A mixed value holds a nested collection Strata's `MixedValue` cannot hold: a set, or
    /// lists and dictionaries nested deeper than Strata's limit (50 levels). `object` names the
    /// object by its primary key when its class has one, else by its Realm object key.
    case nestedCollectionInMixed(className: String, property: String, object: String)
    /// Writing the Strata file failed (`reason` is the store's or the file system's error).
    case cannotWrite(path: String, reason: String)

    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case let .destinationExists(path):
            return "\(path) already exists; the import never replaces a file: move it away or choose another destination"
        case let .nestedCollectionInMixed(className, property, object):
            return "\(className).\(property) of object \(object) holds a nested collection in a mixed value that "
                + "Strata's MixedValue cannot hold (a set, or lists and dictionaries nested more than 50 levels deep); "
                + "import with skipNestedCollectionsInMixed to leave such values out (they are counted in the report)"
        case let .cannotWrite(path, reason):
            return "cannot write the Strata file \(path): \(reason)"
        }
    }
}
