// `propertiesMapping()`: properties stored under other names than their Swift names. The file
// keeps the persisted names; code, key-value access and the schema's `name` use the Swift
// names; string queries and sorts accept both; changing a persisted name is a migration.

import Foundation
import Synchronization
import Testing
@testable import Strata
@testable import StrataStore

final class MappedContact: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var age = 0
    @Persisted var email: String?
    @Persisted var friends: List<MappedContact>
    @Persisted var best: MappedContact?

    override class func propertiesMapping() -> [String: String] {
        ["firstName": "first_name", "friends": "friend_list", "best": "best_friend"]
    }
}

// The same stored type before and after mappings change (schema name "Member").
final class MemberPlain: Object {
    override class func className() -> String { "Member" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
}

final class MemberMapped: Object {
    override class func className() -> String { "Member" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
}

/// A Swift rename that keeps the stored name: `givenName` is stored as `firstName`.
final class MemberRenamedInSwift: Object {
    override class func className() -> String { "Member" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var givenName = ""
    override class func propertiesMapping() -> [String: String] { ["givenName": "firstName"] }
}

final class MappingToNothing: Object {
    @Persisted var name = ""
    override class func propertiesMapping() -> [String: String] { ["nmae": "the_name"] }
}

final class MappingTwoToOne: Object {
    @Persisted var first = ""
    @Persisted var second = ""
    override class func propertiesMapping() -> [String: String] { ["first": "second"] }
}

@Suite struct PropertiesMappingTests {
    let folder = TemporaryFolder()

    private func seeded() throws -> Database {
        let db = try Database(configuration: folder.configuration(objectTypes: [MappedContact.self]))
        try db.write {
            let ann = db.create(MappedContact.self, value: ["id": 1, "firstName": "Ann", "age": 40])
            let bob = db.create(MappedContact.self, value: ["id": 2, "firstName": "Bob", "age": 30, "email": "bob@example.com"])
            bob.friends.append(ann)
            ann.best = bob
        }
        return db
    }

    @Test func theSchemaNamesSwiftNamesAndTheirPersistedNames() throws {
        let schema = MappedContact().objectSchema
        #expect(schema.properties.map(\.name) == ["id", "firstName", "age", "email", "friends", "best"])
        #expect(schema.properties.map(\.columnName) == ["id", "first_name", "age", "email", "friend_list", "best_friend"])
        let db = try seeded()
        let managed = try #require(db.object(ofType: MappedContact.self, forPrimaryKey: 1))
        #expect(managed.objectSchema.properties.map(\.name) == schema.properties.map(\.name))
        #expect(managed.objectSchema.properties.map(\.columnName) == schema.properties.map(\.columnName))
    }

    @Test func theFileStoresThePersistedNames() throws {
        let db = try seeded()
        let (stored, _) = try db.core.session.store.engine.read { try Store.readSchema($0) }
        let contact = try #require(stored?["MappedContact"])
        #expect(contact.properties.map(\.name) == ["id", "first_name", "age", "email", "friend_list", "best_friend"])
        #expect(contact.properties.map(\.persistedName) == contact.properties.map(\.name))
    }

    @Test func propertiesReadAndWriteBySwiftName() throws {
        let db = try seeded()
        let ann = try #require(db.object(ofType: MappedContact.self, forPrimaryKey: 1))
        #expect(ann.firstName == "Ann")
        #expect(ann.value(forKey: "firstName") as? String == "Ann")
        #expect(ann["firstName"] as? String == "Ann")
        #expect(ann.best?.firstName == "Bob")
        try db.write {
            ann["firstName"] = "Anna"
            ann.age = 41
        }
        #expect(ann.firstName == "Anna")
        #expect(ann.age == 41)
        let bob = try #require(db.object(ofType: MappedContact.self, forPrimaryKey: 2))
        #expect(bob.friends.map(\.firstName) == ["Anna"])
    }

    @Test func stringQueriesAcceptTheSwiftAndThePersistedName() throws {
        let db = try seeded()
        let all = db.objects(MappedContact.self)
        #expect(all.filter("firstName == %@", "Ann").map(\.id) == [1])
        #expect(all.filter("first_name == %@", "Ann").map(\.id) == [1])
        #expect(all.filter("best.firstName == 'Bob'").map(\.id) == [1])
        #expect(all.filter("best_friend.first_name == 'Bob'").map(\.id) == [1])
        #expect(all.filter("ANY friends.firstName == 'Ann'").map(\.id) == [2])
        #expect(all.filter("ANY friend_list.first_name == 'Ann'").map(\.id) == [2])
        #expect(all.where { $0.firstName == "Bob" }.map(\.id) == [2])
        #expect(all.sorted(byKeyPath: "first_name", ascending: false).map(\.id) == [2, 1])
        #expect(all.sorted(byKeyPath: "firstName").map(\.id) == [1, 2])
        #expect(all.sorted(by: \.firstName, ascending: false).map(\.id) == [2, 1])
        #expect(all.distinct(by: ["first_name"]).count == 2)
    }

    @Test func dynamicObjectsOfAMappedClassReadBySwiftOrPersistedName() throws {
        let db = try seeded()
        let ann = try #require(db.dynamicObject(ofType: "MappedContact", forPrimaryKey: 1))
        #expect(ann.objectSchema.properties.map(\.name).contains("firstName"))
        #expect(ann["firstName"] as? String == "Ann")
        #expect(ann["first_name"] as? String == "Ann")
        #expect(db.dynamicObjects("MappedContact").filter("first_name == 'Bob'").count == 1)
    }

