/// How far an import has got in one class: reported while the import copies the class's
/// objects, and once more when it has copied them all; then, for the classes whose objects
/// may point at objects, once with ``Phase/linking``, complete.
public struct RealmImportProgress: Sendable, Equatable {
    /// The two phases of an import.
    public enum Phase: Sendable, Equatable {
        /// Copying each object with its values.
        case copying
        /// Writing what points at objects (links, embedded objects, mixed values holding
        /// links). The import writes these with each object, knowing beforehand the key every
        /// object will get, so this phase is reported once per such class, complete, right
        /// after its copying.
        case linking
    }

    /// Which phase this report is from.
    public let phase: Phase
    /// The class being copied.
    public let className: String
    /// How many of its objects have been copied so far; in the linking phase, equal to
    /// ``objectCount``.
    public let objectsCopied: Int
    /// How many objects the class holds in the Realm file.
    public let objectCount: Int
    /// The number of classes (not embedded) the import copies, and this class's position
    /// among them (from 1).
    public let classNumber: Int
    /// The number of non-embedded classes in the file.
    public let classCount: Int

    /// A progress report.
    public init(className: String, objectsCopied: Int, objectCount: Int, classNumber: Int, classCount: Int,
                phase: Phase = .copying) {
        self.phase = phase
        self.className = className
        self.objectsCopied = objectsCopied
        self.objectCount = objectCount
        self.classNumber = classNumber
        self.classCount = classCount
    }
}

/// What an import copied.
public struct RealmImportReport: Sendable, Equatable {
    /// Per class (embedded classes included), the number of objects written to the Strata file.
    public var objectCounts: [String: Int] = [:]
    /// The schema version the Strata file carries (the Realm file's, 0 if it had none).
    public var schemaVersion: UInt64 = 0
    /// Mixed values holding a nested list or dictionary that were left out (stored as null,
    /// or left out of their collection), when the options allowed it.
    public var skippedNestedCollections: Int = 0
    /// Links whose target is not in the file (Realm's unresolved links), left out.
    public var unresolvedLinks: Int = 0

    /// An empty report.
    public init() {}
}
