// RealmSwift's names for Strata's API, so that code written for RealmSwift's local database
// compiles with only its import line changed (`import StrataRealmCompat`). Everything here
// is an alias or a thin forwarder; the behaviour is Strata's, documented on the Strata types.
@_exported public import Strata
public import Foundation

/// RealmSwift's name for a database instance.
public typealias Realm = Database

/// RealmSwift's name for the types a `List` can hold.
public typealias RealmCollectionValue = CollectionValue

/// RealmSwift's name for the collections of objects (`Results`, `List`, `LinkingObjects`).
public typealias RealmCollection = ObjectCollection

/// RealmSwift's name for any collection of objects as one type.
public typealias AnyRealmCollection = AnyObjectCollection

/// RealmSwift's name for the schema of one object type.
public typealias RealmSwiftObject = Object

extension Database.Configuration {
    /// RealmSwift's configuration initializer. `deleteRealmIfMigrationNeeded` is Strata's
    /// `deleteIfMigrationNeeded`; RealmSwift's full initializer, with `encryptionKey`, is in RealmFileSwitch.swift.
    public init(fileURL: URL? = Database.Configuration.defaultFileURL, inMemoryIdentifier: String? = nil,
                readOnly: Bool = false, schemaVersion: UInt64 = 0, migrationBlock: MigrationBlock? = nil,
                deleteRealmIfMigrationNeeded: Bool, shouldCompactOnLaunch: (@Sendable (Int, Int) -> Bool)? = nil,
                objectTypes: [Object.Type]? = nil) {
        self.init(fileURL: fileURL, inMemoryIdentifier: inMemoryIdentifier, readOnly: readOnly, schemaVersion: schemaVersion,
                  migrationBlock: migrationBlock, deleteIfMigrationNeeded: deleteRealmIfMigrationNeeded,
                  shouldCompactOnLaunch: shouldCompactOnLaunch, objectTypes: objectTypes)
    }

    /// RealmSwift's name for `deleteIfMigrationNeeded`.
    public var deleteRealmIfMigrationNeeded: Bool {
        get { deleteIfMigrationNeeded }
        set { deleteIfMigrationNeeded = newValue }
    }
}

/// RealmSwift's global function for the schema version of a file
/// (``Database/schemaVersion(at:encryptionKey:)``).
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    try Database.schemaVersion(at: fileURL, encryptionKey: encryptionKey)
}

extension Object {
    /// RealmSwift's name for `database`: the instance managing the object, nil if unmanaged.
    public var realm: Realm? { database }
}

extension List {
    /// RealmSwift's name for `database`.
    public var realm: Realm? { database }
}

extension LinkingObjects {
    /// RealmSwift's name for `database`.
    public var realm: Realm? { database }
}

extension Map {
    /// RealmSwift's name for `database`.
    public var realm: Realm? { database }
}

/// RealmSwift's name for the collections found by key (`Map`).
public typealias RealmKeyedCollection = KeyedCollection

/// RealmSwift's name for a value of any persistable kind (`MixedValue`). Strata has no
/// `.list` and `.dictionary` cases (RealmSwift 10.51's nested collections).
public typealias AnyRealmValue = MixedValue

// MARK: Notifications

/// RealmSwift's name for what a collection notification reports.
public typealias RealmCollectionChange = CollectionChange

/// RealmSwift's name for what a map notification reports.
public typealias RealmMapChange = MapChange
