import Foundation
import StrataStore

/// The copying behind ``RealmImport``: reads the Realm file class by class and writes the
/// objects through one object-store session.
///
/// Two passes over the non-embedded classes. The first inserts every object with its values
/// and collections of values, and records which Strata key each Realm object key became. The
/// second, once every object exists, sets what points at objects: links, lists, sets and
/// dictionaries of links, mixed values (which may hold links), and embedded objects (which
/// are inserted there, whole, and given to their parent in the same transaction, as the store
/// requires). Commits happen between objects every `batchSize` writes, so memory stays bounded
/// by a batch, not by the file.
struct RealmImportWriter {
    let file: RealmFile
    let session: StoreSession
    let schema: Schema
    let options: RealmImport.Options
    private(set) var report = RealmImportReport()
    /// Per class, Realm object key → Strata object key.
    private var keys: [String: [Int64: ObjectKey]] = [:]
    private var writesInBatch = 0
    private let batchSize = 20_000

    init(file: RealmFile, session: StoreSession, schema: Schema, options: RealmImport.Options) {
        self.file = file
        self.session = session
        self.schema = schema
        self.options = options
    }

    /// A property of a class as both files describe it.
    private struct PropertyPlan {
        let realm: RealmProperty
        let index: Int
        /// Whether the second pass sets it (it may point at objects).
        var isDeferred: Bool { realm.type == .object || realm.type == .mixed }
    }

    private func plan(for realmClass: RealmClassSchema) throws -> (TableAccess, [PropertyPlan]) {
        guard let table = session.table(named: realmClass.name), let objectSchema = schema[realmClass.name] else {
            throw RealmImportError.cannotWrite(path: "", reason: "the new file has no table for \(realmClass.name)")
        }
        var plans: [PropertyPlan] = []
        for property in realmClass.properties {
            guard let index = objectSchema.propertyIndex(named: property.name) else {
                throw RealmImportError.cannotWrite(path: "", reason: "the new file has no property \(realmClass.name).\(property.name)")
            }
            plans.append(PropertyPlan(realm: property, index: index))
        }
        return (table, plans)
    }

