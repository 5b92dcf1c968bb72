import Foundation
import Testing
import Strata
import StrataStore
@testable import StrataRealmFile

/// Importing the fixtures into Strata files: every object and value read back from the Strata
/// file equals what the reader reads from the Realm file (which ObjectValueTests holds equal to
/// the manifests), atomically, leaving the source as it was.
@Suite("RealmImport")
struct ImportTests {
    static func destination() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("strata-import-\(UUID().uuidString)")
            .appendingPathComponent("imported.strata")
    }

    static func makeDirectory(for url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    }

    /// Imports fixture `name` and compares every class; returns the report.
    @discardableResult
    static func importAndCompare(_ name: String, key: Data? = nil, skipNested: Bool = false) throws -> RealmImportReport {
        let source = Fixtures.url(name + ".realm")
        let before = try Data(contentsOf: source)
        let destination = destination()
        try makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        var reports: [RealmImportProgress] = []
        let report = try RealmImport.importFile(at: source, to: destination,
                                                options: .init(encryptionKey: key, skipNestedCollectionsInMixed: skipNested)) {
            reports.append($0)
        }
        #expect(try Data(contentsOf: source) == before, "the source is byte-identical afterwards")
        #expect(!FileManager.default.fileExists(atPath: RealmImport.temporaryURL(for: destination).path))
        let file = key.map { try? RealmFile(url: source, encryptionKey: $0) } ?? (try? RealmFile(url: source))
        let realm = try #require(file)
        var readBack = try ReadBack(path: destination.path, realm: realm)
        readBack.skipsNested = skipNested
        defer { readBack.close() }
        #expect(readBack.store.schemaVersion == (realm.schemaVersion ?? 0))
        #expect(report.schemaVersion == (realm.schemaVersion ?? 0))
        for realmClass in realm.schema.classes where !realmClass.isEmbedded {
            let expected = try realm.objects(ofClass: realmClass.name)
            let actual = try readBack.objects(of: realmClass.name)
            #expect(actual.count == expected.count, "\(name) \(realmClass.name): object count")
            #expect(report.objectCounts[realmClass.name] == expected.count)
            let final = reports.last { $0.className == realmClass.name }
            #expect(final?.objectsCopied == expected.count && final?.objectCount == expected.count, "\(realmClass.name): progress")
            for (actualObject, expectedObject) in zip(actual, expected) {
                for property in realmClass.properties {
                    let want = readBack.expected(expectedObject[property.name] ?? .null, property: property)
                    let got = actualObject[property.name] ?? .value(.null)
                    #expect(got == want, "\(name) \(realmClass.name)[\(expectedObject.key)].\(property.name): \(got) != \(want)")
                }
            }
        }
        let linksObjects = try realm.schema.classes.contains { try !$0.isEmbedded && $0.properties.contains { $0.type == .object || $0.type == .mixed } && realm.objectCount(ofClass: $0.name) > 0 }
        #expect(reports.contains { $0.phase == .linking } == linksObjects, "the linking phase is reported when there is one")
        return report
    }

    @Test("all-types: every object and value of every class arrives in the Strata file, nested collections in mixed values included")
    func allTypes() throws {
        let report = try ImportTests.importAndCompare("all-types")
        #expect(report.skippedNestedCollections == 0)
        #expect(report.objectCounts["Address", default: 0] > 0)
        #expect(report.objectCounts["Geo", default: 0] > 0)
        #expect(report.unresolvedLinks == 0)
    }

    @Test("all-types: with skipNestedCollectionsInMixed, nested collections are left out (none) and counted")
    func allTypesSkippingNestedCollections() throws {
        let report = try ImportTests.importAndCompare("all-types", skipNested: true)
        #expect(report.skippedNestedCollections > 0, "the fixture's nested list and dictionary are counted when skipped")
    }

    @Test("all-types: the nested list and dictionary in mixed values read back through Strata's dynamic API")
    func nestedCollectionsThroughTheDynamicAPI() throws {
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        try RealmImport.importFile(at: Fixtures.url("all-types.realm"), to: destination)
        let realm = try Fixtures.open("all-types")
        let expectedNested = try realm.objects(ofClass: "MixedValues").filter {
            switch $0["value"] { case .list?, .dictionary?: true; default: false }
        }
        #expect(!expectedNested.isEmpty)
        let database = try Database(configuration: Database.Configuration(fileURL: destination, schemaVersion: realm.schemaVersion ?? 0, objectTypes: []))
        // A mixed property read by name gives the value inside: the nested List or Map.
        let nested = database.dynamicObjects("MixedValues").filter {
            $0["value"] is List<MixedValue> || $0["value"] is Map<String, MixedValue>
        }
        #expect(nested.count == expectedNested.count)
    }

    @Test("people-50k: 44,961 people with their friends and tags, in order")
    func people() throws {
        let report = try ImportTests.importAndCompare("people-50k")
        #expect(report.objectCounts["Person"] == 44_961)
    }

    @Test("schema-v3: the values and the schema version 3 carry over")
    func schemaV3() throws {
        let report = try ImportTests.importAndCompare("schema-v3")
        #expect(report.schemaVersion == 3)
    }

    @Test("empty: the schema arrives with no objects")
    func empty() throws {
        let report = try ImportTests.importAndCompare("empty")
        #expect(report.objectCounts.values.allSatisfy { $0 == 0 })
    }

    @Test("encrypted: imports with its key; a wrong key is a typed error and leaves no file")
    func encrypted() throws {
        let key = try Fixtures.encryptionKey()
        try ImportTests.importAndCompare("encrypted", key: key)
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        var wrong = key
        wrong[40] ^= 1  // the HMAC half of the key, which the reader checks first
        #expect(throws: RealmFileError.wrongEncryptionKey) {
            try RealmImport.importFile(at: Fixtures.url("encrypted.realm"), to: destination, options: .init(encryptionKey: wrong))
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test("a destination that exists is refused and left as it was")
    func existingDestination() throws {
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        try Data("keep me".utf8).write(to: destination)
        #expect(throws: RealmImportError.destinationExists(path: destination.path)) {
            try RealmImport.importFile(at: Fixtures.url("schema-v3.realm"), to: destination)
        }
        #expect(try Data(contentsOf: destination) == Data("keep me".utf8))
    }

    struct Interrupted: Error {}

    @Test("an import that fails part way (here: the progress callback throws after 20,000 people) leaves no destination and no temporary file")
    func failurePartWayLeavesNothing() throws {
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        var calls = 0
        #expect(throws: Interrupted.self) {
            try RealmImport.importFile(at: Fixtures.url("people-50k.realm"), to: destination) { progress in
                calls += 1
                if progress.objectsCopied >= 20_000 { throw Interrupted() }
            }
        }
        #expect(calls > 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path)
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
    }

    @Test("a damaged source is a typed error and leaves no destination")
    func damagedSourceLeavesNothing() throws {
        let damaged = try Fixtures.damagedCopy(of: "schema-v3") { bytes in
            for offset in 24..<bytes.count { bytes[offset] = 0xFF }
        }
        defer { try? FileManager.default.removeItem(at: damaged) }
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        #expect(throws: RealmFileError.self) { try RealmImport.importFile(at: damaged, to: destination) }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path)
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
    }

    @Test("a leftover temporary file from a crashed import is replaced by the next import")
    func leftoverTemporaryFile() throws {
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        try Data(repeating: 0xAB, count: 8192).write(to: RealmImport.temporaryURL(for: destination))
        try RealmImport.importFile(at: Fixtures.url("schema-v3.realm"), to: destination)
        #expect(FileManager.default.fileExists(atPath: destination.path))
        #expect(!FileManager.default.fileExists(atPath: RealmImport.temporaryURL(for: destination).path))
    }

    @Test("people-50k reads back through Strata's dynamic API")
    func dynamicAPI() throws {
        let destination = ImportTests.destination()
        try ImportTests.makeDirectory(for: destination)
        defer { try? FileManager.default.removeItem(at: destination.deletingLastPathComponent()) }
        try RealmImport.importFile(at: Fixtures.url("people-50k.realm"), to: destination)
        let file = try Fixtures.open("people-50k")
        let first = try #require(try file.objects(ofClass: "Person").first)
        let database = try Database(configuration: Database.Configuration(fileURL: destination, schemaVersion: 1, objectTypes: []))
        let people = database.dynamicObjects("Person")
        #expect(people.count == 44_961)
        guard case let .int(id) = first["id"], case let .string(name) = first["name"] else {
            Issue.record("unexpected fixture values")
            return
        }
        let person = try #require(database.dynamicObject(ofType: "Person", forPrimaryKey: Int(id)))
        #expect(person["name"] as? String == name)
    }
}

