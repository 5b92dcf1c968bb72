// MixedValue (RealmSwift's AnyRealmValue): every kind through a property, a list, a set and a
// map, through reopen; objects of any class, cleared when deleted; queries, sorting and
// aggregates across kinds; key-value input; migrations; frozen reads; damaged bytes.

import Foundation
import Testing
@testable import Strata
import StrataStore
import StrataTestWorkloads

final class Setting: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: MixedValue
    @Persisted var history: List<MixedValue>
    @Persisted var tags: MutableSet<MixedValue>
    @Persisted var extras: Map<String, MixedValue>
}

final class Appliance: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

/// A mixed value may not hold an embedded object; this type is here to check that Setting's
/// schema does not need it.
final class SettingV1: Object {
    override class func className() -> String { "Setting" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label = ""
}

/// One value of each kind a MixedValue holds, objects aside.
private var everyKind: [MixedValue] { [
    .none, .int(-7), .int(Int(Int64.max)), .bool(true), .bool(false), .float(1.5), .double(-2.25), .double(.infinity),
    .string(""), .string("héllo 🌍"), .data(Data([0, 1, 255])), .data(Data()),
    .date(Date(timeIntervalSinceReferenceDate: 12_345.5)), .objectId(try! ObjectId(string: "64b7f0c2a1b2c3d4e5f60718")),
    .decimal128(Decimal128(12345)), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
] }

@Suite struct MixedValueTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }

    @Test func everyKindRoundTripsThroughAPropertyAListASetAndAMapAndReopen() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for (position, value) in everyKind.enumerated() {
                    let setting = Setting()
                    setting.id = position
                    setting.value = value
                    db.add(setting)
                }
                let all = db.create(Setting.self, value: ["id": 100])
                all.history.append(objectsIn: everyKind)
                for value in everyKind { all.tags.insert(value) }
                for (position, value) in everyKind.enumerated() { all.extras["k\(position)"] = value }
            }
        }
        let db = try Database(configuration: configuration)
        for (position, value) in everyKind.enumerated() {
            #expect(db.object(ofType: Setting.self, forPrimaryKey: position)?.value == value)
        }
        let all = try #require(db.object(ofType: Setting.self, forPrimaryKey: 100))
        #expect(Array(all.history) == everyKind)
        #expect(all.tags.count == everyKind.count)
        for value in everyKind { #expect(all.tags.contains(value)) }
        for (position, value) in everyKind.enumerated() { #expect(all.extras["k\(position)"] == value) }
        #expect(problems(db).isEmpty)
        // A value never set reads as none; setting none clears.
        try db.write { db.create(Setting.self, value: ["id": 200]) }
        let fresh = try #require(db.object(ofType: Setting.self, forPrimaryKey: 200))
        #expect(fresh.value == .none)
        try db.write { fresh.value = .int(3) }
        #expect(fresh.value.intValue == 3 && fresh.value.stringValue == nil)
        try db.write { fresh.value = .none }
        #expect(fresh.value == .none)
    }

    @Test func anObjectOfAnyClassIsAddedAndReadAsItsClass() throws {
        let db = try Database(configuration: configuration)
        let setting = Setting()
        setting.id = 1
        let gadget = Appliance()
        gadget.id = 7
        gadget.name = "lamp"
        setting.value = .object(gadget)  // unmanaged: added with the setting
        try db.write {
            db.add(setting)
            setting.history.append(.object(db.create(Appliance.self, value: ["id": 8, "name": "fan"])))
            setting.history.append(.object(setting))  // its own class
        }
        #expect(gadget.isManaged)
        #expect(setting.value.object(Appliance.self)?.name == "lamp")
        #expect(setting.value.object(Setting.self) == nil)
        #expect(setting.history[0].object(Appliance.self)?.name == "fan")
        #expect(setting.history[1].object(Setting.self)?.id == 1)
        #expect(setting.value == .object(try #require(db.object(ofType: Appliance.self, forPrimaryKey: 7))))
    }

    @Test func deletingAnObjectClearsTheMixedValuesThatHoldIt() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let lamp = db.create(Appliance.self, value: ["id": 1, "name": "lamp"])
            let fan = db.create(Appliance.self, value: ["id": 2, "name": "fan"])
            let setting = db.create(Setting.self, value: ["id": 1])
            setting.value = .object(lamp)
            setting.history.append(objectsIn: [.object(lamp), .int(1), .object(fan)])
            setting.tags.insert(.object(lamp))
            setting.tags.insert(.string("x"))
            setting.extras["a"] = .object(lamp)
            setting.extras["b"] = .object(fan)
            db.create(Setting.self, value: ["id": 2, "value": MixedValue.object(fan)])
        }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        try db.write { db.delete(try #require(db.object(ofType: Appliance.self, forPrimaryKey: 1))) }
        #expect(setting.value == .none)
        // Cleared in the file, not only read as none: queries see nil.
        #expect(db.objects(Setting.self).filter("value == nil").map(\.id) == [1])
        #expect(db.objects(Setting.self).filter("ANY history == nil").map(\.id) == [1])
        #expect(setting.history.count == 3 && setting.history[0] == .none && setting.history[1] == .int(1))
        #expect(setting.history[2].object(Appliance.self)?.name == "fan")
        #expect(Array(setting.tags) == [.string("x")])
        #expect(setting.extras.keys == ["a", "b"] && setting.extras["a"] == MixedValue.none)
        #expect(setting.extras["b"]?.object(Appliance.self)?.name == "fan")
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 2)?.value.object(Appliance.self)?.name == "fan")
        // Deleted in the same write as the list that holds it is changed: the transaction's
        // own copy is cleared too.
        try db.write {
            setting.history.append(.string("late"))
            db.delete(try #require(db.object(ofType: Appliance.self, forPrimaryKey: 2)))
        }
        #expect(Array(setting.history) == [.none, .int(1), .none, .string("late")])
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 2)?.value == MixedValue.none)
        #expect(problems(db).isEmpty)
    }

    @Test func queriesCompareByKindAndNumbersByValue() throws {
        let db = try Database(configuration: configuration)
        let values: [MixedValue] = [.int(5), .double(5.0), .float(2.5), .string("5"), .bool(true), .none, .int(10),
                                    .decimal128(Decimal128(7)), .date(Date(timeIntervalSinceReferenceDate: 0))]
        try db.write {
            for (position, value) in values.enumerated() {
                db.create(Setting.self, value: ["id": position, "value": value, "history": [value, MixedValue.string("h\(position)")]])
            }
        }
        func ids(_ results: Results<Setting>) -> Set<Int> { Set(results.map(\.id)) }
        let all = db.objects(Setting.self)
        #expect(ids(all.where { $0.value == .int(5) }) == [0, 1])
        #expect(ids(all.where { $0.value > .int(4) }) == [0, 1, 6, 7])
        #expect(ids(all.where { $0.value == .string("5") }) == [3])
        #expect(ids(all.where { $0.value == .none }) == [5])
        #expect(ids(all.where { $0.value != .none }).count == values.count - 1)
        #expect(ids(all.filter("value == 5")) == [0, 1])
        #expect(ids(all.filter("value < 6")) == [0, 1, 2])
        #expect(ids(all.filter("value == %@", "5")) == [3])
        #expect(ids(all.filter("value == true")) == [4])
        #expect(ids(all.filter("value == nil")) == [5])
        #expect(ids(all.filter("value BEGINSWITH '5'")) == [3])
        #expect(ids(all.filter("value IN {2.5, 10}")) == [2, 6])
        #expect(ids(all.filter("ANY history == 'h3'")) == [3])
        #expect(ids(all.filter("ANY history > 6")) == [6, 7])
        #expect(ids(all.filter("history.@sum > 6")) == [6, 7])  // the numbers only
        #expect(ids(all.filter("history.@max == 'h0'")) == [0])  // a string is above a number
        #expect(ids(all.filter("history.@min == 5")) == [0, 1])
        #expect(ids(all.filter("value == %@", MixedValue.double(10))) == [6])
        // Maps of mixed values, by key and over all values.
        try db.write {
            for setting in all { setting.extras["v"] = setting.value }
        }
        #expect(ids(all.where { $0.extras["v"] == .int(5) }) == [0, 1])
        #expect(ids(all.filter("extras['v'] > 6")) == [6, 7])
        #expect(ids(all.filter("ANY extras.@allValues == 'h1' OR extras['v'] == 2.5")) == [2])
        #expect(ids(all.where { $0.history.contains(.string("h4")) }) == [4])
    }

    @Test func queriesFindObjectsHeldByMixedValues() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let lamp = db.create(Appliance.self, value: ["id": 1, "name": "lamp"])
            db.create(Setting.self, value: ["id": 1, "value": MixedValue.object(lamp)])
            db.create(Setting.self, value: ["id": 2, "value": MixedValue.int(1)])
            db.create(Setting.self, value: ["id": 3, "value": MixedValue.object(db.create(Appliance.self, value: ["id": 2]))])
        }
        let lamp = try #require(db.object(ofType: Appliance.self, forPrimaryKey: 1))
        #expect(db.objects(Setting.self).where { $0.value == .object(lamp) }.map(\.id) == [1])
        #expect(db.objects(Setting.self).filter("value == %@", MixedValue.object(lamp)).map(\.id) == [1])
        // A plain object argument names no class for a mixed property: a clear error.
        #expect(throws: QueryError.self) { try db.objects(Setting.self).filter(FilterPredicate("value == %@", argumentArray: [lamp])) }
    }

    @Test func sortingOrdersKindsThenValues() throws {
        let db = try Database(configuration: configuration)
        let values: [MixedValue] = [.string("b"), .int(3), .none, .double(1.5), .bool(true), .string("a"),
                                    .date(Date(timeIntervalSinceReferenceDate: 0)), .decimal128(Decimal128(2)), .data(Data([1]))]
        try db.write {
            for (position, value) in values.enumerated() { db.create(Setting.self, value: ["id": position, "value": value]) }
        }
        let sorted = db.objects(Setting.self).sorted(byKeyPath: "value").map(\.value)
        #expect(sorted == [.none, .bool(true), .double(1.5), .decimal128(Decimal128(2)), .int(3), .string("a"), .string("b"),
                           .data(Data([1])), .date(Date(timeIntervalSinceReferenceDate: 0))])
        let descending = db.objects(Setting.self).sorted(byKeyPath: "value", ascending: false).map(\.value)
        #expect(descending == sorted.reversed())
    }

    @Test func aggregatesCountNumbersAndOrderKinds() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let setting = db.create(Setting.self, value: ["id": 1])
            setting.history.append(objectsIn: [.int(2), .double(4.5), .string("z"), .none, .decimal128(Decimal128(1))])
            db.create(Setting.self, value: ["id": 2, "value": MixedValue.int(10)])
            db.create(Setting.self, value: ["id": 3, "value": MixedValue.double(0.5)])
            db.create(Setting.self, value: ["id": 4, "value": MixedValue.string("text")])
        }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        #expect(setting.history.sum() == .decimal128(Decimal128(7.5)))
        let average: Double? = setting.history.average()
        #expect(average == 2.5)
        #expect(setting.history.min() == .decimal128(Decimal128(1)))
        #expect(setting.history.max() == .string("z"))
        try db.write { setting.history.append(.object(setting)) }  // objects have no order: skipped
        #expect(setting.history.max() == .string("z"))
        let results = db.objects(Setting.self)
        let sum: MixedValue = results.sum(ofProperty: "value")
        #expect(sum == .double(10.5))
        let mean: Double? = results.average(ofProperty: "value")
        #expect(mean == 5.25)
        let smallest: MixedValue? = results.min(ofProperty: "value")
        #expect(smallest == .double(0.5))
        #expect(setting.history.sorted().first == MixedValue.none)
    }

    @Test func keyValueInputBecomesTheMatchingKind() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            db.create(Setting.self, value: ["id": 1, "value": 42, "history": [1, "two", 3.5, NSNull()], "extras": ["d": Date(timeIntervalSinceReferenceDate: 1)]])
            let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
            #expect(setting.value == .int(42))
            setting["value"] = "text"
            #expect(setting.value == .string("text"))
            setting.setValue(Float(1.5), forKey: "value")
            #expect(setting.value == .float(1.5))
            setting["value"] = nil
            #expect(setting.value == .none)
            setting["value"] = MixedValue.bool(true)
            #expect(setting.value == .bool(true))
            #expect(setting.value(forKey: "value") as? Bool == true)
            #expect(Array(setting.history) == [.int(1), .string("two"), .double(3.5), .none])
            #expect(setting.extras["d"] == .date(Date(timeIntervalSinceReferenceDate: 1)))
        }
        let unmanaged = Setting(value: ["id": 5, "value": "x"])
        #expect(unmanaged.value == .string("x"))
    }

    @Test func aFrozenObjectReadsItsMixedObject() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            db.create(Setting.self, value: ["id": 1, "value": MixedValue.object(db.create(Appliance.self, value: ["id": 1, "name": "lamp"]))])
        }
        let frozen = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1)).freeze()
        try db.write { db.object(ofType: Appliance.self, forPrimaryKey: 1)?.name = "LAMP" }
        let gadget = try #require(frozen.value.object(Appliance.self))
        #expect(gadget.isFrozen && gadget.name == "lamp")
    }

    @Test func aMigrationMovesValuesIntoAMixedProperty() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [SettingV1.self]))
            try db.write {
                db.create(SettingV1.self, value: ["id": 1, "label": "12"])
                db.create(SettingV1.self, value: ["id": 2, "label": "dark"])
            }
        }
        var config = configuration
        config.schemaVersion = 1
        config.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Setting") { old, new in
                let label = old?["label"] as? String ?? ""
                new?["value"] = Int(label).map { $0 as Any } ?? label
                new?["history"] = [1, "a", true]
                new?["extras"] = ["n": 2.5]
                #expect(old?["label"] as? String == label)
            }
            let gadget = migration.create("Appliance", value: ["id": 9, "name": "new"])
            migration.enumerateObjects(ofType: "Setting") { _, new in
                if new?["id"] as? Int == 2 { new?["value"] = gadget }
                #expect(new?["id"] as? Int != 2 || (new?["value"] as? MigrationObject)?["name"] as? String == "new")
            }
        }
        let db = try Database(configuration: config)
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 1)?.value == .int(12))
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 2)?.value.object(Appliance.self)?.name == "new")
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 1).map { Array($0.history) } == [.int(1), .string("a"), .bool(true)])
        #expect(db.object(ofType: Setting.self, forPrimaryKey: 1)?.extras["n"] == .double(2.5))
    }

    @Test func theSchemaNamesMixedProperties() throws {
        let db = try Database(configuration: configuration)
        let schema = try #require(db.core.session.table(named: "Setting")?.schema)
        #expect(schema.properties.map(\.typeDescription) == ["int", "mixed", "list<mixed>", "set<mixed>", "map<string, mixed>"])
        #expect(schema.properties.allSatisfy { $0.name == "id" || $0.isOptional })
    }

    @Test func anObjectObservationReportsAMixedChange() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1, "value": 1]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let recorder = Recorder<ObjectChange<Setting>>()
        let token = setting.observe { (change: ObjectChange<Setting>) in recorder.record(change) }
        try db.write { setting.value = .string("one") }
        token.invalidate()
        guard case .change(_, let changes) = recorder.changes.last else { Issue.record("no change: \(recorder.changes)"); return }
        #expect(changes.map(\.name) == ["value"])
        #expect(changes.first?.newValue as? MixedValue == .string("one"))
    }
}

