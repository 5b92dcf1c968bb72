// Nested collections in AnyRealmValue as RealmSwift 10.51 keeps them: live (a list read once sees
// later writes), invalidated when their place is gone, observable and freezable on their own,
// live inside List<AnyRealmValue> and Map<String, AnyRealmValue>, and refused by
// MutableSet<AnyRealmValue> (MisuseTests' mixed-set-nested).
import Foundation
import Testing
import StrataRealmCompat

@Suite struct AnyRealmValueNestedLiveCompatTests {
    private func withRealm(_ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-nested-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: folder.appendingPathComponent("nested.strata"),
                                                                 objectTypes: [MixedCollectionHolder.self]))
        try body(realm)
    }

    @Test func testNestedListIsLive() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([.int(1)])
            try realm.write { realm.add(object) }
            let list = object.anyValue.listValue!
            try realm.write { object.anyValue.listValue!.append(.string("two")) }
            #expect(list.count == 2)
            #expect(list[1] == .string("two"))
            try realm.write { object.anyValue = .string("replaced") }
            #expect(list.isInvalidated)
        }
    }

    @Test func testNestedDictionaryInListIsLive() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyList.append(AnyRealmValue.fromDictionary(["key": .int(1)]))
            object.anyMap["map"] = AnyRealmValue.fromArray([])
            try realm.write { realm.add(object) }
            let dictionary = object.anyList[0].dictionaryValue!
            let list = object.anyMap["map"]!.listValue!
            try realm.write {
                dictionary["key2"] = .bool(true)
                list.append(.double(1.5))
            }
            #expect(object.anyList[0] == AnyRealmValue.fromDictionary(["key": .int(1), "key2": .bool(true)]))
            #expect(object.anyMap["map"] == AnyRealmValue.fromArray([.double(1.5)]))
            try realm.write { object.anyList.removeAll() }
            #expect(dictionary.isInvalidated)
            #expect(!list.isInvalidated)
        }
    }

    @Test func testObserveNestedList() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([.int(1), .int(2)])
            try realm.write { realm.add(object) }
            var initial = 0
            var updates: [([Int], [Int], [Int])] = []
            let token = object.anyValue.listValue!.observe { change in
                switch change {
                case .initial: initial += 1
                case .update(_, let deletions, let insertions, let modifications): updates.append((deletions, insertions, modifications))
                case .error: Issue.record("error")
                }
            }
            try realm.write { object.anyValue.listValue!.append(.int(3)) }
            try realm.write { object.anyValue.listValue![0] = .string("one") }
            try realm.write { object.anyValue = .none }
            #expect(initial == 1)
            #expect(updates.map(\.0) == [[], [], [0, 1, 2]])
            #expect(updates.map(\.1) == [[2], [], []])
            #expect(updates.map(\.2) == [[], [0], []])
            token.invalidate()
        }
    }

    @Test func testObserveNestedDictionary() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromDictionary(["a": .int(1)])
            try realm.write { realm.add(object) }
            var updates: [([String], [String], [String])] = []
            let token = object.anyValue.dictionaryValue!.observe { change in
                if case .update(_, let deletions, let insertions, let modifications) = change { updates.append((deletions, insertions, modifications)) }
            }
            try realm.write {
                object.anyValue.dictionaryValue!["b"] = .int(2)
                object.anyValue.dictionaryValue!["a"] = .int(10)
            }
            #expect(updates.count == 1)
            #expect(updates.first?.0 == [] && updates.first?.1 == ["b"] && updates.first?.2 == ["a"])
            token.invalidate()
        }
    }

    @Test func testFreezeNestedCollection() throws {
        try withRealm { realm in
            let object = MixedCollectionHolder()
            object.anyValue = AnyRealmValue.fromArray([.fromArray([.int(1)])])
            try realm.write { realm.add(object) }
            let inner = object.anyValue.listValue![0].listValue!
            let frozen = inner.freeze()
            #expect(frozen.isFrozen)
            try realm.write { inner.append(.int(2)) }
            #expect(Array(frozen) == [.int(1)])
            #expect(Array(inner) == [.int(1), .int(2)])
            #expect(frozen.thaw().map(Array.init) == [.int(1), .int(2)])
        }
    }
}