/// A Strata file read back through the object store, its values in the reader's terms.
struct ReadBack {
    let store: Store
    let session: StoreSession
    /// Per class, Strata object key → the position of the object in its class.
    private var positions: [String: [ObjectKey: Int]] = [:]

    init(path: String, realm: RealmFile) throws {
        store = try Store.open(path: path, schema: nil)
        session = try store.makeSession()
        for realmClass in realm.schema.classes where !realmClass.isEmbedded {
            let table = try #require(session.table(named: realmClass.name))
            var classPositions: [ObjectKey: Int] = [:]
            for (position, key) in try table.allKeys().enumerated() { classPositions[key] = position }
            positions[realmClass.name] = classPositions
        }
        realmPositions = [:]
        for realmClass in realm.schema.classes where !realmClass.isEmbedded {
            var classPositions: [Int64: Int] = [:]
            for (position, object) in try realm.objects(ofClass: realmClass.name).enumerated() { classPositions[object.key] = position }
            realmPositions[realmClass.name] = classPositions
        }
        self.realm = realm
    }

    let realm: RealmFile
    private var realmPositions: [String: [Int64: Int]]
    /// Whether the import left nested collections in mixed values out (they are then null).
    var skipsNested = false

    func close() {
        session.close()
        store.close()
    }

