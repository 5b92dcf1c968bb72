// `distinct(by:)` through a link, as RealmSwift's ResultsDistinctTests use it: objects whose
// link on the path is nil are left out (Realm's distinct drops them), while a nil value at the
// end of the path is one more distinct value.
import Foundation
import Testing
import StrataRealmCompat

class DTLChild: Object {
    @Persisted var intCol = 0
    @Persisted var optIntCol: Int?
}

class DTLParent: Object {
    @Persisted var intCol = 0
    @Persisted var trueCol = false
    @Persisted var childIntCol: DTLChild?
}

class DTLGrandparent: Object {
    @Persisted var name = ""
    @Persisted var parent: DTLParent?
}

@Suite("distinct(by:) through a link (RealmSwift compat)")
struct DistinctThroughLinkCompatTests {
    private func realmWithTestPath() throws -> Realm {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-dtl-\(UUID().uuidString)/test.realm")
        return try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [DTLChild.self, DTLParent.self, DTLGrandparent.self]))
    }

    private func parent(_ intCol: Int, _ trueCol: Bool, child: Int?) -> DTLParent {
        let object = DTLParent()
        object.intCol = intCol
        object.trueCol = trueCol
        if let child {
            let childObject = DTLChild()
            childObject.intCol = child
            object.childIntCol = childObject
        }
        return object
    }

    @Test func testDistinctResultsUsingKeyPathsThroughALinkLeaveOutNilLinks() throws {
        let realm = try realmWithTestPath()
        defer { try? FileManager.default.removeItem(at: realm.configuration.fileURL!.deletingLastPathComponent()) }
        try realm.write {
            realm.add(parent(1, true, child: 1))
            realm.add(parent(1, true, child: 1))
            realm.add(parent(1, false, child: 2))
            realm.add(parent(2, false, child: nil))
        }
        let collection = realm.objects(DTLParent.self)
        #expect(collection.distinct(by: ["intCol"]).map(\.intCol) == [1, 2])
        #expect(collection.distinct(by: ["childIntCol.intCol"]).map { $0.childIntCol!.intCol } == [1, 2])
        // Any path with a nil link leaves the object out, whatever the other paths read.
        #expect(collection.distinct(by: ["intCol", "childIntCol.intCol"]).map(\.intCol) == [1, 1])
        #expect(collection.sorted(byKeyPath: "intCol", ascending: false).distinct(by: ["childIntCol.intCol"]).count == 2)
    }

    @Test func testDistinctKeepsNilValuesAtTheEndOfALinkPath() throws {
        let realm = try realmWithTestPath()
        defer { try? FileManager.default.removeItem(at: realm.configuration.fileURL!.deletingLastPathComponent()) }
        try realm.write {
            realm.add(parent(1, true, child: 1))
            realm.add(parent(2, true, child: 2))
            realm.add(parent(3, true, child: nil))
        }
        let collection = realm.objects(DTLParent.self)
        // Both children have a nil optIntCol: one distinct value; the parent without a child is left out.
        #expect(collection.distinct(by: ["childIntCol.optIntCol"]).map(\.intCol) == [1])
    }

    @Test func testDistinctThroughTwoLinksLeavesOutANilFirstOrSecondLink() throws {
        let realm = try realmWithTestPath()
        defer { try? FileManager.default.removeItem(at: realm.configuration.fileURL!.deletingLastPathComponent()) }
        try realm.write {
            for (name, parent) in [("a", parent(1, true, child: 5)), ("b", parent(2, true, child: nil)), ("c", nil), ("d", parent(3, true, child: 5))] {
                let grandparent = DTLGrandparent()
                grandparent.name = name
                grandparent.parent = parent
                realm.add(grandparent)
            }
        }
        let collection = realm.objects(DTLGrandparent.self)
        #expect(collection.distinct(by: ["parent.childIntCol.intCol"]).map(\.name) == ["a"])
        #expect(collection.distinct(by: ["parent.intCol"]).map(\.name) == ["a", "b", "d"])
    }
}