/// Seeded random mixed values, queried with random comparisons against every other value, each
/// answer checked against the rules written out in Swift here (kinds apart, numbers by value
/// across kinds, strings by their bytes, nil equal only to nil).
@Suite struct MixedValueQueryReferenceTests {
    let folder = TemporaryFolder()

    /// A random value: few distinct numbers and strings, so that equal values across kinds
    /// come up.
    private func randomValue(_ random: inout SplitMix64) -> MixedValue {
        switch random.int(0..<9) {
        case 0: .none
        case 1: .int(random.int(-3...3))
        case 2: .double(Double(random.int(-6...6)) / 2)
        case 3: .float(Float(random.int(-6...6)) / 2)
        case 4: .decimal128(Decimal128(random.int(-3...3)))
        case 5: .bool(random.chance(0.5))
        case 6: .string(random.pick(["", "a", "b", "ab", "é", "e\u{301}"]))
        case 7: .data(Data(random.pick([[], [97], [98], [97, 98]])))
        default: .date(Date(timeIntervalSinceReferenceDate: Double(random.int(0...2))))
        }
    }

    /// The number a numeric value stands for.
    private func number(_ value: MixedValue) -> Double? {
        switch value {
        case .int(let v): Double(v)
        case .double(let v): v
        case .float(let v): Double(v)
        case .decimal128(let v): v.doubleValue
        default: nil
        }
    }