    /// Every object of `className` in key order, each as property name → value in a
    /// comparable form.
    func objects(of className: String) throws -> [[String: Comparable]] {
        let table = try #require(session.table(named: className))
        return try table.allKeys().map { try object(key: $0, in: table) }
    }

    /// A value of either file in one comparable form: links as (class, position), embedded
    /// objects as their values, timestamps as dates, dictionaries as sorted entries.
    indirect enum Comparable: Equatable, CustomStringConvertible {
        case value(StoreValue)
        case link(String, Int)
        case object([String: Comparable])
        case list([Comparable])
        case map([String], [Comparable])

        var description: String {
            switch self {
            case let .value(value): return value.description
            case let .link(name, position): return "\(name)#\(position)"
            case let .object(values): return "\(values)"
            case let .list(elements): return "\(elements)"
            case let .map(keys, values): return "\(Dictionary(uniqueKeysWithValues: zip(keys, values.map(\.description))))"
            }
        }

        static func == (lhs: Comparable, rhs: Comparable) -> Bool {
            switch (lhs, rhs) {
            case let (.value(a), .value(b)):
                switch (a, b) {
                case let (.double(x), .double(y)): return x.bitPattern == y.bitPattern
                case let (.float(x), .float(y)): return x.bitPattern == y.bitPattern
                case let (.decimal128(x), .decimal128(y)): return x.bidHigh == y.bidHigh && x.bidLow == y.bidLow
                default: return a == b
                }
            case let (.link(a, x), .link(b, y)): return a == b && x == y
            case let (.object(a), .object(b)): return a == b
            case let (.list(a), .list(b)): return a == b
            case let (.map(k1, v1), .map(k2, v2)): return k1 == k2 && v1 == v2
            default: return false
            }
        }
    }