    @Test func aFileOpenedWithoutTheClassShowsThePersistedNamesAndThenTheClassItsOwn() throws {
        do { _ = try seeded() }
        let dynamic = try Database(configuration: folder.configuration(objectTypes: []))
        let stored = try #require(dynamic.dynamicObject(ofType: "MappedContact", forPrimaryKey: 1))
        #expect(stored["first_name"] as? String == "Ann")
        #expect(stored.objectSchema.properties.map(\.name).contains("first_name"))
        // The same file, still open, now with the class.
        let typed = try Database(configuration: folder.configuration(objectTypes: [MappedContact.self]))
        #expect(typed.objects(MappedContact.self).filter("firstName == 'Bob'").map(\.id) == [2])
        #expect(typed.objects(MappedContact.self).sorted(by: \.firstName).map(\.id) == [1, 2])
        _ = dynamic
    }

    @Test func theFileReopensWithTheMappedClassWithoutAMigration() throws {
        do { _ = try seeded() }
        let db = try Database(configuration: folder.configuration(objectTypes: [MappedContact.self]))
        #expect(db.objects(MappedContact.self).sorted(byKeyPath: "id").map(\.firstName) == ["Ann", "Bob"])
    }

    @Test func observersReportSwiftNames() throws {
        let db = try seeded()
        let ann = try #require(db.object(ofType: MappedContact.self, forPrimaryKey: 1))
        var names: [[String]] = []
        let token = ann.observe { (change: ObjectChange<MappedContact>) in
            if case .change(_, let properties) = change { names.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        try db.write { ann.firstName = "Anna" }
        #expect(names == [["firstName"]])
    }

    @Test func changingAPersistedNameWithoutAMigrationIsASchemaMismatch() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [MemberPlain.self]))
            try db.write { db.create(MemberPlain.self, value: ["id": 1, "firstName": "Ann"]) }
        }
        let error = try #require(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [MemberMapped.self]))
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'first_name'"))
    }

    @Test func aMigrationThatMapsAPropertyDropsItsValuesUnlessRenamed() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [MemberPlain.self]))
            try db.write { db.create(MemberPlain.self, value: ["id": 1, "firstName": "Ann"]) }
        }
        var configuration = folder.configuration(objectTypes: [MemberMapped.self])
        configuration.schemaVersion = 1
        let seen = Mutex<[(old: String?, new: String?)]>([])
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Member") { old, new in
                // The old object is the file's: stored names. The new one is the class's.
                let pair = (old: old?["firstName"] as? String, new: new?["firstName"] as? String)
                seen.withLock { $0.append(pair) }
            }
            migration.renameProperty(onType: "Member", from: "firstName", to: "firstName")
        }
        let db = try Database(configuration: configuration)
        let pairs = seen.withLock { $0 }
        #expect(pairs.count == 1)
        #expect(pairs.first?.old == "Ann")
        #expect(pairs.first?.new != "Ann", "the new column does not hold the old values before the rename")
        #expect(db.object(ofType: MemberMapped.self, forPrimaryKey: 1)?.firstName == "Ann")
        let (stored, _) = try db.core.session.store.engine.read { try Store.readSchema($0) }
        #expect(stored?["Member"]?.properties.map(\.name) == ["id", "first_name"])
    }

    @Test func theNewObjectOfAMigrationAnswersToEitherName() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [MemberPlain.self]))
            try db.write { db.create(MemberPlain.self, value: ["id": 1, "firstName": "Ann"]) }
        }
        var configuration = folder.configuration(objectTypes: [MemberMapped.self])
        configuration.schemaVersion = 1
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Member") { old, new in
                new?["first_name"] = (old?["firstName"] as? String ?? "") + "!"
            }
        }
        let db = try Database(configuration: configuration)
        #expect(db.object(ofType: MemberMapped.self, forPrimaryKey: 1)?.firstName == "Ann!")
    }

    @Test func aSwiftRenameThatKeepsThePersistedNameNeedsNoMigration() throws {
        do {
            let db = try Database(configuration: folder.configuration(objectTypes: [MemberPlain.self]))
            try db.write { db.create(MemberPlain.self, value: ["id": 1, "firstName": "Ann"]) }
        }
        let db = try Database(configuration: folder.configuration(objectTypes: [MemberRenamedInSwift.self]))
        let member = try #require(db.object(ofType: MemberRenamedInSwift.self, forPrimaryKey: 1))
        #expect(member.givenName == "Ann")
        #expect(db.objects(MemberRenamedInSwift.self).filter("givenName == 'Ann'").count == 1)
    }

    @Test func aMappingOfAnUnknownPropertyIsAnError() throws {
        let error = try #require(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [MappingToNothing.self]))
        }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("'nmae'"))
    }

    @Test func twoPropertiesUnderOnePersistedNameAreAnError() throws {
        let error = try #require(throws: Database.Error.self) {
            _ = try Database(configuration: folder.configuration(objectTypes: [MappingTwoToOne.self]))
        }
        #expect(error.code == .invalidInput)
        #expect(error.message.contains("'second'"))
    }
}
