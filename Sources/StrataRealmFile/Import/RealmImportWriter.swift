import Foundation
import StrataStore

/// The copying behind ``RealmImport``: reads the Realm file class by class, a cluster's
/// columns at a time, and writes the objects through one object-store session, in one pass.
///
/// Before copying, the writer lists every class's Realm object keys (ascending, as the
/// clusters hold them) and asks each table for the key its next insert gets: inserting a
/// class's objects in that order gives the i-th the table's first key plus i (checked at each
/// insert), so a link to any object, copied already or not, is written with the object that
/// holds it. Each object goes in whole: its scalar values straight from the columns into the
/// new row (`TableAccess.insert(primaryKey:writing:)`), its links, then its collections and
/// its embedded objects (inserted with it and given to it in the same transaction, as the
/// store requires). Commits happen between objects every `batchSize` objects, so the
/// transaction stays bounded by a batch; what grows with the file is the list of object keys
/// (8 bytes an object).
struct RealmImportWriter {
    let file: RealmFile
    let session: StoreSession
    let schema: Schema
    let options: RealmImport.Options
    private(set) var report = RealmImportReport()
    /// Per class (not embedded), its objects' Realm keys and the Strata key of the first.
    private var keyMaps: [String: KeyMap] = [:]
    /// The values of the object being copied that the row takes as `StoreValue`s (by column
    /// index): kept between objects so that its storage is reused.
    private var cells: [(index: Int, value: StoreValue)] = []
    private var writesInBatch = 0
    private let batchSize = 20_000

    init(file: RealmFile, session: StoreSession, schema: Schema, options: RealmImport.Options) {
        self.file = file
        self.session = session
        self.schema = schema
        self.options = options
    }

    /// A class's Realm object keys in ascending order, and the Strata key its first object
    /// gets: the object at position i gets `firstKey + i`.
    private struct KeyMap {
        let realmKeys: [Int64]
        let firstKey: Int64

        /// The Strata key of the object with Realm key `realmKey`, or nil if the class has no
        /// such object (an unresolved link).
        func strataKey(_ realmKey: Int64) -> ObjectKey? {
            var low = 0
            var high = realmKeys.count
            while low < high {
                let middle = (low + high) / 2
                if realmKeys[middle] < realmKey { low = middle + 1 } else { high = middle }
            }
            guard low < realmKeys.count, realmKeys[low] == realmKey else { return nil }
            return ObjectKey(firstKey + Int64(low))
        }
    }

    /// The Strata key a link resolves to, or nil for a target not in the file.
    private func strataKey(_ link: RealmLink) -> ObjectKey? {
        keyMaps[link.className]?.strataKey(link.objectKey)
    }

    /// A property of a class as both files describe it.
    private struct PropertyPlan {
        let realm: RealmProperty
        /// The property's index in the Strata table.
        let index: Int
        /// The property's position in the class's properties (and in a ``RowValues``).
        let position: Int
        /// Whether it may point at objects (a link, or a mixed value).
        var pointsAtObjects: Bool { realm.type == .object || realm.type == .mixed }
        /// Whether the row takes it typed, straight from its column (see ``setTyped``).
        var isTyped: Bool {
            guard realm.collection == .none else { return false }
            switch realm.type {
            case .int, .bool, .float, .double, .string, .timestamp: return true
            default: return false
            }
        }
    }

    /// The values of one object, by property position: a row of a cluster's columns, or an
    /// embedded object's values.
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

