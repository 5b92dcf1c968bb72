// RealmSwift's inverse-relationship declaration, as its documentation writes it, compiled
// against the RealmSwift names.
import Foundation
import Testing
import StrataRealmCompat

class CompatUser: Object {
    @Persisted var name = ""
    @Persisted var tasks: List<CompatTask>
}

class CompatTask: Object {
    @Persisted var text = ""
    @Persisted(originProperty: "tasks") var assignee: LinkingObjects<CompatUser>
}

@Suite struct LinkingObjectsCompatTests {
    @Test func anInverseRelationshipReadsTheLinkingUsers() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-compat-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = Realm.Configuration(fileURL: folder.appendingPathComponent("links.strata"),
                                                objectTypes: [CompatUser.self, CompatTask.self])
        configuration.maximumFileSize = 1 << 30
        let realm = try Realm(configuration: configuration)
        let task = CompatTask(value: ["text": "Write the docs"])
        #expect(task.assignee.isEmpty)
        try realm.write {
            let user = realm.create(CompatUser.self, value: ["name": "Ann"])
            user.tasks.append(task)
        }
        #expect(task.assignee.map(\.name) == ["Ann"])
        #expect(task.assignee.realm != nil)
        // RealmSwift's collection protocol and its type-erased wrapper.
        func names<C: RealmCollection>(_ users: C) -> [String] where C.Element == CompatUser { users.map(\.name) }
        #expect(names(task.assignee) == ["Ann"])
        #expect(names(realm.objects(CompatUser.self)) == ["Ann"])
        let any = AnyRealmCollection(realm.objects(CompatUser.self))
        #expect(any.count == 1 && any.first?.tasks.first?.text == "Write the docs")
    }
}
