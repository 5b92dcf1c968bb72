// RealmSwift code that deletes while it iterates, compiled against the RealmSwift names: every
// object is visited and deleted, as RealmSwift's snapshot iteration does.
import Foundation
import Testing
import StrataRealmCompat

class CompatChore: Object {
    @Persisted var title = ""
    @Persisted var done = false
}

class CompatChoreList: Object {
    @Persisted var chores: List<CompatChore>
}

@Suite struct DeleteWhileIteratingCompatTests {
    private func withRealm(_ body: (Realm) throws -> Void) throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("chores.strata"),
                                                objectTypes: [CompatChore.self, CompatChoreList.self])
        configuration.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let list = realm.create(CompatChoreList.self)
            for index in 0..<300 {
                list.chores.append(realm.create(CompatChore.self, value: ["title": "chore \(index)"]))
            }
        }
        try body(realm)
    }

    @Test func deletingEachObjectOfResultsInAForLoopDeletesThemAll() throws {
        try withRealm { realm in
            try realm.write {
                for chore in realm.objects(CompatChore.self) {
                    realm.delete(chore)
                }
            }
            #expect(realm.objects(CompatChore.self).isEmpty)
        }
    }

    @Test func deletingEachObjectOfAListInAForLoopDeletesThemAll() throws {
        try withRealm { realm in
            let list = try #require(realm.objects(CompatChoreList.self).first)
            try realm.write {
                for chore in list.chores {
                    realm.delete(chore)
                }
            }
            #expect(list.chores.isEmpty)
            #expect(realm.objects(CompatChore.self).isEmpty)
        }
    }

    @Test func markingFilteredResultsDoneInAForLoopMarksThemAll() throws {
        try withRealm { realm in
            let open = realm.objects(CompatChore.self).filter("done == false")
            try realm.write {
                for chore in open { chore.done = true }
            }
            #expect(open.isEmpty)
            #expect(realm.objects(CompatChore.self).filter("done == true").count == 300)
        }
    }

    @Test func deletingThroughAnyRealmCollectionDeletesThemAll() throws {
        try withRealm { realm in
            let chores = AnyRealmCollection(realm.objects(CompatChore.self))
            try realm.write {
                for chore in chores { realm.delete(chore) }
            }
            #expect(realm.objects(CompatChore.self).isEmpty)
        }
    }
}
