// The mistakes a program can recover from are thrown as `Database.Error`s whose code says what
// went wrong and whose message names the file, type or property involved.

import Foundation
import Testing
@testable import Strata

@Suite struct ErrorTests {
    // MARK: Read-only files

    @Test func openingAMissingFileReadOnlyThrowsFileNotFound() throws {
        let folder = TemporaryFolder()
        var configuration = folder.configuration("missing.strata", objectTypes: [Dog.self])
        configuration.readOnly = true
        let error = try #require(throws: Database.Error.self) { try Database(configuration: configuration) }
        #expect(error.code == .fileNotFound)
        #expect(error.message.contains("missing.strata") && error.message.contains("does not exist"), "\(error)")
        #expect(error.path == configuration.fileURL?.path)
        #expect(!Database.fileExists(for: configuration), "a read-only open must not create the file")
    }

    @Test func writingToAReadOnlyDatabaseThrowsFileAccess() throws {
        let folder = TemporaryFolder()
        var configuration = folder.configuration(objectTypes: [Dog.self])
        do {
            let database = try Database(configuration: configuration)
            try database.write { database.add(Dog(value: ["name": "Rex"])) }
        }
        configuration.readOnly = true
        let database = try Database(configuration: configuration)
        let error = try #require(throws: Database.Error.self) {
            try database.write { Issue.record("the block of a read-only write ran") }
        }
        #expect(error.code == .fileAccess)
        #expect(error.message.contains("read-only"), "\(error)")
        #expect(error.path == configuration.fileURL?.path)
        #expect(!database.isInWriteTransaction)
        #expect(database.objects(Dog.self).first?.name == "Rex")
    }

    // MARK: Open files

    @Test func deletingTheFilesOfAnOpenDatabaseThrowsAlreadyOpen() throws {
        let folder = TemporaryFolder()
        let configuration = folder.configuration(objectTypes: [Dog.self])
        var dog: Dog?
        do {
            let database = try Database(configuration: configuration)
            try database.write { database.add(Dog(value: ["name": "Rex"])) }
            dog = database.objects(Dog.self).first
            let error = try #require(throws: Database.Error.self) { try Database.deleteFiles(for: configuration) }
            #expect(error.code == .alreadyOpen)
        }
        // A managed object keeps its instance, and so the file, open.
        #expect(dog?.name == "Rex")
        let error = try #require(throws: Database.Error.self) { try Database.deleteFiles(for: configuration) }
        #expect(error.code == .alreadyOpen)
        // Once the last instance and object are gone, the file is closed.
        dog = nil
        #expect(FileManager.default.fileExists(atPath: configuration.path + "-log"))
        #expect(try Database.deleteFiles(for: configuration))
        #expect(!Database.fileExists(for: configuration))
        for suffix in ["-lock", "-log"] {
            #expect(!FileManager.default.fileExists(atPath: configuration.path + suffix), "\(suffix) left behind")
        }
    }

    // MARK: Schema mismatch

    @Test func reopeningWithAnAddedPropertyThrowsSchemaMismatch() throws {
        let error = try reopenError(writtenWith: Widget.self, openedWith: WidgetWithSize.self)
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Widget.size'") && error.message.contains("added"), "\(error)")
        #expect(error.message.contains("schemaVersion"), "the message should say how to migrate: \(error)")
    }

    @Test func reopeningWithAChangedPropertyTypeThrowsSchemaMismatch() throws {
        let error = try reopenError(writtenWith: Widget.self, openedWith: WidgetWithNumericName.self)
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Widget.name'"), "\(error)")
    }

    @Test func reopeningWithARemovedPropertyThrowsSchemaMismatch() throws {
        let error = try reopenError(writtenWith: WidgetWithSize.self, openedWith: Widget.self)
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("'Widget.size'") && error.message.contains("removed"), "\(error)")
    }

    /// Writes a file with `written`, then reopens it at the same schema version with `opened`
    /// (the same type name, different properties) and returns the error.
    private func reopenError(writtenWith written: Object.Type, openedWith opened: Object.Type) throws -> Database.Error {
        let folder = TemporaryFolder()
        do {
            let database = try Database(configuration: folder.configuration(objectTypes: [written]))
            try database.write { database.add(written.init()) }
        }
        return try #require(throws: Database.Error.self) {
            try Database(configuration: folder.configuration(objectTypes: [opened]))
        }
    }

    // MARK: Invalid models

    @Test func twoPrimaryKeysAreInvalid() throws {
        let error = try openError(TwoPrimaryKeys.self)
        #expect(error.message.contains("'TwoPrimaryKeys.second'") && error.message.contains("only one primary key"), "\(error)")
    }

    @Test func aDoublePrimaryKeyIsInvalid() throws {
        let error = try openError(DoublePrimaryKey.self)
        #expect(error.message.contains("'DoublePrimaryKey.id'") && error.message.contains("primary key must be"), "\(error)")
    }

    @Test func aClassWithoutPersistedPropertiesIsInvalid() throws {
        let error = try openError(NoPersistedProperties.self)
        #expect(error.message.contains("'NoPersistedProperties' has no @Persisted properties"), "\(error)")
        #expect(error.message.contains("'NoPersistedProperties.name'"), "\(error)")
    }

    /// Opens a database whose configuration lists `type` and returns the error, which must be
    /// `.invalidInput` and leave no file behind.
    private func openError(_ type: Object.Type) throws -> Database.Error {
        let folder = TemporaryFolder()
        let configuration = folder.configuration(objectTypes: [type])
        let error = try #require(throws: Database.Error.self) { try Database(configuration: configuration) }
        #expect(error.code == .invalidInput)
        #expect(!Database.fileExists(for: configuration))
        return error
    }
}

// Three versions of one model: the type name is "Widget" in all of them.

final class Widget: Object {
    @Persisted var name = ""
}

final class WidgetWithSize: Object {
    @Persisted var name = ""
    @Persisted var size = 0
    override class func className() -> String { "Widget" }
}

final class WidgetWithNumericName: Object {
    @Persisted var name = 0
    override class func className() -> String { "Widget" }
}

// Models that break the schema rules.

final class TwoPrimaryKeys: Object {
    @Persisted(primaryKey: true) var first = 0
    @Persisted(primaryKey: true) var second = ""
}

final class DoublePrimaryKey: Object {
    @Persisted(primaryKey: true) var id = 0.0
}

final class NoPersistedProperties: Object {
    var name = ""
}
