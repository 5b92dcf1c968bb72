import Foundation
import Testing
@testable import Strata

// Two versions of one model: the classes differ, the type name is the same.
final class ContactV0: Object {
    override class func className() -> String { "Contact" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var yearsOld = 0
    @Persisted var nickname = ""
    @Persisted var tags: List<String>
}

final class ContactV1: Object {
    override class func className() -> String { "Contact" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var fullName = ""
    @Persisted var age = 0
    @Persisted(indexed: true) var email = ""
    @Persisted var labels: List<String>
}

final class ContactV2: Object {
    override class func className() -> String { "Contact" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var fullName = ""
    @Persisted var age: Double = 0
    @Persisted(indexed: true) var email = ""
    @Persisted var labels: List<String>
}

@Suite struct MigrationTests {
    func seed(_ folder: TemporaryFolder) throws -> Database.Configuration {
        let config = folder.configuration(objectTypes: [ContactV0.self])
        let db = try Database(configuration: config)
        try db.write {
            for i in 0..<600 {
                db.create(ContactV0.self, value: ["id": i, "name": "n\(i)", "yearsOld": i % 90, "nickname": "k\(i)", "tags": ["t\(i)"]])
            }
        }
        return config
    }

    @Test func changedModelWithoutNewVersionIsATypedErrorNamingTypeAndProperty() throws {
        let folder = TemporaryFolder()
        _ = try seed(folder)
        var config = folder.configuration(objectTypes: [ContactV1.self])
        config.schemaVersion = 0
        do {
            _ = try Database(configuration: config)
            Issue.record("opening with a changed model and the same schema version must fail")
        } catch let error as Database.Error {
            #expect(error.code == .schemaMismatch)
            #expect(error.message.contains("Contact.fullName"))
        }
    }

    @Test func lowerSchemaVersionThanTheFileIsAnError() throws {
        let folder = TemporaryFolder()
        var config = try seed(folder)
        config.schemaVersion = 3
        config.migrationBlock = { _, _ in }
        config.objectTypes = [ContactV1.self]
        _ = try Database(configuration: config)
        config.schemaVersion = 2
        #expect(throws: Database.Error.self) { try Database(configuration: config) }
    }

    @Test func migrationRenamesConvertsAddsAndRemoves() throws {
        let folder = TemporaryFolder()
        _ = try seed(folder)
        var config = folder.configuration(objectTypes: [ContactV1.self])
        config.schemaVersion = 1
        config.migrationBlock = { migration, oldVersion in
            #expect(oldVersion == 0)
            migration.renameProperty(onType: "Contact", from: "name", to: "fullName")
            migration.renameProperty(onType: "Contact", from: "tags", to: "labels")
            migration.enumerateObjects(ofType: "Contact") { old, new in
                new?["age"] = (old?["yearsOld"] as? Int ?? 0) + 1
                new?["email"] = "\(old?["nickname"] as? String ?? "")@example.com"
            }
            migration.create("Contact", value: ["id": 10_000, "fullName": "Made in migration", "email": "m@example.com"])
        }
        do {
            let db = try Database(configuration: config)
            #expect(db.objects(ContactV1.self).count == 601)
            let c = try #require(db.object(ofType: ContactV1.self, forPrimaryKey: 42))
            #expect(c.fullName == "n42" && c.age == 43 && c.email == "k42@example.com" && Array(c.labels) == ["t42"])
            // The index added by the migration answers queries.
            #expect(db.objects(ContactV1.self).where { $0.email == "k7@example.com" }.first?.id == 7)
            #expect(db.schema["Contact"]?.properties.map(\.name) == ["id", "fullName", "age", "email", "labels"])
        }
        // Reopening at the same version does not run the block again and keeps the data.
        var again = config
        again.migrationBlock = { _, _ in Issue.record("the migration ran twice") }
        let db = try Database(configuration: again)
        #expect(db.object(ofType: ContactV1.self, forPrimaryKey: 599)?.email == "k599@example.com")
        #expect(db.object(ofType: ContactV1.self, forPrimaryKey: 10_000)?.fullName == "Made in migration")
    }

    @Test func migrationChangesAPropertyType() throws {
        let folder = TemporaryFolder()
        _ = try seed(folder)
        var v1 = folder.configuration(objectTypes: [ContactV1.self])
        v1.schemaVersion = 1
        v1.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Contact") { old, new in new?["age"] = old?["yearsOld"] as? Int ?? 0 }
        }
        _ = try Database(configuration: v1)
        var v2 = folder.configuration(objectTypes: [ContactV2.self])
        v2.schemaVersion = 2
        v2.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Contact") { old, new in
                new?["age"] = Double(old?["age"] as? Int ?? 0) / 2
            }
        }
        let db = try Database(configuration: v2)
        #expect(db.object(ofType: ContactV2.self, forPrimaryKey: 10)?.age == 5.0)
    }

    @Test func deleteIfMigrationNeededStartsOver() throws {
        let folder = TemporaryFolder()
        _ = try seed(folder)
        var config = folder.configuration(objectTypes: [ContactV1.self])
        config.deleteIfMigrationNeeded = true
        let db = try Database(configuration: config)
        #expect(db.objects(ContactV1.self).isEmpty)
        try db.write { db.create(ContactV1.self, value: ["id": 1, "fullName": "fresh"]) }
        #expect(db.objects(ContactV1.self).count == 1)
    }
}

// A class used only after the database opened, whose stored table disagrees with it.
final class LateV0: Object {
    override class func className() -> String { "Late" }
    @Persisted var value = ""
}

final class LateV1: Object {
    override class func className() -> String { "Late" }
    @Persisted var value = 0
}

@Suite struct LateTypeTests {
    @Test func aTypeFirstUsedAfterOpeningIsCheckedAgainstTheFile() throws {
        let folder = TemporaryFolder()
        var config = folder.configuration()
        config.objectTypes = [LateV0.self]
        do {
            let db = try Database(configuration: config)
            try db.write { db.create(LateV0.self, value: ["value": "text"]) }
        }
        config.objectTypes = nil
        let db = try Database(configuration: config)
        // LateV1 claims the same name with another type: using it is a schema error, not
        // a misreading of the stored strings as integers.
        #expect(throws: Database.Error.self) { try db.core.context(for: LateV1.self) }
    }
}