    mutating func copyAll(progress: ((RealmImportProgress) throws -> Void)?) throws {
        let topLevel = file.schema.classes.filter { !$0.isEmbedded }
        try session.beginWrite()
        for realmClass in topLevel {
            let (table, _) = try plan(for: realmClass)
            keyMaps[realmClass.name] = KeyMap(realmKeys: try file.objectKeys(ofClass: realmClass.name),
                                              firstKey: try table.nextInsertKey().rawValue)
        }
        for embedded in file.schema.classes where embedded.isEmbedded { report.objectCounts[embedded.name] = 0 }
        for (position, realmClass) in topLevel.enumerated() {
            let (table, plans) = try plan(for: realmClass)
            guard let keyMap = keyMaps[realmClass.name] else { throw RealmFileError.noSuchClass(realmClass.name) }
            let total = keyMap.realmKeys.count
            var copied = 0
            try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: 0, objectCount: total,
                                              classNumber: position + 1, classCount: topLevel.count))
            try file.forEachCluster(ofClass: realmClass.name, properties: plans.map(\.realm.name)) { objectKeys, values in
                try Self.checkTypedColumns(values, plans: plans, className: realmClass.name)
                let columns = values.map { Optional($0) }
                for (row, objectKey) in objectKeys.enumerated() {
                    guard copied < total, keyMap.realmKeys[copied] == objectKey else {
                        throw RealmFileError.corrupted(reason: "the clusters of \(realmClass.name) list object \(objectKey) out of order")
                    }
                    let key = try copy(RowValues(key: objectKey, columns: columns, row: row), of: realmClass, into: table, plans: plans)
                    let expected = keyMap.firstKey + Int64(copied)
                    guard key.rawValue == expected else {
                        throw RealmImportError.cannotWrite(path: "", reason: "the new file gave \(realmClass.name)'s object \(copied) the key \(key.rawValue) instead of \(expected), which links to it were written with")
                    }
                    copied += 1
                    try endOfObject()
                    if copied % 1000 == 0 {
                        try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                                          classNumber: position + 1, classCount: topLevel.count))
                    }
                }
            }
            guard copied == total else {
                throw RealmFileError.corrupted(reason: "\(realmClass.name) lists \(total) object keys but its clusters hold \(copied) objects")
            }
            report.objectCounts[realmClass.name] = copied
            if copied % 1000 != 0 {
                try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: total,
                                                  classNumber: position + 1, classCount: topLevel.count))
            }
            // The links were written with the objects: the linking phase of a class that points
            // at objects is complete as soon as its objects are.
            if copied > 0 && plans.contains(where: \.pointsAtObjects) {
                try progress?(RealmImportProgress(className: realmClass.name, objectsCopied: copied, objectCount: copied,
                                                  classNumber: position + 1, classCount: topLevel.count, phase: .linking))
            }
        }
        _ = try session.commit()
    }

    /// Checks that each column the row takes typed holds values of its property's type, or
    /// nulls where the property is nullable, so that ``setTyped`` needs no check per value
    /// (and a damaged file is an error, not a wrong value).
    private static func checkTypedColumns(_ values: [[RealmValue]], plans: [PropertyPlan], className: String) throws {
        for position in plans.indices where plans[position].isTyped {
            let type = plans[position].realm.type
            let nullable = plans[position].realm.isNullable
            for value in values[position] {
                let fits: Bool
                switch (type, value) {
                case (_, .null): fits = nullable
                case (.int, .int), (.bool, .bool), (.float, .float), (.double, .double), (.string, .string), (.timestamp, .timestamp):
                    fits = true
                default: fits = false
                }
                guard fits else {
                    throw RealmFileError.corrupted(reason: "\(className).\(plans[position].realm.name), of type \(type), holds \(value)")
                }
            }
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

    /// Inserts `object` with all its values and returns its key: typed values straight into
    /// the new row, the others (links by the keys their targets get, mixed values, binary
    /// data, ids, decimals) converted first, then its collections and embedded objects.
    private mutating func copy(_ object: RowValues, of realmClass: RealmClassSchema, into table: TableAccess,
                               plans: [PropertyPlan]) throws -> ObjectKey {
        cells.removeAll(keepingCapacity: true)
        var primaryKey = StoreValue.null
        // By index, not `for plan in plans`: reading a plan's fields in place does not copy
        // (and retain) its names per object.
        for position in plans.indices where plans[position].realm.collection == .none {
            guard let value = object[position] else { continue }
            if plans[position].realm.isPrimaryKey { primaryKey = try plain(value) }
            if plans[position].isTyped { continue }
            if case .null = value { continue }
            switch plans[position].realm.type {
            case .object:
                // An embedded object is inserted after its parent, which then takes it.
                guard case let .link(link) = value else { continue }
                if let target = strataKey(link) {
                    cells.append((plans[position].index, .link(target)))
                } else {
                    report.unresolvedLinks += 1
                }
            case .mixed:
                if let converted = try mixed(value, plan: plans[position], object: object, className: realmClass.name) {
                    cells.append((plans[position].index, converted))
                }
            default:
                cells.append((plans[position].index, try plain(value)))
            }
        }
        let cells = self.cells
        let key = try table.insert(primaryKey: primaryKey) { row in
            for position in plans.indices where plans[position].isTyped {
                if let value = object[position] { Self.setTyped(value, plans[position].index, in: row) }
            }
            for cell in cells { row.set(cell.value, cell.index) }
        }
        for position in plans.indices {
            guard let value = object[position] else { continue }
            if case .null = value { continue }
            if plans[position].realm.collection != .none {
                try setCollection(value, plan: plans[position], of: object, key: key, in: table, className: realmClass.name)
            } else if plans[position].realm.type == .object, case let .embedded(child) = value {
                try table.set(.link(try insertEmbedded(child)), for: key, property: plans[position].index)
            }
        }
        return key
    }

    /// Writes a value of a typed column (checked by ``checkTypedColumns``) into the row; a
    /// null stays as the row starts.
    @inline(__always)
    private static func setTyped(_ value: RealmValue, _ column: Int, in row: InsertRow) {
        switch value {
        case let .int(number): row.setInt(number, column)
        case let .bool(flag): row.setBool(flag, column)
        case let .float(number): row.setFloat(number, column)
        case let .double(number): row.setDouble(number, column)
        case let .string(text): row.setString(text, column)
        case let .timestamp(time): row.setDate(date(time).timeIntervalSinceReferenceDate, column)
        default: break
        }
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
            guard let key = strataKey(link) else {
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
        let key = try copy(RowValues(object, plans: plans), of: realmClass, into: table, plans: plans)
        report.objectCounts[realmClass.name, default: 0] += 1
        return key
    }

    /// A mixed value; nil when it is left out.
    private mutating func mixed(_ value: RealmValue, plan: PropertyPlan, object: RowValues, className: String) throws -> StoreValue? {
        switch value {
        case let .link(link):
            guard let key = strataKey(link), let table = schema[link.className] else {
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
                guard let key = strataKey(link), let table = schema[link.className] else {
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
