public import Foundation

/// A Realm file (file format 24, written by Realm Core 14 — RealmSwift 10.4x and later), open
/// for reading.
///
/// The reader links no Realm code. It never writes: the file is opened read-only and mapped
/// read-only. Everything it reads from the file is checked before use, so a damaged or foreign
/// file gives a ``RealmFileError`` rather than a crash, a hang or an allocation larger than
/// the file justifies.
///
/// ```swift
/// let realm = try RealmFile(url: URL(fileURLWithPath: "default.realm"))
/// for objectClass in realm.schema.classes where !objectClass.isEmbedded {
///     try realm.forEachObject(ofClass: objectClass.name) { object in
///         print(object.key, object.values)
///     }
/// }
/// ```
///
/// A `RealmFile` is not `Sendable`: use it from one task at a time. The values it returns are
/// `Sendable`.
public final class RealmFile {
    /// The file format version of the current top ref (always 24 for a file that opened).
    public let fileFormatVersion: Int
    /// Whether the file is in Realm's streaming form (its top ref in a footer), as
    /// `writeCopy(toFile:)` and compaction leave it.
    public let isStreamingForm: Bool
    /// The schema as the file stores it.
    public let schema: RealmSchema
    /// The schema version the app declared (Realm's `schemaVersion`), or nil if the file has
    /// no object-store metadata.
    public let schemaVersion: UInt64?

    private let reader: ObjectReader

    /// Opens the Realm file at `url` for reading.
    ///
    /// - Throws: ``RealmFileError``: `.cannotOpen` if the file cannot be read,
    ///   `.notARealmFile` if it is not one (or is encrypted), `.unsupportedFileFormat` for a
    ///   format other than 24, `.corrupted` if its structure is damaged.
    public convenience init(url: URL) throws {
        try self.init(path: url.path)
    }

    /// Opens the Realm file at `path` for reading.
    public convenience init(path: String) throws {
        try self.init(mapping: try FileMapping(path: path))
    }

    /// Opens the encrypted Realm file at `url` with its 64-byte key (RealmSwift's
    /// `Realm.Configuration.encryptionKey`). Pages are decrypted as they are read, a bounded
    /// number of them kept (4 MiB), so a file of any size reads in bounded memory.
    ///
    /// - Throws: ``RealmFileError/invalidEncryptionKey(length:)`` for a key that is not 64
    ///   bytes, ``RealmFileError/wrongEncryptionKey`` if the file does not decrypt with it,
    ///   and the errors of ``init(url:)``. Reading an object later throws
    ///   ``RealmFileError/damagedEncryptedBlock(fileOffset:)`` if a page it lies in was damaged.
    public convenience init(url: URL, encryptionKey: Data) throws {
        try self.init(url: url, encryptionKey: encryptionKey, decryptedPageLimit: EncryptedPages.cachedPageLimit)
    }

    /// Opens an encrypted Realm file holding at most `decryptedPageLimit` decrypted pages.
    convenience init(url: URL, encryptionKey: Data, decryptedPageLimit: Int) throws {
        let encrypted = try FileMapping(path: url.path)
        try self.init(mapping: FileMapping(decrypting: encrypted, key: [UInt8](encryptionKey), pageLimit: decryptedPageLimit))
    }

    /// For an encrypted file, the number of decrypted pages held now.
    var heldDecryptedPageCount: Int? { reader.graph.file.heldDecryptedPageCount }

    /// Reads a Realm file held in memory (a copy is kept).
    public convenience init(bytes: [UInt8]) throws {
        try self.init(mapping: FileMapping(bytes: bytes))
    }

    private init(mapping file: FileMapping) throws {
        let header = try FileHeader(file: file)
        let graph = NodeGraph(file: file)
        let group = try Group(graph: graph, topRef: header.topRef)
        reader = ObjectReader(graph: graph, group: group)
        fileFormatVersion = header.fileFormat
        isStreamingForm = header.isStreamingForm
        schema = try RealmFile.schema(of: group, reader: reader)
        schemaVersion = try RealmFile.schemaVersion(of: group, graph: graph)
    }

    /// The number of objects of `className` (for an embedded class, the number of embedded
    /// objects of that class in the file).
    public func objectCount(ofClass className: String) throws -> Int {
        let table = try table(className)
        guard let root = table.clusterTreeRef else { return 0 }
        return try reader.graph.clusterTreeSize(root: root)
    }

    /// Calls `body` with every object of `className`, in Realm's order (ascending object key).
    /// Embedded objects appear inside their parents' values.
    public func forEachObject(ofClass className: String, _ body: (RealmObject) throws -> Void) throws {
        try reader.forEachObject(of: try table(className), body)
    }

