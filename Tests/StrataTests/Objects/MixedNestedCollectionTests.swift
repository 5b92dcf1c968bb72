// Lists and dictionaries nested in a MixedValue (RealmSwift 10.51's AnyRealmValue.list and
// .dictionary): stored and read back exactly, through a property, a mixed list and a mixed
// map, through reopen; changed in place on a managed object; observed; frozen; Codable.

import Foundation
import Testing
@testable import Strata
import StrataStore

@Suite struct MixedNestedCollectionTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: [Setting.self, Appliance.self]) }

    /// Three levels of nesting with a value of most kinds.
    private var sample: MixedValue {
        .fromArray([
            .int(1), .none, .string("two"), .double(2.5), .data(Data([7, 8])), .date(Date(timeIntervalSinceReferenceDate: 99)),
            .fromDictionary(["a": .bool(true), "list": .fromArray([.int(3), .fromArray([])]), "empty": .fromDictionary([:])]),
        ])
    }

    @Test func nestedCollectionsRoundTripThroughAPropertyAListAMapAndReopen() throws {
        do {
            let db = try Database(configuration: configuration)
            try db.write {
                let setting = Setting()
                setting.id = 1
                setting.value = sample
                setting.history.append(sample)
                setting.history.append(.fromDictionary(["x": .int(1)]))
                setting.extras["nested"] = sample
                db.add(setting)
            }
        }
        let db = try Database(configuration: configuration)
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        #expect(setting.value == sample)
        #expect(Array(setting.history) == [sample, .fromDictionary(["x": .int(1)])])
        #expect(setting.extras["nested"] == sample)
        let list = try #require(setting.value.listValue)
        #expect(list.count == 7)
        #expect(list[0] == .int(1) && list[1] == .none)
        let dictionary = try #require(list[6].dictionaryValue)
        #expect(dictionary.keys == ["a", "empty", "list"])
        #expect(dictionary["list"]?.listValue?.count == 2)
        #expect(setting.value.dictionaryValue == nil && list[6].listValue == nil)
        #expect(problems(db).isEmpty)
    }

    @Test func anObjectInsideANestedCollectionIsAddedAndReadAsItsClass() throws {
        let db = try Database(configuration: configuration)
        try db.write {
            let appliance = Appliance()
            appliance.id = 5
            appliance.name = "kettle"
            db.create(Setting.self, value: ["id": 1, "value": MixedValue.fromDictionary(["device": .object(appliance)])])
        }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let device = setting.value.dictionaryValue?["device"]?.object(Appliance.self)
        #expect(device?.name == "kettle")
        #expect(db.objects(Appliance.self).count == 1)
    }

    @Test func changingANestedCollectionOfAManagedObjectPersistsTheChange() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1, "value": sample]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let list = try #require(setting.value.listValue)
        let inner = try #require(list[6].dictionaryValue)
        try db.write {
            list.append(.string("appended"))
            list.remove(at: 1)
            inner["a"] = .int(42)
            inner.removeObject(for: "empty")
        }
        let expected = MixedValue.fromArray([
            .int(1), .string("two"), .double(2.5), .data(Data([7, 8])), .date(Date(timeIntervalSinceReferenceDate: 99)),
            .fromDictionary(["a": .int(42), "list": .fromArray([.int(3), .fromArray([])])]), .string("appended"),
        ])
        #expect(setting.value == expected)
        // Another instance of the file reads the change.
        let other = try #require(try Database(configuration: configuration).object(ofType: Setting.self, forPrimaryKey: 1))
        #expect(other.value == expected)
        // Assigning a new value replaces the nested collection whole.
        try db.write { setting.value = .fromArray([.int(1)]) }
        #expect(setting.value.listValue?.count == 1)
    }

    @Test func aChangeInsideANestedCollectionIsReportedAsAChangeOfTheProperty() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1, "value": sample]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let all = Recorder<ObjectChange<Setting>>()
        let byKeyPath = Recorder<ObjectChange<Setting>>()
        let otherKeyPath = Recorder<ObjectChange<Setting>>()
        let tokens = [
            setting.observe { all.record($0) },
            setting.observe(keyPaths: ["value"]) { byKeyPath.record($0) },
            setting.observe(keyPaths: [\Setting.history]) { otherKeyPath.record($0) },
        ]
        try db.write { setting.value.listValue?[6].dictionaryValue?["a"] = .string("changed") }
        for recorder in [all, byKeyPath] {
            #expect(recorder.changes.count == 1)
            guard case .change(_, let properties)? = recorder.changes.first else { Issue.record("no change"); continue }
            #expect(properties.map(\.name) == ["value"])
            let newValue = properties.first?.newValue as? MixedValue
            #expect(newValue?.listValue?[6].dictionaryValue?["a"] == .string("changed"))
        }
        #expect(otherKeyPath.changes.isEmpty)
        tokens.forEach { $0.invalidate() }
    }

    @Test func aFrozenObjectGivesFrozenNestedCollectionsThatKeepTheirValue() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1, "value": sample]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        let frozen = setting.freeze()
        let frozenList = try #require(frozen.value.listValue)
        #expect(frozenList.isFrozen)
        #expect(frozenList[6].dictionaryValue?.isFrozen == true)
        #expect(frozenList.freeze() === frozenList)
        #expect(setting.value.listValue?.isFrozen == false)
        try db.write { setting.value.listValue?.append(.int(9)) }
        #expect(frozen.value == sample)
        #expect(frozenList.count == 7)
        #expect(setting.value.listValue?.count == 8)
    }

    @Test func unmanagedNestedCollectionsAreValuesOfTheirContents() {
        let value = sample
        #expect(value == sample)
        #expect(value.hashValue == sample.hashValue)
        #expect(MixedValue.fromArray([.int(1)]) != .fromArray([.int(2)]))
        #expect(MixedValue.fromArray([]) != .fromDictionary([:]))
        let list = List<MixedValue>()
        list.append(.int(1))
        #expect(MixedValue.list(list) == .fromArray([.int(1)]))
        #expect(value.description.hasPrefix("list([int(1), none, string(\"two\")"))
        #expect(Set([sample, sample, .fromArray([])]).count == 2)
    }

    @Test func nestedCollectionsEncodeAndDecodeAsJSONArraysAndObjects() throws {
        let value = MixedValue.fromDictionary(["a": .fromArray([.int(1), .string("x"), .none]), "b": .bool(true)])
        let json = try JSONEncoder().encode(value)
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("[1,\"x\",null]"))
        #expect(try JSONDecoder().decode(MixedValue.self, from: json) == value)
    }

    @Test func keyValueCodingReadsTheNestedCollectionAndTakesArrays() throws {
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1, "value": [MixedValue.int(1), .string("a")]]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        #expect(setting.value == .fromArray([.int(1), .string("a")]))
        let read = setting["value"] as? List<MixedValue>
        #expect(read.map(Array.init) == [.int(1), .string("a")])
        try db.write { setting["value"] = ["k": MixedValue.int(2)] }
        #expect(setting.value == .fromDictionary(["k": .int(2)]))
    }

    @Test func nestingUpToTheLimitIsStoredInAPropertyAListAndAMap() throws {
        // Deeper nesting stops the program with a message (MisuseTests' mixed-too-deep).
        let db = try Database(configuration: configuration)
        try db.write { db.create(Setting.self, value: ["id": 1]) }
        let setting = try #require(db.object(ofType: Setting.self, forPrimaryKey: 1))
        var deepest = MixedValue.int(1)
        for _ in 0..<MixedEncoding.maximumNestingDepth { deepest = .fromArray([deepest]) }
        try db.write {
            setting.value = deepest
            setting.history.append(deepest)
            setting.extras["k"] = deepest
        }
        #expect(setting.value == deepest)
        #expect(setting.history.first == deepest)
        #expect(setting.extras["k"] == deepest)
        #expect(problems(db).isEmpty)
    }
}