    private func object(key: ObjectKey, in table: TableAccess) throws -> [String: Comparable] {
        var result: [String: Comparable] = [:]
        for (index, property) in table.schema.properties.enumerated() {
            if property.isMap {
                let (keys, values) = try table.mapEntries(key, property: index)
                let pairs = zip(keys, try values.map { try stored($0, property: property) }).sorted {
                    Array($0.0.utf8).lexicographicallyPrecedes(Array($1.0.utf8))
                }
                result[property.name] = .map(pairs.map(\.0), pairs.map(\.1))
            } else if property.isList {
                result[property.name] = .list(try table.list(key, property: index).map { try stored($0, property: property) })
            } else {
                result[property.name] = try stored(try table.value(key, property: index), property: property)
            }
        }
        return result
    }

    private func stored(_ value: StoreValue, property: PropertySchema) throws -> Comparable {
        switch value {
        case let .link(key):
            let target = try #require(property.objectType)
            let targetTable = try #require(session.table(named: target))
            if targetTable.schema.isEmbedded { return .object(try object(key: key, in: targetTable)) }
            return .link(target, positions[target]?[key] ?? -1)
        case let .typedLink(tableID, key):
            let targetTable = try #require(session.table(id: tableID))
            return .link(targetTable.schema.name, positions[targetTable.schema.name]?[key] ?? -1)
        case let .mixedList(elements):
            return .list(try elements.map { try stored($0, property: property) })
        case let .mixedDictionary(entries):
            let sorted = entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            return .map(sorted.map(\.key), try sorted.map { try stored($0.value, property: property) })
        default:
            return .value(value)
        }
    }

    /// What the Strata file should hold for a property's value as the reader read it.
    func expected(_ value: RealmValue, property: RealmProperty) -> Comparable {
        switch (property.collection, value) {
        case let (.list, .list(elements)), let (.set, .set(elements)):
            return .list(elements.compactMap { nested($0, property: property) ? nil : element($0) })
        case let (.dictionary, .dictionary(entries)):
            let kept = entries.filter { !nested($0.value, property: property) }
            return .map(kept.map(\.key), kept.map { element($0.value) })
        case (.list, .null), (.set, .null):
            return .list([])
        case (.dictionary, .null):
            return .map([], [])
        default:
            return nested(value, property: property) ? .value(.null) : element(value)
        }
    }

    /// One value or element.
    private func element(_ value: RealmValue) -> Comparable {
        switch value {
        case let .list(elements), let .set(elements):
            // A collection nested in a mixed value.
            return skipsNested ? .value(.null) : .list(elements.map(element))
        case let .dictionary(entries):
            guard !skipsNested else { return .value(.null) }
            let sorted = entries.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
            return .map(sorted.map(\.key), sorted.map { element($0.value) })
        case let .link(link):
            return .link(link.className, realmPositions[link.className]?[link.objectKey] ?? -1)
        case let .embedded(child):
            var values: [String: Comparable] = [:]
            for childProperty in realm.schema[className: child.className]?.properties ?? [] {
                values[childProperty.name] = expected(child[childProperty.name] ?? .null, property: childProperty)
            }
            return .object(values)
        case .null: return .value(.null)
        case let .int(number): return .value(.int(number))
        case let .bool(flag): return .value(.bool(flag))
        case let .float(number): return .value(.float(number))
        case let .double(number): return .value(.double(number))
        case let .string(text): return .value(.string(text))
        case let .binary(bytes): return .value(.data(Data(bytes)))
        case let .timestamp(time):
            return .value(.date(Date(timeIntervalSinceReferenceDate: Double(time.seconds - 978_307_200) + Double(time.nanoseconds) / 1e9)))
        case let .objectID(id): return .value(ObjectId(bytes: id.bytes).map(StoreValue.objectId) ?? .null)
        case let .uuid(uuid): return .value(.uuid(uuid))
        case let .decimal128(decimal): return .value(.decimal128(Decimal128(bidHigh: decimal.high, bidLow: decimal.low)))
        }
    }

    /// Whether `value` is a collection nested in a mixed value that the import left out.
    private func nested(_ value: RealmValue, property: RealmProperty) -> Bool {
        guard skipsNested, property.type == .mixed else { return false }
        switch value {
        case .list, .set, .dictionary: return true
        default: return false
        }
    }
}
