import Foundation
import StrataStore

/// The copying behind ``RealmImport``: reads the Realm file class by class, a cluster's
/// columns at a time, and writes the objects through one object-store session.
///
/// One pass over the non-embedded classes inserts every object with its values, its
/// collections of values and whatever points at objects already copied (links, collections of
/// links, mixed values holding links), recording which Strata key each Realm object key
/// became. What points at an object not copied yet, or holds embedded objects, is kept aside
/// and written once every object exists (embedded objects are inserted then, whole, and given
/// to their parent in the same transaction, as the store requires). Commits happen between
/// objects every `batchSize` writes, so the transaction stays bounded by a batch; what grows
/// with the file is the map of object keys and the writes kept aside.
struct RealmImportWriter {
    let file: RealmFile
    let session: StoreSession
    let schema: Schema
    let options: RealmImport.Options
    private(set) var report = RealmImportReport()
    /// Per class, Realm object key → Strata object key.
    private var keys: [String: [Int64: ObjectKey]] = [:]
    /// The classes whose objects have all been copied.
    private var completedClasses: Set<String> = []
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
        /// The property's index in the Strata table.
        let index: Int
        /// The property's position in the class's properties (and in a ``RowValues``).
        let position: Int
        /// Whether the second pass sets it (it may point at objects).
        var isDeferred: Bool { realm.type == .object || realm.type == .mixed }
    }

    /// The values of one object, by property position: a row of a cluster's columns (the
    /// columns a pass read; nil for the others), or an embedded object's values.
    private struct RowValues {
        let key: Int64
        let columns: [[RealmValue]?]
        let row: Int

        subscript(position: Int) -> RealmValue? { columns[position]?[row] }

        /// An object read whole (an embedded object), as a one-row cluster.
        init(_ object: RealmObject, plans: [PropertyPlan]) {
            key = object.key
            columns = plans.map { plan in object[plan.realm.name].map { [$0] } }
            row = 0
        }

        /// This object with only its primary key (at `primaryKeyPosition`), to name it in an
        /// error without keeping its cluster's values.
        func identity(primaryKeyPosition: Int?) -> RowValues {
            var kept = [[RealmValue]?](repeating: nil, count: columns.count)
            if let position = primaryKeyPosition, let value = self[position] { kept[position] = [value] }
            return RowValues(key: key, columns: kept, row: 0)
        }

        init(key: Int64, columns: [[RealmValue]?], row: Int) {
            self.key = key
            self.columns = columns
            self.row = row
        }
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
            plans.append(PropertyPlan(realm: property, index: index, position: plans.count))
        }
        return (table, plans)
    }

    /// A write the import could not make when it inserted the object: a value pointing at an
    /// object not copied yet, or holding embedded objects (whose own links may point at such
    /// objects). Made once every object exists.
    private struct PendingWrite {
        let plan: PropertyPlan
        let key: ObjectKey
        /// The object's Realm key and primary key, for naming it in an error.
        let identity: RowValues
        let value: RealmValue
    }

    mutating func copyAll(progress: ((RealmImportProgress) throws -> Void)?) throws {
        let topLevel = file.schema.classes.filter { !$0.isEmbedded }
        try session.beginWrite()
        var pending: [PendingWrite] = []
        /// Per class, its range in `pending` and its number of objects.
        var pendingByClass: [(range: Range<Int>, objectCount: Int)] = []
        for (position, realmClass) in topLevel.enumerated() {
            let (table, plans) = try plan(for: realmClass)
            let deferred = plans.filter(\.isDeferred)
            let primaryKeyPosition = plans.first { $0.realm.isPrimaryKey }?.position
            let total = try file.objectCount(ofClass: realmClass.name)
            var copied = 0
            keys[realmClass.name] = Dictionary(minimumCapacity: total)
            let firstPending = pending.count
            try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: 0, objectCount: total,
                                              classNumber: position + 1, classCount: topLevel.count))
            try file.forEachCluster(ofClass: realmClass.name, properties: plans.map(\.realm.name)) { objectKeys, values in
                let columns = values.map { Optional($0) }
                for (row, objectKey) in objectKeys.enumerated() {
                    let object = RowValues(key: objectKey, columns: columns, row: row)
                    let key = try insert(object, of: realmClass, into: table, plans: plans)
                    // Before the object's own key is recorded, `keys` is what `insert` saw.
                    for index in deferred.indices {
                        guard let value = object[deferred[index].position], value != .null,
                              !isWrittenOnInsert(value, plan: deferred[index]) else { continue }
                        let plan = deferred[index]
                        if canWriteNow(value) {
                            _ = try setDeferred([plan], of: object, key: key, in: table, className: realmClass.name)
                        } else {
                            pending.append(PendingWrite(plan: plan, key: key, identity: object.identity(primaryKeyPosition: primaryKeyPosition),
                                                        value: value))
                        }
                    }
                    keys[realmClass.name, default: [:]][objectKey] = key
                    copied += 1
                    try endOfObject()
                    if copied % 1000 == 0 {
                        try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                                          classNumber: position + 1, classCount: topLevel.count))
                    }
                }
            }
            completedClasses.insert(realmClass.name)
            report.objectCounts[realmClass.name] = copied
            pendingByClass.append((firstPending..<pending.count, deferred.isEmpty ? 0 : copied))
            if copied % 1000 != 0 {
                try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                                  classNumber: position + 1, classCount: topLevel.count))
            }
        }
        for embedded in file.schema.classes where embedded.isEmbedded { report.objectCounts[embedded.name] = 0 }
        // Every object exists now: the writes left for later, class by class.
        for (position, realmClass) in topLevel.enumerated() {
            let (range, objectCount) = pendingByClass[position]
            guard objectCount > 0, let table = session.table(named: realmClass.name) else { continue }
            for (done, index) in range.enumerated() {
                let write = pending[index]
                _ = try setDeferred([write.plan], of: write.identity, value: write.value, key: write.key, in: table,
                                    className: realmClass.name)
                try endOfObject()
                if (done + 1) % 1000 == 0 {
                    try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: (done + 1) * objectCount / (range.count + 1),
                                                      objectCount: objectCount, classNumber: position + 1, classCount: topLevel.count,
                                                      phase: .linking))
                }
            }
            try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: objectCount, objectCount: objectCount,
                                              classNumber: position + 1, classCount: topLevel.count, phase: .linking))
        }
        _ = try session.commit()
    }

    /// Whether `insert` already wrote the deferred `value`: a to-one link to an object copied
    /// before.
    private func isWrittenOnInsert(_ value: RealmValue, plan: PropertyPlan) -> Bool {
        guard plan.realm.type == .object, plan.realm.collection == .none, case let .link(link) = value else { return false }
        return keys[link.className]?[link.objectKey] != nil
    }

    /// Whether every object `value` points at has been copied (or never will be: its class is
    /// done), and it holds no embedded object.
    private func canWriteNow(_ value: RealmValue) -> Bool {
        switch value {
        case let .link(link): keys[link.className]?[link.objectKey] != nil || completedClasses.contains(link.className)
        case .embedded: false
        case let .list(elements), let .set(elements): elements.allSatisfy(canWriteNow)
        case let .dictionary(entries): entries.allSatisfy { canWriteNow($0.value) }
        default: true
        }
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
    private mutating func insert(_ object: RowValues, of realmClass: RealmClassSchema, into table: TableAccess,
                                 plans: [PropertyPlan]) throws -> ObjectKey {
        var values = [StoreValue](repeating: .null, count: table.schema.properties.count)
        // By index, not `for plan in plans`: reading a plan's fields in place does not copy
        // (and retain) its names per object.
        for position in plans.indices where plans[position].realm.collection == .none {
            guard let value = object[position] else { continue }
            let type = plans[position].realm.type
            if type != .object && type != .mixed {
                values[plans[position].index] = try plain(value)
                continue
            }
            let plan = plans[position]
            if plan.realm.type == .object {
                // A link to an object copied before; anything else is written later.
                if case let .link(link) = value, let target = keys[link.className]?[link.objectKey] { values[plan.index] = .link(target) }
                continue
            }
            if plan.realm.type == .mixed {
                if Self.holdsLink(value) { continue }  // written once its objects have their keys
                values[plan.index] = try mixed(value, plan: plan, object: object, className: realmClass.name) ?? .null
                continue
            }
        }
        let key = try table.insert(values)
        for position in plans.indices where plans[position].realm.collection != .none && !plans[position].isDeferred {
            guard let value = object[position] else { continue }
            try setCollection(value, plan: plans[position], of: object, key: key, in: table, className: realmClass.name)
        }
        return key
    }

    /// Sets the properties `insert` left for later on the object `key`; returns whether it
    /// wrote anything (a null link or an empty collection needs no write on a new object).
    private mutating func setDeferred(_ plans: [PropertyPlan], of object: RowValues, key: ObjectKey, in table: TableAccess,
                                      className: String) throws -> Bool {
        var wrote = false
        for plan in plans {
            guard let value = object[plan.position] else { continue }
            wrote = try setDeferred([plan], of: object, value: value, key: key, in: table, className: className) || wrote
        }
        return wrote
    }

    /// Sets `value` of the one property in `plans` on the object `key`.
    private mutating func setDeferred(_ plans: [PropertyPlan], of object: RowValues, value: RealmValue, key: ObjectKey,
                                      in table: TableAccess, className: String) throws -> Bool {
        guard let plan = plans.first, value != .null else { return false }
        if plan.realm.collection != .none {
            return try setCollection(value, plan: plan, of: object, key: key, in: table, className: className)
        } else if plan.realm.type == .mixed {
            guard Self.holdsLink(value) else { return false }  // set by `insert`
            guard let converted = try mixed(value, plan: plan, object: object, className: className) else { return false }
            try table.set(converted, for: key, property: plan.index)
            return true
        } else if let converted = try objectValue(value) {
            try table.set(converted, for: key, property: plan.index)
            return true
        }
        return false
    }

    /// Sets a list, set or dictionary; returns whether it wrote (not for an empty one).
    @discardableResult
    private mutating func setCollection(_ value: RealmValue, plan: PropertyPlan, of object: RowValues, key: ObjectKey,
                                        in table: TableAccess, className: String) throws -> Bool {
        switch value {
        case let .list(elements), let .set(elements):
            var converted: [StoreValue] = []
            converted.reserveCapacity(elements.count)
            for element in elements {
                if let element = try self.element(element, plan: plan, object: object, className: className) {
                    converted.append(element)
                }
            }
            guard !converted.isEmpty else { return false }
            try table.setList(converted, for: key, property: plan.index)
            return true
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
            guard !mapKeys.isEmpty else { return false }
            try table.setMap(keys: mapKeys, values: mapValues, for: key, property: plan.index)
            return true
        case .null:
            return false
        default:
            throw RealmFileError.corrupted(reason: "\(className).\(plan.realm.name) is a collection but holds \(value)")
        }
    }

    /// One element of a collection, or nil when it is left out (an unresolved link, or a
    /// nested collection the options skip).
    private mutating func element(_ value: RealmValue, plan: PropertyPlan, object: RowValues, className: String) throws -> StoreValue? {
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
        let row = RowValues(object, plans: plans)
        let key = try insert(row, of: realmClass, into: table, plans: plans)
        _ = try setDeferred(plans.filter(\.isDeferred), of: row, key: key, in: table, className: realmClass.name)
        report.objectCounts[realmClass.name, default: 0] += 1
        return key
    }

    /// A mixed value; nil when it is left out.
    private mutating func mixed(_ value: RealmValue, plan: PropertyPlan, object: RowValues, className: String) throws -> StoreValue? {
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
    private func identity(of object: RowValues, className: String) -> String {
        if let primaryKey = file.schema[className: className]?.primaryKey,
           let position = file.schema[className: className]?.properties.firstIndex(where: { $0.name == primaryKey }),
           let value = object[position] {
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