    /// -1, 0 or 1 when the two values order (same kind, or both numbers); nil otherwise.
    private func order(_ a: MixedValue, _ b: MixedValue) -> Int? {
        func cmp<C: Comparable>(_ x: C, _ y: C) -> Int { x < y ? -1 : (x == y ? 0 : 1) }
        func bytes(_ x: [UInt8], _ y: [UInt8]) -> Int { x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1) }
        if let x = number(a), let y = number(b) { return cmp(x, y) }
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return cmp(x ? 1 : 0, y ? 1 : 0)
        case (.string(let x), .string(let y)): return bytes(Array(x.utf8), Array(y.utf8))
        case (.data(let x), .data(let y)): return bytes(Array(x), Array(y))
        case (.date(let x), .date(let y)): return cmp(x, y)
        default: return nil
        }
    }

    private func matches(_ value: MixedValue, _ op: String, _ constant: MixedValue) -> Bool {
        if case .none = constant {
            let isNone = { if case .none = value { true } else { false } }()
            return op == "==" ? isNone : op == "!=" ? !isNone : false
        }
        if case .none = value { return op == "!=" }
        let o = order(value, constant)
        switch op {
        case "==": return o == 0
        case "!=": return o != 0
        case "<": return o.map { $0 < 0 } ?? false
        case "<=": return o.map { $0 <= 0 } ?? false
        case ">": return o.map { $0 > 0 } ?? false
        default: return o.map { $0 >= 0 } ?? false
        }
    }

    @Test(arguments: [UInt64(21), 22])
    func randomComparisonsMatchTheRules(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let db = try Database(configuration: folder.configuration(objectTypes: [Setting.self, Appliance.self]))
        var values: [MixedValue] = []
        try db.write {
            for id in 0..<120 {
                let value = randomValue(&random)
                values.append(value)
                db.create(Setting.self, value: ["id": id, "value": value, "history": [value]])
            }
        }
        let all = db.objects(Setting.self)
        for _ in 0..<150 {
            let constant = randomValue(&random)
            let op = random.pick(["==", "!=", "<", "<=", ">", ">="])
            if case .none = constant, !["==", "!="].contains(op) { continue }
            let expected = Set(values.indices.filter { matches(values[$0], op, constant) })
            let found = Set(all.filter("value \(op) %@", constant).map(\.id))
            #expect(found == expected, "value \(op) \(constant)")
            let anyFound = Set(all.filter("ANY history \(op) %@", constant).map(\.id))
            #expect(anyFound == expected, "ANY history \(op) \(constant)")
        }
    }
}