    /// Calls `body` with each cluster of `className`'s objects in Realm's order: their object
    /// keys and, for each of `properties` (in that order), every object's value. Reads only
    /// those properties' columns, without building an object per row: the importer's path.
    func forEachCluster(ofClass className: String, properties: [String],
                        _ body: (_ keys: [Int64], _ values: [[RealmValue]]) throws -> Void) throws {
        let table = try table(className)
        let columns = try properties.map { name in
            guard let column = table.columns.first(where: { $0.name == name && $0.type != .backlink }) else {
                throw RealmFileError.corrupted(reason: "\(className) has no stored property \(name)")
            }
            return column
        }
        try reader.forEachCluster(of: table, columns: columns, body)
    }

    /// The object keys of `className`'s objects in Realm's order (the order of
    /// ``forEachObject(ofClass:_:)``), which ascends; throws ``RealmFileError/corrupted(reason:)``
    /// if the file's clusters do not.
    func objectKeys(ofClass className: String) throws -> [Int64] {
        let table = try table(className)
        guard let root = table.clusterTreeRef else { return [] }
        var keys: [Int64] = []
        for leaf in try reader.graph.clusterLeaves(root: root) {
            for key in try reader.graph.objectKeys(of: leaf) {
                if let last = keys.last, key <= last {
                    throw RealmFileError.corrupted(reason: "the object keys of \(className) do not ascend (\(key) after \(last))")
                }
                keys.append(key)
            }
        }
        return keys
    }

    /// Every object of `className`, in Realm's order.
    public func objects(ofClass className: String) throws -> [RealmObject] {
        var result: [RealmObject] = []
        try forEachObject(ofClass: className) { result.append($0) }
        return result
    }

    /// The object of `className` with object key `key` (as ``RealmLink/objectKey`` names it),
    /// or nil if there is none.
    public func object(ofClass className: String, key: Int64) throws -> RealmObject? {
        try reader.object(of: try table(className), key: key, depth: 0)
    }

    private func table(_ className: String) throws -> TableInfo {
        guard let table = reader.group.table(className: className) else {
            throw RealmFileError.noSuchClass(className)
        }
        return table
    }

    private static func schema(of group: Group, reader: ObjectReader) throws -> RealmSchema {
        var classes: [RealmClassSchema] = []
        for table in group.tables {
            guard let className = table.className else { continue }
            var properties: [RealmProperty] = []
            var sources: [RealmBacklinkSource] = []
            for column in table.columns {
                if column.type == .backlink {
                    sources.append(try reader.backlinkSource(of: column, in: table))
                    continue
                }
                var linkTarget: String?
                if let targetKey = column.oppositeTableKey {
                    let target = try group.table(key: targetKey)
                    linkTarget = target.className ?? target.name
                }
                properties.append(RealmProperty(
                    name: column.name, type: try propertyType(column.type), collection: column.collection,
                    isNullable: column.isNullable, isPrimaryKey: column.key == table.primaryKey,
                    isIndexed: column.hasSearchIndex || column.attributes.contains(.indexed),
                    isFullTextIndexed: column.attributes.contains(.fullTextIndexed), linkTarget: linkTarget))
            }
            classes.append(RealmClassSchema(
                name: className, isEmbedded: table.isEmbedded, isAsymmetric: table.tableType == 2,
                primaryKey: properties.first { $0.isPrimaryKey }?.name, properties: properties, backlinkSources: sources))
        }
        return RealmSchema(classes: classes)
    }

    private static func propertyType(_ type: ColumnType) throws -> RealmPropertyType {
        switch type {
        case .int: return .int
        case .bool: return .bool
        case .string: return .string
        case .binary: return .binary
        case .mixed: return .mixed
        case .timestamp: return .timestamp
        case .float: return .float
        case .double: return .double
        case .decimal: return .decimal128
        case .link, .linkList: return .object
        case .objectID: return .objectID
        case .uuid: return .uuid
        case .typedLink: return .typedLink
        case .backlink:
            throw RealmFileError.corrupted(reason: "a backlink column was taken for a property")
        }
    }

    /// The object store keeps the schema version in the one row of its `metadata` table.
    private static func schemaVersion(of group: Group, graph: NodeGraph) throws -> UInt64? {
        guard let table = group.tables.first(where: { $0.name == "metadata" }),
              let column = table.columns.first(where: { $0.name == "version" && $0.type == .int }),
              let root = table.clusterTreeRef,
              let leaf = try graph.clusterLeaves(root: root).first,
              column.key.clusterSlot < leaf.node.count,
              let columnRef = try leaf.node.ref(at: column.key.clusterSlot) else { return nil }
        let values = try graph.node(columnRef)
        guard values.count > 0 else { return nil }
        let version = try values.integer(at: values.count == 1 || !column.isNullable ? 0 : 1)
        return UInt64(bitPattern: version)
    }
}
