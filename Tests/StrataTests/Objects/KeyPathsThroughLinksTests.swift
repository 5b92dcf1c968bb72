// Swift key paths that go through a link (`\Note.owner?.name`) name the whole path wherever the
// API takes key paths: observation, sorting, aggregates and sections. (Recording only the link
// would watch, sort or sum the link itself.)

import Testing
@testable import Strata

@Suite struct KeyPathsThroughLinksTests {
    let folder = TemporaryFolder()
    var configuration: Database.Configuration { folder.configuration(objectTypes: notificationTypes) }

    private func populated() throws -> Database {
        let db = try Database(configuration: configuration)
        try db.write {
            for (id, name, age) in [(1, "Cy", 30), (2, "Ann", 50), (3, "Bo", 40)] {
                db.create(Note.self, value: ["id": id, "title": "n\(id)", "owner": ["id": id, "name": name, "age": age]])
            }
        }
        return db
    }

    @Test func aKeyPathThroughALinkNamesEveryStep() {
        #expect(KeyPathRecorder.names(partial: \Note.owner?.name) == ["owner", "name"])
        #expect(KeyPathRecorder.names(\Note.owner?.age) == ["owner", "age"])
        #expect(KeyPathRecorder.names(partial: \Note.title) == ["title"])
        #expect(SortDescriptor(keyPath: \Note.owner?.name).keyPath == "owner.name")
    }

    @Test func observingAKeyPathThroughALinkHearsTheLinkedObject() throws {
        let db = try populated()
        let note = db.object(ofType: Note.self, forPrimaryKey: 1)!
        let changes = Recorder<ObjectChange<Note>>()
        let token = note.observe(keyPaths: [\Note.owner?.name]) { changes.record($0) }
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 1)!.age = 31 }
        #expect(changes.changes.isEmpty, "the owner's age is not watched")
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 1)!.name = "Cyd" }
        #expect(changes.changes.count == 1)
        let collection = Recorder<CollectionChange<Results<Note>>>()
        let collectionToken = db.objects(Note.self).observe(keyPaths: [\Note.owner?.name]) { collection.record($0) }
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 2)!.age = 51 }
        #expect(collection.changes.count == 1, "only .initial: the owners' ages are not watched")
        try db.write { db.object(ofType: NoteOwner.self, forPrimaryKey: 2)!.name = "Anne" }
        #expect(collection.changes.last.flatMap(indices)?.modifications == [1])
        _ = (token, collectionToken)
    }

    @Test func sortingAndAggregatesGoThroughTheLink() throws {
        let db = try populated()
        let notes = db.objects(Note.self)
        #expect(notes.sorted(by: [SortDescriptor(keyPath: \Note.owner?.name)]).map(\.id) == [2, 3, 1])
        #expect(notes.sorted(by: [SortDescriptor(keyPath: \Note.owner?.age, ascending: false)]).map(\.id) == [2, 3, 1])
        #expect(notes.max(of: \Note.owner?.age) == 50)
        #expect(notes.min(of: \Note.owner?.age) == 30)
        #expect(notes.sum(of: \Note.owner?.age) == 120)
    }

    @Test func sectionsGoThroughTheLink() throws {
        let db = try populated()
        let sections = db.objects(Note.self).sectioned(by: \Note.owner?.name, ascending: true)
        #expect(sections.allKeys == ["Ann", "Bo", "Cy"])
    }
}