final class Tagged: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var label: MixedValue
}

/// `Tagged` before its label was indexed.
final class UnindexedTagged: Object {
    override class func className() -> String { "Tagged" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var label: MixedValue
}

/// An indexed mixed property: equalities on strings, Booleans, data, ids and objects are
/// answered by the index; numbers and dates (equal across kinds and signs of zero) scan; every
/// answer is the same as without the index, through changes, deletes and reopen.
@Suite struct MixedIndexTests {
    let folder = TemporaryFolder()

    @Test func theIndexAnswersExactEqualitiesAndAgreesWithAScan() throws {
        var random = SplitMix64(seed: 0x1D_E7)
        let configuration = folder.configuration(objectTypes: [Tagged.self, Appliance.self])
        let labels: [MixedValue] = [.string("a"), .string("b"), .data(Data("a".utf8)), .bool(true), .int(1), .double(1),
                                    .double(-0.0), .int(0), .none, .objectId(ObjectId(bytes: Array(0..<12))!)]
        var model: [Int: MixedValue] = [:]
        func check(_ db: Database, _ label: String) {
            let all = db.objects(Tagged.self)
            for value in labels + [.string(String(repeating: "long ", count: 60))] {
                let query = all.filter("label == %@", value)
                let expected = model.filter { equal($0.value, value) }.keys.sorted()
                #expect(query.map(\.id).sorted() == expected, "\(label): label == \(value)")
                #expect(query.count == expected.count, "\(label): count of label == \(value)")
                let exact: Bool = switch value { case .string, .data, .bool, .objectId: true; default: false }
                #expect((query.lastStatistics?.index == "index on 'label'") == exact, "\(label): \(value) \(String(describing: query.lastStatistics))")
            }
        }
        /// Query equality: numbers by value across kinds, anything else by kind and bytes.
        func equal(_ a: MixedValue, _ b: MixedValue) -> Bool {
            func number(_ v: MixedValue) -> Double? {
                switch v { case .int(let x): Double(x); case .double(let x): x; default: nil }
            }
            if let x = number(a), let y = number(b) { return x == y }
            return a == b
        }
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                for id in 0..<200 {
                    let value = random.pick(labels)
                    model[id] = value
                    db.create(Tagged.self, value: ["id": id, "label": value])
                }
            }
            check(db, "created")
            try db.write {
                for _ in 0..<80 {
                    let id = random.int(0..<200)
                    guard model[id] != nil, let object = db.object(ofType: Tagged.self, forPrimaryKey: id) else { continue }
                    if random.chance(0.3) {
                        db.delete(object)
                        model[id] = nil
                    } else {
                        let value = random.pick(labels + [.string(String(repeating: "long ", count: 60))])
                        object.label = value
                        model[id] = value
                    }
                }
            }
            check(db, "changed")
            // An object value: found through the index too, and its entry goes when it is deleted.
            try db.write {
                let lamp = db.create(Appliance.self, value: ["id": 1, "name": "lamp"])
                db.create(Tagged.self, value: ["id": 500, "label": MixedValue.object(lamp)])
            }
            let lamp = try #require(db.object(ofType: Appliance.self, forPrimaryKey: 1))
            let byObject = db.objects(Tagged.self).where { $0.label == .object(lamp) }
            #expect(byObject.map(\.id) == [500] && byObject.lastStatistics?.index == "index on 'label'")
            try db.write { db.delete(lamp) }
            model[500] = MixedValue.none
            #expect(problems(db).isEmpty)
        }
        let db = try Database(configuration: configuration)
        check(db, "reopened")
        #expect(problems(db).isEmpty)
    }

    @Test func aMigrationBuildsTheIndexOfAnExistingMixedProperty() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [UnindexedTagged.self]))
            try db.write {
                for id in 0..<50 { db.create(UnindexedTagged.self, value: ["id": id, "label": id % 2 == 0 ? MixedValue.string("even") : .data(Data("even".utf8))]) }
            }
        }
        var configuration = folder.configuration(objectTypes: [Tagged.self])
        configuration.schemaVersion = 1
        let db = try Database(configuration: configuration)
        let evens = db.objects(Tagged.self).filter("label == 'even'")
        #expect(evens.count == 25 && evens.lastStatistics?.index == "index on 'label'")
        #expect(evens.allSatisfy { $0.id % 2 == 0 })
        #expect(problems(db).isEmpty)
    }
}