    mutating func copyAll(progress: ((RealmImportProgress) throws -> Void)?) throws {
        let topLevel = file.schema.classes.filter { !$0.isEmbedded }
        try session.beginWrite()
        for (position, realmClass) in topLevel.enumerated() {
            let (table, plans) = try plan(for: realmClass)
            let total = try file.objectCount(ofClass: realmClass.name)
            var copied = 0
            var classKeys: [Int64: ObjectKey] = [:]
            classKeys.reserveCapacity(total)
            try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: 0, objectCount: total,
                                          classNumber: position + 1, classCount: topLevel.count))
            try file.forEachObject(ofClass: realmClass.name) { object in
                classKeys[object.key] = try insert(object, of: realmClass, into: table, plans: plans)
                copied += 1
                try endOfObject()
                if copied % 1000 == 0 {
                    try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                                  classNumber: position + 1, classCount: topLevel.count))
                }
            }
            keys[realmClass.name] = classKeys
            report.objectCounts[realmClass.name] = copied
            if copied % 1000 != 0 {
                try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                              classNumber: position + 1, classCount: topLevel.count))
            }
        }
        for embedded in file.schema.classes where embedded.isEmbedded { report.objectCounts[embedded.name] = 0 }
        for (position, realmClass) in topLevel.enumerated() {
            let (table, plans) = try plan(for: realmClass)
            let deferred = plans.filter(\.isDeferred)
            guard !deferred.isEmpty, let classKeys = keys[realmClass.name] else { continue }
            var linked = 0
            try file.forEachObject(ofClass: realmClass.name) { object in
                guard let key = classKeys[object.key] else { return }
                try setDeferred(deferred, of: object, key: key, in: table, className: realmClass.name)
                try endOfObject()
                linked += 1
                if linked % 1000 == 0 || linked == classKeys.count {
                    try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: linked, objectCount: classKeys.count,
                                                      classNumber: position + 1, classCount: topLevel.count, phase: .linking))
                }
            }
        }
        _ = try session.commit()
    }

    /// Commits and starts the next transaction once a batch is full (only between objects, so
    /// an embedded object never waits for its parent across a commit).
    private mutating func endOfObject() throws {
        writesInBatch += 1
        guard writesInBatch >= batchSize else { return }
        writesInBatch = 0
        _ = try session.commit()
        try session.beginWrite()
    }

    /// Inserts `object` with every value that does not point at an object, and its
    /// collections of such values.
    private mutating func insert(_ object: RealmObject, of realmClass: RealmClassSchema, into table: TableAccess,
                                 plans: [PropertyPlan]) throws -> ObjectKey {
        var values = [StoreValue](repeating: .null, count: table.schema.properties.count)
        for plan in plans where plan.realm.collection == .none {
            guard let value = object[plan.realm.name] else { continue }
            if plan.realm.type == .object { continue }
            if plan.realm.type == .mixed {
                if Self.holdsLink(value) { continue }  // second pass, once every object has its key
                values[plan.index] = try mixed(value, plan: plan, object: object, className: realmClass.name) ?? .null
                continue
            }
            values[plan.index] = try plain(value)
        }
        let key = try table.insert(values)
        for plan in plans where plan.realm.collection != .none && !plan.isDeferred {
            guard let value = object[plan.realm.name] else { continue }
            try setCollection(value, plan: plan, of: object, key: key, in: table, className: realmClass.name)
        }
        return key
    }

    /// Sets the properties the first pass left for later on the object `key`.
    private mutating func setDeferred(_ plans: [PropertyPlan], of object: RealmObject, key: ObjectKey, in table: TableAccess,
                                      className: String) throws {
        for plan in plans {
            guard let value = object[plan.realm.name] else { continue }
            if plan.realm.collection != .none {
                try setCollection(value, plan: plan, of: object, key: key, in: table, className: className)
            } else if plan.realm.type == .mixed {
                guard Self.holdsLink(value) else { continue }  // set in the first pass
                if let converted = try mixed(value, plan: plan, object: object, className: className) {
                    try table.set(converted, for: key, property: plan.index)
                }
            } else if let converted = try objectValue(value) {
                try table.set(converted, for: key, property: plan.index)
            }
        }
    }

    private mutating func setCollection(_ value: RealmValue, plan: PropertyPlan, of object: RealmObject, key: ObjectKey,
                                        in table: TableAccess, className: String) throws {
        switch value {
        case let .list(elements), let .set(elements):
            var converted: [StoreValue] = []
            converted.reserveCapacity(elements.count)
            for element in elements {
                if let element = try self.element(element, plan: plan, object: object, className: className) {
                    converted.append(element)
                }
            }
            if !converted.isEmpty { try table.setList(converted, for: key, property: plan.index) }
        case let .dictionary(entries):
            var mapKeys: [String] = []
            var mapValues: [StoreValue] = []
            for entry in entries {
                if entry.value == .null {
                    mapKeys.append(entry.key)
                    mapValues.append(.null)
                } else if let converted = try element(entry.value, plan: plan, object: object, className: className) {
                    mapKeys.append(entry.key)
                    mapValues.append(converted)
                }
            }
            if !mapKeys.isEmpty { try table.setMap(keys: mapKeys, values: mapValues, for: key, property: plan.index) }
        case .null:
            break
        default:
            throw RealmFileError.corrupted(reason: "\(className).\(plan.realm.name) is a collection but holds \(value)")
        }
    }

    /// One element of a collection, or nil when it is left out (an unresolved link, or a
    /// nested collection the options skip).
    private mutating func element(_ value: RealmValue, plan: PropertyPlan, object: RealmObject, className: String) throws -> StoreValue? {
        switch plan.realm.type {
        case .object: return try objectValue(value)
        case .mixed: return try mixed(value, plan: plan, object: object, className: className)
        default: return try plain(value)
        }
    }

    /// A link or an embedded object (inserted now); nil for an unresolved link.
    private mutating func objectValue(_ value: RealmValue) throws -> StoreValue? {
        switch value {
        case .null:
            return .null
        case let .link(link):
            guard let key = keys[link.className]?[link.objectKey] else {
                report.unresolvedLinks += 1
                return nil
            }
            return .link(key)
        case let .embedded(child):
            return .link(try insertEmbedded(child))
        default:
            throw RealmFileError.corrupted(reason: "a link property holds \(value)")
        }
    }

    /// Inserts an embedded object whole (its own embedded objects too) and returns its key,
    /// for its parent to take.
    private mutating func insertEmbedded(_ object: RealmObject) throws -> ObjectKey {
        guard let realmClass = file.schema[className: object.className] else { throw RealmFileError.noSuchClass(object.className) }
        let (table, plans) = try plan(for: realmClass)
        let key = try insert(object, of: realmClass, into: table, plans: plans)
        try setDeferred(plans.filter(\.isDeferred), of: object, key: key, in: table, className: realmClass.name)
        report.objectCounts[realmClass.name, default: 0] += 1
        return key
    }

    /// A mixed value; nil when it is left out.
    private mutating func mixed(_ value: RealmValue, plan: PropertyPlan, object: RealmObject, className: String) throws -> StoreValue? {
        switch value {
        case let .link(link):
            guard let key = keys[link.className]?[link.objectKey], let table = schema[link.className] else {
                report.unresolvedLinks += 1
                return nil
            }
            return .typedLink(table: table.tableID, key: key)
        case .list, .set, .dictionary:
            if options.skipNestedCollectionsInMixed {
                report.skippedNestedCollections += 1
                return nil
            }
            guard let nested = try nestedCollection(value, depth: 1) else {
                throw RealmImportError.nestedCollectionInMixed(className: className, property: plan.realm.name,
                                                               object: identity(of: object, className: className))
            }
            return nested
        case .embedded:
            throw RealmFileError.corrupted(reason: "\(className).\(plan.realm.name) holds an embedded object in a mixed value")
        default:
            return try plain(value)
        }
    }

    /// Whether a mixed value is a link or a nested collection holding one anywhere.
    private static func holdsLink(_ value: RealmValue) -> Bool {
        switch value {
        case .link: true
        case let .list(elements), let .set(elements): elements.contains(where: holdsLink)
        case let .dictionary(entries): entries.contains { holdsLink($0.value) }
        default: false
        }
    }

    /// A list or dictionary nested in a mixed value (`depth` levels deep), with its own nested
    /// collections; links inside are typed links (an unresolved one is none, counted). Nil
    /// for what a Strata mixed value cannot hold: a set, or nesting beyond
    /// `MixedEncoding.maximumNestingDepth`.
    private mutating func nestedCollection(_ value: RealmValue, depth: Int) throws -> StoreValue? {
        guard depth <= MixedEncoding.maximumNestingDepth else { return nil }
        func element(_ value: RealmValue) throws -> StoreValue? {
            switch value {
            case .list, .set, .dictionary:
                return try nestedCollection(value, depth: depth + 1)
            case let .link(link):
                guard let key = keys[link.className]?[link.objectKey], let table = schema[link.className] else {
                    report.unresolvedLinks += 1
                    return .null
                }
                return .typedLink(table: table.tableID, key: key)
            case .embedded:
                throw RealmFileError.corrupted(reason: "a nested collection in a mixed value holds an embedded object")
            default:
                return try plain(value)
            }
        }
        switch value {
        case let .list(elements):
            var stored: [StoreValue] = []
            stored.reserveCapacity(elements.count)
            for value in elements {
                guard let converted = try element(value) else { return nil }
                stored.append(converted)
            }
            return .mixedList(stored)
        case let .dictionary(entries):
            var stored: [String: StoreValue] = [:]
            stored.reserveCapacity(entries.count)
            for entry in entries {
                guard let converted = try element(entry.value) else { return nil }
                stored[entry.key] = converted
            }
            return .mixedDictionary(stored)
        default:
            return nil
        }
    }

    /// How errors name an object: its primary key, else its Realm object key.
    private func identity(of object: RealmObject, className: String) -> String {
        if let primaryKey = file.schema[className: className]?.primaryKey, let value = object[primaryKey] {
            return "with \(primaryKey) \(value)"
        }
        return "with Realm object key \(object.key)"
    }

    /// A value that is not a link, a collection or an embedded object.
    private func plain(_ value: RealmValue) throws -> StoreValue {
        switch value {
        case .null: return .null
        case let .int(number): return .int(number)
        case let .bool(flag): return .bool(flag)
        case let .float(number): return .float(number)
        case let .double(number): return .double(number)
        case let .string(text): return .string(text)
        case let .binary(bytes): return .data(Data(bytes))
        case let .timestamp(time): return .date(RealmImportWriter.date(time))
        case let .objectID(id):
            guard let converted = ObjectId(bytes: id.bytes) else { throw RealmFileError.corrupted(reason: "an ObjectId of \(id.bytes.count) bytes") }
            return .objectId(converted)
        case let .uuid(uuid): return .uuid(uuid)
        case let .decimal128(decimal): return .decimal128(Decimal128(bidHigh: decimal.high, bidLow: decimal.low))
        case .link, .embedded, .list, .set, .dictionary:
            throw RealmFileError.corrupted(reason: "a value property holds \(value)")
        }
    }

    /// A Realm timestamp as a `Date`: whole seconds moved to Foundation's reference date in
    /// integers first, so only the final sum rounds.
    static func date(_ time: RealmTimestamp) -> Date {
        let (seconds, overflow) = time.seconds.subtractingReportingOverflow(978_307_200)
        let whole = overflow ? Double(time.seconds) - 978_307_200 : Double(seconds)
        return Date(timeIntervalSinceReferenceDate: whole + Double(time.nanoseconds) / 1_000_000_000)
    }
}
